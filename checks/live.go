package checks

import (
	"fmt"
	"strings"
	"time"

	"github.com/invokeconf/invokeconf/agentscript"
	"github.com/invokeconf/invokeconf/outcome"
)

// LiveTolerance is what scheduling and the network may take from a gap the
// agent script put between two pieces of an SSE stream.
const LiveTolerance = 500 * time.Millisecond

// Timed rules decided on agent scripts: a prompt in the agent script
// language (agentscript) states when the run produces what, which is what
// traffic alone does not show. They decide only when the answer is the
// script's text, so a target whose agent does not follow the language is
// never judged on them.
var liveChecks = []Check{
	LiveSSE,
	StartAtOnce,
	AsyncAtOnce,
	FailureAsEvent,
}

// Aspects of rules decided on agent scripts.
const (
	Live   = "live during the run (needs an agent-script prompt that pauses between @say lines)"
	AtOnce = "at once (needs an agent-script prompt that pauses before its first @say)"
	// AckAtOnce is ASYNC-01's "at once".
	AckAtOnce = "at once (needs an async call whose agent-script prompt pauses more than 1 s)"
)

// script is a prompt in the agent script language reduced to what the
// timed rules read.
type script struct {
	lead  time.Duration // pauses before the first fragment
	frags []fragment
	fails bool // a @fail after content
}

// parseScript reads a prompt of @say, @pause and (last) @fail lines.
func parseScript(prompt string) (script, bool) {
	s, ok := program(prompt)
	if !ok {
		return script{}, false
	}
	return timedOf(s)
}

// program parses a prompt as an agent script; ok is false when it is none.
func program(prompt string) (agentscript.Script, bool) {
	if !agentscript.IsScript(prompt) {
		return agentscript.Script{}, false
	}
	s, err := agentscript.Parse(prompt)
	return s, err == nil
}

// timedOf reduces a script of @say, @pause and (last) @fail lines to what
// the timed rules read.
func timedOf(s agentscript.Script) (script, bool) {
	var out script
	var at time.Duration
	pending := ""
	for i, d := range s.Directives {
		switch d.Kind {
		case agentscript.Say:
			pending += d.Text
		case agentscript.Pause:
			if pending != "" {
				out.frags = append(out.frags, fragment{pending, at})
				pending = ""
			}
			if len(out.frags) == 0 {
				out.lead += d.Duration
			} else {
				at += d.Duration
			}
		case agentscript.Fail:
			if i != len(s.Directives)-1 {
				return script{}, false
			}
			out.fails = true
		default:
			return script{}, false
		}
	}
	if pending != "" {
		out.frags = append(out.frags, fragment{pending, at})
	}
	return out, len(out.frags) > 0
}

// ScriptTiming is what an agent-script prompt states about time, as the
// timed checks read it. A step compares the figures its scenario states
// with it, so the scenario's text cannot drift from the check.
type ScriptTiming struct {
	// Lead is the pause before the first fragment.
	Lead time.Duration
	// Texts are the fragments said between pauses; At is when each is
	// produced, counted from the first.
	Texts []string
	At    []time.Duration
}

// TimingOf returns the timing an agent-script prompt states; ok is false
// when the prompt is no script the timed checks read.
func TimingOf(prompt string) (ScriptTiming, bool) {
	s, ok := parseScript(prompt)
	if !ok {
		return ScriptTiming{}, false
	}
	t := ScriptTiming{Lead: s.lead}
	for _, f := range s.frags {
		t.Texts = append(t.Texts, f.text)
		t.At = append(t.At, f.at)
	}
	return t, true
}

// piece is text that arrived at a time.
type piece struct {
	text string
	at   time.Duration
}

// fragmentArrivals returns when each fragment's last byte arrived; ok is
// false when the pieces are not the fragments' text.
func fragmentArrivals(pieces []piece, frags []fragment) ([]time.Duration, bool) {
	var got, want strings.Builder
	for _, p := range pieces {
		got.WriteString(p.text)
	}
	for _, f := range frags {
		want.WriteString(f.text)
	}
	if got.String() != want.String() {
		return nil, false
	}
	out := make([]time.Duration, len(frags))
	end, pi, covered := 0, 0, 0
	for i, f := range frags {
		end += len(f.text)
		for covered+len(pieces[pi].text) < end {
			covered += len(pieces[pi].text)
			pi++
		}
		out[i] = pieces[pi].at
	}
	return out, true
}

