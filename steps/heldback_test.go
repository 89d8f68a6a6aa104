package steps

import (
	"net/http"
	"testing"
	"time"

	"github.com/invokeconf/invokeconf/outcome"
)

// TestHeldBack: a client that acts mid-run (goes away, aborts) must show
// that it did. The last words already read fail the answer's form; the
// awaited text arriving only when the last words were due leaves the
// scenario untested (one write read in pieces shows no more).
func TestHeldBack(t *testing.T) {
	script := "@say early\n@pause 300ms\n@say tick\n@pause 2800ms\n@say late\n" // late is due at 3.1 s
	cases := []struct {
		name   string
		accept string
		body   string
		at     time.Duration // when the read that stopped the client came
		want   string        // "" (goes on), "untested" or the rule failed
	}{
		{"live SSE", "text/event-stream", "data: early\n\n", 5 * time.Millisecond, ""},
		{"live plain", "text/plain", "early", 5 * time.Millisecond, ""},
		{"last words read, SSE", "text/event-stream", "data: early\n\ndata: tick\n\ndata: late\n\n", 3200 * time.Millisecond, "FMT-01"},
		{"last words read, plain", "text/plain", "earlyticklate", 3200 * time.Millisecond, "FMT-06"},
		{"a held-back stream read in pieces", "text/event-stream", "data: early\n\n", 3150 * time.Millisecond, "untested"},
		{"plain, read in pieces", "text/plain", "early", 3100 * time.Millisecond, "untested"},
		{"slow but mid-run", "text/event-stream", "data: early\n\n", 3 * time.Second, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := fake{Method: "POST", URL: "http://h/api/invoke/a", Status: 200,
				ReqHeader: http.Header{"Accept": {tc.accept}}, ReqBody: []byte(script),
				Header: http.Header{"X-Svc-Thread-Id": {"t1"}}, Body: []byte(tc.body), Sent: time.Now(),
				Reads: []Read{{At: tc.at, End: len(tc.body)}}}.response()
			err := (&World{}).heldBack(r)
			got := ""
			if _, ok := Untested(err); ok {
				got = "untested"
			} else if f, ok := outcome.AsFailure(err); ok {
				got = f.Rule
			} else if err != nil {
				t.Fatalf("unexpected error %v", err)
			}
			if got != tc.want {
				t.Fatalf("heldBack: got %q (%v), want %q", got, err, tc.want)
			}
		})
	}
}
