package checks

import (
	"fmt"
	"testing"
	"time"

	"github.com/invokeconf/invokeconf/traffic"
)

var t0 = time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)

// envelopeRun is a 2xx envelope answer of run id on thread th, sent at
// +sentMs, whose last item completes the run.
func envelopeRun(sentMs int, req map[string]string, th, id string, complete bool) *View {
	items := fmt.Sprintf(`{"items":[{"content":"x","runID":%q,"threadID":%q}`, id, th)
	if complete {
		items += fmt.Sprintf(`,{"runComplete":true,"runID":%q,"threadID":%q}`, id, th)
	}
	items += "]}"
	h := hdr("Accept", "application/json")
	url := "http://s/api/invoke/agt"
	for k, v := range req {
		if k == "path" {
			url = v
			continue
		}
		h.Set(k, v)
	}
	x := ex{url: url, req: h, resp: hdr("Content-Type", "application/json", "X-SVC-Thread-Id", th), chunks: []at{{50, items}}}.build()
	x.Start = t0.Add(time.Duration(sentMs) * time.Millisecond)
	x.Response.HeaderAt = 40 * time.Millisecond
	return x
}

// get is a GET answered 200 with body at +sentMs.
func get(sentMs int, url, body string) *View {
	x := ex{method: "GET", url: url, resp: hdr("Content-Type", "application/json"), chunks: []at{{5, body}}}.build()
	x.Start = t0.Add(time.Duration(sentMs) * time.Millisecond)
	x.Response.HeaderAt = 5 * time.Millisecond
	return x
}

// verdict runs a judge on the last exchange over the history of the others.
func verdict(judge func(*View, *History) error, xs ...*View) (string, Result) {
	var h History
	for _, x := range xs[:len(xs)-1] {
		h.Add(x)
	}
	r := run(Check{Rule: "R", Judge: judge}, xs[len(xs)-1], &h)
	switch {
	case r.Err != nil:
		return "error", r
	case r.Failure != nil:
		return "fail", r
	case r.Skip != nil:
		return "skip", r
	}
	return "pass", r
}

