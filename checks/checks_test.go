package checks

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/invokeconf/invokeconf/features"
	"github.com/invokeconf/invokeconf/traffic"
)

// at is a chunk arriving at ms milliseconds.
type at struct {
	ms   int
	text string
}

type ex struct {
	method, url string
	req         http.Header
	prompt      string
	status      int
	resp        http.Header
	chunks      []at
	untimed     bool
	redacted    bool
	end         traffic.End
}

func (e ex) build() *View {
	if e.method == "" {
		e.method = "POST"
	}
	if e.url == "" {
		e.url = "http://svc.test/api/invoke/agt"
	}
	if e.req == nil {
		e.req = http.Header{"Authorization": {"[key u-k]"}}
	}
	if e.status == 0 {
		e.status = 200
	}
	if e.end == "" {
		e.end = traffic.EndComplete
	}
	x := &traffic.Exchange{ID: 1, Request: traffic.Request{Method: e.method, URL: e.url, Header: e.req}}
	if e.prompt != "" {
		x.Request.Body = traffic.Body{Size: int64(len(e.prompt)), Chunks: []traffic.Chunk{{Size: len(e.prompt), Data: []byte(e.prompt)}}}
	}
	b := traffic.Body{Timed: !e.untimed}
	for _, c := range e.chunks {
		b.Chunks = append(b.Chunks, traffic.Chunk{At: time.Duration(c.ms) * time.Millisecond, Size: len(c.text), Data: []byte(c.text)})
		b.Size += int64(len(c.text))
	}
	x.Response = &traffic.Response{Status: e.status, Header: e.resp, Body: b, End: e.end}
	if e.redacted {
		*x = traffic.StripBodies(*x)
	}
	if x.Response.Header == nil {
		x.Response.Header = http.Header{}
	}
	return NewView(x)
}

func hdr(kv ...string) http.Header {
	h := http.Header{"Authorization": {"[key u-k]"}}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return h
}

const (
	start  = "event: start\ndata: {}\n\n"
	ev     = "id: r1\ndata: {\"content\":\"hi\",\"runID\":\"r1\",\"threadID\":\"t1\"}\n\n"
	final  = "id: r1:after\ndata: {\"runComplete\":true,\"content\":\"\",\"runID\":\"r1\",\"threadID\":\"t1\"}\n\n"
	closeF = "event: close\ndata: {}\n\n"
	ping   = ": ping\n"
)

// steadyScript says "x" 17 times, 100 ms apart (steadyGaps).
var steadyScript = strings.Repeat("@say x\n@pause 100ms\n", 16) + "@say x"

var sseResp = hdr("Content-Type", "text/event-stream", "X-SVC-Thread-Id", "t1")

func sse(chunks ...at) ex {
	return ex{req: hdr("Accept", "text/event-stream"), resp: sseResp, chunks: chunks}
}

func whole(parts ...string) []at { return []at{{1, strings.Join(parts, "")}} }

// verdictOf runs every check of a rule on x and sums them up as a
// judgement does: "fail", "pass", "untested" or "skip".
func verdictOf(rule, aspect string, x *View) (string, Result) {
	var last Result
	got := "skip"
	rank := map[string]int{"skip": 0, "untested": 1, "pass": 2, "fail": 3, "error": 4}
	for _, c := range All() {
		if c.Rule != rule || c.Aspect != aspect {
			continue
		}
		r := run(c, x, &History{})
		v := "pass"
		switch {
		case r.Err != nil:
			v = "error"
		case r.Failure != nil:
			v = "fail"
		case r.Skip != nil && r.Skip.Untested:
			v = "untested"
		case r.Skip != nil:
			v = "skip"
		}
		if rank[v] >= rank[got] {
			got, last = v, r
		}
	}
	return got, last
}

func check(t *testing.T, id string) Check {
	t.Helper()
	for _, c := range All() {
		if c.Rule == id {
			return c
		}
	}
	t.Fatalf("no check for %s", id)
	return Check{}
}

