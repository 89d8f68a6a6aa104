package steps

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/invokeconf/invokeconf/checks"
	"github.com/invokeconf/invokeconf/outcome"
	"github.com/invokeconf/invokeconf/sseframe"
)

// MediaType returns the response's media type without parameters.
func (r *Response) MediaType() string {
	mt, _, err := mime.ParseMediaType(r.Header().Get("Content-Type"))
	if err != nil {
		return ""
	}
	return mt
}

// Frame is a raw SSE frame with the time it arrived.
type Frame struct {
	sseframe.Frame
	At time.Duration
}

// IsEvent reports whether a frame carries an event object: a conforming
// client dispatches it as an event of the default type, message (not a named
// control frame: start, close).
func (f Frame) IsEvent() bool { return f.IsMessage() }

// Object decodes the frame's data as a JSON object.
func (f Frame) Object() (map[string]any, error) {
	data, _ := f.Field("data")
	return decodeObject([]byte(data))
}

// Frames returns the body's raw SSE frames and comment lines (parsed once,
// checks.View), each with the time its last byte arrived (a comment line:
// the end of that line).
func (r *Response) Frames() ([]Frame, error) {
	parsed := r.View.Frames()
	out := make([]Frame, len(parsed))
	for i, f := range parsed {
		out[i] = Frame{Frame: f.Frame, At: f.At}
		if f.At < 0 {
			out[i].At = r.HeadersAt()
		}
	}
	return out, nil
}

// streamWatch looks for a frame in a body that is still arriving, parsing
// each new byte once: as a request's stop function it costs no more than the
// body.
type streamWatch struct {
	p     sseframe.Parser
	fed   int
	match func(Frame) bool
	found bool
}

// watchFor returns a stop function that is true once a complete frame or
// comment line matches.
func watchFor(match func(Frame) bool) stopFunc {
	sw := &streamWatch{match: match}
	return sw.seen
}

func (sw *streamWatch) seen(rd *reading) bool {
	if sw.found || sw.fed >= len(rd.body) {
		return sw.found
	}
	sw.p.Feed(rd.body[sw.fed:], func(f sseframe.Frame) {
		if !sw.found && sw.match(Frame{Frame: f, At: rd.at}) {
			sw.found = true
		}
	})
	sw.fed = len(rd.body)
	return sw.found
}

// textWatch finds a text in a body as it arrives, each read searched from
// where the text could begin: no copy of the body, no search of it again.
type textWatch struct {
	text  []byte
	from  int
	found bool
}

// watchText returns a stop function that is true once the body holds text.
func watchText(text string) stopFunc {
	tw := &textWatch{text: []byte(text)}
	return tw.seen
}

func (tw *textWatch) seen(rd *reading) bool {
	if !tw.found && len(rd.body) > tw.from {
		tw.found = bytes.Contains(rd.body[tw.from:], tw.text)
		tw.from = max(0, len(rd.body)-len(tw.text)+1)
	}
	return tw.found
}

// EventFrames returns the frames that carry event objects.
func (r *Response) EventFrames() ([]Frame, error) {
	frames, err := r.Frames()
	if err != nil {
		return nil, err
	}
	var out []Frame
	for _, f := range frames {
		if f.IsEvent() {
			out = append(out, f)
		}
	}
	return out, nil
}

// Events reads the body as a conforming client does (sseframe.Events, which
// sseframe's tests hold against go-sse; go-sse also dispatches frames
// without data and a frame the stream's end cut, which the standard does
// not) and decodes the data of every event of the default type as an event
// object.
func (r *Response) Events() ([]map[string]any, error) { return eventsOf(r.Body()) }

// eventsOf is Events on a part of a body.
func eventsOf(body []byte) ([]map[string]any, error) {
	var out []map[string]any
	frames, _ := sseframe.ReadAll(body)
	for _, ev := range sseframe.Events(frames) {
		if ev.Type != sseframe.DefaultType {
			continue // start, close
		}
		obj, err := decodeObject([]byte(ev.Data))
		if err != nil {
			// "Every SSE data: frame is one JSON object": EVT-01; data
			// split over lines that join into no JSON breaks "a data: line
			// holding the event object as JSON", SSE-02.
			rule := "EVT-01"
			if checks.SplitData(ev.Frame, ev.Data) {
				rule = "SSE-02"
			}
			return out, outcome.Claim(err, rule)
		}
		out = append(out, obj)
	}
	return out, nil
}

// EnvelopeItems decodes a JSON envelope {"items":[...]}: one envelope, so
// nothing but whitespace may follow it.
func (r *Response) EnvelopeItems() ([]map[string]any, error) {
	var env struct {
		Items *[]map[string]any `json:"items"`
	}
	dec := json.NewDecoder(bytes.NewReader(r.Body()))
	dec.UseNumber()
	if err := dec.Decode(&env); err != nil {
		return nil, outcome.Failf("the response body", "a JSON envelope {items:[...]}", "%s (%v)", strconv.Quote(abbreviate(r.Body())), err)
	}
	if rest := bytes.TrimSpace(r.Body()[dec.InputOffset():]); len(rest) > 0 {
		return nil, outcome.Failf("the response body", "one JSON envelope {items:[...]} and nothing after it",
			"%d more bytes after the envelope: %s", len(rest), strconv.Quote(abbreviate(rest)))
	}
	if env.Items == nil {
		return nil, outcome.Fail("the response body", "a JSON envelope {items:[...]}", strconv.Quote(abbreviate(r.Body())))
	}
	return *env.Items, nil
}

func decodeObject(b []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, outcome.Fail("an event's data", "one JSON object", strconv.Quote(abbreviate(b)))
	}
	if dec.More() {
		return nil, outcome.Fail("an event's data", "one JSON object", "more than one JSON value: "+strconv.Quote(abbreviate(b)))
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, outcome.Fail("an event's data", "one JSON object", "JSON that is not an object: "+strconv.Quote(abbreviate(b)))
	}
	return obj, nil
}

// isSet reports whether an event field is set, as the passive checks read
// it (checks.IsSet: not null, false, 0, "", {} or []).
func isSet(ev map[string]any, field string) bool {
	v, ok := ev[field]
	if !ok {
		return false
	}
	raw, err := json.Marshal(v)
	return err == nil && checks.IsSet(raw)
}

// maxQuoted bounds the target bytes one failure message quotes.
const maxQuoted = 300

// abbreviate quotes at most maxQuoted bytes of target data, cut at a rune
// boundary, and says how much was left out.
func abbreviate(b []byte) string {
	if len(b) <= maxQuoted {
		return string(b)
	}
	cut := maxQuoted
	for cut > 0 && !utf8.RuneStart(b[cut]) {
		cut--
	}
	return fmt.Sprintf("%s... (%d more bytes)", b[:cut], len(b)-cut)
}

// idString reads an ID field of an event: the spec names runID and threadID
// without fixing a JSON type, so any string or number is an ID.
func idString(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, x != ""
	case json.Number:
		return x.String(), true
	}
	return "", false
}