func TestThreadFollowUps(t *testing.T) {
	opened := envelopeRun(0, nil, "t1", "r0", true)
	byHeader := envelopeRun(1000, map[string]string{"X-SVC-Thread-Id": "t1"}, "t1", "r1", true)
	byPath := envelopeRun(1000, map[string]string{"path": "http://s/api/invoke/agt/thread/t1"}, "t1", "r1", true)
	unfinished := envelopeRun(1000, map[string]string{"X-SVC-Thread-Id": "t1"}, "t1", "r1", false)
	thread := func(last string) *View {
		return get(17500, "http://s/api/threads/t1", fmt.Sprintf(`{"id":"t1","lastRunID":%s}`, last))
	}
	events := func(body string) *View { return get(17500, "http://s/api/threads/t1/events", body) }
	jsonEvents := func(body string) *View {
		x := events(body)
		x.Request.Header = hdr("Accept", "application/json")
		return x
	}
	evs := func(id string, complete bool) string {
		s := fmt.Sprintf(`{"items":[{"content":"x","runID":%q,"threadID":"t1"}`, id)
		if complete {
			s += fmt.Sprintf(`,{"runComplete":true,"runID":%q,"threadID":"t1"}`, id)
		}
		return s + "]}"
	}
	for _, tc := range []struct {
		name  string
		judge func(*View, *History) error
		xs    []*View
		want  string
	}{
		{"THREAD-02: lastRunID names the new run", ThreadFollowUp("THREAD-02"), []*View{opened, byHeader, thread(`"r1"`)}, "pass"},
		{"THREAD-02: lastRunID stays on the earlier run", ThreadFollowUp("THREAD-02"), []*View{opened, byHeader, thread(`"r0"`)}, "fail"},
		{"THREAD-02: no lastRunID", ThreadFollowUp("THREAD-02"), []*View{opened, byHeader, thread(`null`)}, "fail"},
		{"THREAD-02: a run the recording did not see", ThreadFollowUp("THREAD-02"), []*View{opened, byHeader, thread(`"r9"`)}, "skip"},
		{"THREAD-02: a numeric lastRunID", ThreadFollowUp("THREAD-02"), []*View{opened, byHeader, thread(`0`)}, "skip"},
		{"THREAD-02: the run did not show completion", ThreadFollowUp("THREAD-02"), []*View{opened, unfinished, thread(`"r0"`)}, "skip"},
		{"THREAD-02 does not judge a run by path", ThreadFollowUp("THREAD-02"), []*View{opened, byPath, thread(`"r0"`)}, "skip"},
		{"THREAD-01: lastRunID stays on the earlier run", ThreadFollowUp("THREAD-01"), []*View{opened, byPath, thread(`"r0"`)}, "fail"},
		{"THREAD-03: the new thread holds a run", ThreadFollowUp("THREAD-03"), []*View{opened, get(16500, "http://s/api/threads/t1", `{"lastRunID":"r7"}`)}, "pass"},
		{"THREAD-03: the new thread holds none", ThreadFollowUp("THREAD-03"), []*View{opened, get(16500, "http://s/api/threads/t1", `{"lastRunID":null}`)}, "fail"},
		{"THREAD-03: asked before the run completed", ThreadFollowUp("THREAD-03"), []*View{opened, get(10, "http://s/api/threads/t1", `{"lastRunID":null}`)}, "skip"},
		{"THREAD-03: asked 2 s after the completion (the active suite polls up to its deadline)", ThreadFollowUp("THREAD-03"), []*View{opened, get(2000, "http://s/api/threads/t1", `{"lastRunID":null}`)}, "skip"},
		{"THREAD-03: asked within ReportLag of the completion", ThreadFollowUp("THREAD-03"), []*View{opened, get(14900, "http://s/api/threads/t1", `{"lastRunID":null}`)}, "skip"},
		{"THREAD-03: the new thread reports another thread's run", ThreadFollowUp("THREAD-03"), []*View{envelopeRun(0, nil, "t2", "r5", true), opened, get(16500, "http://s/api/threads/t1", `{"lastRunID":"r5"}`)}, "fail"},
		{"THREAD-03: a run ID both threads recorded", ThreadFollowUp("THREAD-03"), []*View{envelopeRun(0, nil, "t2", "r5", true), opened, envelopeRun(100, map[string]string{"X-SVC-Thread-Id": "t1"}, "t1", "r5", false), get(16500, "http://s/api/threads/t1", `{"lastRunID":"r5"}`)}, "pass"},
		{"ASYNC-03: the last completed run", EventsLastCompleted.Judge, []*View{opened, byHeader, events(evs("r1", true))}, "pass"},
		{"ASYNC-03: an earlier run", EventsLastCompleted.Judge, []*View{opened, byHeader, events(evs("r0", true))}, "fail"},
		{"ASYNC-03: a run not completed", EventsLastCompleted.Judge, []*View{opened, byHeader, events(evs("r2", false))}, "fail"},
		{"ASYNC-03: the last completed run without its final event, Accept: application/json (ASYNC-04 fails it)", EventsLastCompleted.Judge, []*View{opened, byHeader, jsonEvents(evs("r1", false))}, "pass"},
		{"ASYNC-03: a run not completed, Accept: application/json", EventsLastCompleted.Judge, []*View{opened, byHeader, jsonEvents(evs("r2", false))}, "fail"},
		{"ASYNC-03: the last completed run without its final event, another Accept (the shape is not shown)", EventsLastCompleted.Judge, []*View{opened, byHeader, events(evs("r1", false))}, "pass"},
		{"ASYNC-03: a run not completed, the client left", EventsLastCompleted.Judge, []*View{opened, byHeader, getAs(17500, "http://s/api/threads/t1/events", nil, traffic.EndClientGone, evs("r2", false))}, "skip"},
		{"ASYNC-03: a run not completed, none completed before", EventsLastCompleted.Judge, []*View{unfinished, events(evs("r1", false))}, "skip"},
		{"ASYNC-03: a run not completed, asked within ReportLag of the only completion", EventsLastCompleted.Judge, []*View{opened, get(500, "http://s/api/threads/t1/events", evs("r1", false))}, "skip"},
		{"ASYNC-03: a later run the recording did not see", EventsLastCompleted.Judge, []*View{opened, byHeader, events(evs("r2", true))}, "skip"},
		{"ASYNC-03: with runID", EventsLastCompleted.Judge, []*View{opened, byHeader, get(2000, "http://s/api/threads/t1/events?runID=r0", evs("r0", true))}, "skip"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, r := verdict(tc.judge, tc.xs...); got != tc.want {
				t.Errorf("got %s, want %s: %+v %v %v", got, tc.want, r, r.Skip, r.Failure)
			}
		})
	}
}

