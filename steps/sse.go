package steps

import (
	"strings"
	"time"

	"github.com/cucumber/godog"

	"github.com/invokeconf/invokeconf/checks"
	"github.com/invokeconf/invokeconf/outcome"
)

// sseDefs: byte-level SSE framing of sse.feature (SSE-*), read with the raw
// frame reader because a conformant parser hides comments and frame order.
func sseDefs() []Def {
	return []Def{
		step3(`^the (first|last) frame is "event: (\w+)" with data "(.*)"$`, (*World).controlFrame),
		step1(`^the first frame arrived at least (\S+) before the first content$`, (*World).startBeforeContent),
		step0(`^every event frame is an id line holding the run ID, then one data line$`, (*World).eventFramesIDThenData),
		step0(`^the last event frame has the id "<run ID>:after", runComplete true and empty content$`, (*World).finalEventFrame),
		step3(`^I invoke "([^"]*)" with the prompt below and stop reading at the first ": ping" comment after the content "(.*)":$`, (*World).invokeUntilPing),
		step2(`^a ": ping" comment arrived within (\S+) after the event with content "(.*)"$`, (*World).pingWithin),
		step0(`^no event frame follows the event with runComplete true$`, (*World).nothingAfterComplete),
		step0(`^an event has error set$`, (*World).errorEvent),
	}
}

// frames returns the last response's frames after checking it is a complete
// SSE response.
func (w *World) frames() ([]Frame, error) {
	if err := w.complete(); err != nil {
		return nil, err
	}
	return w.sseFrames()
}

// framesRead returns the frames of the last response read to its end, or
// to where the scenario stopped reading on purpose; a frame the stop cut
// short is left out, as a client that goes away never sees it.
func (w *World) framesRead() ([]Frame, error) {
	r, err := w.last()
	if err != nil {
		return nil, err
	}
	if r.Err != errStopped {
		if err := w.readWhole(r); err != nil {
			return nil, err
		}
	}
	frames, err := w.sseFrames()
	if err != nil {
		return nil, err
	}
	if n := len(frames); r.Err == errStopped && !frames[n-1].Terminated {
		frames = frames[:n-1]
	}
	return frames, nil
}

// eventsRead returns the event objects of framesRead, as a conformant SSE
// client reads them.
func (w *World) eventsRead() ([]map[string]any, error) {
	frames, err := w.framesRead()
	if err != nil {
		return nil, err
	}
	body := w.resp.Body()
	if w.resp.Err == errStopped {
		end := 0
		if len(frames) > 0 {
			end = frames[len(frames)-1].End
		}
		body = body[:end]
	}
	return eventsOf(body)
}

// sseFrames returns the frames of the last response, read to its end or
// stopped on purpose by the scenario.
func (w *World) sseFrames() ([]Frame, error) {
	if err := w.isSSE(); err != nil {
		return nil, err
	}
	frames, err := w.resp.Frames()
	if err != nil {
		return nil, err
	}
	if len(frames) == 0 {
		return nil, outcome.Fail("the SSE stream", "at least one frame", "an empty body")
	}
	return frames, nil
}

// controlFrame: SSE-01 (start first) and SSE-05 (close last), judged by
// the checks the passive judge runs.
func (w *World) controlFrame(which, event, data string) error {
	if _, err := w.frames(); err != nil {
		return err
	}
	switch {
	case which == "first" && event == "start" && data == "{}":
		return w.judge(checks.StartFirst)
	case which == "last" && event == "close" && data == "{}":
		return w.judge(checks.CloseAtEnd)
	}
	return scenarioErrorf("no rule checks the %s frame event: %s with data %s", which, event, data)
}

// startBeforeContent: SSE-01's "immediately", judged by the passive check
// on the scenario's script, which pauses before its first content.
func (w *World) startBeforeContent(gap string) error {
	d, err := parseDuration(gap)
	if err != nil {
		return err
	}
	if t, ok := w.scriptTiming(); ok {
		if err := stated("the start frame's lead", d, t.Lead-checks.LiveTolerance); err != nil {
			return err
		}
	}
	if _, err := w.frames(); err != nil {
		return err
	}
	return w.judge(checks.StartAtOnce)
}

