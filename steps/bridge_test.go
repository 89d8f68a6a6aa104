package steps

import (
	"net/http"
	"testing"
	"time"

	"github.com/invokeconf/invokeconf/checks"
	"github.com/invokeconf/invokeconf/traffic"
)

func TestExchangeKeepsReadsAndEnd(t *testing.T) {
	body := "event: start\ndata: {}\n\nid: r\ndata: {}\n\n"
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
			r := fake{Method: "POST", URL: "http://h/api/invoke/a", Status: 200,
				ReqHeader: http.Header{"Accept": {"text/event-stream"}},
				Header:    http.Header{"Content-Type": {"text/event-stream"}}, Body: []byte(body),
				HeadersAt: time.Millisecond, Reads: []Read{{At: 2 * time.Millisecond, End: 23}, {At: 9 * time.Millisecond, End: len(body)}},
				Complete: tc.complete, Err: tc.err}.response()
			x := r.Exchange
			if x.Response.End != tc.end || x.Request.Header.Get("Accept") != "text/event-stream" {
				t.Fatalf("end %q, accept %q", x.Response.End, x.Request.Header.Get("Accept"))
			}
			fs := r.View.Frames()
			if len(fs) != 2 || fs[0].At != 2*time.Millisecond || fs[1].At != 9*time.Millisecond {
				t.Fatalf("frames %+v", fs)
			}
		})
	}
}

var errTest error = brokenErr{}

type brokenErr struct{}

func (brokenErr) Error() string { return "broken" }

// TestReportLagCoversThePollDeadline: the passive follow-ups give a service
// as long to report a completion as the active scenarios poll for it, never
// less (checks.DefaultReportLag rests on DefaultDeadline).
func TestReportLagCoversThePollDeadline(t *testing.T) {
	if checks.DefaultReportLag < DefaultDeadline {
		t.Errorf("checks.DefaultReportLag %s is shorter than the active poll deadline %s", checks.DefaultReportLag, DefaultDeadline)
	}
}