func TestChecks(t *testing.T) {
	plainScript := "@say a\n@pause 800ms\n@say b\n@pause 800ms\n@say c"
	for _, tc := range []struct {
		rule, name string
		x          ex
		want       string
		aspect     string
	}{
		// FMT-01..05: literal Accept to response form.
		{"FMT-01", "SSE for exactly text/event-stream", sse(whole(start, ev, final, closeF)...), "pass", ""},
		{"FMT-01", "plain text for text/event-stream", ex{req: hdr("Accept", "text/event-stream"), chunks: whole("hi")}, "fail", ""},
		{"FMT-01", "another Accept", ex{req: hdr("Accept", "*/*"), chunks: whole("hi")}, "skip", ""},
		{"FMT-01", "an error status", ex{req: hdr("Accept", "text/event-stream"), status: 401}, "skip", ""},
		{"FMT-01", "an async call", ex{url: "http://s/api/invoke/a?async=true", req: hdr("Accept", "text/event-stream")}, "skip", ""},
		{"FMT-02", "the envelope", ex{req: hdr("Accept", "application/json"), chunks: whole(`{"items":[{"content":"a"},{"runComplete":true}]}`)}, "pass", ""},
		{"FMT-02", "an envelope before the run ended", ex{req: hdr("Accept", "application/json"), chunks: whole(`{"items":[{"content":"a"}]}`)}, "fail", ""},
		{"FMT-02", "the envelope of a failed run", ex{req: hdr("Accept", "application/json"), chunks: whole(`{"items":[{"error":"x"}]}`)}, "pass", ""},
		{"FMT-02", "a last item whose runComplete is no boolean", ex{req: hdr("Accept", "application/json"), chunks: whole(`{"items":[{"content":"a"},{"runComplete":"true"}]}`)}, "fail", ""},
		{"FMT-02", "an empty error is no failure", ex{req: hdr("Accept", "application/json"), chunks: whole(`{"items":[{"content":"a","error":{}}]}`)}, "fail", ""},
		{"FMT-02", "a recording without bodies", ex{req: hdr("Accept", "application/json"), chunks: whole(`{"items":[]}`), redacted: true}, "untested", ""},
		{"FMT-02", "plain text", ex{req: hdr("Accept", "application/json"), chunks: whole(`hi`)}, "fail", ""},
		{"FMT-03", "plain without Accept", ex{chunks: whole("hi")}, "pass", ""},
		{"FMT-03", "the envelope without Accept", ex{resp: hdr("Content-Type", "application/json"), chunks: whole(`{"items":[{"content":"hi"}]}`)}, "fail", ""},
		{"FMT-03", "JSON text as plain text", ex{resp: hdr("Content-Type", "text/plain"), chunks: whole(`{"items":[]}`)}, "pass", ""},
		{"FMT-04", "plain for text/event-stream, */*", ex{req: hdr("Accept", "text/event-stream, */*"), chunks: whole("hi")}, "pass", ""},
		{"FMT-04", "SSE for text/event-stream, */*", ex{req: hdr("Accept", "text/event-stream, */*"), resp: sseResp, chunks: whole(start, ev)}, "fail", ""},
		{"FMT-04", "exact value", sse(whole(start)...), "skip", ""},
		{"FMT-05", "envelope for application/json; charset=utf-8", ex{req: hdr("Accept", "application/json; charset=utf-8"),
			resp: hdr("Content-Type", "application/json"), chunks: whole(`{"items":[]}`)}, "fail", ""},
		{"FMT-05", "plain for application/json, */*", ex{req: hdr("Accept", "application/json, */*"), chunks: whole(`x`)}, "pass", ""},
		{"FMT-05", "two Accept lines", ex{req: hdr("Accept", "application/json", "Accept", "*/*"), chunks: whole(`x`)}, "skip", ""},
		// FMT-06: the flush bound, on scripted prompts only.
		{"FMT-06", "fragments as produced", ex{prompt: plainScript, chunks: []at{{5, "a"}, {810, "b"}, {1610, "c"}}}, "pass", ""},
		{"FMT-06", "fragments held to the end", ex{prompt: plainScript, chunks: []at{{1610, "abc"}}}, "fail", ""},
		{"FMT-06", "a fragment held 900 ms", ex{prompt: plainScript, chunks: []at{{5, "a"}, {1705, "b"}, {1710, "c"}}}, "fail", ""},
		{"FMT-06", "fragments late as the pauses overran", ex{prompt: plainScript, chunks: []at{{5, "a"}, {1300, "b"}, {2600, "c"}}}, "pass", ""},
		{"FMT-06", "the last fragment sent with nothing held", ex{prompt: plainScript, chunks: []at{{5, "a"}, {810, "b"}, {2400, "c"}}}, "pass", ""},
		{"FMT-06", "steady text, flushed every 500 ms", ex{prompt: steadyScript, chunks: []at{{5, "x"}, {505, "xxxxx"}, {1005, "xxxxx"}, {1505, "xxxxx"}, {1700, "x"}}}, "pass", ""},
		{"FMT-06", "steady text, flushed every 750 ms", ex{prompt: steadyScript, chunks: []at{{5, "x"}, {755, "xxxxxxx"}, {1505, "xxxxxxx"}, {1700, "xx"}}}, "fail", ""},
		{"FMT-06", "no timings", ex{prompt: plainScript, chunks: []at{{5, "a"}, {810, "b"}, {1610, "c"}}, untimed: true}, "untested", ""},
		{"FMT-06", "an echo prompt", ex{prompt: "hello", chunks: []at{{5, "hello"}}}, "skip", ""},
		// SSE framing.
		{"SSE-01", "start first", sse(whole(ping, start, ev)...), "pass", ""},
		{"SSE-01", "an event first", sse(whole(ev, start)...), "fail", ""},
		{"SSE-01", "start with data null", sse(whole("event: start\ndata: null\n\n")...), "fail", ""},
		{"SSE-02", "id before data", sse(whole(start, ev, final, closeF)...), "pass", ""},
		{"SSE-02", "data before id", sse(whole(start, "data: {\"runID\":\"r1\"}\nid: r1\n\n")...), "fail", ""},
		{"SSE-02", "no id", sse(whole(start, "data: {\"runID\":\"r1\"}\n\n")...), "fail", ""},
		{"SSE-02", "an id that is not the run", sse(whole(start, "id: 7\ndata: {\"runID\":\"r1\"}\n\n")...), "fail", ""},
		{"SSE-03", "final :after", sse(whole(start, ev, final, closeF)...), "pass", ""},
		{"SSE-03", "final without :after", sse(whole(start, ev, "id: r1\ndata: {\"runComplete\":true,\"runID\":\"r1\"}\n\n", closeF)...), "fail", ""},
		{"SSE-03", "final not complete", sse(whole(start, ev, "id: r1:after\ndata: {\"runID\":\"r1\"}\n\n", closeF)...), "fail", ""},
		{"SSE-03", "a failed run that ends on its error", sse(whole(start, "id: r1\ndata: {\"runID\":\"r1\",\"error\":\"boom\"}\n\n", closeF)...), "fail", ""},
		{"SSE-03", "a failed run that ends with its final event", sse(whole(start, "id: r1\ndata: {\"runID\":\"r1\",\"error\":\"boom\"}\n\n", "id: r1:after\ndata: {\"runID\":\"r1\",\"runComplete\":true}\n\n", closeF)...), "pass", ""},
		{"SSE-03", "the client left", ex{req: hdr("Accept", "text/event-stream"), resp: sseResp, chunks: whole(start, ev), end: traffic.EndClientGone}, "skip", ""},
		{"SSE-05", "close at the end", sse(whole(start, ev, final, closeF, ping)...), "pass", ""},
		{"SSE-05", "no close", sse(whole(start, ev, final)...), "fail", ""},
		{"SSE-05", "no close after an error", sse(whole(start, "id: r1\ndata: {\"runID\":\"r1\",\"error\":\"boom\"}\n\n")...), "fail", ""},
		{"SSE-05", "the service's connection broke", ex{req: hdr("Accept", "text/event-stream"), resp: sseResp, chunks: whole(start, ev), end: traffic.EndError}, "fail", ""},
		{"SSE-05", "the client left", ex{req: hdr("Accept", "text/event-stream"), resp: sseResp, chunks: whole(start, ev), end: traffic.EndClientGone}, "skip", ""},
		{"SSE-05", "close after an error", sse(whole(start, "id: r1\ndata: {\"runID\":\"r1\",\"error\":\"boom\"}\n\n", closeF)...), "pass", ""},
		{"SSE-06", "nothing after complete", sse(whole(start, ev, final, closeF)...), "pass", ""},
		{"SSE-06", "an event after complete", sse(whole(start, final, ev, closeF)...), "fail", ""},
		{"EVT-01", "JSON objects", sse(whole(start, ev, final, closeF)...), "pass", ""},
		{"EVT-01", "raw text data", sse(whole(start, "id: r1\ndata: hello\n\n", closeF)...), "fail", ""},
		{"SSE-02", "an object split over data lines that join into no JSON", sse(whole(start, "id: r1\ndata: {\"content\":\"a\ndata: b\"}\n\n", "id: r1:after\ndata: {\"runComplete\":true}\n\n", closeF)...), "fail", ""},
		{"EVT-01", "an object split over data lines that join into no JSON", sse(whole(start, "id: r1\ndata: {\"content\":\"a\ndata: b\"}\n\n", "id: r1:after\ndata: {\"runComplete\":true}\n\n", closeF)...), "pass", ""},
		{"SSE-02", "raw text over data lines (no object at all)", sse(whole(start, "id: r1\ndata: hello\ndata: world\n\n", "id: r1:after\ndata: {\"runComplete\":true}\n\n", closeF)...), "pass", ""},
		{"EVT-01", "raw text over data lines (no object at all)", sse(whole(start, "id: r1\ndata: hello\ndata: world\n\n", "id: r1:after\ndata: {\"runComplete\":true}\n\n", closeF)...), "fail", ""},
		{"SSE-03", "a final event split over data lines that join into no JSON", sse(whole(start, "id: r1\ndata: {}\n\n", "id: r1:after\ndata: {\"runComplete\":\ndata: true,\"x\":\"y\nz\"}\n\n", closeF)...), "skip", ""},
		{"EVT-01", "two objects in one frame", sse(whole(start, "id: r1\ndata: {}\ndata: {}\n\n", closeF)...), "fail", ""},
		{"EVT-02", "run and thread set", sse(whole(start, ev, final, closeF)...), "pass", ""},
		{"EVT-02", "no threadID", sse(whole(start, "id: r1\ndata: {\"runID\":\"r1\"}\n\n")...), "fail", ""},
		{"EVT-02", "envelope items", ex{req: hdr("Accept", "application/json"), resp: hdr("X-SVC-Thread-Id", "t"), chunks: whole(`{"items":[{"runID":"r","threadID":"t"}]}`)}, "pass", ""},
		{"EVT-02", "another thread than the header's", ex{req: hdr("Accept", "application/json"), resp: hdr("X-SVC-Thread-Id", "u"), chunks: whole(`{"items":[{"runID":"r","threadID":"t"}]}`)}, "fail", ""},
		{"EVT-02", "no header, no thread named", ex{req: hdr("Accept", "application/json"), chunks: whole(`{"items":[{"runID":"r","threadID":"t"}]}`)}, "skip", ""},
		// Timed rules on agent scripts.
		{"FMT-01", "live events", ex{req: hdr("Accept", "text/event-stream"), resp: sseResp, prompt: "@say early\n@pause 1s\n@say late",
			chunks: []at{{1, start + strings.ReplaceAll(ev, "hi", "early")}, {1002, strings.ReplaceAll(ev, "hi", "late") + final + closeF}}}, "pass", Live},
		{"FMT-01", "events held to the end", ex{req: hdr("Accept", "text/event-stream"), resp: sseResp, prompt: "@say early\n@pause 1s\n@say late",
			chunks: []at{{1, start}, {1002, strings.ReplaceAll(ev, "hi", "early") + strings.ReplaceAll(ev, "hi", "late") + final + closeF}}}, "fail", Live},
		{"FMT-01", "live events, not timed", ex{req: hdr("Accept", "text/event-stream"), resp: sseResp, prompt: "@say early\n@pause 1s\n@say late", untimed: true,
			chunks: whole(start, strings.ReplaceAll(ev, "hi", "early"), strings.ReplaceAll(ev, "hi", "late"), final, closeF)}, "untested", Live},
		{"SSE-01", "start at once", ex{req: hdr("Accept", "text/event-stream"), resp: sseResp, prompt: "@pause 1s\n@say hi",
			chunks: []at{{1, start}, {1001, ev + final + closeF}}}, "pass", AtOnce},
		{"SSE-01", "start with the first content", ex{req: hdr("Accept", "text/event-stream"), resp: sseResp, prompt: "@pause 1s\n@say hi",
			chunks: []at{{1001, start + ev + final + closeF}}}, "fail", AtOnce},
		{"SSE-07", "an error event", ex{req: hdr("Accept", "text/event-stream"), resp: sseResp, prompt: "@say hi\n@fail boom",
			chunks: whole(start, ev, "id: r1\ndata: {\"runID\":\"r1\",\"error\":\"boom\"}\n\n", closeF)}, "pass", ""},
		{"SSE-07", "a 500", ex{req: hdr("Accept", "text/event-stream"), status: 500, prompt: "@say hi\n@fail boom", chunks: whole(`{"title":"boom"}`)}, "fail", ""},
		{"SSE-07", "no error event", ex{req: hdr("Accept", "text/event-stream"), resp: sseResp, prompt: "@say hi\n@fail boom", chunks: whole(start, ev, closeF)}, "fail", ""},
		{"SSE-07", "a run that does not fail", ex{req: hdr("Accept", "text/event-stream"), resp: sseResp, prompt: "@say hi", chunks: whole(start, ev, closeF)}, "skip", ""},
		// SSE-04: the keepalive, on quiet streams only.
		{"SSE-04", "a ping after 20 s of quiet", sse(at{1, start + ev}, at{20100, ping}, at{25000, final + closeF}), "pass", ""},
		{"SSE-04", "no ping in 24 s of quiet", sse(at{1, start + ev}, at{25000, final + closeF}), "fail", ""},
		{"SSE-04", "a ping 22 s into the quiet", sse(at{1, start + ev}, at{22000, ping}, at{25000, final + closeF}), "fail", ""},
		{"SSE-04", "21 s of quiet without a ping", sse(at{1, start + ev}, at{21000, final + closeF}), "skip", ""},
		{"SSE-04", "never quiet", sse(at{1, start + ev}, at{900, final + closeF}), "skip", ""},
		{"SSE-04", "a quiet after runComplete is not the run's", sse(at{1, start + ev + final}, at{25000, closeF}), "skip", ""},
		{"SSE-04", "a quiet before runComplete", sse(at{1, start + ev}, at{25000, final}, at{25001, closeF}), "fail", ""},
		{"SSE-04", "a late close after a kept-alive run", sse(at{1, start + ev}, at{20100, ping}, at{21000, final}, at{50000, closeF}), "pass", ""},
		{"SSE-04", "no timings", ex{req: hdr("Accept", "text/event-stream"), resp: sseResp, chunks: whole(start, ev, final, closeF), untimed: true}, "untested", ""},
		// Threads.
		{"THREAD-04", "header names the events' thread", sse(whole(start, ev, final, closeF)...), "pass", ""},
		{"THREAD-04", "no header", ex{req: hdr("Accept", "text/event-stream"), resp: hdr("Content-Type", "text/event-stream"), chunks: whole(start, ev)}, "fail", ""},
		{"THREAD-04", "header names another thread", ex{req: hdr("Accept", "text/event-stream"), resp: hdr("Content-Type", "text/event-stream", "X-SVC-Thread-Id", "t2"), chunks: whole(start, ev)}, "fail", ""},
		{"THREAD-04", "two header values", ex{req: hdr("Accept", "text/event-stream"), resp: hdr("Content-Type", "text/event-stream", "X-SVC-Thread-Id", "t1", "X-SVC-Thread-Id", "t1"), chunks: whole(start, ev)}, "fail", ""},
		{"THREAD-04", "an error", ex{status: 404}, "skip", ""},
		{"THREAD-01", "path over header", ex{url: "http://s/api/invoke/agt/thread/t1", req: hdr("X-SVC-Thread-Id", "t2"), resp: hdr("X-SVC-Thread-Id", "t1"), chunks: whole("x")}, "pass", ""},
		{"THREAD-01", "header over path", ex{url: "http://s/api/invoke/agt/threads/t1", req: hdr("X-SVC-Thread-Id", "t2"), resp: hdr("X-SVC-Thread-Id", "t2"), chunks: whole("x")}, "fail", ""},
		{"THREAD-01", "project route", ex{url: "http://s/api/projects/p/invoke/thread/t1", resp: hdr("X-SVC-Thread-Id", "t9"), chunks: whole("x")}, "fail", ""},
		{"THREAD-01", "a base path of the service's own", ex{url: "http://s/svc/v2/api/invoke/agt/thread/t1", resp: hdr("X-SVC-Thread-Id", "t9"), chunks: whole("x")}, "fail", ""},
		{"THREAD-02", "header used", ex{req: hdr("X-SVC-Thread-Id", "t2"), resp: hdr("X-SVC-Thread-Id", "t2"), chunks: whole("x")}, "pass", ""},
		{"THREAD-02", "header ignored", ex{req: hdr("X-SVC-Thread-Id", "t2"), resp: hdr("X-SVC-Thread-Id", "t3"), chunks: whole("x")}, "fail", ""},
		{"THREAD-03", "no thread named before: no evidence", ex{resp: hdr("X-SVC-Thread-Id", "t3"), chunks: whole("x")}, "skip", ""},
		// Async.
		{"ASYNC-01", "acknowledged", ex{url: "http://s/api/invoke/a?async=true", status: 202, chunks: whole(`{"threadID":"t","runID":"r","status":"x"}`)}, "pass", ""},
		{"ASYNC-01", "run synchronously", ex{url: "http://s/api/invoke/a?async=true", chunks: whole(start, ev)}, "fail", ""},
		{"ASYNC-01", "no runID", ex{url: "http://s/api/invoke/a?async=true", chunks: whole(`{"threadID":"t"}`)}, "fail", ""},
		{"ASYNC-01", "acknowledged at once", ex{url: "http://s/api/invoke/a?async=true", prompt: "@pause 2s\n@say x", chunks: []at{{20, `{"threadID":"t","runID":"r"}`}}}, "pass", AckAtOnce},
		{"ASYNC-01", "acknowledged after the run", ex{url: "http://s/api/invoke/a?async=true", prompt: "@pause 2s\n@say x", chunks: []at{{2010, `{"threadID":"t","runID":"r"}`}}}, "fail", AckAtOnce},
		{"ASYNC-01", "a short run", ex{url: "http://s/api/invoke/a?async=true", prompt: "@pause 100ms\n@say x", chunks: []at{{20, `{"threadID":"t","runID":"r"}`}}}, "skip", AckAtOnce},
		{"ASYNC-01", "async=1 is not named", ex{url: "http://s/api/invoke/a?async=1", chunks: whole(`{}`)}, "skip", ""},
		// Follow-up routes.
		{"ASYNC-02", "the run's events", ex{method: "GET", url: "http://s/api/threads/t1/events?runID=r1", req: hdr("Accept", "application/json"),
			chunks: whole(`{"items":[{"runID":"r1","threadID":"t1","runComplete":true}]}`)}, "pass", ""},
		{"ASYNC-02", "another run's events", ex{method: "GET", url: "http://s/api/threads/t1/events?runID=r0", req: hdr("Accept", "application/json"),
			chunks: whole(`{"items":[{"runID":"r1","threadID":"t1"}]}`)}, "fail", ""},
		{"ASYNC-02", "a shape not shown", ex{method: "GET", url: "http://s/api/threads/t1/events?runID=r0", chunks: whole(`[1,2]`)}, "skip", ""},
		{"ASYNC-04", "waited for the end", ex{method: "GET", url: "http://s/api/threads/t1/events", req: hdr("Accept", "application/json"),
			chunks: whole(`{"items":[{"runID":"r1"},{"runID":"r1","runComplete":true}]}`)}, "pass", ""},
		{"ASYNC-04", "answered mid-run", ex{method: "GET", url: "http://s/api/threads/t1/events", req: hdr("Accept", "application/json"),
			chunks: whole(`{"items":[{"runID":"r1"}]}`)}, "fail", ""},
		{"ASYNC-04", "no events at all", ex{method: "GET", url: "http://s/api/threads/t1/events", req: hdr("Accept", "application/json"),
			chunks: whole(`{"items":[]}`)}, "fail", ""},
		{"ASYNC-04", "another Accept", ex{method: "GET", url: "http://s/api/threads/t1/events", chunks: whole(`{"items":[{"runID":"r1"}]}`)}, "skip", ""},
		// Refusals.
		{"ERR-02", "401 without a key", ex{req: http.Header{}, status: 401}, "pass", ""},
		{"ERR-02", "403 without a key", ex{req: http.Header{}, status: 403}, "fail", ""},
		{"ERR-02", "404 without a key", ex{req: http.Header{}, status: 404}, "skip", ""},
		{"ERR-02", "a key", ex{status: 403}, "skip", ""},
		{"ERR-03", "401 for a malformed key", ex{req: http.Header{"Authorization": {"[malformed key]"}}, status: 401}, "pass", ""},
		{"ERR-03", "400 for a malformed key", ex{req: http.Header{"Authorization": {"Bearer nope"}}, status: 400}, "skip", ""},
		{"ERR-03", "200 for a malformed key", ex{req: http.Header{"Authorization": {"Basic nope"}}, status: 200}, "fail", ""},
		{"ERR-10", "a problem", ex{status: 401, chunks: whole(`{"title":"Unauthorized","status":401}`)}, "pass", ""},
		{"ERR-10", "the OpenAI envelope", ex{status: 401, chunks: whole(`{"error":{"message":"bad key","type":"auth","code":null}}`)}, "fail", ""},
		{"ERR-10", "a problem with error.message", ex{status: 401, chunks: whole(`{"error":{"message":"bad key","status":401}}`)}, "pass", ""},
		{"ERR-10", "not an error", ex{chunks: whole(`{"error":{"message":"x"}}`)}, "skip", ""},
	} {
		got, r := verdictOf(tc.rule, tc.aspect, tc.x.build())
		if got != tc.want {
			t.Errorf("%s %s: %s, want %s (%v %v %v)", tc.rule, tc.name, got, tc.want, r.Failure, r.Skip, r.Err)
		}
		if r.Failure != nil && (r.Failure.Expected == "" || r.Failure.Spec == "") {
			t.Errorf("%s %s: a failure without expected value or spec words: %+v", tc.rule, tc.name, r.Failure)
		}
	}
}

