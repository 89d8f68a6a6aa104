package checks

import (
	"encoding/json"
	"fmt"

	"github.com/invokeconf/invokeconf/outcome"
)

var threadChecks = []Check{
	PathThreadWins,
	HeaderThreadUsed,
	NewThread,
	ThreadHeader,
	AsyncAck,
	// A follow-up that shows on which thread a disputed answer's run is
	// blames the names that differ (identity.go).
	{Rule: "THREAD-01", Spec: "When the path carries a thread segment, it is used.", Judge: Settled("THREAD-01")},
	{Rule: "THREAD-02", Spec: "Otherwise, when the header X-SVC-Thread-Id is present, it is used.", Judge: Settled("THREAD-02")},
	{Rule: "THREAD-03", Spec: "Otherwise a new thread is created.", Judge: Settled("THREAD-03")},
	{Rule: "THREAD-04", Spec: "Every response carries the header X-SVC-Thread-Id, for new and resumed threads.", Judge: Settled("THREAD-04")},
	{Rule: "ASYNC-01", Spec: "When true, the call returns at once with threadID and runID (JSON) and the run continues on the server", Judge: Settled("ASYNC-01")},
	{Rule: "EVT-02", Spec: "runID: Run the event belongs to; threadID: Thread the event belongs to", Judge: Settled("EVT-02")},
}

// invoked returns x's invoke call when it was answered 2xx, sync or async.
func invoked(x *View) (Invoke, error) {
	inv, ok := InvokeOf(x)
	switch {
	case !ok:
		return inv, skip("not an invoke call")
	case x.Response == nil:
		return inv, skip("no response")
	case x.Response.Status/100 != 2:
		return inv, skip("answered %d", x.Response.Status)
	}
	return inv, nil
}

// answerThread returns the thread x's answer runs on, as its header says,
// and what else names it (the async acknowledgement, the events).
func answerThread(x *View) (string, []string) {
	h, others, _ := answerThreads(x)
	return h, others
}

// answerThreads is answerThread with, for each other name, the rule that
// says it names the run's thread: ASYNC-01 for the acknowledgement, EVT-02
// for the events.
func answerThreads(x *View) (string, []string, []string) {
	var others, rules []string
	if a, ok := asyncAck(x); ok {
		others, rules = append(others, a.ThreadID), append(rules, "ASYNC-01")
	}
	if evs, ok := eventsOf(x); ok {
		for _, e := range evs {
			// An empty threadID names no thread: EVT-02 judges it.
			if e.ThreadID != nil && *e.ThreadID != "" {
				others, rules = append(others, *e.ThreadID), append(rules, "EVT-02")
				break
			}
		}
	}
	return x.Response.Header.Get(threadHeader), others, rules
}

// ThreadHeader: THREAD-04. Every 2xx invoke response carries X-SVC-Thread-Id
// once (two values name no one thread), and it names the thread the answer names (the events' threadID, the async
// acknowledgement's).
var ThreadHeader = Check{Rule: "THREAD-04", Spec: "Every response carries the header X-SVC-Thread-Id, for new and resumed threads.", Judge: threadHeaderCarried}

func threadHeaderCarried(x *View, hist *History) error {
	if _, err := invoked(x); err != nil {
		return err
	}
	if err := responseGap(x, threadHeader); err != nil {
		return err
	}
	h, others, rules := answerThreads(x)
	if vs := x.Response.Header.Values(threadHeader); len(vs) != 1 || h == "" {
		return outcome.Failf("the "+threadHeader+" response header", "one value, naming the run's thread", "%q", vs)
	}
	if n, ok := deferred(x, hist); ok {
		return pending(n)
	}
	for i, o := range others {
		if o != h {
			// The header and the answer disagree: the answer's name for
			// the thread (the acknowledgement's, ASYNC-01; the events',
			// EVT-02) may be the wrong one.
			return outcome.Failf("the "+threadHeader+" response header", fmt.Sprintf("the thread the answer names, %q", o), "%q", h).
				Explained(rules[i])
		}
	}
	return nil
}

