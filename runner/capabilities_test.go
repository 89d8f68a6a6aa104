package runner_test

import (
	"strings"
	"testing"

	"github.com/invokeconf/invokeconf/fakeserver"
	"github.com/invokeconf/invokeconf/outcome"
	"github.com/invokeconf/invokeconf/runner"
	"github.com/invokeconf/invokeconf/testrun"
)

// TestMissingCapabilitiesAreUntested: a target whose profile says its agent
// cannot show steps and does not echo gets the scenarios that need them
// reported untested with the reason, never passed; scenarios that only need
// a status still run.
func TestMissingCapabilitiesAreUntested(t *testing.T) {
	t.Parallel()
	p := startReference(t, fakeserver.Config{})
	p.Capabilities.Script = []string{"say", "pause", "waiting", "toolinput", "tool", "tools", "ask", "fail"}
	// The cells (one scenario for several rules) are left out: the test
	// reads one rule per scenario. Their echo rows are asserted below.
	res, err := runSuite(runner.Config{Profile: p, Tags: "@EVT-06,@EVT-09,@BODY-01,@ROUTE-05,@ERR-02,@THREAD-02 && ~@cells"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		status testrun.Status
		reason string
	}{
		"EVT-06":    {testrun.Untested, "cannot be made to show @step (capabilities.script lacks step)"},
		"EVT-09":    {testrun.Passed, ""},
		"BODY-01":   {testrun.Untested, "capabilities.script lacks echo"},
		"ROUTE-05":  {testrun.Untested, "capabilities.script lacks echo"},
		"ERR-02":    {testrun.Passed, ""},
		"THREAD-02": {testrun.Passed, ""},
	}
	seen := map[string]int{}
	for _, s := range res.Scenarios {
		if len(s.Rules) != 1 {
			t.Fatalf("scenario %q checks %v; this test expects one rule each", s.Name, s.Rules)
		}
		w, ok := want[s.Rules[0]]
		if !ok {
			t.Fatalf("unexpected scenario %q [%s]", s.Name, s.Rules[0])
		}
		seen[s.Rules[0]]++
		if s.Status != w.status || !strings.Contains(s.Error, w.reason) {
			t.Errorf("%s %q: %s %q, want %s %q", s.Rules[0], s.Name, s.Status, s.Error, w.status, w.reason)
		}
	}
	for id := range want {
		if seen[id] == 0 {
			t.Errorf("no scenario of %s ran", id)
		}
	}
	if exitCode(t, res) != outcome.ExitPass {
		t.Errorf("exit code %d: untested scenarios are not failures", exitCode(t, res))
	}
	// The echo rows of the cells: BODY-01 on every route and form.
	cells, err := runSuite(runner.Config{Profile: p, Tags: "@cells && @BODY-01"})
	if err != nil {
		t.Fatal(err)
	}
	if len(cells.Scenarios) == 0 {
		t.Fatal("no echo row of the cells ran")
	}
	for _, s := range cells.Scenarios {
		if s.Status != testrun.Untested || !strings.Contains(s.Error, "capabilities.script lacks echo") {
			t.Errorf("%q: %s %q, want untested for the echo", s.Name, s.Status, s.Error)
		}
	}
}
