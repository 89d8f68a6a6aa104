package checks

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/invokeconf/invokeconf/outcome"
	"github.com/invokeconf/invokeconf/traffic"
)

var followupChecks = append([]Check{
	EventsOfRun,
	EventsWait,
}, chainChecks...)

// eventsCall returns the thread of a GET /api/threads/{id}/events answered
// 2xx, or a Skip.
func eventsCall(x *View) (string, error) {
	rt := x.Route()
	if rt.Kind != RouteEvents {
		return "", skip("not the events route")
	}
	if x.Response == nil || x.Response.Status/100 != 2 {
		return "", skip("not answered 2xx")
	}
	return rt.ID, nil
}

// followupEvents returns the event objects of an events-route answer. Its
// shape is not shown, so only an SSE stream or an envelope of events is
// read.
func followupEvents(x *View, whole bool) ([]eventObject, error) {
	if _, err := body(x, whole); err != nil {
		return nil, err
	}
	evs, ok := eventsOf(x)
	if !ok || len(evs) == 0 {
		return nil, skip("the answer is neither an SSE stream nor an envelope of events (its shape is not shown)")
	}
	return evs, nil
}

// EventsOfRun: ASYNC-02. The events route with runID delivers that run's
// events: every event that names a run or a thread names that run and the
// thread in the path; judged only when some event names a run.
var EventsOfRun = Check{Rule: "ASYNC-02", Spec: "With runID, delivers that run's events after the fact.", Judge: eventsOfRun}

func eventsOfRun(x *View, _ *History) error {
	thread, err := eventsCall(x)
	if err != nil {
		return err
	}
	vs := x.Route().Query["runID"]
	if len(vs) != 1 || vs[0] == "" {
		return skip("no runID")
	}
	evs, err := followupEvents(x, false)
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(evs, func(e eventObject) bool { return e.RunID != nil }) {
		// Events that name no run do not show whose they are.
		return skip("no event names a run")
	}
	for i, e := range evs {
		otherThread := e.ThreadID != nil && *e.ThreadID != "" && *e.ThreadID != thread
		if e.RunID != nil && *e.RunID != vs[0] || otherThread {
			f := outcome.Failf(fmt.Sprintf("event %d of the events of run %q", i+1, vs[0]),
				fmt.Sprintf("run %q of thread %q", vs[0], thread), "run %s of thread %s", show(e.RunID), show(e.ThreadID))
			if otherThread && (e.RunID == nil || *e.RunID == vs[0]) {
				// The run's events, delivered, name another thread than
				// theirs: "threadID: Thread the event belongs to" (EVT-02).
				f.Breaks("EVT-02")
			}
			return f
		}
	}
	return nil
}

// EventsWait: ASYNC-04. With Accept: application/json the events route
// answers once the run has finished: an envelope of events holds the run's
// final event, runComplete true (a failed run aside). Where that event
// stands is not fixed: replayComplete "separates already existing events
// from live ones". A thread an abort met is not judged: the spec does not
// say a cancelled run completes.
var EventsWait = Check{Rule: "ASYNC-04", Spec: "With Accept: application/json the call stays open until the run finishes.", Judge: eventsWait}

func eventsWait(x *View, h *History) error {
	t, err := eventsCall(x)
	if err != nil {
		return err
	}
	if v, _, err := accept(x); err != nil {
		return err
	} else if v != "application/json" {
		return skip("Accept is not application/json")
	}
	if h.abortedBefore(t, x.Start) {
		return skip("an abort of thread %q was answered before the call (a cancelled run need not complete)", t)
	}
	if _, err := body(x, true); err != nil {
		return err
	}
	items, ok := x.envelopeItems()
	if !ok {
		return skip("the answer is not an envelope of events (its shape is not shown)")
	}
	const want = "sent once the run finished: an event has runComplete true"
	if len(items) == 0 {
		// A finished run has at least its final event.
		return outcome.Failf("the events of a run, with Accept: application/json", want, "no events: %s", quote(x.Body()))
	}
	evs, err := followupEvents(x, true)
	if err != nil {
		return err
	}
	for _, e := range evs {
		if e.failed() {
			return skip("the run failed")
		}
	}
	if !slices.ContainsFunc(evs, eventObject.complete) {
		return outcome.Failf("the events of a run, with Accept: application/json", want,
			"%d events, none with runComplete true: %s", len(evs), quote(x.Body()))
	}
	return nil
}