// usesThread fails unless x's answer runs on thread want.
func usesThread(x *View, hist *History, want, why string) error {
	if err := responseGap(x, threadHeader); err != nil {
		return err
	}
	if n, ok := deferred(x, hist); ok {
		return pending(n)
	}
	h, others, rules := answerThreads(x)
	if h == "" && len(others) == 0 {
		return skip("the answer names no thread (THREAD-04)")
	}
	for i, got := range append([]string{h}, others...) {
		if got != "" && got != want {
			f := outcome.Failf("the thread of the run", fmt.Sprintf("%q, %s", want, why), "%q", got)
			if i > 0 && h == want {
				// The header names the right thread and the answer's own
				// name for it (the acknowledgement's, the events') does
				// not: that name's rule explains it.
				f.Explained(rules[i-1])
			}
			return f
		}
	}
	return nil
}

// OnThread returns a check that an invoke's answer (2xx) runs on thread
// want: its X-SVC-Thread-Id header, its events and its async
// acknowledgement name no other; why says who named want. The selection
// rules below use it with the thread the request named; an active
// scenario uses it with the thread it expects.
func OnThread(want, why string) func(*View, *History) error {
	return func(x *View, h *History) error {
		if _, err := invoked(x); err != nil {
			return err
		}
		return usesThread(x, h, want, why)
	}
}

// PathThreadWins: THREAD-01. A call with a thread segment runs on that
// thread, whatever X-SVC-Thread-Id says.
var PathThreadWins = Check{Rule: "THREAD-01", Spec: "When the path carries a thread segment, it is used.", Judge: pathThreadWins}

func pathThreadWins(x *View, h *History) error {
	inv, err := invoked(x)
	if err != nil {
		return err
	}
	if inv.ThreadSegment == "" {
		return skip("no thread segment")
	}
	why := "the thread segment of the path"
	if h := x.Request.Header.Get(threadHeader); h != "" && h != inv.ThreadSegment {
		why += fmt.Sprintf(" (the header named %q)", h)
	}
	// The route's own row says it too: its failure explains this one.
	route := "ROUTE-04"
	switch rt := x.Route(); {
	case rt.Kind == RouteProjectInvoke:
		route = "PROJ-02"
	case rt.Threads:
		route = "ROUTE-05"
	}
	err = outcome.Explain(usesThread(x, h, inv.ThreadSegment, why), route)
	if !h.Thread(inv.ThreadSegment) {
		// No response showed the segment's thread to exist: a service that
		// does not find it answers 404 (ERR-08), as for the header.
		err = outcome.Explain(err, "ERR-08")
	}
	return err
}

// HeaderThreadUsed: THREAD-02. Without a thread segment, the call runs on
// the thread X-SVC-Thread-Id names. Decided only when {id} is not a thread
// an earlier response named: a thread ID in {id} continues that thread, and
// the spec does not rank it against the header.
var HeaderThreadUsed = Check{Rule: "THREAD-02", Spec: "Otherwise, when the header X-SVC-Thread-Id is present, it is used.", Judge: headerThreadUsed}

func headerThreadUsed(x *View, h *History) error {
	inv, err := invoked(x)
	if err != nil {
		return err
	}
	if err := requestGap(x, threadHeader); err != nil {
		return err
	}
	hdr := x.Request.Header.Values(threadHeader)
	switch {
	case inv.ThreadSegment != "":
		return skip("a thread segment (THREAD-01)")
	case len(hdr) != 1 || hdr[0] == "":
		return skip("no single %s request header", threadHeader)
	case !inv.Project && h.Thread(inv.ID):
		return skip("{id} is a thread")
	}
	err = usesThread(x, h, hdr[0], "the thread the "+threadHeader+" request header named")
	if !h.Thread(hdr[0]) {
		// No response showed the named thread to exist: a service that does
		// not find it answers 404 (ERR-08), and running elsewhere instead
		// is that rule's failure as well.
		err = outcome.Explain(err, "ERR-08")
	}
	return err
}

