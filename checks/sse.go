package checks

import (
	"fmt"
	"strings"
	"time"

	"github.com/invokeconf/invokeconf/outcome"
	"github.com/invokeconf/invokeconf/sseframe"
	"github.com/invokeconf/invokeconf/traffic"
)

// Keepalive is the quiet after which a ": ping" comment is due.
const Keepalive = 20 * time.Second

// KeepaliveTolerance is what scheduling and the network may add to it.
const KeepaliveTolerance = 1500 * time.Millisecond

// KeepaliveDue is the shortest quiet whose ping shows the keepalive: the
// ping due after Keepalive, less what the network may have delayed the
// frame before it by.
const KeepaliveDue = Keepalive - KeepaliveTolerance

var sseChecks = []Check{
	StartFirst,
	IDBeforeData,
	FinalAfter,
	KeepalivePing,
	CloseAtEnd,
	NothingAfterComplete,
	DataIsObject,
	EventsNameRun,
}

// sseStream returns the frames of x's answer when x is a synchronous invoke
// with Accept exactly text/event-stream that was answered with an SSE
// stream; otherwise a Skip. FMT-01 judges a request whose answer is no
// stream.
func sseStream(x *View) ([]Frame, error) {
	v, _, err := acceptOf(x)
	if err != nil {
		return nil, err
	}
	if v != "text/event-stream" {
		return nil, skip("Accept is not text/event-stream")
	}
	if _, err := body(x, false); err != nil {
		return nil, err
	}
	if !looksSSE(x) {
		return nil, skip("the answer is not an SSE stream (FMT-01)")
	}
	return x.Frames(), nil
}

// NoEnd is why a rule about how a stream ends is untested on a recording
// that does not say how its bodies ended: what it holds may be all that a
// client read before it stopped (as it may at runComplete) or aborted.
const NoEnd = "the recording does not say whether the service ended the stream or the client stopped reading it"

// ended reports whether the recording holds the stream's end as the
// service wrote it. Callers ask only when the end they see would break
// the rule: an end that keeps it is the service's, whoever stopped.
func ended(x *View) error {
	switch {
	case x.Response.Body.Truncated:
		return untested(cutReason(&x.Response.Body))
	case x.Response.End == traffic.EndClientGone:
		return skip("the client went away before the stream ended")
	case x.Response.End == traffic.EndError:
		return skip("the connection failed before the stream ended")
	case x.Response.End == traffic.EndUnknown:
		return untested(NoEnd)
	}
	return nil
}

// emptyObject reports whether the frame's data is the empty object {}.
func (f Frame) emptyObject() bool { return f.obj != nil && len(f.obj) == 0 }

// StartFirst: SSE-01. The first frame (comments aside, and frames that
// dispatch nothing, which a conforming client reads past alike) is event:
// start with data {}, ended by its blank line. "Immediately" needs the time the agent
// produced its first event, which traffic does not show: the active
// scenario times it against a script's pause.
var StartFirst = Check{Rule: "SSE-01", Spec: "Immediately, before the agent produces anything: a frame with event: start and data {}.", Judge: startFirst}

func startFirst(x *View, _ *History) error {
	frames, err := sseStream(x)
	if err != nil {
		return err
	}
	for _, f := range frames {
		if f.IsComment() || (f.Terminated && !dispatches(f.Frame)) {
			continue
		}
		if !f.Terminated {
			if err := ended(x); err != nil {
				return err
			}
		}
		if event(f.Frame) != "start" || !f.emptyObject() || !f.Terminated {
			return outcome.Failf("the first SSE frame", "event: start with data {}, ended by a blank line", "%s", frameState(f))
		}
		return nil
	}
	return untested("the recording holds no frame")
}

// frameState quotes a frame and says whether its blank line arrived.
func frameState(f Frame) string {
	if f.Terminated {
		return quote([]byte(f.String()))
	}
	return quote([]byte(f.String())) + " (the stream ended before its blank line)"
}

// runOf returns the run a stream's events name: the first runID, or the
// id line of the first event when no event names one.
func runOf(frames []Frame) string {
	for _, f := range frames {
		if e, ok := f.event(); ok && isEventFrame(f.Frame) && e.RunID != nil && *e.RunID != "" {
			return *e.RunID
		}
	}
	for _, f := range frames {
		if id, ok := f.Field("id"); ok && isEventFrame(f.Frame) {
			return strings.TrimSuffix(id, ":after")
		}
	}
	return ""
}