// abortedBefore reports whether an abort of the thread, answered 2xx, was
// answered before t (or at an unknown time).
func (h *History) abortedBefore(thread string, t time.Time) bool {
	if h == nil {
		return false
	}
	for _, ab := range h.aborts[thread] {
		if ab.answered.IsZero() || t.IsZero() || ab.answered.Before(t) {
			return true
		}
	}
	return false
}

// Checks over several exchanges: what a thread's follow-ups show once a run
// on it completed, and what follows an abort. They read what History kept
// of the runs and aborts before the exchange, and decide only when that
// settles the rule.
var chainChecks = []Check{
	{Rule: "THREAD-01", Spec: "When the path carries a thread segment, it is used.", Aspect: FollowUps, Judge: ThreadFollowUp("THREAD-01")},
	{Rule: "THREAD-02", Spec: "Otherwise, when the header X-SVC-Thread-Id is present, it is used.", Aspect: FollowUps, Judge: ThreadFollowUp("THREAD-02")},
	{Rule: "THREAD-03", Spec: "Otherwise a new thread is created.", Aspect: FollowUps, Judge: ThreadFollowUp("THREAD-03")},
	NewThreadExists,
	EventsLastCompleted,
	AbortEndsRun,
}

// FollowUps is the aspect of THREAD-01/02/03 that the thread itself shows
// the run, not only the response header.
const FollowUps = "the thread's follow-ups (GET /api/threads/{id} sent more than the report lag after an SSE or envelope answer showed a run on the thread complete)"

// NewThreadFollowUps is the aspect of THREAD-04 that the thread a header
// named as new exists.
const NewThreadFollowUps = "the new thread's follow-ups (GET /api/threads/{id} of a thread a header named as new)"

// AbortTolerance is how long after its abort was answered a run may still
// produce content. The spec gives cancelling no time; the active scenario
// pauses 5 s after the content it aborts at, so a service that takes up to
// 4 s to say that content and answer the abort still has a second to
// cancel.
const AbortTolerance = time.Second

// DefaultReportLag is how long after a run's answer showed it complete the
// thread's follow-ups may still report the run before it, unless the
// History says otherwise (History.ReportLag, the proxy's --report-lag): the
// spec says lastRunID "reports completion" but not how soon, and the active
// scenarios poll for it up to their deadline (steps.DefaultDeadline), so a
// service is given as long here. The events route without runID, "the
// thread's last completed run", reads the same record of completion.
const DefaultReportLag = 15 * time.Second

// reportLag is the History's ReportLag, or DefaultReportLag.
func (h *History) reportLag() time.Duration {
	if h == nil || h.ReportLag <= 0 {
		return DefaultReportLag
	}
	return h.ReportLag
}

// Bounds of what History keeps of runs.
const (
	maxRunsPerThread = 32
	maxRunThreads    = 4096
	maxContentPieces = 256
)

// runRecord is what History keeps of a run an invoke started.
type runRecord struct {
	run    string // "" when the answer named none (plain text)
	thread string
	// rule is how the call chose the thread: THREAD-01 (segment), THREAD-02
	// (header), THREAD-03 (new); "" for a thread in {id}.
	rule string
	sent time.Time
	// complete: an answer showed the run complete (runComplete). done is
	// when it surely had (the frame's arrival, or the answer's end when
	// the recording has no chunk timings but its own times, as a HAR
	// file's); zero when it did not, or the recording does not say when.
	complete bool
	done     time.Time
	sc       *script     // the prompt as an agent script, nil otherwise
	content  []timedText // a scripted SSE answer's content, as it arrived
	ended    bool        // the service ended the answer
	streamed bool        // a synchronous SSE answer
	project  bool        // on a project route
}

type timedText struct {
	at   time.Time
	text string
}

type abortRecord struct {
	sent, answered time.Time
	// runs are the runs the abort's query or body names; other says it
	// may name one the recording cannot read (a redacted or cut body).
	runs  []string
	other bool
}

