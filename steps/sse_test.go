package steps

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/invokeconf/invokeconf/outcome"
)

// hostileSSE serves body as an SSE response, written in pieces with a flush
// after each, so the harness reads it as a live stream.
func hostileSSE(t *testing.T, pieces ...string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("X-SVC-Thread-Id", "thr_1")
		for _, p := range pieces {
			_, _ = w.Write([]byte(p))
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// invokeHostile reads one response of the hostile target into the World.
func invokeHostile(t *testing.T, pieces ...string) *World {
	t.Helper()
	return invokeHostilePrompt(t, "x", pieces...)
}

// invokeHostilePrompt is invokeHostile with the prompt sent.
func invokeHostilePrompt(t *testing.T, prompt string, pieces ...string) *World {
	t.Helper()
	w := testWorld(t)
	w.P.BaseURL = hostileSSE(t, pieces...).URL
	resp, err := w.do(request{method: "POST", path: "/api/invoke/agt_1", body: &prompt,
		header: http.Header{"Accept": {"text/event-stream"}}})
	if err != nil {
		t.Fatal(err)
	}
	w.resp = resp
	return w
}

// sseChecks are the steps that judge a finished SSE stream.
func sseChecks(w *World) map[string]func() error {
	return map[string]func() error{
		"first frame":        func() error { return w.controlFrame("first", "start", "{}") },
		"last frame":         func() error { return w.controlFrame("last", "close", "{}") },
		"start before":       func() error { return w.startBeforeContent("1ms") },
		"id then data":       w.eventFramesIDThenData,
		"final event":        w.finalEventFrame,
		"ping":               func() error { return w.pingWithin("21.5s", "a") },
		"nothing after":      w.nothingAfterComplete,
		"error event":        w.errorEvent,
		"data frames":        w.dataFramesAreObjects,
		"event ids":          w.eventIDs,
		"one richer":         w.atMostOneRicher,
		"waiting before":     func() error { return w.setBefore("waitingOnModel", "content") },
		"tool call":          func() error { return w.innerField("toolCall", "name", "calc") },
		"prompt event":       func() error { return w.promptEvent("m", "true") },
		"live gap":           func() error { return w.eventGap("a", "1ms", "b") },
		"concatenated":       func() error { return w.sseAnswerIs("a") },
		"envelope is answer": func() error { return w.envelopeAnswerIs("a") },
	}
}

// TestCommentOnlyStreamFailsCleanly: a target that sends only comment lines
// fails every check with a Failure; no step panics (a panic would be
// reported as a harness error).
func TestCommentOnlyStreamFailsCleanly(t *testing.T) {
	w := invokeHostile(t, ": one\n", ": two\n\n", ":\n")
	for name, check := range sseChecks(w) {
		t.Run(name, func(t *testing.T) {
			var err error
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("panicked: %v", r)
					}
				}()
				err = check()
			}()
			if err == nil {
				t.Fatal("a comment-only stream passed")
			}
		})
	}
}

// TestStreamCutMidFrame: a stream that ends inside an event frame fails
// SSE-02, even when the cut frame has its id and data lines.
func TestStreamCutMidFrame(t *testing.T) {
	w := invokeHostile(t, "event: start\ndata: {}\n\n",
		"id: r1\ndata: {\"runID\":\"r1\",\"threadID\":\"thr_1\",\"content\":\"a\"}\n\n",
		"id: r1:after\ndata: {\"runID\":\"r1\",\"threadID\":\"thr_1\",\"runComplete\":true}\n")
	err := w.eventFramesIDThenData()
	if _, ok := outcome.AsFailure(err); !ok {
		t.Fatalf("want a Failure, got %v", err)
	}
	if !strings.Contains(err.Error(), "blank line") {
		t.Errorf("the failure should say the frame was cut: %v", err)
	}
}

// TestHugeFrameIsQuotedBounded: a failure quotes at most a few hundred bytes
// of a frame, however long its line.
func TestHugeFrameIsQuotedBounded(t *testing.T) {
	huge := strings.Repeat("x", 1<<20)
	w := invokeHostile(t, "event: start\ndata: {}\n\n", "id: r1\ndata: "+huge+"\n\n", "event: close\ndata: {}\n\n")
	for name, check := range sseChecks(w) {
		if err := check(); err != nil && len(err.Error()) > 2000 {
			t.Errorf("%s: a failure of %d bytes", name, len(err.Error()))
		}
	}
}