// IDBeforeData: SSE-02. Every event frame is an id line holding the run ID,
// then one data line. The id of the final event (the one with runComplete
// true, or the last) is SSE-03's ("id: is the run ID with the suffix
// :after"): here it need only begin with the run ID, so a wrong suffix
// fails SSE-03 alone. The stream must
// not end inside a frame: a frame cut short is no event, and fails unless
// the client went away.
var IDBeforeData = Check{Rule: "SSE-02", Spec: "Each event: an id: line holding the run ID, then a data: line holding the event object as JSON.", Judge: iDBeforeData}

func iDBeforeData(x *View, _ *History) error {
	frames, err := sseStream(x)
	if err != nil {
		return err
	}
	var evs []Frame
	for _, f := range frames {
		if f.IsComment() {
			continue
		}
		if !f.Terminated {
			if err := ended(x); err != nil {
				break
			}
			return outcome.Fail("the last SSE frame", "every frame ended by a blank line", frameState(f))
		}
		if isEventFrame(f.Frame) {
			evs = append(evs, f)
		}
	}
	if len(evs) == 0 {
		return skip("no event frame")
	}
	run := runOf(frames)
	for i, f := range evs {
		e, _ := f.event()
		final := e.complete() || i == len(evs)-1
		id, _ := f.Field("id")
		ok := id == run
		if final {
			ok = run != "" && strings.HasPrefix(id, run)
		}
		if !idThenData(f.Frame) || !ok {
			want := "an id line holding the run ID " + quote([]byte(run)) + ", then one data line"
			if final {
				want += " (the final event's id begins with it; its suffix is SSE-03's)"
			}
			return outcome.Fail(fmt.Sprintf("event frame %d of %d", i+1, len(evs)), want, frameState(f))
		}
	}
	return nil
}

// idThenData reports whether an event frame's lines are an id line, then
// its data, as a conforming parser reads them: comment lines, retry lines,
// event lines (the frame dispatches the default type, message), fields the
// grammar does not know ("The field is ignored") and an id line holding
// U+0000 ("ignore the field") are left out; the event object may span
// several data lines, which the parser joins with LF. Several id lines
// before the data are read as the parser reads them: the last one counts.
func idThenData(f sseframe.Frame) bool {
	seenID, seenData := false, false
	for _, l := range f.Lines {
		switch {
		case l.IsComment(), !sseframe.KnownField(l.Name), l.Name == "retry", l.Name == "event":
		case l.Name == "id":
			if strings.IndexByte(l.Value, 0) >= 0 {
				continue
			}
			if seenData {
				return false
			}
			seenID = true
		case l.Name == "data":
			if !seenID {
				return false
			}
			seenData = true
		}
	}
	return seenID && seenData
}

// lastEvent returns the last event frame and whether any event failed.
func lastEvent(frames []Frame) (Frame, bool, bool) {
	var last Frame
	found, failed := false, false
	for _, f := range frames {
		if f.Terminated && isEventFrame(f.Frame) {
			last, found = f, true
			if e, ok := f.event(); ok && e.failed() {
				failed = true
			}
		}
	}
	return last, found, failed
}

// FinalAfter: SSE-03. The last event of a run has id <runID>:after,
// runComplete true and content empty, null or missing. The event judged is
// the one with runComplete true (an event after it is SSE-06's), else the
// last. A failed run is left to SSE-05: the spec does not say that its last
// event completes it; a stream that ends inside a frame is SSE-02's.
var FinalAfter = Check{Rule: "SSE-03", Spec: "The last event of a run: id: is the run ID with the suffix :after, and the event object has runComplete true", Judge: finalAfter}

func finalAfter(x *View, _ *History) error {
	frames, err := sseStream(x)
	if err != nil {
		return err
	}
	// A recording that does not say how the stream ended may hold only
	// what a client read before it stopped: it is judged on the event
	// with runComplete true when it shows one (that event is the run's
	// last, whoever stopped), never on its lack.
	if x.Response.End != traffic.EndUnknown || x.Response.Body.Truncated {
		if err := ended(x); err != nil {
			return err
		}
	}
	for _, f := range frames {
		if !f.Terminated && !f.IsComment() {
			return skip("the stream ends inside a frame (SSE-02)")
		}
	}
	last, found, failed := lastEvent(frames)
	switch {
	case !found && x.Response.End == traffic.EndUnknown:
		return ended(x)
	case !found:
		return skip("no event frame")
	case failed:
		return skip("the run failed")
	}
	for _, f := range frames {
		if f.Terminated && isEventFrame(f.Frame) {
			if e, ok := f.event(); ok && e.complete() {
				last = f
				break
			}
		}
	}
	e, _ := last.event()
	id, _ := last.Field("id")
	run := runOf(frames)
	if !e.complete() || id != run+":after" || (e.Content != nil && *e.Content != "") {
		if !e.complete() {
			if err := ended(x); err != nil {
				return err
			}
		}
		return outcome.Failf("the last event of the run",
			"id "+quote([]byte(run+":after"))+", runComplete true and content empty, null or missing", "%s", quote([]byte(last.String())))
	}
	return nil
}

