package checks

import (
	"fmt"

	"github.com/invokeconf/invokeconf/outcome"
	"github.com/invokeconf/invokeconf/traffic"
)

var followupChecks = []Check{
	{Rule: "ASYNC-02", Spec: "With runID, delivers that run's events after the fact.", Judge: EventsOfRun},
	{Rule: "ASYNC-04", Spec: "With Accept: application/json the call stays open until the run finishes.", Judge: EventsWait},
}

// eventsCall returns the thread of a GET /api/threads/{id}/events answered
// 2xx, or a Skip.
func eventsCall(x *traffic.Exchange) (string, error) {
	segs := apiSegments(x.Request.Path())
	if x.Request.Method != "GET" || len(segs) != 4 || segs[0] != "api" || segs[1] != "threads" || segs[3] != "events" || segs[2] == "" {
		return "", skip("not the events route")
	}
	if x.Response == nil || x.Response.Status/100 != 2 {
		return "", skip("not answered 2xx")
	}
	return segs[2], nil
}

// followupEvents returns the event objects of an events-route answer. Its
// shape is not shown, so only an SSE stream or an envelope of events is
// read.
func followupEvents(x *traffic.Exchange, whole bool) ([]eventObject, error) {
	if _, err := body(x, whole); err != nil {
		return nil, err
	}
	evs, ok := events(x)
	if !ok || len(evs) == 0 {
		return nil, skip("the answer is neither an SSE stream nor an envelope of events (its shape is not shown)")
	}
	return evs, nil
}

// EventsOfRun: ASYNC-02. The events route with runID delivers that run's
// events: every event names the run and the thread in the path.
func EventsOfRun(x *traffic.Exchange, _ *History) error {
	thread, err := eventsCall(x)
	if err != nil {
		return err
	}
	vs := x.Request.Query()["runID"]
	if len(vs) != 1 || vs[0] == "" {
		return skip("no runID")
	}
	evs, err := followupEvents(x, false)
	if err != nil {
		return err
	}
	for i, e := range evs {
		if e.RunID != nil && *e.RunID != vs[0] || e.ThreadID != nil && *e.ThreadID != thread {
			return outcome.Failf(fmt.Sprintf("event %d of the events of run %q", i+1, vs[0]),
				fmt.Sprintf("run %q of thread %q", vs[0], thread), "run %s of thread %s", show(e.RunID), show(e.ThreadID))
		}
	}
	return nil
}

// EventsWait: ASYNC-04. With Accept: application/json the events route
// answers once the run has finished: an envelope of events ends with the
// run's final event, runComplete true (a failed run aside).
func EventsWait(x *traffic.Exchange, _ *History) error {
	if _, err := eventsCall(x); err != nil {
		return err
	}
	if v, _, ok := accept(x); !ok || v != "application/json" {
		return skip("Accept is not application/json")
	}
	b, err := body(x, true)
	if err != nil {
		return err
	}
	items, ok := envelope(b)
	if !ok {
		return skip("the answer is not an envelope of events (its shape is not shown)")
	}
	if len(items) == 0 {
		// A finished run has at least its final event.
		return outcome.Failf("the events of a run, with Accept: application/json", "sent once the run finished: the last event has runComplete true",
			"no events: %s", quote(b))
	}
	evs, err := followupEvents(x, true)
	if err != nil {
		return err
	}
	last := evs[len(evs)-1]
	for _, e := range evs {
		if e.failed() {
			return skip("the run failed")
		}
	}
	if !last.complete() {
		return outcome.Failf("the events of a run, with Accept: application/json", "sent once the run finished: the last event has runComplete true",
			"%d events, the last without runComplete: %s", len(evs), quote(x.Response.Body.Bytes()))
	}
	return nil
}