// abortOfExchange records an abort: its payload is "not shown", so a runID
// in its query or its JSON body is read as naming the run it cancels.
func abortOfExchange(x *View) abortRecord {
	ab := abortRecord{sent: x.Start, answered: when(x, x.Response.HeaderAt)}
	for _, v := range x.Route().Query["runID"] {
		ab.runs = append(ab.runs, v)
	}
	b := &x.Request.Body
	switch {
	case b.Size == 0:
	case !b.Complete():
		ab.other = true
	default:
		if m, ok := object(string(b.Bytes())); ok {
			if id := idText(m["runID"]); id != nil {
				ab.runs = append(ab.runs, *id)
			}
		}
	}
	return ab
}

// cancels reports whether the abort may cancel the run: it names no run
// but that one.
func (ab abortRecord) cancels(r *runRecord) bool {
	if ab.other {
		return false
	}
	for _, id := range ab.runs {
		if id != r.run {
			return false
		}
	}
	return true
}

// when returns the time of an offset of x; zero when unknown.
func when(x *View, d time.Duration) time.Time {
	if x.Start.IsZero() || d < 0 {
		return time.Time{}
	}
	return x.Start.Add(d)
}

// latest returns the latest time an offset of x may stand for, given the
// precision of the recording's times; zero when unknown.
func latest(x *View, d time.Duration) time.Time {
	t := when(x, d)
	if t.IsZero() {
		return t
	}
	return t.Add(x.Precision)
}

// earliest returns the earliest time x may have started.
func earliest(x *View) time.Time {
	if x.Start.IsZero() {
		return x.Start
	}
	return x.Start.Add(-x.Precision)
}

// endedWhole reports whether the recording holds an answer as the service
// ended it: the recording says so, or it does not say how answers ended
// (a HAR file of another program) and holds the whole body.
func endedWhole(x *View) bool {
	r := x.Response
	return r.Body.Complete() && (r.End == traffic.EndComplete || r.End == traffic.EndUnknown)
}

// selectionRule is the rule by which an invoke chose its thread.
func selectionRule(x *View, inv Invoke, h *History) string {
	hdr := x.Request.Header.Values(threadHeader)
	switch {
	case inv.ThreadSegment != "":
		return "THREAD-01"
	case !inv.Project && h.Thread(inv.ID):
		return "" // ROUTE-03
	case requestGap(x, threadHeader) != nil:
		return "" // which rule chose the thread is not known
	case len(hdr) == 1 && hdr[0] != "":
		return "THREAD-02"
	case len(hdr) == 0:
		return "THREAD-03"
	}
	return ""
}

// runOfExchange reads the run an invoke answered 2xx started; nil for any other
// exchange, or an answer that names no thread.
func runOfExchange(x *View, h *History) *runRecord {
	inv, err := invoked(x)
	if err != nil {
		return nil
	}
	t, others := answerThread(x)
	if t == "" && len(others) > 0 {
		t = others[0]
	}
	if t == "" {
		return nil
	}
	r := &runRecord{thread: t, rule: selectionRule(x, inv, h), sent: x.Start, project: inv.Project}
	if a, ok := asyncAck(x); ok {
		r.run = a.RunID
	}
	if s, ok := x.timedScript(); ok {
		r.sc = &s
	}
	if inv.Async {
		return r
	}
	body := &x.Response.Body
	r.ended = x.Response.End == traffic.EndComplete && !body.Truncated
	switch {
	case looksSSE(x):
		r.streamed = true
		for _, f := range x.Frames() {
			if !f.Terminated || !isEventFrame(f.Frame) {
				continue
			}
			e, ok := f.event()
			if !ok {
				continue
			}
			var at time.Time
			if body.Timed {
				at = when(x, f.At)
			}
			if r.run == "" && e.RunID != nil {
				r.run = *e.RunID
			}
			if e.complete() && !r.complete {
				r.complete, r.done = true, at
			}
		}
		r.noteContent(x)
	case FormOf(x) == FormPlain && x.Response.Status/100 == 2:
		// Plain text streams the run's content too (an abort's effect shows
		// in it); it marks no completion.
		r.streamed = true
		r.noteContent(x)
	case surelyEnvelope(x):
		evs, ok := eventsOf(x)
		if !ok || len(evs) == 0 {
			break
		}
		if evs[0].RunID != nil {
			r.run = *evs[0].RunID
		}
		if evs[len(evs)-1].complete() && endedWhole(x) {
			r.complete = true
		}
	}
	if r.complete && r.done.IsZero() {
		// The run was complete by the time the answer's last byte came.
		if end, ok := x.Response.LastByte(); ok {
			r.done = latest(x, end)
		}
	}
	return r
}

