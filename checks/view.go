package checks

import (
	"net/http"
	"sync"

	"github.com/invokeconf/invokeconf/agentscript"

	"github.com/invokeconf/invokeconf/sseframe"
	"github.com/invokeconf/invokeconf/traffic"
)

// View is a recorded exchange as the checks read it: which route and IDs
// its request addresses, the response's bytes, its SSE frames, its event
// objects and envelope, the agent script its prompt holds. Each part is
// parsed the first time a check (or a step of the active suite) asks for
// it, and kept: an exchange is parsed once however many checks read it. A
// View is safe for concurrent use; the exchange must not change once
// viewed.
type View struct {
	*traffic.Exchange

	route    memo[Route]
	invoke   memo[invokeParse]
	body     memo[[]byte]
	frames   memo[[]Frame]
	start    memo[bool]
	events   memo[eventsParse]
	envelope memo[envelopeParse]
	recorded memo[recordedParse]
	document memo[documentParse]
	prompt   memo[promptParse]
	prog     memo[programParse]
	script   memo[scriptParse]
}

// NewView returns the view of x. Every check and History.Add read x through
// it.
func NewView(x *traffic.Exchange) *View { return &View{Exchange: x} }

// memo is one part of a View, parsed once.
type memo[T any] struct {
	once sync.Once
	v    T
}

// parseHook, when set (by a test), hears every part of a view parsed.
var parseHook func(v *View, part string)

// get returns the part, parsing it with parse the first time.
func (m *memo[T]) get(v *View, part string, parse func() T) T {
	m.once.Do(func() {
		if parseHook != nil {
			parseHook(v, part)
		}
		m.v = parse()
	})
	return m.v
}

type invokeParse struct {
	inv Invoke
	ok  bool
}

// Body returns the response body's recorded bytes (nil without a
// response). The caller must not modify them.
func (v *View) Body() []byte {
	return v.body.get(v, "body", func() []byte {
		if v.Response == nil {
			return nil
		}
		return v.Response.Body.Bytes()
	})
}

// Status returns the response's status code, 0 without a response.
func (v *View) Status() int {
	if v.Response == nil {
		return 0
	}
	return v.Response.Status
}

// Header returns the response's header (an empty one without a response).
func (v *View) Header() http.Header {
	if v.Response == nil || v.Response.Header == nil {
		return http.Header{}
	}
	return v.Response.Header
}

// Frames returns the response body's SSE frames, each with the time its
// last byte arrived.
func (v *View) Frames() []Frame {
	return v.frames.get(v, "frames", func() []Frame {
		if v.Response == nil {
			return nil
		}
		return framesOf(&v.Response.Body, v.Body())
	})
}

// opensWithStart reports whether the response opens with the start frame:
// its first frame that dispatches an event is event: start.
func (v *View) opensWithStart() bool {
	return v.start.get(v, "start", func() bool {
		for _, f := range v.Frames() {
			if dispatches(f.Frame) {
				return event(f.Frame) == "start"
			}
		}
		return false
	})
}

// framesOf splits a recorded SSE body (b, its bytes) into frames, walking
// the chunks once for their times.
func framesOf(body *traffic.Body, b []byte) []Frame {
	raw, _ := sseframe.ReadAll(b)
	out := make([]Frame, len(raw))
	chunk, chunkEnd := 0, 0 // the chunk holding the current offset, and where it ends
	if len(body.Chunks) > 0 {
		chunkEnd = len(body.Chunks[0].Data)
	}
	for i, f := range raw {
		out[i] = decoded(Frame{Frame: f, At: -1})
		if !body.Timed {
			continue
		}
		off := max(f.End-1, 0)
		for chunk < len(body.Chunks) && off >= chunkEnd {
			chunk++
			if chunk < len(body.Chunks) {
				chunkEnd += len(body.Chunks[chunk].Data)
			}
		}
		if chunk < len(body.Chunks) {
			out[i].At = body.Chunks[chunk].At
		}
	}
	return out
}

type eventsParse struct {
	evs []eventObject
	ok  bool
}

type envelopeParse struct {
	items []item
	ok    bool
}

type recordedParse struct {
	evs []recordedEvent
	err error
}

type documentParse struct {
	tree map[string]any
	err  error
}

type promptParse struct {
	text string
	err  error
}

type programParse struct {
	s  agentscript.Script
	ok bool
}

type scriptParse struct {
	s  script
	ok bool
}

// RequestText returns the request body's text (an agent script, say), or
// an untested Skip when the recording does not hold it whole.
func (v *View) RequestText() (string, error) {
	p := v.prompt.get(v, "prompt", func() promptParse {
		t, err := requestText(v.Exchange)
		return promptParse{t, err}
	})
	return p.text, p.err
}

// program returns the prompt parsed as an agent script; ok is false when it
// is none (or the recording does not hold it whole).
func (v *View) program() (agentscript.Script, bool) {
	p := v.prog.get(v, "program", func() programParse {
		prompt, err := v.RequestText()
		if err != nil {
			return programParse{}
		}
		s, ok := program(prompt)
		return programParse{s, ok}
	})
	return p.s, p.ok
}

// timedScript returns the prompt as a script of @say, @pause and (last)
// @fail lines, reduced to what the timed rules read.
func (v *View) timedScript() (script, bool) {
	p := v.script.get(v, "script", func() scriptParse {
		prog, ok := v.program()
		if !ok {
			return scriptParse{}
		}
		s, ok := timedOf(prog)
		return scriptParse{s, ok}
	})
	return p.s, p.ok
}
