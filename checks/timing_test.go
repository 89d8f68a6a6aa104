package checks

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/invokeconf/invokeconf/traffic"
)

// TestTimedChecks: the checks the active steps call for SSE-01, SSE-04,
// FMT-01 and FMT-06, on the shapes of traffic each mode gives them.
func TestTimedChecks(t *testing.T) {
	plainScript := "@say a\n@pause 800ms\n@say b\n@pause 800ms\n@say c"
	gone := func(x ex) ex { x.end = traffic.EndClientGone; return x }
	for _, tc := range []struct {
		rule, name string
		x          ex
		want       string
		aspect     string
	}{
		// FMT-01: the media type decides the form.
		{"FMT-01", "SSE frames as text/plain", ex{req: hdr("Accept", "text/event-stream"), resp: hdr("Content-Type", "text/plain; charset=utf-8"),
			chunks: whole(start, ev, final, closeF)}, "fail", ""},
		{"FMT-01", "SSE frames without Content-Type", ex{req: hdr("Accept", "text/event-stream"), chunks: whole(start, ev, final, closeF)}, "fail", ""},
		{"FMT-01", "a media type parameter", ex{req: hdr("Accept", "text/event-stream"), resp: hdr("Content-Type", "Text/Event-Stream; charset=utf-8"),
			chunks: whole(start, ev, final, closeF)}, "pass", ""},
		{"FMT-01", "no body kept", ex{req: hdr("Accept", "text/event-stream"), resp: sseResp, chunks: whole(start, ev), redacted: true}, "pass", ""},
		// SSE-04: the client may go away at the ping the quiet called for.
		{"SSE-04", "the client left at a ping 20 s into the quiet", gone(sse(at{1, start + ev}, at{20050, ping})), "pass", ""},
		{"SSE-04", "the client left at a lone ping line", gone(sse(at{1, start + ev}, at{20050, ": ping\n"})), "pass", ""},
		{"SSE-04", "the client left at a ping 1 s into the quiet", gone(sse(at{1, start + ev}, at{1000, ping})), "skip", ""},
		{"SSE-04", "the client left 19 s into the quiet", gone(sse(at{1, start + ev}, at{19000, ": other\n"})), "skip", ""},
		{"SSE-04", "the client left at a ping 22 s into the quiet", gone(sse(at{1, start + ev}, at{22000, ping})), "fail", ""},
		{"SSE-04", "a ping after every event, none in the quiet", sse(at{1, start + ev + ping}, at{23000, ev + ping + final + closeF}), "fail", ""},
		{"SSE-04", "a ping every 5 s", sse(at{1, start + ev}, at{5000, ping}, at{10000, ping}, at{15000, ping}, at{20000, ping}, at{23000, final + closeF}), "pass", ""},
		{"SSE-04", "a ping 21 s into a quiet, then a frame", sse(at{1, start + ev}, at{21000, ping}, at{21500, final + closeF}), "pass", ""},
		// FMT-06: every fragment's arrival less its production lies within
		// the bound of every other's.
		{"FMT-06", "steady text held to the end", ex{prompt: steadyScript, chunks: []at{{1650, strings.Repeat("x", 17)}}}, "fail", ""},
		{"FMT-06", "steady text, each fragment as produced", ex{prompt: steadyScript, chunks: steadyChunks(0)}, "pass", ""},
		{"FMT-06", "the first fragment held, the rest sent soon after", ex{prompt: plainScript, chunks: []at{{1000, "a"}, {1100, "b"}, {1200, "c"}}}, "fail", ""},
		{"FMT-06", "every fragment held 600 ms", ex{prompt: plainScript, chunks: []at{{600, "a"}, {1400, "b"}, {2200, "c"}}}, "pass", ""},
		{"FMT-06", "a fragment split over chunks", ex{prompt: "@say ab\n@pause 800ms\n@say c", chunks: []at{{5, "a"}, {300, "b"}, {805, "c"}}}, "pass", ""},
		{"FMT-06", "the client left", ex{prompt: plainScript, chunks: []at{{5, "a"}}, end: traffic.EndClientGone}, "skip", ""},
		// SSE-01: a comment before the start frame is no frame.
		{"SSE-01", "a comment, then start at once", ex{req: hdr("Accept", "text/event-stream"), resp: sseResp, prompt: "@pause 1s\n@say hi",
			chunks: []at{{1, ping + start}, {1001, ev + final + closeF}}}, "pass", AtOnce},
		{"SSE-01", "start 600 ms late", ex{req: hdr("Accept", "text/event-stream"), resp: sseResp, prompt: "@pause 1s\n@say hi",
			chunks: []at{{600, start}, {1001, ev + final + closeF}}}, "fail", AtOnce},
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

// steadyChunks is steadyScript's text, each "x" arriving as produced,
// delay ms late.
func steadyChunks(delay int) []at {
	out := make([]at, 17)
	for i := range out {
		out[i] = at{delay + 100*i, "x"}
	}
	return out
}

// TestTimingOf: the figures a step compares with its scenario's text.
func TestTimingOf(t *testing.T) {
	got, ok := TimingOf("@pause 1s\n@say one;\n@pause 800ms\n@say two;")
	want := ScriptTiming{Lead: time.Second, Texts: []string{"one;", "two;"}, At: []time.Duration{0, 800 * time.Millisecond}}
	if !ok || !reflect.DeepEqual(got, want) {
		t.Errorf("TimingOf = %+v, %t; want %+v", got, ok, want)
	}
	if _, ok := TimingOf("hello"); ok {
		t.Error("a prompt that is no script has a timing")
	}
}