// contentPieces returns the content events of an SSE stream with their
// arrival times.
func contentPieces(frames []Frame) []piece {
	var out []piece
	for _, f := range frames {
		if !f.Terminated || !isEventFrame(f.Frame) {
			continue
		}
		if e, ok := f.event(); ok && e.Content != nil && *e.Content != "" {
			out = append(out, piece{*e.Content, f.At})
		}
	}
	return out
}

// scriptedStream returns the script of x's prompt and x's SSE frames, or a
// Skip.
func scriptedStream(x *View) (script, []Frame, error) {
	frames, err := sseStream(x)
	if err != nil {
		return script{}, nil, err
	}
	if _, err := x.RequestText(); err != nil {
		return script{}, nil, err
	}
	s, ok := x.timedScript()
	if !ok {
		return script{}, nil, skip("the prompt is not an agent script of @say and @pause lines: traffic does not show when the run produced its events")
	}
	if !x.Response.Body.Timed {
		return script{}, nil, untested(NoTimings)
	}
	return s, frames, nil
}

// LiveSSE: FMT-01, "live during the run". Events the script produces more
// than LiveTolerance apart arrive no less than their gap minus
// LiveTolerance apart.
var LiveSSE = Check{Rule: "FMT-01", Spec: "text/event-stream (exactly): SSE stream, live during the run", Aspect: Live, Judge: liveSSE}

func liveSSE(x *View, _ *History) error {
	s, frames, err := scriptedStream(x)
	if err != nil {
		return err
	}
	n := len(s.frags)
	if n < 2 || s.frags[n-1].at <= LiveTolerance {
		return skip("the script spreads its events over %s or less", LiveTolerance)
	}
	arrived, ok := fragmentArrivals(contentPieces(frames), s.frags)
	if !ok {
		return skip("the answer is not the script's text")
	}
	want := s.frags[n-1].at - LiveTolerance
	if got := arrived[n-1] - arrived[0]; got < want {
		// Read late, the first event comes closer to the last: a stall
		// before its read (or, in the harness's process, before the
		// server wrote it) could explain the gap missing.
		if err := starved(x, 0, arrived[0], want-got); err != nil {
			return err
		}
		return outcome.Failf("the live SSE stream", fmt.Sprintf("%q at least %s after %q", s.frags[n-1].text, want, s.frags[0].text),
			"%s apart", got.Round(time.Millisecond))
	}
	return nil
}

// StartAtOnce: SSE-01, "immediately". When the script pauses before its
// first content, the start frame arrives no less than that pause minus
// LiveTolerance before it.
var StartAtOnce = Check{Rule: "SSE-01", Spec: "Immediately, before the agent produces anything: a frame with event: start and data {}.", Aspect: AtOnce, Judge: startAtOnce}

func startAtOnce(x *View, _ *History) error {
	s, frames, err := scriptedStream(x)
	if err != nil {
		return err
	}
	if s.lead <= LiveTolerance {
		return skip("the script does not pause more than %s before its first content", LiveTolerance)
	}
	var startAt time.Duration = -1
	for _, f := range frames {
		if f.Terminated && !f.IsComment() && event(f.Frame) == "start" {
			startAt = f.At
			break
		}
	}
	pieces := contentPieces(frames)
	if startAt < 0 || len(pieces) == 0 {
		return skip("no start frame or no content (SSE-01's order check)")
	}
	want := s.lead - LiveTolerance
	if got := pieces[0].at - startAt; got < want {
		if err := starved(x, 0, startAt, want-got); err != nil {
			return err // the start frame read (or written) late
		}
		return outcome.Failf("the start frame", fmt.Sprintf("at least %s before the first content", want),
			"%s before it", got.Round(time.Millisecond))
	}
	return nil
}

// FailureAsEvent: SSE-07. A script that fails after producing content fails
// inside the stream it began: a 2xx SSE answer with an event whose error is
// set, never a 5xx.
var FailureAsEvent = Check{Rule: "SSE-07", Spec: "Once an SSE stream has begun, a failure arrives as an event with error set, not as an HTTP status.", Judge: failureAsEvent}

