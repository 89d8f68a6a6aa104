package runner_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/invokeconf/invokeconf/fixtures"
	"github.com/invokeconf/invokeconf/runner"
	"github.com/invokeconf/invokeconf/steps"
)

// TestHangingTargetFailsTheScenario: a target that never answers, or stops
// in the middle of a stream, fails its scenarios within the deadline; the run
// itself ends with a result.
func TestHangingTargetFailsTheScenario(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	hang := func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Accept") == "text/event-stream" {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(200)
			_, _ = w.Write([]byte("event: start\ndata: {}\n\n"))
			http.NewResponseController(w).Flush()
		}
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}
	ts := httptest.NewServer(http.HandlerFunc(hang))
	defer ts.Close()
	// Let the handlers go first: with an unread request body, the server
	// does not notice that the client has gone.
	defer close(release)
	p, err := fixtures.Reference()
	if err != nil {
		t.Fatal(err)
	}
	p.BaseURL = ts.URL
	start := time.Now()
	res, err := runner.Run(context.Background(), runner.Config{Profile: p, Tags: "@ERR-02,@SSE-02"})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > steps.DefaultDeadline+10*time.Second {
		t.Errorf("the run took %s against a hanging target", took)
	}
	if len(res.Scenarios) != 2 || res.Count(runner.Failed) != 2 || exitCode(t, res) != runner.ExitFail {
		t.Fatalf("want both scenarios failed, got %+v", res.Scenarios)
	}
	for _, s := range res.Scenarios {
		if !strings.Contains(s.Error, "within") {
			t.Errorf("%s: the error should name the deadline: %s", s.Name, s.Error)
		}
	}
}