// NewThread: THREAD-03. Without thread segment and header, the call runs on
// a new thread: not one a response of the recording had named before the
// call was sent. Decided only when {id} is not a thread the recording
// named (a thread ID in {id} continues it), and when a response had named
// some thread before the call: before that every thread is new to the
// recording, which is no evidence.
var NewThread = Check{Rule: "THREAD-03", Spec: "Otherwise a new thread is created.", Judge: newThread}

func newThread(x *View, h *History) error {
	inv, err := invoked(x)
	if err != nil {
		return err
	}
	if inv.ThreadSegment == "" {
		if err := requestGap(x, threadHeader); err != nil {
			return err
		}
	}
	if err := responseGap(x, threadHeader); err != nil {
		return err
	}
	switch {
	case inv.ThreadSegment != "" || len(x.Request.Header.Values(threadHeader)) > 0:
		return skip("the call names a thread")
	case !inv.Project && h.Thread(inv.ID):
		return skip("{id} is a thread")
	case !h.NamedAnyBefore(earliest(x)):
		return skip("no response had named a thread before the call")
	}
	if n, ok := deferred(x, h); ok {
		return pending(n)
	}
	t, others := answerThread(x)
	if t == "" && len(others) > 0 {
		t = others[0]
	}
	if t == "" {
		return skip("the answer names no thread (THREAD-04)")
	}
	if h.NamedBefore(t, earliest(x)) {
		return outcome.Failf("the thread of a call that names none", "a new thread", "%q, which a response had named before the call", t)
	}
	return nil
}

// AsyncAck: ASYNC-01. An async call is answered 2xx with JSON holding
// threadID and runID (other members and any 2xx status allowed). "At once"
// needs the run's length, which traffic does not show.
var AsyncAck = Check{Rule: "ASYNC-01", Spec: "When true, the call returns at once with threadID and runID (JSON) and the run continues on the server", Judge: asyncAcknowledged}

func asyncAcknowledged(x *View, h *History) error {
	inv, ok := InvokeOf(x)
	switch {
	case !ok || !inv.Async:
		return skip("not an async invoke call")
	case x.Response == nil:
		return skip("no response")
	case x.Response.Status >= 400:
		return skip("answered %d", x.Response.Status)
	}
	b, err := body(x, true)
	if err != nil {
		return err
	}
	var a struct {
		ThreadID *string `json:"threadID"`
		RunID    *string `json:"runID"`
	}
	if x.Response.Status/100 != 2 || json.Unmarshal(b, &a) != nil || a.ThreadID == nil || a.RunID == nil ||
		*a.ThreadID == "" || *a.RunID == "" {
		return outcome.Failf("the answer to an async call", "2xx with JSON {\"threadID\":...,\"runID\":...}",
			"%d %s", x.Response.Status, quote(b))
	}
	// "threadID: Thread of the run (new or resumed)": a resumed thread is
	// the one the request named. When every name of the answer is that
	// threadID, the run is on it, and whether it is the right thread is
	// the selection rules' (THREAD-01/02); when they disagree, the
	// passive judgement waits for the follow-ups (identity.go).
	if n, ok := namesOf(x, h); ok {
		if _, agreed := n.Agreed(); agreed {
			return nil
		}
		if h != nil && h.Defer {
			return pending(n)
		}
	}
	if want, why := requestedThread(x, inv, h); want != "" && *a.ThreadID != want {
		return outcome.Failf("the threadID of the async answer", fmt.Sprintf("%q, %s", want, why), "%q", *a.ThreadID)
	}
	return nil
}

// requestedThread is the thread an invoke names, by the spec's selection
// rules: the path segment, else a thread ID in {id}, else the
// X-SVC-Thread-Id header; "" for a new thread.
func requestedThread(x *View, inv Invoke, h *History) (id, why string) {
	hdr := x.Request.Header.Values(threadHeader)
	switch {
	case inv.ThreadSegment != "":
		return inv.ThreadSegment, "the thread segment of the path"
	case !inv.Project && h.Thread(inv.ID):
		return inv.ID, "the thread in {id}"
	case requestGap(x, threadHeader) != nil:
		return "", "" // the recording cannot tell what the request named
	case len(hdr) == 1 && hdr[0] != "":
		return hdr[0], "the thread the " + threadHeader + " request header named"
	}
	return "", ""
}
