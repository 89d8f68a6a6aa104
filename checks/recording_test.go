package checks

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/invokeconf/invokeconf/traffic"
)

// outcomeOf runs one check on x alone: "pass", "fail", "untested: REASON"
// or "skip: REASON".
func outcomeOf(judge func(*View, *History) error, x *View, h *History) string {
	if h == nil {
		h = &History{}
	}
	r := run(Check{Rule: "R", Judge: judge}, x, h)
	switch {
	case r.Err != nil:
		return "error: " + r.Err.Error()
	case r.Failure != nil:
		return "fail"
	case r.Skip != nil && r.Skip.Untested:
		return "untested: " + r.Skip.Reason
	case r.Skip != nil:
		return "skip: " + r.Skip.Reason
	}
	return "pass"
}

// TestLackingBodiesAreUntested: a body the recording holds none of, or
// only the start of by its recorder's doing, leaves every rule that needs
// it untested with the recorder's reason, never judged as empty or whole.
func TestLackingBodiesAreUntested(t *testing.T) {
	const (
		missing = "the recording holds none of the body's 786 bytes (content.size without content.text)"
		short   = "the recording holds 40 of the body's 300 bytes (content.text is shorter than content.size)"
	)
	lacking := func(e ex, gap string, none bool) *View {
		x := e.build()
		b := &x.Response.Body
		b.Gap, b.Timed = gap, false
		if none {
			b.Missing, b.Chunks = true, nil
		} else {
			b.Truncated = true
		}
		return x
	}
	sse := ex{req: hdr("Accept", "text/event-stream"), resp: sseResp, chunks: whole(start, ev)}
	envelope := ex{req: hdr("Accept", "application/json"), resp: hdr("Content-Type", "application/json", "X-SVC-Thread-Id", "t1"),
		chunks: whole(`{"items":[`)}
	refusal := ex{status: 401, resp: hdr("Content-Type", "application/json"), chunks: whole(`{"error":`)}
	for _, tc := range []struct {
		rule  string
		judge func(*View, *History) error
		x     *View
		want  string
	}{
		{"SSE-05", CloseAtEnd.Judge, lacking(sse, missing, true), "untested: " + missing},
		{"SSE-05", CloseAtEnd.Judge, lacking(sse, short, false), "untested: " + short},
		{"SSE-03", FinalAfter.Judge, lacking(sse, missing, true), "untested: " + missing},
		{"SSE-03", FinalAfter.Judge, lacking(sse, short, false), "untested: " + short},
		{"SSE-01", StartFirst.Judge, lacking(sse, missing, true), "untested: " + missing},
		{"FMT-02", AcceptJSON.Judge, lacking(envelope, missing, true), "untested: " + missing},
		{"FMT-02", AcceptJSON.Judge, lacking(envelope, short, false), "untested: " + short},
		{"EVT-01", DataIsObject.Judge, lacking(sse, missing, true), "untested: " + missing},
		{"ERR-10", ProblemFormat.Judge, lacking(refusal, missing, true), "untested: " + missing},
		{"ERR-10", ProblemFormat.Judge, lacking(refusal, short, false), "untested: " + short},
	} {
		t.Run(tc.rule+" "+tc.want, func(t *testing.T) {
			if got := outcomeOf(tc.judge, tc.x, nil); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
	// A prompt the recording lacks is no prompt: a script's rule is
	// untested, not "not a script".
	x := ex{req: hdr("Accept", "text/event-stream"), resp: sseResp, chunks: whole(start, ev)}.build()
	x.Request.Body = traffic.Body{Size: 30, Missing: true, Gap: "the recording has no postData for a request body of 30 bytes (bodySize)"}
	if got := outcomeOf(FailureAsEvent.Judge, x, nil); got != "untested: the request body: "+x.Request.Body.Gap {
		t.Errorf("SSE-07 on a prompt not recorded: %q", got)
	}
}

// TestUnknownEnds: a recording that does not say how a stream ended (a
// HAR library's) shows the end a rule asks for, never its lack: a client
// may have stopped reading (at runComplete, legally) or aborted.
func TestUnknownEnds(t *testing.T) {
	stream := func(parts ...string) *View {
		x := ex{req: hdr("Accept", "text/event-stream"), resp: sseResp, chunks: whole(parts...), untimed: true, end: traffic.EndComplete}.build()
		x.Response.End = traffic.EndUnknown
		return x
	}
	for _, tc := range []struct {
		name  string
		judge func(*View, *History) error
		x     *View
		want  string
	}{
		{"SSE-05 with its close frame", CloseAtEnd.Judge, stream(start, ev, final, closeF), "pass"},
		{"SSE-05 stopped at runComplete", CloseAtEnd.Judge, stream(start, ev, final), "untested: " + NoEnd},
		{"SSE-03 with its final event", FinalAfter.Judge, stream(start, ev, final), "pass"},
		{"SSE-03 stopped before the final event", FinalAfter.Judge, stream(start, ev), "untested: " + NoEnd},
		{"SSE-03 with no event", FinalAfter.Judge, stream(start), "untested: " + NoEnd},
		{"SSE-03 a final event with another id", FinalAfter.Judge, stream(start, ev, strings.Replace(final, "r1:after", "r1:end", 1)), "fail"},
		{"SSE-02 stopped inside a frame", IDBeforeData.Judge, stream(start, ev, "id: r1\ndata: {\"con"), "pass"},
		{"SSE-06 an event after the final one", NothingAfterComplete.Judge, stream(start, ev, final, ev), "fail"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := outcomeOf(tc.judge, tc.x, nil); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestHeaderGapsAreUntested: a header the recording cannot vouch for
// (listed twice with different values, or no header list at all) leaves
// the rules that read it untested with the reason, never judged on one of
// its values or on its absence.
func TestHeaderGapsAreUntested(t *testing.T) {
	const twice = "the recording lists the request header Accept 2 times with different values"
	withGaps := func(e ex, req, resp traffic.HeaderGaps) *View {
		x := e.build()
		x.Request.Gaps, x.Response.Gaps = req, resp
		return x
	}
	sse := ex{req: hdr("Accept", "text/event-stream", "Accept", "*/*"), resp: sseResp, chunks: whole(start, ev, final, closeF)}
	noKey := ex{req: hdr(), status: 200, resp: hdr("Content-Type", "text/plain"), chunks: whole("hi")}
	noKey.req.Del("Authorization")
	for _, tc := range []struct {
		name  string
		judge func(*View, *History) error
		x     *View
		want  string
	}{
		{"FMT-01 on an Accept listed twice", AcceptSSE.Judge, withGaps(sse, traffic.HeaderGaps{"Accept": twice}, nil), "untested: " + twice},
		{"SSE-05 on an Accept listed twice", CloseAtEnd.Judge, withGaps(sse, traffic.HeaderGaps{"Accept": twice}, nil), "untested: " + twice},
		{"ERR-02 without a request header list", MissingKey.Judge, withGaps(noKey, traffic.HeaderGaps{"": "the recording has no request header list"}, nil),
			"untested: the recording has no request header list"},
		{"ERR-02 with a header list and no key", MissingKey.Judge, noKey.build(), "fail"},
		{"ERR-03 on Authorization listed twice", MalformedKey.Judge, withGaps(noKey, traffic.HeaderGaps{"Authorization": "two keys"}, nil), "untested: two keys"},
		{"THREAD-04 without a response header list", ThreadHeader.Judge, withGaps(ex{resp: hdr(), chunks: whole("hi")}, nil, traffic.HeaderGaps{"": "the recording has no response header list"}),
			"untested: the recording has no response header list"},
		{"FMT-01 on a Content-Type listed twice", AcceptSSE.Judge, withGaps(ex{req: hdr("Accept", "text/event-stream"), resp: sseResp, chunks: whole(start)}, nil,
			traffic.HeaderGaps{"Content-Type": "two types"}), "untested: two types"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := outcomeOf(tc.judge, tc.x, nil); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestFollowUpsOnRecordedTimes: a recording without chunk timings whose
// entries say when each answer ended (a HAR file's time) decides the
// thread follow-up rules, with the recording's precision as tolerance; one
// that does not say leaves them untested with that reason.
func TestFollowUpsOnRecordedTimes(t *testing.T) {
	untimedRun := func(endAt time.Duration, prec time.Duration) *View {
		x := envelopeRun(0, map[string]string{"X-SVC-Thread-Id": "t1"}, "t1", "r1", true)
		x.Response.Body.Timed, x.Response.End, x.Precision = false, traffic.EndUnknown, prec
		x.Response.EndAt = endAt
		return x
	}
	opened := envelopeRun(-20000, nil, "t1", "r0", true)
	follow := func(ms int, last string, prec time.Duration) *View {
		x := get(ms, "http://s/api/threads/t1", fmt.Sprintf(`{"id":"t1","lastRunID":%q}`, last))
		x.Response.Body.Timed, x.Response.End, x.Precision = false, traffic.EndUnknown, prec
		return x
	}
	lag := DefaultReportLag
	ms := func(d time.Duration) int { return int(d / time.Millisecond) }
	for _, tc := range []struct {
		name string
		xs   []*View
		want string
	}{
		{"the run's end is known: lastRunID moved on", []*View{opened, untimedRun(800*time.Millisecond, time.Millisecond), follow(ms(lag)+900, "r1", time.Millisecond)}, "pass"},
		{"the run's end is known: lastRunID stayed", []*View{opened, untimedRun(800*time.Millisecond, time.Millisecond), follow(ms(lag)+900, "r0", time.Millisecond)}, "fail"},
		{"within the recording's precision of the lag", []*View{opened, untimedRun(800*time.Millisecond, time.Millisecond), follow(ms(lag)+801, "r0", time.Millisecond)},
			"untested: the call came 14.999s after run \"r1\" of thread \"t1\" surely completed, within the report lag of 15s (--report-lag)"},
		{"the recording does not say when the answer ended", []*View{opened, untimedRun(0, time.Millisecond), follow(ms(lag)+900, "r0", time.Millisecond)},
			"untested: the recording does not say when the answer that showed run \"r1\" of thread \"t1\" complete ended (no chunk timings, no HAR time)"},
		{"no run of the thread completed", []*View{follow(900, "r0", 0)}, "skip: no run of thread \"t1\" surely completed before the call"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var h History
			for _, x := range tc.xs[:len(tc.xs)-1] {
				h.Add(x)
			}
			if got := outcomeOf(ThreadFollowUp("THREAD-02"), tc.xs[len(tc.xs)-1], &h); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
	// ASYNC-03 reads the same record.
	var h History
	h.Add(opened)
	h.Add(untimedRun(800*time.Millisecond, time.Millisecond))
	ev := get(ms(lag)+900, "http://s/api/threads/t1/events", `{"items":[{"content":"x","runID":"r0","threadID":"t1"},{"runComplete":true,"runID":"r0","threadID":"t1"}]}`)
	if got := outcomeOf(EventsLastCompleted.Judge, ev, &h); got != "fail" {
		t.Errorf("ASYNC-03 on an earlier run: %q", got)
	}
	// A later run whose end the recording does not say does not stop the
	// last surely completed run from deciding.
	h = History{}
	h.Add(opened)
	h.Add(untimedRun(0, time.Millisecond))
	if got := outcomeOf(EventsLastCompleted.Judge, ev, &h); got != "pass" {
		t.Errorf("ASYNC-03 on the last surely completed run: %q", got)
	}
	if !strings.Contains(FollowUps, "report lag") {
		t.Errorf("the follow-up aspect says %q", FollowUps)
	}
}

// TestAbortOnUntimedStream: an abort of a thread whose scripted stream the
// recording holds without arrival times cannot be placed in that stream:
// ASYNC-06 is untested, whichever comes last.
func TestAbortOnUntimedStream(t *testing.T) {
	s := ex{req: hdr("Accept", "text/event-stream"), resp: sseResp, prompt: "@say working\n@pause 3s\n@say after", untimed: true,
		chunks: whole(start, "id: r1\ndata: {\"content\":\"working\",\"runID\":\"r1\",\"threadID\":\"t1\"}\n\n", closeF)}.build()
	s.Start, s.Response.HeaderAt, s.Response.End = t0, 5*time.Millisecond, traffic.EndUnknown
	abort := abortAt(20, "", "")
	for _, order := range [][]*View{{s, abort}, {abort, s}} {
		var h History
		h.Add(order[0])
		if got := outcomeOf(AbortEndsRun.Judge, order[1], &h); got != "untested: "+NoTimings {
			t.Errorf("judged on %s: %q", order[1].Request.URL, got)
		}
	}
}
