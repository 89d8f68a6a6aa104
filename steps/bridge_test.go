package steps

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/invokeconf/invokeconf/checks"
	"github.com/invokeconf/invokeconf/traffic"
)

func TestExchangeKeepsReadsAndEnd(t *testing.T) {
	body := "event: start\ndata: {}\n\nid: r\ndata: {}\n\n"
	r := &Response{Method: "POST", URL: "http://h/api/invoke/a", Status: 200,
		ReqHeader: http.Header{"Accept": {"text/event-stream"}},
		Header:    http.Header{"Content-Type": {"text/event-stream"}}, Body: []byte(body),
		HeadersAt: time.Millisecond, Reads: []Read{{At: 2 * time.Millisecond, End: 23}, {At: 9 * time.Millisecond, End: len(body)}}}
	for _, tc := range []struct {
		name     string
		complete bool
		err      error
		end      traffic.End
	}{
		{"complete", true, nil, traffic.EndComplete},
		{"stopped", false, errStopped, traffic.EndClientGone},
		{"broken", false, errTest, traffic.EndError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r.Complete, r.Err = tc.complete, tc.err
			x := r.Exchange()
			if x.Response.End != tc.end || x.Request.Header.Get("Accept") != "text/event-stream" {
				t.Fatalf("end %q, accept %q", x.Response.End, x.Request.Header.Get("Accept"))
			}
			fs := checks.Frames(&x.Response.Body)
			if len(fs) != 2 || fs[0].At != 2*time.Millisecond || fs[1].At != 9*time.Millisecond {
				t.Fatalf("frames %+v", fs)
			}
		})
	}
}

var errTest error = brokenErr{}

type brokenErr struct{}

func (brokenErr) Error() string { return "broken" }

// TestRememberKeepsAHugeBodyCut: the scenario's History reads at most
// maxRemembered of a body, and knows the rest was cut.
func TestRememberKeepsAHugeBodyCut(t *testing.T) {
	for _, tc := range []struct {
		name string
		size int
	}{
		{"small", 100},
		{"huge", maxRemembered + 5000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := []byte(strings.Repeat("x", tc.size))
			r := &Response{Method: "POST", URL: "http://h/api/invoke/a", Status: 200, Header: http.Header{"X-Svc-Thread-Id": {"t1"}},
				Body: body, Complete: true, Sent: time.Now(), Reads: []Read{{At: time.Millisecond, End: 10}, {At: 2 * time.Millisecond, End: tc.size}}}
			w := &World{}
			w.remember(r)
			if !w.hist.Thread("t1") {
				t.Fatal("the thread the response named is not in the History")
			}
			x := r.Exchange()
			if len(x.Response.Body.Bytes()) != tc.size {
				t.Fatalf("Exchange cut the body the checks judge: %d bytes", len(x.Response.Body.Bytes()))
			}
		})
	}
}

// TestReportLagCoversThePollDeadline: the passive follow-ups give a service
// as long to report a completion as the active scenarios poll for it, never
// less (checks.DefaultReportLag rests on DefaultDeadline).
func TestReportLagCoversThePollDeadline(t *testing.T) {
	if checks.DefaultReportLag < DefaultDeadline {
		t.Errorf("checks.DefaultReportLag %s is shorter than the active poll deadline %s", checks.DefaultReportLag, DefaultDeadline)
	}
}