// TestThreadsOverExchanges: THREAD-03 fails a call without thread that
// lands on a thread an earlier response named, and decides only once a
// response had named some thread; THREAD-02 leaves {id} that is a thread
// alone.
func TestThreadsOverExchanges(t *testing.T) {
	var h History
	t0 := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	call := func(thread string, at time.Duration) *View {
		x := ex{resp: hdr("X-SVC-Thread-Id", thread), chunks: whole("x")}.build()
		x.Start = t0.Add(at)
		return x
	}
	first := call("t1", 0)
	if r := run(check(t, "THREAD-03"), first, &h); r.Skip == nil {
		t.Fatalf("the first call of a recording decided THREAD-03 on no evidence: %+v", r)
	}
	h.Add(first)
	for _, tt := range []struct {
		name string
		x    *View
		want string
	}{
		{"a reused thread", call("t1", time.Second), "fail"},
		{"a new thread after one was named", call("t2", time.Second), "pass"},
		// A long call that started before the thread was named elsewhere
		// and ends last is not judged against it.
		{"a call sent before any thread was named", call("t1", -time.Second), "skip"},
	} {
		r := run(check(t, "THREAD-03"), tt.x, &h)
		got := "pass"
		switch {
		case r.Err != nil:
			got = "error"
		case r.Failure != nil:
			got = "fail"
		case r.Skip != nil:
			got = "skip"
		}
		if got != tt.want {
			t.Errorf("%s: got %s, want %s: %+v", tt.name, got, tt.want, r)
		}
	}
	byID := ex{url: "http://s/api/invoke/t1", req: hdr("X-SVC-Thread-Id", "t5"), resp: hdr("X-SVC-Thread-Id", "t1"), chunks: whole("x")}.build()
	byID.Start = t0.Add(time.Second)
	if r := run(check(t, "THREAD-02"), byID, &h); r.Skip == nil {
		t.Errorf("THREAD-02 decided on a thread ID in {id}: %+v", r)
	}
	if r := run(check(t, "THREAD-03"), byID, &h); r.Skip == nil {
		t.Errorf("THREAD-03 decided on a thread ID in {id}: %+v", r)
	}
}