// CloseAtEnd: SSE-05. A stream the service ended ends with event: close and
// data {}, after an error too. Comments after it, and frames that dispatch
// nothing, are not frames a client sees.
var CloseAtEnd = Check{Rule: "SSE-05", Spec: "At the end: a frame with event: close and data {}. A missing event: close is an abnormal end.", Judge: closeAtEnd}

func closeAtEnd(x *View, _ *History) error {
	frames, err := sseStream(x)
	if err != nil {
		return err
	}
	// A connection to the service that broke mid-stream is an end without
	// event: close too: "A missing event: close is an abnormal end." A
	// recording that does not say how the stream ended shows a close
	// frame at its end, never its lack.
	switch x.Response.End {
	case traffic.EndError:
		if x.Response.Body.Truncated {
			return untested(cutReason(&x.Response.Body))
		}
	case traffic.EndUnknown:
		if x.Response.Body.Truncated || !closed(frames) {
			return ended(x)
		}
		return nil
	default:
		if err := ended(x); err != nil {
			return err
		}
	}
	for i := len(frames) - 1; i >= 0; i-- {
		f := frames[i]
		if f.Terminated && (f.IsComment() || !dispatches(f.Frame)) {
			continue // read past by a conforming client
		}
		if !f.Terminated || event(f.Frame) != "close" || !f.emptyObject() {
			_, _, failed := lastEvent(frames)
			after := ""
			if failed {
				after = " (the run had failed)"
			}
			if x.Response.End == traffic.EndError {
				after += " (the service's connection broke)"
			}
			return outcome.Failf("the end of the SSE stream"+after, "a frame event: close with data {}", "last frame %s", quote([]byte(f.String())))
		}
		return nil
	}
	return outcome.Fail("the end of the SSE stream", "a frame event: close with data {}", "")
}

// closed reports whether a stream's last frame (comments aside) is event:
// close with data {}.
func closed(frames []Frame) bool {
	for i := len(frames) - 1; i >= 0; i-- {
		f := frames[i]
		if f.IsComment() && f.Terminated {
			continue
		}
		return f.Terminated && event(f.Frame) == "close" && f.emptyObject()
	}
	return false
}

// NothingAfterComplete: SSE-06. No event follows the one with runComplete
// true.
var NothingAfterComplete = Check{Rule: "SSE-06", Spec: "A client can stop reading at the event with runComplete true.", Judge: nothingAfterComplete}

func nothingAfterComplete(x *View, _ *History) error {
	frames, err := sseStream(x)
	if err != nil {
		return err
	}
	done := false
	for _, f := range frames {
		if !f.Terminated || !isEventFrame(f.Frame) {
			continue
		}
		if done {
			return outcome.Failf("the frames after the runComplete event", "no further event", "%s", quote([]byte(f.String())))
		}
		if e, ok := f.event(); ok && e.complete() {
			done = true
		}
	}
	if !done {
		return skip("no runComplete event")
	}
	return nil
}

// DataIsObject: EVT-01. The data of every frame is one JSON object.
var DataIsObject = Check{Rule: "EVT-01", Spec: "Every SSE data: frame is one JSON object with these fields.", Judge: dataIsObject}

func dataIsObject(x *View, _ *History) error {
	frames, err := sseStream(x)
	if err != nil {
		return err
	}
	for _, f := range frames {
		if !f.Terminated || f.IsComment() {
			continue
		}
		if _, ok := f.Field("data"); !ok {
			continue
		}
		if _, ok := f.object(); !ok {
			return outcome.Failf("the data of an SSE frame", "one JSON object", "%s", quote([]byte(f.String())))
		}
	}
	return nil
}

// EventsNameRun: EVT-02. Every event of a synchronous answer (SSE or
// envelope) carries runID and threadID, and they name one run and one
// thread: the one the X-SVC-Thread-Id header names, or without the header
// the one the request resumed (with neither, threadID cannot be compared).
var EventsNameRun = Check{Rule: "EVT-02", Spec: "runID: Run the event belongs to; threadID: Thread the event belongs to", Judge: eventsNameRun}