// addRun records the run x started.
func (h *History) addRun(x *View) {
	r := runOfExchange(x, h)
	if h.Defer {
		if n, ok := namesOf(x, h); ok && n.Disputed() {
			// Which thread the run is on waits for the follow-ups.
			if r != nil && r.run == "" {
				r.run = n.Run
			}
			h.hold(x, n, r)
			return
		}
	}
	if r != nil {
		h.keepRun(r)
	}
}

// keepRun records a run on its thread.
func (h *History) keepRun(r *runRecord) {
	rs, ok := h.runs[r.thread]
	if !ok && len(h.runs) >= maxRunThreads {
		return
	}
	if len(rs) >= maxRunsPerThread {
		rs = append(rs[:0:0], rs[1:]...)
	}
	h.runs[r.thread] = append(rs, r)
}

// addAbort records an abort answered 2xx, and the completion an events
// answer with runID shows (an async run's only sign of it).
func (h *History) addAbort(x *View) {
	if t, ok := abortCall(x); ok {
		if len(h.aborts[t]) < maxRunsPerThread {
			h.aborts[t] = append(h.aborts[t], abortOfExchange(x))
		}
		return
	}
	t, err := eventsCall(x)
	vs := x.Route().Query["runID"]
	if err != nil || len(vs) != 1 || !endedWhole(x) {
		return
	}
	r := h.run(t, vs[0])
	evs, ok := eventsOf(x)
	if r == nil || !r.done.IsZero() || !ok || len(evs) == 0 || !evs[len(evs)-1].complete() {
		return
	}
	r.complete = true
	if end, ok := x.Response.LastByte(); ok {
		r.done = latest(x, end)
	}
}

// run returns the record of a run of a thread; nil when none.
func (h *History) run(thread, id string) *runRecord {
	if h == nil || id == "" {
		return nil
	}
	for _, r := range h.runs[thread] {
		if r.run == id {
			return r
		}
	}
	return nil
}

// onlyElsewhere reports whether the run is a recorded run of another
// thread and of none of this one (the spec does not say run IDs are unique
// across threads, so a run of this thread with that ID clears it).
func (h *History) onlyElsewhere(id, thread string) bool {
	if h == nil || id == "" || h.run(thread, id) != nil {
		return false
	}
	for t := range h.runs {
		if t != thread && h.run(t, id) != nil {
			return true
		}
	}
	return false
}

// lastDone returns the run of the thread that surely completed last before
// t (its answer showed it complete more than its ReportLag before), and the
// runs the thread had completed before that run was started. Callers pass
// the earliest time the follow-up may have started (earliest).
func (h *History) lastDone(thread string, t time.Time) (*runRecord, []string) {
	if h == nil || t.IsZero() {
		return nil, nil
	}
	var last *runRecord
	for _, r := range h.runs[thread] {
		if !r.done.IsZero() && r.done.Add(h.reportLag()).Before(t) && (last == nil || r.done.After(last.done)) {
			last = r
		}
	}
	if last == nil {
		return nil, nil
	}
	var older []string
	for _, r := range h.runs[thread] {
		if r.run != "" && r.run != last.run && !r.done.IsZero() && r.done.Before(last.sent) {
			older = append(older, r.run)
		}
	}
	return last, older
}

// pending returns an untested Skip when a run of the thread that the
// recording saw complete cannot count yet for a follow-up sent at t: the
// recording does not say when the answer that showed it complete ended,
// or it completed within the report lag. Only runs put on the thread by
// rule count ("" for any), and only those started after run after (nil
// for all): a later run that may have completed decides what the
// follow-up must show.
func (h *History) pending(thread string, t time.Time, rule string, after *runRecord) error {
	if h == nil || t.IsZero() {
		return nil
	}
	var untimed, recent *runRecord
	for _, r := range h.runs[thread] {
		if rule != "" && r.rule != rule || after != nil && !r.sent.After(after.sent) {
			continue
		}
		switch {
		case r.complete && r.done.IsZero() && r.sent.Before(t):
			untimed = r
		case !r.done.IsZero() && r.done.Before(t) && !r.done.Add(h.reportLag()).Before(t):
			recent = r
		}
	}
	name := func(r *runRecord) string {
		if r.run == "" {
			return fmt.Sprintf("a run of thread %q", thread)
		}
		return fmt.Sprintf("run %q of thread %q", r.run, thread)
	}
	switch {
	case recent != nil:
		return untested(fmt.Sprintf("the call came %s after %s surely completed, within the report lag of %s (--report-lag)",
			t.Sub(recent.done).Round(time.Millisecond), name(recent), h.reportLag()))
	case untimed != nil:
		return untested(fmt.Sprintf("the recording does not say when the answer that showed %s complete ended "+
			"(no chunk timings, no HAR time)", name(untimed)))
	}
	return nil
}