// scriptTiming returns the timing the last request's agent script states.
func (w *World) scriptTiming() (checks.ScriptTiming, bool) {
	r, err := w.last()
	if err != nil {
		return checks.ScriptTiming{}, false
	}
	return checks.TimingOf(string(r.Prompt()))
}

// stated returns a scenario error when a figure a step states is not the
// one the rule's check applies: the scenario's text would tell a reader
// what the check does not do.
func stated(what string, said, applied time.Duration) error {
	if said != applied {
		return scenarioErrorf("the step states %s as %s, the check applies %s", what, said, applied)
	}
	return nil
}

func ms(d time.Duration) time.Duration { return d.Round(time.Millisecond) }

// runIDOf returns the run ID the events name: their runID field, or the id
// line of the first event frame when no event names one.
func runIDOf(frames []Frame) string {
	for _, f := range frames {
		if !f.IsEvent() {
			continue
		}
		if obj, err := f.Object(); err == nil {
			if r, ok := idString(obj["runID"]); ok {
				return r
			}
		}
	}
	for _, f := range frames {
		if id, ok := f.Field("id"); ok && f.IsEvent() {
			return strings.TrimSuffix(id, ":after")
		}
	}
	return ""
}

// eventFramesIDThenData: SSE-02.
func (w *World) eventFramesIDThenData() error {
	if _, err := w.frames(); err != nil {
		return err
	}
	return w.judge(checks.IDBeforeData)
}

// finalEventFrame: SSE-03.
func (w *World) finalEventFrame() error {
	if _, err := w.frames(); err != nil {
		return err
	}
	return w.judge(checks.FinalAfter)
}

// isPing reports whether a frame is a ": ping" comment line.
func isPing(f Frame) bool {
	return f.IsComment() && strings.TrimSpace(f.Lines[0].Value) == "ping"
}

// invokeUntilPing: SSE-04 reads the stream until a ping ends a quiet of
// checks.KeepaliveDue after the content that begins it, then goes away
// (the run is cancelled), so the scenario lasts the keepalive interval and
// not the whole script. An earlier ping (a keepalive more often than
// needed) does not show the one 20 s of quiet calls for: it reads on. A
// frame that ends the quiet first leaves the stream read to its end.
func (w *World) invokeUntilPing(path, content string, doc *godog.DocString) error {
	prompt, err := w.prompt(doc.Content)
	if err != nil {
		return err
	}
	// The content names the quiet's start as the prompt says it, markers
	// and all: unexpanded, it never matches and the stream is read to its
	// end, 3 s past the ping.
	if content, err = w.expand(content); err != nil {
		return err
	}
	_, err = w.invokeStopping(path, prompt, untilPing(content))
	return err
}

// untilPing is invokeUntilPing's stop function.
func untilPing(content string) stopFunc {
	var quietFrom time.Duration
	quiet, over := false, false
	var answer contentWatch
	return watchFor(func(f Frame) bool {
		switch {
		case over:
		case !quiet:
			quiet = answer.see(f, content)
			quietFrom = f.At
		case !f.IsComment():
			over = true
		case isPing(f):
			return f.At-quietFrom >= checks.KeepaliveDue
		}
		return false
	})
}

// pingWithin: SSE-04, judged by the passive check on the stream read to the
// ping (or to its end). The quiet begins at the event with that content;
// the check finds it as the last frame before the ping. The spec's 20 s
// plus 1.5 s tolerance is written in the scenario.
func (w *World) pingWithin(limit, content string) error {
	d, err := parseDuration(limit)
	if err != nil {
		return err
	}
	if err := stated("the keepalive limit", d, checks.Keepalive+checks.KeepaliveTolerance); err != nil {
		return err
	}
	if _, err := w.sseFrames(); err != nil {
		return err
	}
	return w.judge(checks.KeepalivePing)
}

// nothingAfterComplete: SSE-06.
func (w *World) nothingAfterComplete() error {
	if _, err := w.frames(); err != nil {
		return err
	}
	return w.judge(checks.NothingAfterComplete)
}

// errorEvent: SSE-07, judged by the passive check on the scenario's script
// that fails after content.
func (w *World) errorEvent() error {
	if _, err := w.finished(); err != nil {
		return err
	}
	return w.judge(checks.FailureAsEvent)
}
