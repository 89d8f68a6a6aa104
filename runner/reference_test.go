package runner_test

import (
	"context"
	"testing"

	"github.com/invokeconf/invokeconf/fakeserver"
	"github.com/invokeconf/invokeconf/invokeconftest"
	"github.com/invokeconf/invokeconf/profile"
	"github.com/invokeconf/invokeconf/runner"
	"github.com/invokeconf/invokeconf/testrun"
)

// startReference starts a reference server seeded with the fixtures (cfg's
// Profile is filled in) and returns the profile of the target it serves. The
// server stops when the test ends.
func startReference(t *testing.T, cfg fakeserver.Config) *profile.Profile {
	t.Helper()
	cfg.Profile = nil // the fixtures, as ever
	return invokeconftest.NewServer(t, invokeconftest.WithConfig(cfg)).Profile
}

// suiteRuns bounds the suite runs this package's tests make at once, all
// of them in one process: more at once only queue for the CPU, and a run
// starved inside its own process (its reads woken late behind the other
// runs' work) may miss a timing bound where the harness's lateness probe
// does not see why. Runs that mostly wait (the 20 s keepalive) keep the
// CPU free for the others.
var suiteRuns = make(chan struct{}, 6)

// runSuite is runner.Run holding a slot of suiteRuns.
func runSuite(cfg runner.Config) (*testrun.Result, error) {
	suiteRuns <- struct{}{}
	defer func() { <-suiteRuns }()
	return runner.Run(context.Background(), cfg)
}
