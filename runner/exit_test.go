package runner_test

import (
	"testing"

	"github.com/invokeconf/invokeconf/profile"
	"github.com/invokeconf/invokeconf/reports"
	"github.com/invokeconf/invokeconf/testrun"
)

// exitCode is the exit code the CLI gives a run: the tests of this package
// hold runs to the same policy users get (reports.Build).
func exitCode(t *testing.T, res *testrun.Result) int {
	t.Helper()
	rep, err := reports.Build(reports.Input{Result: res, Profile: &profile.Profile{}})
	if err != nil {
		t.Fatal(err)
	}
	return rep.ExitCode
}
