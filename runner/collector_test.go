package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/cucumber/godog"

	"github.com/invokeconf/invokeconf/outcome"
	"github.com/invokeconf/invokeconf/profile"
	"github.com/invokeconf/invokeconf/testrun"
)

// TestClassify: how the collector turns a scenario's error into a status.
// The errors come from a real godog run, so an upgrade of godog that
// changes how it reports a panicking or undefined step shows up here.
func TestClassify(t *testing.T) {
	feature := `Feature: f
  Scenario: passes
    Given a step that passes
  Scenario: fails
    Given a step that fails
  Scenario: panics
    Given a step that panics
  Scenario: is undefined
    Given a step nobody wrote
  Scenario: is skipped
    Given a step that skips
`
	var mu sync.Mutex
	errs := map[string]error{}
	godog.TestSuite{
		ScenarioInitializer: func(sc *godog.ScenarioContext) {
			sc.Step(`^a step that passes$`, func() error { return nil })
			sc.Step(`^a step that fails$`, func() error { return errors.New("status 403, want 401") })
			sc.Step(`^a step that panics$`, func() error { var m map[string]int; m["x"]++; return nil })
			sc.Step(`^a step that skips$`, func() error { return godog.ErrSkip })
			sc.After(func(ctx context.Context, s *godog.Scenario, err error) (context.Context, error) {
				mu.Lock()
				errs[s.Name] = err
				mu.Unlock()
				return ctx, nil
			})
		},
		Options: &godog.Options{Format: "progress", Output: io.Discard, FS: fstest.MapFS{"f.feature": {Data: []byte(feature)}},
			Paths: []string{"."}, Strict: true},
	}.Run()
	c := &collector{ctx: context.Background(), p: &profile.Profile{}}
	want := map[string]testrun.Status{"passes": testrun.Passed, "fails": testrun.Failed, "panics": testrun.HarnessError, "is undefined": testrun.HarnessError, "is skipped": testrun.Untested}
	for name, status := range want {
		err, ok := errs[name]
		if !ok {
			t.Errorf("scenario %q did not report", name)
			continue
		}
		if got, msg := c.classify(err); got != status {
			t.Errorf("%q (%v): %s %q, want %s", name, err, got, msg, status)
		}
	}

	// A run cut short: its failures are the harness's, not the target's.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c.ctx = ctx
	if got, _ := c.classify(fmt.Errorf("POST /x: %w", context.Canceled)); got != testrun.HarnessError {
		t.Errorf("interrupted: %s", got)
	}
	// A step that made "could not decide" of the stream the interrupt cut
	// is no untested rule: the run was cut.
	if got, msg := c.classify(errs["is skipped"]); got != testrun.HarnessError || !strings.Contains(msg, "the run was interrupted") {
		t.Errorf("a step untested by the interrupt: %s %q", got, msg)
	}
}

// TestProgressNamesWhatMayExplainAFailure: a progress line is printed as
// the scenario ends, before the verdict reconciles; a failure another rule
// would explain says so, so a reader is not surprised when the verdict
// blames that rule.
func TestProgressNamesWhatMayExplainAFailure(t *testing.T) {
	for _, tc := range []struct {
		explained []string
		want      string
	}{
		{nil, ""},
		{[]string{"THREAD-04"}, "(THREAD-04 would explain this too: if it fails in its own scenarios"},
		{[]string{"ASYNC-05", "THREAD-04"}, "(ASYNC-05 or THREAD-04 would explain this too: if one fails in its own scenarios"},
	} {
		var b strings.Builder
		c := &collector{console: &b, total: 1, noColors: true}
		c.progress(1, testrun.ScenarioResult{ID: "threads.feature:28", Rules: []string{"THREAD-03"}, Status: testrun.Failed, Error: "404",
			Failure: &outcome.Failure{Rule: "THREAD-03", ExplainedBy: tc.explained}})
		if got := b.String(); tc.want == "" && strings.Contains(got, "explain") || !strings.Contains(got, tc.want) {
			t.Errorf("ExplainedBy %v: progress line\n%s\nwant %q", tc.explained, got, tc.want)
		}
	}
}