func eventsNameRun(x *View, h *History) error {
	v, _, err := acceptOf(x)
	if err != nil {
		return err
	}
	if v != "text/event-stream" && v != "application/json" {
		return skip("the plain-text form has no event objects")
	}
	if _, err := body(x, v == "application/json"); err != nil {
		return err
	}
	evs, ok := eventsOf(x)
	if !ok || len(evs) == 0 {
		return skip("no event objects (EVT-01, FMT-01/02)")
	}
	var run, thread string
	for i, e := range evs {
		if e.RunID == nil || e.ThreadID == nil || *e.RunID == "" || *e.ThreadID == "" {
			return outcome.Failf(fmt.Sprintf("event %d", i+1), "runID and threadID set", "runID %s, threadID %s", show(e.RunID), show(e.ThreadID))
		}
		if i == 0 {
			run, thread = *e.RunID, *e.ThreadID
			continue
		}
		if *e.RunID != run || *e.ThreadID != thread {
			return outcome.Failf(fmt.Sprintf("event %d", i+1), fmt.Sprintf("the run %q of thread %q, as event 1", run, thread),
				"run %q of thread %q", *e.RunID, *e.ThreadID)
		}
	}
	if err := responseGap(x, threadHeader); err != nil {
		return err
	}
	want, why := x.Response.Header.Get(threadHeader), "the "+threadHeader+" response header"
	if inv, ok := InvokeOf(x); want == "" && ok {
		want, why = requestedThread(x, inv, h)
	}
	if want == "" {
		return skip("threadID cannot be compared: no %s response header and no thread named by the request", threadHeader)
	}
	if n, ok := deferred(x, h); ok {
		return pending(n)
	}
	if thread != want {
		return outcome.Failf("the events' threadID", fmt.Sprintf("%q, %s", want, why), "%q", thread)
	}
	return nil
}

func show(s *string) string {
	if s == nil {
		return "missing"
	}
	return fmt.Sprintf("%q", *s)
}

// isPing reports whether a frame is a ": ping" comment.
func isPing(f Frame) bool {
	return f.IsComment() && f.Terminated && strings.TrimSpace(f.Lines[0].Value) == "ping"
}

// completes reports whether a frame is the event with runComplete true.
func completes(f Frame) bool {
	if !isEventFrame(f.Frame) {
		return false
	}
	e, ok := f.event()
	return ok && e.complete()
}

// KeepalivePing: SSE-04. Nothing but a ": ping" may fill more than
// Keepalive+KeepaliveTolerance between frames: each frame or ping comes
// within that time of the frame or ping before it. It decides on a stream
// that shows a quiet the keepalive was due in: a frame more than that time
// after the frame before (pings kept it alive), or a ping at least
// KeepaliveDue after the last frame (the ping the quiet called for: a
// client may go away at it). A shorter quiet, or one cut before its ping,
// decides nothing: the ping may still have been on its way, and a ping
// early in a quiet does not show that one comes when 20 s have passed.
// Frames are measured up to the runComplete event ("when the run is
// quiet") or event: close.
var KeepalivePing = Check{Rule: "SSE-04", Spec: "Keepalive: when the run is quiet for 20 seconds, a comment line : ping is written.", Judge: keepalivePing}

func keepalivePing(x *View, _ *History) error {
	frames, err := sseStream(x)
	if err != nil {
		return err
	}
	if !x.Response.Body.Timed {
		return untested(NoTimings)
	}
	limit := Keepalive + KeepaliveTolerance
	decided, started, framed := false, false, false
	var last, lastFrame time.Duration
	var w worst
	for _, f := range frames {
		if !f.Terminated {
			continue
		}
		isFrame := isEventFrame(f.Frame) || event(f.Frame) == "start" || event(f.Frame) == "close"
		if !isFrame && !isPing(f) {
			continue
		}
		if gap := f.At - last; started && gap > limit {
			// A ping read late (or, in the harness's process, written
			// late) leaves the same gap.
			w.add(starved(x, last, f.At, gap-limit), outcome.Failf("the keepalive", fmt.Sprintf(`a ": ping" comment within %s of quiet`, limit),
				"nothing for %s (from +%s to +%s)", gap.Round(time.Millisecond), last.Round(time.Millisecond), f.At.Round(time.Millisecond)))
		}
		switch {
		case isFrame:
			if framed && f.At-lastFrame > limit {
				decided = true
			}
			lastFrame, framed = f.At, true
		case framed && f.At-lastFrame >= KeepaliveDue:
			decided = true
		}
		// "When the run is quiet": after the runComplete event the run is
		// over, so the quiet up to event: close is not measured.
		if event(f.Frame) == "close" || completes(f) {
			break
		}
		last, started = f.At, true
	}
	if err := w.err(); err != nil {
		return err
	}
	if !decided {
		return skip("the stream shows no quiet of %s ended by a ping, nor of more than %s", KeepaliveDue, limit)
	}
	return nil
}