// TestWatchParsesOnce: the stop function of a live read feeds each byte to
// the parser once and finds a frame split across reads, a CRLF split
// between its CR and LF included.
func TestWatchParsesOnce(t *testing.T) {
	stream := "event: start\r\ndata: {}\r\n\r\n: ping\r\nid: r\r\ndata: {\"content\":\"hit\"}\r\n\r\n"
	rd := &reading{}
	found := -1
	seen := watchFor(func(f Frame) bool { return hasContent(f, "hit") })
	for i := 0; i < len(stream); i++ {
		rd.body, rd.at = append(rd.body, stream[i]), time.Duration(i)
		if seen(rd) && found < 0 {
			found = i
		}
	}
	// The CR of the last CRLF ends the blank line: the frame is complete there.
	if found != len(stream)-2 {
		t.Fatalf("found at byte %d, want %d (the blank line's CR)", found, len(stream)-2)
	}
}

// TestPingWithin: SSE-04 on the stream the scenario read, to its end or to
// the ping it stopped at. A lone ": ping" line is timed when its line
// arrived, not when the next frame's blank line did.
func TestPingWithin(t *testing.T) {
	ev := "event: start\ndata: {}\n\nid: r\ndata: {\"content\":\"a\"}\n\n"
	later := "id: r\ndata: {\"content\":\"b\"}\n\n"
	tests := []struct {
		name    string
		reads   []time.Duration // when ev, the ping and later arrived
		stopped bool            // the scenario stopped reading at the ping
		want    string          // "" for a pass, else a word of the failure
	}{
		{"a ping at 20 s", []time.Duration{0, 20 * time.Second, 23 * time.Second}, false, ""},
		{"a ping at 22 s", []time.Duration{0, 22 * time.Second, 23 * time.Second}, false, fmt.Sprint(22 * time.Second)},
		{"stopped at a ping at 20 s", []time.Duration{0, 20 * time.Second}, true, ""},
		// A stream that cannot decide SSE-04 leaves it untested, never failed.
		{"stopped at a ping at 1 s", []time.Duration{0, time.Second}, true, "untested: SSE-04 could not be decided"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := testWorld(t)
			body := ev + ": ping\n"
			reads := []Read{{At: tt.reads[0], End: len(ev)}, {At: tt.reads[1], End: len(body)}}
			if !tt.stopped {
				body += later
				reads = append(reads, Read{At: tt.reads[2], End: len(body)})
			}
			w.resp = fake{Method: "POST", URL: "http://svc.test/api/invoke/agt_1", Status: 200,
				ReqHeader: http.Header{"Accept": {"text/event-stream"}},
				Header:    http.Header{"Content-Type": {"text/event-stream"}}, Body: []byte(body), Reads: reads, Complete: !tt.stopped}.response()
			if tt.stopped {
				w.resp.Err = errStopped
			}
			err := w.pingWithin("21.5s", "a")
			switch {
			case tt.want == "" && err != nil:
				t.Fatal(err)
			case tt.want != "" && err == nil:
				t.Fatal("passed")
			case tt.want != "" && !strings.Contains(err.Error(), tt.want):
				t.Errorf("the failure should say %s: %v", tt.want, err)
			}
		})
	}
}

// TestUntilPingStops: the SSE-04 scenario stops reading at the first ping
// that ends checks.KeepaliveDue of quiet after the content, reads past an
// earlier one, and reads to the end when a frame ends the quiet first.
func TestUntilPingStops(t *testing.T) {
	const content = "id: r\ndata: {\"content\":\"quiet\"}\n\n"
	tests := []struct {
		name   string
		pieces []string
		at     []time.Duration
		stop   int // the piece it stops at; -1 for none
	}{
		{"a ping at 20 s", []string{content, ": ping\n"}, []time.Duration{0, 20 * time.Second}, 1},
		{"a ping at 1 s, then at 20 s", []string{content, ": ping\n", ": ping\n\n"}, []time.Duration{0, time.Second, 20 * time.Second}, 2},
		{"a ping before the content", []string{": ping\n", content}, []time.Duration{20 * time.Second, 21 * time.Second}, -1},
		{"an event ends the quiet", []string{content, "id: r\ndata: {}\n\n", ": ping\n"}, []time.Duration{0, time.Second, 30 * time.Second}, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rd := &reading{}
			stop := untilPing("quiet")
			got := -1
			for i, p := range tt.pieces {
				rd.body, rd.at = append(rd.body, p...), tt.at[i]
				if stop(rd) {
					got = i
					break
				}
			}
			if got != tt.stop {
				t.Errorf("stopped at piece %d, want %d", got, tt.stop)
			}
		})
	}
}
