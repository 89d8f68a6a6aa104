package checks

import (
	"strings"
	"testing"
	"time"

	"github.com/invokeconf/invokeconf/traffic"
)

// stalledBy returns x with the harness's own stalls (ms from the start) as
// a lateness probe records them.
func stalledBy(x *View, spans ...[2]int) *View {
	x.Probed = true
	for _, s := range spans {
		x.Stalls = append(x.Stalls, traffic.Stall{From: time.Duration(s[0]) * time.Millisecond, To: time.Duration(s[1]) * time.Millisecond})
	}
	return x
}

// TestStarvedHarness: a timing check does not blame the service for a delay
// the harness's own lateness in the same window could explain (untested,
// with the reason), and still fails one it could not: a stall too short,
// or in another window.
func TestStarvedHarness(t *testing.T) {
	plainScript := "@say a\n@pause 800ms\n@say b\n@pause 800ms\n@say c"
	// steady is steadyScript's text, each "x" read as produced except
	// those produced after from and before to, read together at to.
	steady := func(from, to int) ex {
		var out []at
		pending := ""
		for i := 0; i < 17; i++ {
			ms := 100 * i
			if ms > from && ms < to {
				pending += "x"
				continue
			}
			if pending != "" {
				out = append(out, at{to, pending})
				pending = ""
			}
			out = append(out, at{ms, "x"})
		}
		return ex{prompt: steadyScript, chunks: out}
	}
	timedSSE := func(prompt string, chunks ...at) ex {
		return ex{req: hdr("Accept", "text/event-stream"), resp: sseResp, prompt: prompt, chunks: chunks}
	}
	async := func(ms int) ex {
		return ex{url: "http://s/api/invoke/a?async=true", prompt: "@pause 2s\n@say x", chunks: []at{{ms, `{"threadID":"t","runID":"r"}`}}}
	}
	for _, tc := range []struct {
		rule, name string
		x          ex
		stalls     [][2]int
		want       string
		aspect     string
	}{
		// FMT-06: the case, 731 ms between chunks of steady text.
		{"FMT-06", "a 731 ms gap while the harness stalled 600 ms", steady(600, 1331), [][2]int{{700, 1300}}, "untested", ""},
		{"FMT-06", "a 731 ms gap with 10 ms of jitter", steady(600, 1331), [][2]int{{700, 710}}, "fail", ""},
		{"FMT-06", "a 731 ms gap, the stall elsewhere", steady(600, 1331), [][2]int{{0, 590}}, "fail", ""},
		{"FMT-06", "a 1.2 s gap while the harness stalled 100 ms", steady(200, 1450), [][2]int{{500, 600}}, "fail", ""},
		{"FMT-06", "a held fragment while the harness stalled", ex{prompt: plainScript, chunks: []at{{5, "a"}, {1705, "b"}, {1710, "c"}}},
			[][2]int{{900, 1700}}, "untested", ""},
		{"FMT-06", "a held fragment, a stall too short", ex{prompt: plainScript, chunks: []at{{5, "a"}, {1705, "b"}, {1710, "c"}}},
			[][2]int{{900, 950}}, "fail", ""},
		// FMT-01: the first event read late comes closer to the last.
		{"FMT-01", "events too close after a stall before the first", timedSSE("@say early\n@pause 1s\n@say late",
			at{700, start + strings.ReplaceAll(ev, "hi", "early")}, at{1002, strings.ReplaceAll(ev, "hi", "late") + final + closeF}),
			[][2]int{{10, 690}}, "untested", Live},
		{"FMT-01", "events too close, a stall after them", timedSSE("@say early\n@pause 1s\n@say late",
			at{700, start + strings.ReplaceAll(ev, "hi", "early")}, at{1002, strings.ReplaceAll(ev, "hi", "late") + final + closeF}),
			[][2]int{{800, 1000}}, "fail", Live},
		// SSE-01: the start frame read late.
		{"SSE-01", "start read 600 ms late", timedSSE("@pause 1s\n@say hi", at{600, start}, at{1001, ev + final + closeF}),
			[][2]int{{0, 590}}, "untested", AtOnce},
		{"SSE-01", "start 600 ms late, 20 ms of jitter", timedSSE("@pause 1s\n@say hi", at{600, start}, at{1001, ev + final + closeF}),
			[][2]int{{0, 20}}, "fail", AtOnce},
		// ASYNC-01: the acknowledgement read late.
		{"ASYNC-01", "an acknowledgement read 700 ms late", async(2200), [][2]int{{1000, 1800}}, "untested", AckAtOnce},
		{"ASYNC-01", "an acknowledgement after the run", async(2200), [][2]int{{1000, 1100}}, "fail", AckAtOnce},
		// SSE-04: a ping read late.
		{"SSE-04", "a ping 22 s into the quiet after a 1 s stall", sse(at{1, start + ev}, at{22000, ping}, at{25000, final + closeF}),
			[][2]int{{20500, 21500}}, "untested", ""},
		{"SSE-04", "a ping 22 s into the quiet, 100 ms of stalls", sse(at{1, start + ev}, at{22000, ping}, at{25000, final + closeF}),
			[][2]int{{20500, 20600}}, "fail", ""},
		{"SSE-04", "no ping at all, a stall too short", sse(at{1, start + ev}, at{25000, final + closeF}), [][2]int{{5000, 6000}}, "fail", ""},
	} {
		x := stalledBy(tc.x.build(), tc.stalls...)
		got, r := verdictOf(tc.rule, tc.aspect, x)
		if got != tc.want {
			t.Errorf("%s %s: %s, want %s (%v %v)", tc.rule, tc.name, got, tc.want, r.Failure, r.Skip)
		}
		if got == "untested" && !strings.Contains(r.Skip.Reason, "the harness itself ran") {
			t.Errorf("%s %s: reason %q", tc.rule, tc.name, r.Skip.Reason)
		}
		// Without the probe's record the same exchange fails.
		if got == "untested" {
			plain := tc.x.build()
			if v, _ := verdictOf(tc.rule, tc.aspect, plain); v != "fail" {
				t.Errorf("%s %s without stalls: %s, want fail", tc.rule, tc.name, v)
			}
		}
	}
}

// TestAnsweredWithin: ASYNC-05's "answers immediately" excuses a late
// answer only by a stall long enough to explain it.
func TestAnsweredWithin(t *testing.T) {
	get := func(ms int) *View {
		return ex{method: "GET", url: "http://s/api/threads/t1", chunks: []at{{ms, `{"lastRunID":null}`}}}.build()
	}
	check := AnsweredWithin(time.Second)
	if err := check(get(300), nil); err != nil {
		t.Errorf("an answer in 300 ms: %v", err)
	}
	if _, ok := check(get(1600), nil).(*Skip); ok {
		t.Error("an answer after 1.6 s without stalls was excused")
	}
	err := check(stalledBy(get(1600), [2]int{100, 800}), nil)
	if s, ok := err.(*Skip); !ok || !s.Untested {
		t.Errorf("an answer after 1.6 s with a 700 ms stall: %v", err)
	}
	if err := check(stalledBy(get(1600), [2]int{100, 200}), nil); err == nil {
		t.Error("an answer after 1.6 s with a 100 ms stall passed")
	} else if _, ok := err.(*Skip); ok {
		t.Errorf("an answer after 1.6 s with a 100 ms stall was excused: %v", err)
	}
}