func TestAbortEndsRun(t *testing.T) {
	const script = "@say working\n@pause 3s\n@say after"
	frame := func(content string, complete bool) string {
		return fmt.Sprintf("id: r1\ndata: {\"content\":%q,\"runComplete\":%t,\"runID\":\"r1\",\"threadID\":\"t1\"}\n\n", content, complete)
	}
	stream := func(chunks ...at) *View {
		x := ex{req: hdr("Accept", "text/event-stream"), resp: sseResp, prompt: script, chunks: chunks}.build()
		x.Start = t0
		x.Response.HeaderAt = 5 * time.Millisecond
		return x
	}
	cancelled := stream(at{5, start}, at{10, frame("working", false)}, at{40, closeF})
	goneOn := stream(at{5, start}, at{10, frame("working", false)}, at{3010, frame("after", false) + frame("", true) + closeF})
	abort := func(sentMs int) *View {
		x := ex{url: "http://s/api/threads/t1/abort", chunks: []at{{5, `{}`}}}.build()
		x.Start = t0.Add(time.Duration(sentMs) * time.Millisecond)
		x.Response.HeaderAt = 5 * time.Millisecond
		return x
	}
	eventsAs := func(accept string, end traffic.End, items string) *View {
		return getAs(4000, "http://s/api/threads/t1/events?runID=r1", map[string]string{"Accept": accept}, end, `{"items":[`+items+`]}`)
	}
	events := func(items string) *View { return eventsAs("application/json", "", items) }
	item := func(content string) string {
		return fmt.Sprintf(`{"content":%q,"runID":"r1","threadID":"t1"}`, content)
	}
	for _, tc := range []struct {
		name string
		xs   []*View
		want string
	}{
		{"the stream ends at the abort, judged on the stream", []*View{abort(20), cancelled}, "pass"},
		{"the stream ends at the abort, judged on the abort", []*View{cancelled, abort(20)}, "pass"},
		{"the stream goes on, judged on the stream", []*View{abort(20), goneOn}, "fail"},
		{"the stream goes on, judged on the abort", []*View{goneOn, abort(20)}, "fail"},
		{"an abort before the run said anything", []*View{abort(2), goneOn}, "skip"},
		{"an agent faster than its script", []*View{abort(20), stream(at{5, start}, at{10, frame("working", false) + frame("after", false)}, at{40, frame("", true) + closeF})}, "skip"},
		{"a run that completed before the abort", []*View{stream(at{5, start}, at{10, frame("working", false)}, at{15, frame("", true) + closeF}), abort(20)}, "pass"},
		{"an abort too late to cut anything", []*View{goneOn, abort(2500)}, "skip"},
		{"no abort", []*View{cancelled}, "skip"},
		{"the run's events end at the abort", []*View{cancelled, abort(20), events(item("working"))}, "pass"},
		{"the run's events go on", []*View{cancelled, abort(20), events(item("working") + "," + item("after"))}, "fail"},
		{"the run's events are empty", []*View{cancelled, abort(20), events("")}, "fail"},
		{"the events of a run no abort met", []*View{cancelled, events(item("working") + "," + item("after"))}, "skip"},
		{"the run's events, the client left", []*View{cancelled, abort(20), eventsAs("application/json", traffic.EndClientGone, "")}, "skip"},
		{"the run's events, empty, without Accept: application/json", []*View{cancelled, abort(20), eventsAs("", "", "")}, "pass"},
		{"the run's events, empty but final, without Accept: application/json", []*View{cancelled, abort(20), eventsAs("", "", `{"runComplete":true,"runID":"r1"}`)}, "fail"},
		{"the run's events go on, without Accept: application/json", []*View{cancelled, abort(20), eventsAs("", "", item("working")+","+item("after"))}, "fail"},
		{"an abort naming another run in its query", []*View{abortAt(20, "?runID=r9", ""), goneOn}, "skip"},
		{"an abort naming another run in its body", []*View{goneOn, abortAt(20, "", `{"runID":"r9"}`)}, "skip"},
		{"an abort naming the run in its body", []*View{goneOn, abortAt(20, "", `{"runID":"r1"}`)}, "fail"},
		{"the events after an abort naming another run", []*View{cancelled, abortAt(20, "?runID=r9", ""), events("")}, "skip"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, r := verdict(AbortEndsRun.Judge, tc.xs...); got != tc.want {
				t.Errorf("got %s, want %s: %v %v", got, tc.want, r.Skip, r.Failure)
			}
		})
	}
}

