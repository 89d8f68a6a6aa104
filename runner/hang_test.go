package runner_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/invokeconf/invokeconf/fixtures"
	"github.com/invokeconf/invokeconf/outcome"
	"github.com/invokeconf/invokeconf/runner"
	"github.com/invokeconf/invokeconf/steps"
	"github.com/invokeconf/invokeconf/testrun"
)

// TestHangingTargetFailsTheScenario: a target that never answers, or stops
// in the middle of a stream, fails a rule within the deadline (the
// scenario's own, or one its steps rest on, which blocks it); the run itself
// ends with a result.
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
	res, err := runner.Run(context.Background(), runner.Config{Profile: p, Tags: "@ERR-02,@SSE-02 && ~@cells"})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > steps.DefaultDeadline+10*time.Second {
		t.Errorf("the run took %s against a hanging target", took)
	}
	// A request that gets no answer breaks the rule its step rests on (the
	// invoke route, the stream's end): each scenario fails on it or is
	// blocked by it, and the run fails.
	if len(res.Scenarios) != 2 || res.Count(testrun.Failed)+res.Count(testrun.Blocked) != 2 || exitCode(t, res) != outcome.ExitFail {
		t.Fatalf("want both scenarios failed or blocked, got %+v", res.Scenarios)
	}
	for _, s := range res.Scenarios {
		if s.Failure == nil || s.Failure.Rule == "" {
			t.Errorf("%s: the failure names no rule: %+v", s.Name, s.Failure)
		}
		if !strings.Contains(s.Error, "within") {
			t.Errorf("%s: the error should name the deadline: %s", s.Name, s.Error)
		}
	}
}