func failureAsEvent(x *View, _ *History) error {
	inv, ok := InvokeOf(x)
	if !ok || inv.Async || x.Response == nil {
		return skip("not a synchronous invoke call")
	}
	if v, _, err := accept(x); err != nil {
		return err
	} else if v != "text/event-stream" {
		return skip("Accept is not text/event-stream")
	}
	if _, err := x.RequestText(); err != nil {
		return err
	}
	s, ok := x.timedScript()
	if !ok || !s.fails {
		return skip("the prompt is not an agent script that fails after content")
	}
	st := x.Response.Status
	if st/100 != 2 && st < 500 {
		return skip("answered %d", st)
	}
	b, err := body(x, false)
	if err != nil {
		return err
	}
	if st >= 500 || !looksSSE(x) {
		return outcome.Failf("the answer to a run that fails after it began", "an SSE stream with an error event",
			"%d %s", st, quote(b))
	}
	for _, f := range x.Frames() {
		if f.Terminated && isEventFrame(f.Frame) {
			if e, ok := f.event(); ok && e.failed() {
				return nil
			}
		}
	}
	if err := ended(x); err != nil {
		return err
	}
	return outcome.Failf("the SSE events of a run that failed", "an event with error set", "none in %s", quote(b))
}

// AsyncAtOnce: ASYNC-01, "returns at once ... and the run continues on the
// server". When the script pauses for longer than 1 s in all, the whole
// acknowledgement arrives no later than the pauses minus LiveTolerance: a
// service that waits for the run cannot answer that early.
var AsyncAtOnce = Check{Rule: "ASYNC-01", Spec: "When true, the call returns at once with threadID and runID (JSON) and the run continues on the server", Aspect: AckAtOnce, Judge: asyncAtOnce}

func asyncAtOnce(x *View, _ *History) error {
	inv, ok := InvokeOf(x)
	if !ok || !inv.Async || x.Response == nil || x.Response.Status/100 != 2 {
		return skip("not an async invoke call answered 2xx")
	}
	if _, err := x.RequestText(); err != nil {
		return err
	}
	s, ok := x.timedScript()
	if !ok {
		return skip("the prompt is not an agent script of @say and @pause lines")
	}
	run := s.lead + s.frags[len(s.frags)-1].at
	if run <= time.Second {
		return skip("the script pauses 1 s or less")
	}
	b := &x.Response.Body
	if !b.Timed {
		return untested(NoTimings)
	}
	arrived := x.Response.HeaderAt
	if n := len(b.Chunks); n > 0 {
		arrived = b.Chunks[n-1].At
	}
	if arrived < 0 {
		return untested(NoTimings)
	}
	if limit := run - LiveTolerance; arrived > limit {
		if err := starved(x, 0, arrived, arrived-limit); err != nil {
			return err
		}
		return outcome.Failf("the acknowledgement of an async call", fmt.Sprintf("at once: within %s, while the run pauses %s", limit, run),
			"complete after %s", arrived.Round(time.Millisecond))
	}
	return nil
}

// AnsweredWithin returns a check that x's answer ended within limit of the
// request's start: "Answers immediately" (ASYNC-05: GET /api/threads/{id}
// within 1 s while the run pauses 1.5 s, so an answer that waits for the
// run ends at least 500 ms past the limit). A delay the harness's own
// lateness could explain is excused.
func AnsweredWithin(limit time.Duration) func(*View, *History) error {
	return func(x *View, _ *History) error {
		if x.Response == nil {
			return skip("no response")
		}
		b := &x.Response.Body
		end := x.Response.HeaderAt
		if n := len(b.Chunks); n > 0 && b.Timed {
			end = b.Chunks[n-1].At
		}
		if end < 0 || (len(b.Chunks) > 0 && !b.Timed) {
			return untested(NoTimings)
		}
		if end <= limit {
			return nil
		}
		if err := starved(x, 0, end, end-limit); err != nil {
			return err
		}
		return outcome.Fail(x.Request.Method+" "+x.Request.URL+": the time to the answer's end",
			fmt.Sprintf("at most %s", limit), end.Round(time.Millisecond).String())
	}
}