// getAs is a GET answered 200 with body at +sentMs, with a request header
// set and the answer ended as end says.
func getAs(sentMs int, url string, req map[string]string, end traffic.End, body string) *View {
	h := hdr()
	for k, v := range req {
		h.Set(k, v)
	}
	x := ex{method: "GET", url: url, req: h, resp: hdr("Content-Type", "application/json"), chunks: []at{{5, body}}, end: end}.build()
	x.Start = t0.Add(time.Duration(sentMs) * time.Millisecond)
	x.Response.HeaderAt = 5 * time.Millisecond
	return x
}

// abortAt is an abort of thread t1 sent at +sentMs, answered 200, with an
// optional query and body.
func abortAt(sentMs int, query, body string) *View {
	x := ex{url: "http://s/api/threads/t1/abort" + query, prompt: body, chunks: []at{{5, `{}`}}}.build()
	x.Start = t0.Add(time.Duration(sentMs) * time.Millisecond)
	x.Response.HeaderAt = 5 * time.Millisecond
	return x
}

func TestEventsWait(t *testing.T) {
	waiting := func(items string) *View {
		return getAs(2000, "http://s/api/threads/t1/events?runID=r1", map[string]string{"Accept": "application/json"}, "", `{"items":[`+items+`]}`)
	}
	const (
		said     = `{"content":"x","runID":"r1","threadID":"t1"}`
		done     = `{"runComplete":true,"runID":"r1","threadID":"t1"}`
		replayed = `{"replayComplete":true,"runID":"r1","threadID":"t1"}`
	)
	for _, tc := range []struct {
		name string
		xs   []*View
		want string
	}{
		{"the last event completes the run", []*View{waiting(said + "," + done)}, "pass"},
		{"the completing event is followed by a replayComplete marker", []*View{waiting(said + "," + done + "," + replayed)}, "pass"},
		{"no event completes the run", []*View{waiting(said)}, "fail"},
		{"no events", []*View{waiting("")}, "fail"},
		{"an aborted run's events, without runComplete", []*View{abortAt(1000, "", ""), waiting(said)}, "skip"},
		{"an aborted run's events, empty", []*View{abortAt(1000, "", ""), waiting("")}, "skip"},
		{"an abort answered after the call", []*View{abortAt(3000, "", ""), waiting(said)}, "fail"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, r := verdict(EventsWait.Judge, tc.xs...); got != tc.want {
				t.Errorf("got %s, want %s: %v %v", got, tc.want, r.Skip, r.Failure)
			}
		})
	}
}

func TestEventsOfRun(t *testing.T) {
	events := func(items string) *View {
		return get(2000, "http://s/api/threads/t1/events?runID=r1", `{"items":[`+items+`]}`)
	}
	for _, tc := range []struct {
		name string
		x    *View
		want string
	}{
		{"the run's events", events(`{"content":"x","runID":"r1","threadID":"t1"},{"runComplete":true,"runID":"r1"}`), "pass"},
		{"another run's events", events(`{"content":"x","runID":"r0","threadID":"t1"}`), "fail"},
		{"another thread's events", events(`{"content":"x","runID":"r1","threadID":"t2"}`), "fail"},
		{"events naming no run", events(`{"content":"x"},{"runComplete":true}`), "skip"},
		{"events naming only the thread", events(`{"content":"x","threadID":"t1"}`), "skip"},
		{"some events name the run", events(`{"content":"x"},{"runComplete":true,"runID":"r1"}`), "pass"},
		{"without runID", get(2000, "http://s/api/threads/t1/events", `{"items":[{"content":"x","runID":"r0"}]}`), "skip"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, r := verdict(EventsOfRun.Judge, tc.x); got != tc.want {
				t.Errorf("got %s, want %s: %v %v", got, tc.want, r.Skip, r.Failure)
			}
		})
	}
}