// Ran is what a thread's follow-ups must show once a run on it completed:
// that run, or a later one, never one the thread had completed before.
type Ran struct {
	// Run is the run that completed ("" when its answer did not name it).
	Run string
	// Older are runs the thread had completed before Run began.
	Older []string
	// AllOlder says that Older holds every such run (the caller knows the
	// thread from its start), so any other run is a later one.
	AllOlder bool
}

// Shown judges the run a follow-up names (lastRunID, or the run of the
// events without runID); what names the value for failures.
func (r Ran) Shown(got, what string) error {
	want := "the run that completed on the thread, or a later one"
	if r.Run != "" {
		want = fmt.Sprintf("run %q, which completed on the thread, or a later one", r.Run)
	}
	if len(r.Older) > 0 {
		want += fmt.Sprintf(" (not the thread's earlier %s)", strings.Join(quoteAll(r.Older), ", "))
	}
	switch {
	case got == "":
		return outcome.Fail(what, want, "none")
	case slices.Contains(r.Older, got):
		return outcome.Failf(what, want, "%q, a run the thread had completed before that run began", got)
	case got == r.Run || r.AllOlder:
		return nil
	}
	return skip("%s %q is a run the recording did not see complete", what, got)
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

// goneNewThread reports whether x is GET /api/threads/{id} answered 404
// for a thread that the X-SVC-Thread-Id response header of a call naming
// no thread had named (exchange id) before x was sent.
func (h *History) goneNewThread(x *View) (thread string, id int, ok bool) {
	rt := x.Route()
	if h == nil || rt.Kind != RouteThread || x.Response == nil || x.Response.Status != 404 {
		return "", 0, false
	}
	id, ok = h.newThreads[rt.ID]
	return rt.ID, id, ok && h.NamedBefore(rt.ID, earliest(x))
}

// NewThreadExists: THREAD-04, the new thread's follow-ups. The header of a
// call that named no thread names the run's thread, a new one that exists
// ("Every response carries the header X-SVC-Thread-Id, for new and resumed
// threads"): GET /api/threads/{id} of it, sent after the header came,
// answers 2xx; 404 shows an ID that no thread has. Without it THREAD-03
// cannot be judged (the run's thread is not known), and is not failed.
var NewThreadExists = Check{Rule: "THREAD-04", Spec: "Every response carries the header X-SVC-Thread-Id, for new and resumed threads.", Aspect: NewThreadFollowUps, Judge: newThreadExists}

func newThreadExists(x *View, h *History) error {
	if t, id, ok := h.goneNewThread(x); ok {
		return outcome.Failf(fmt.Sprintf("thread %q, named new by the %s response header of exchange #%d", t, threadHeader, id),
			"a thread that exists (GET /api/threads/{id} answers it)", "%d", x.Response.Status)
	}
	t, err := threadCall(x)
	if err != nil {
		return err
	}
	if _, ok := h.newThreads[t]; !ok || !h.NamedBefore(t, earliest(x)) {
		return skip("not a thread a header named as new before the call")
	}
	return nil
}

// threadCall returns the thread of a GET /api/threads/{id} answered 2xx.
func threadCall(x *View) (string, error) {
	rt := x.Route()
	if rt.Kind != RouteThread {
		return "", skip("not GET /api/threads/{id}")
	}
	if x.Response == nil || x.Response.Status/100 != 2 {
		return "", skip("not answered 2xx")
	}
	return rt.ID, nil
}

// abortCall returns the thread of a POST /api/threads/{id}/abort answered
// 2xx.
func abortCall(x *View) (string, bool) {
	rt := x.Route()
	if rt.Kind != RouteAbort || x.Response == nil || x.Response.Status/100 != 2 {
		return "", false
	}
	return rt.ID, true
}

// LastRunID reads lastRunID from a thread's JSON: "" when absent or null.
// Its type is not shown: a string or a number will do.
func LastRunID(body []byte) (string, bool) {
	m, ok := object(string(body))
	if !ok {
		return "", false
	}
	if id := idText(m["lastRunID"]); id != nil {
		return *id, true
	}
	return "", true
}

// ThreadFollowUp returns the follow-up aspect of a thread selection rule
// (THREAD-01/02/03): GET /api/threads/{id}, sent after a run the rule put
// on the thread surely completed, reports that run through lastRunID ("a
// continued thread's follow-ups show the new run"; a new thread exists and
// holds its run). The thread's last run surely completed before the call
// decides which rule is judged.
func ThreadFollowUp(rule string) func(*View, *History) error {
	return func(x *View, h *History) error {
		if t, id, ok := h.goneNewThread(x); ok {
			// The header named no thread: THREAD-04's failure
			// (NewThreadExists); which thread holds the run is not known.
			return skip("thread %q, named new by the %s response header of exchange #%d, does not exist: the header is THREAD-04's to judge, and the run's thread is not known",
				t, threadHeader, id)
		}
		t, err := threadCall(x)
		if err != nil {
			return err
		}
		b, err := body(x, true)
		if err != nil {
			return err
		}
		got, ok := LastRunID(b)
		if !ok {
			return skip("the answer is not a JSON object")
		}
		c, older := h.lastDone(t, earliest(x))
		if c == nil || c.rule != rule {
			if err := h.pending(t, earliest(x), rule, c); err != nil {
				return err
			}
		}
		switch {
		case c == nil:
			return skip("no run of thread %q surely completed before the call", t)
		case c.rule != rule:
			return skip("the thread's last completed run was not put on it by %s", rule)
		}
		if got != c.run && h.onlyElsewhere(got, t) {
			return outcome.Failf(fmt.Sprintf("lastRunID of thread %q", t), fmt.Sprintf("a run of thread %q", t),
				"%q, a run the recording saw on another thread", got)
		}
		// A new thread had no run before its first.
		return Ran{Run: c.run, Older: older, AllOlder: rule == "THREAD-03"}.Shown(got, fmt.Sprintf("lastRunID of thread %q", t))
	}
}

// EventsLastCompleted: ASYNC-03. Once a run of the thread surely
// completed, the events route without runID answers, when the service
// ended it, with a completed run (its events hold the final event,
// runComplete true, unless the run failed), and not one the thread had
// completed before a run that surely completed before the call.
var EventsLastCompleted = Check{Rule: "ASYNC-03", Spec: "Without it, returns the thread's last completed run (on a resumed thread, the previous turn's answer).", Judge: eventsLastCompleted}

func eventsLastCompleted(x *View, h *History) error {
	t, err := eventsCall(x)
	if err != nil {
		return err
	}
	if _, ok := x.Route().Query["runID"]; ok {
		return skip("with runID (ASYNC-02)")
	}
	evs, err := followupEvents(x, true)
	if err != nil {
		return err
	}
	got, complete := "", false
	for _, e := range evs {
		switch {
		case e.failed():
			return skip("the run failed")
		case e.RunID == nil:
		case got == "":
			got = *e.RunID
		case got != *e.RunID:
			return skip("events of several runs")
		}
		complete = complete || e.complete()
	}
	what := fmt.Sprintf("the events of thread %q without runID", t)
	c, older := h.lastDone(t, earliest(x))
	if !complete {
		// A client can stop reading; and with no completed run the spec
		// does not say what the route returns.
		switch {
		case x.Response.End == traffic.EndUnknown:
			return skip("the recording does not say whether the service ended the answer (the client may have stopped reading)")
		case x.Response.End != traffic.EndComplete:
			return skip("the service did not end the answer (the client may have stopped reading)")
		case c == nil:
			if err := h.pending(t, earliest(x), "", nil); err != nil {
				return err
			}
			return skip("no run of thread %q surely completed before the call", t)
		case got != "" && got == c.run:
			// The run the recording saw complete last: the right run,
			// its final event left out. Which run is this rule's; an
			// envelope without the final event is ASYNC-04's (defect
			// events-no-final); the shape is not shown otherwise.
			return Ran{Run: c.run, Older: older}.Shown(got, "the run of "+what)
		}
		return outcome.Failf(what, "the thread's last completed run: its events end with runComplete true",
			"%d events of run %s, none with runComplete true: %s", len(evs), show(&got), quote(x.Body()))
	}
	if got == "" {
		return skip("the events name no run")
	}
	if c == nil {
		if err := h.pending(t, earliest(x), "", nil); err != nil {
			return err
		}
		return skip("no run of thread %q surely completed before the call", t)
	}
	return Ran{Run: c.run, Older: older}.Shown(got, "the run of "+what)
}

// AbortEndsRun: ASYNC-06, "Cancels a run", over the abort and the run it
// cancelled: a stream of an agent script that an abort of its thread,
// answered 2xx, met while it was going (after its first content, before
// its end) ends without the content the script says later than
// AbortTolerance after the abort; and the run's events (the events route
// with runID, sent after the abort) hold what the stream had shown before
// the abort and nothing of that later content. Whichever of the stream and
// the abort ends last decides the pair.
var AbortEndsRun = Check{Rule: "ASYNC-06", Spec: "POST /api/threads/{id}/abort: Cancels a run.", Judge: abortEndsRun}

func abortEndsRun(x *View, h *History) error {
	if t, ok := abortCall(x); ok {
		ab := abortOfExchange(x)
		var met []*runRecord
		if h != nil {
			for _, r := range h.runs[t] {
				if r.streamed && going(r, ab) {
					met = append(met, r)
				}
			}
		}
		switch len(met) {
		case 0:
			if h != nil {
				for _, r := range h.runs[t] {
					if r.streamed && untimedScript(r) {
						return untested(NoTimings) // when the abort met it is not known
					}
				}
			}
			return skip("no recorded stream of an agent script on thread %q was going", t)
		case 1:
			return abortedStream(met[0], ab)
		}
		return skip("several runs of thread %q were going (the spec says the abort cancels a run)", t)
	}
	if t, err := eventsCall(x); err == nil {
		vs := x.Route().Query["runID"]
		if len(vs) != 1 {
			return skip("no single runID")
		}
		r := h.run(t, vs[0])
		if r == nil || !r.streamed {
			return skip("no recorded stream of run %q", vs[0])
		}
		ab, ok := abortOf(r, h)
		if !ok || ab.answered.After(x.Start) {
			return skip("no abort of thread %q met run %q before the call", t, vs[0])
		}
		return abortedEvents(r, ab, x)
	}
	inv, err := invoked(x)
	if err != nil || inv.Async {
		return skip("not an abort, a synchronous invoke or the events route")
	}
	r := runOfExchange(x, h)
	if r == nil || !r.streamed {
		return skip("not an SSE or plain-text answer naming its thread")
	}
	ab, ok := abortOf(r, h)
	if !ok {
		if untimedScript(r) && h != nil && len(h.aborts[r.thread]) > 0 {
			return untested(NoTimings) // whether an abort met it is not known
		}
		return skip("no abort of the thread met the run")
	}
	return abortedStream(r, ab)
}

// noteContent keeps the answer of a run's stream as it arrived, however
// the events (or reads) split it, for a run of an agent script.
func (r *runRecord) noteContent(x *View) {
	text, pieces, ok := x.Answer()
	if !ok || r.sc == nil {
		return
	}
	for _, p := range pieces {
		if len(r.content) == maxContentPieces {
			break
		}
		var at time.Time
		if x.Response.Body.Timed && p.At >= 0 {
			at = when(x, p.At)
		}
		r.content = append(r.content, timedText{at, text[p.Start:p.End]})
	}
}

// untimedScript reports whether a run is an agent script whose content
// the recording holds without arrival times: whether an abort met it
// going is not known.
func untimedScript(r *runRecord) bool {
	return r.sc != nil && len(r.content) > 0 && r.content[0].at.IsZero()
}

// abortOf returns the first recorded abort that met the run going.
func abortOf(r *runRecord, h *History) (abortRecord, bool) {
	if h == nil {
		return abortRecord{}, false
	}
	for _, ab := range h.aborts[r.thread] {
		if going(r, ab) {
			return ab, true
		}
	}
	return abortRecord{}, false
}

// going reports whether an abort was sent while a scripted run was under
// way: after its first content arrived. Whether it had ended is the
// script's to say (afterAbort): a run that follows it cannot have said
// what it says later; and what arrived before the abort counts as said.
func going(r *runRecord, ab abortRecord) bool {
	return r.sc != nil && len(r.content) > 0 && ab.cancels(r) && !r.content[0].at.IsZero() && !ab.sent.IsZero() && !ab.answered.IsZero() &&
		ab.sent.After(r.content[0].at)
}

// afterAbort returns the script's text and how much of it the run may say
// once aborted: the fragments it cannot have produced before the abort was
// answered plus AbortTolerance are cut, unless they had arrived before the
// abort was sent (an agent faster than its script); ok is false when none
// is cut.
func afterAbort(r *runRecord, ab abortRecord) (text string, may int, ok bool) {
	var all strings.Builder
	may = -1
	for _, f := range r.sc.frags {
		if may < 0 && r.sent.Add(r.sc.lead+f.at).After(ab.answered.Add(AbortTolerance)) {
			may = all.Len()
		}
		all.WriteString(f.text)
	}
	if before := len(joined(r.content, ab.sent)); may >= 0 && before > may {
		may = before
	}
	return all.String(), may, may >= 0 && may < all.Len()
}

func joined(ts []timedText, before time.Time) string {
	var b strings.Builder
	for _, t := range ts {
		if before.IsZero() || t.at.Before(before) {
			b.WriteString(t.text)
		}
	}
	return b.String()
}

// abortedStream judges the stream of a run its thread's abort met.
func abortedStream(r *runRecord, ab abortRecord) error {
	text, may, ok := afterAbort(r, ab)
	if !ok {
		return skip("the script says nothing later than %s after the abort", AbortTolerance)
	}
	got := joined(r.content, time.Time{})
	if !strings.HasPrefix(text, got) {
		return skip("the stream's content is not the script's text")
	}
	if len(got) > may {
		// The abort named the thread the run's answer named: an answer that
		// named another thread than the run's, or a call that did not run
		// on the thread it chose, explains a run it missed.
		f := outcome.Failf(fmt.Sprintf("the SSE stream of run %q after an abort of its thread", r.run),
			fmt.Sprintf("the run cancelled: no content the script says more than %s after the abort, at most %q", AbortTolerance, text[:may]),
			"%q", got).Explained(ruleOnRoute("THREAD-04", r.project))
		if r.rule != "" {
			f.Explained(ruleOnRoute(r.rule, r.project))
		}
		return f
	}
	if !r.ended {
		return skip("the stream did not end as the service wrote it")
	}
	return nil
}

// abortedEvents judges the events route's answer for a run an abort met.
func abortedEvents(r *runRecord, ab abortRecord, x *View) error {
	if _, err := body(x, true); err != nil {
		return err
	}
	if x.Response.End != traffic.EndComplete {
		return skip("the service did not end the answer (the client may have stopped reading)")
	}
	evs, ok := eventsOf(x)
	if !ok {
		return skip("the answer is neither an SSE stream nor an envelope of events (its shape is not shown)")
	}
	var contents []json.RawMessage
	terminal := false
	for _, e := range evs {
		contents = append(contents, e.ContentRaw)
		terminal = terminal || e.complete() || e.failed()
	}
	got := joinContent(contents)
	text, may, ok := afterAbort(r, ab)
	if !ok {
		return skip("the script says nothing later than %s after the abort", AbortTolerance)
	}
	if !strings.HasPrefix(text, got) {
		return skip("the events' content is not the script's text")
	}
	what := fmt.Sprintf("the events of run %q, aborted", r.run)
	if len(got) > may {
		return outcome.Failf(what, fmt.Sprintf("the run cancelled: no content the script says more than %s after the abort, at most %q", AbortTolerance, text[:may]),
			"%q", got)
	}
	if v, _, err := accept(x); !terminal && (err != nil || v != "application/json") {
		// Only that Accept keeps the call open until the run finishes:
		// without it the events may be read before they were all kept.
		return nil
	}
	if before := joined(r.content, ab.sent); len(got) < len(before) {
		return outcome.Failf(what, fmt.Sprintf("what its stream showed before the abort, %q (With runID, delivers that run's events after the fact)", before),
			"%q", got)
	}
	return nil
}