// TestChecksStandBesideTheCatalog: every check names a catalog rule that
// clients can observe, and its spec words are the catalog's.
func TestChecksStandBesideTheCatalog(t *testing.T) {
	idx, err := features.RuleIndex()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range All() {
		r, ok := idx[c.Rule]
		if !ok {
			t.Errorf("%s: not in the catalog", c.Rule)
			continue
		}
		if !r.Observable {
			t.Errorf("%s: the catalog says it is not observable", c.Rule)
		}
		if !strings.Contains(r.Spec, c.Spec) {
			t.Errorf("%s: spec words %q are not the catalog's %q", c.Rule, c.Spec, r.Spec)
		}
	}
}

func TestJudgementSummary(t *testing.T) {
	j := NewJudgement()
	j.AddView(sse(whole(start, ev, final, closeF)...).build())
	x := sse(whole(start, strings.ReplaceAll(ev+final, "t1", "t2"))...).build()
	x.ID = 2
	x.Response.Header = hdr("Content-Type", "text/event-stream", "X-SVC-Thread-Id", "t2")
	fs := j.AddView(x)
	if len(fs) != 1 || fs[0].Rule != "SSE-05" || fs[0].Level != "MUST" || fs[0].Exchange != 2 {
		t.Fatalf("findings %v", fs)
	}
	s := j.Summary()
	got := map[string]RuleVerdict{}
	for _, v := range s.Verdicts {
		got[v.Rule] = v
	}
	if v := got["SSE-05"]; v.Verdict != Fail || v.Decided != 2 {
		t.Errorf("SSE-05: %+v", v)
	}
	if v := got["EVT-01"]; v.Verdict != Pass || v.Decided != 2 {
		t.Errorf("EVT-01: %+v", v)
	}
	// The order was decided, "at once" was not: no pass on half the evidence.
	if v := got["SSE-01"]; v.Verdict != Untested || v.Decided != 2 || !strings.Contains(v.Reason, "at once") {
		t.Errorf("SSE-01: %+v", v)
	}
	if v := got["SSE-04"]; v.Verdict != NotSeen {
		t.Errorf("SSE-04 on streams never quiet: %+v", v)
	}
	if v := got["ERR-02"]; v.Verdict != NotSeen {
		t.Errorf("ERR-02: %+v", v)
	}
	if !strings.HasPrefix(s.Headline, "observed 2 exchanges; judged ") || s.Rules < 50 {
		t.Errorf("headline %q (of %d rules)", s.Headline, s.Rules)
	}
	u := NewJudgement()
	u.AddView(ex{req: hdr("Accept", "text/event-stream"), resp: sseResp, chunks: whole(start, ev, final, closeF), untimed: true}.build())
	for _, v := range u.Summary().Verdicts {
		if v.Rule == "SSE-04" && (v.Verdict != Untested || v.Reason != NoTimings) {
			t.Errorf("SSE-04 without timings: %+v", v)
		}
	}
}

// TestRefusalAfterResolving: a 400 for a malformed key is decided once the
// recording has seen the same {id} resolve.
func TestRefusalAfterResolving(t *testing.T) {
	var h History
	malformed := ex{req: http.Header{"Authorization": {"Bearer nope"}}, status: 400}.build()
	if r := run(check(t, "ERR-03"), malformed, &h); r.Skip == nil {
		t.Fatalf("decided before {id} resolved: %+v", r)
	}
	h.Add(ex{resp: hdr("X-SVC-Thread-Id", "t1"), chunks: whole("x")}.build())
	if r := run(check(t, "ERR-03"), malformed, &h); r.Failure == nil {
		t.Errorf("400 for a malformed key on a resolved {id}: %+v", r)
	}
}
