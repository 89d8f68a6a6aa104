package runner_test

import (
	"context"
	"slices"
	"testing"

	"github.com/invokeconf/invokeconf/fakeserver"
	"github.com/invokeconf/invokeconf/internal/sweep"
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
// does not see why. The complete sweep, whose every run holds every row
// of every route (about 600 scenarios), keeps to three: with four, a
// plain-text flush was once held past its bound behind the other runs.
var suiteRuns = make(chan struct{}, suiteSlots())

// suiteSlots is the size of suiteRuns.
func suiteSlots() int {
	if sweep.Full() {
		return 3
	}
	return 4
}

// keepaliveRuns bounds the runs of a sample that hold the 20 s keepalive
// scenario (@slow), which mostly wait: they take no slot of suiteRuns, so
// they start at once and their wait overlaps the other runs' work instead
// of closing the test. The complete sweep, whose variant runs all wait it
// out, keeps to suiteRuns alone: more runs at once there starve the timing
// rules of the others.
var keepaliveRuns = make(chan struct{}, 2)

// runSuite is runner.Run holding a slot of suiteRuns, or of keepaliveRuns
// for a run that waits out the keepalive.
func runSuite(cfg runner.Config) (*testrun.Result, error) {
	if cfg.Plan == nil {
		plan, err := runner.NewPlan(cfg.Profile, testrun.Selection{Tags: cfg.Tags})
		if err != nil {
			return nil, err
		}
		cfg.Plan = plan
	}
	slots := suiteRuns
	if !sweep.Full() && waitsOutTheKeepalive(cfg.Plan) {
		slots = keepaliveRuns
	}
	slots <- struct{}{}
	defer func() { <-slots }()
	return runner.Run(context.Background(), cfg)
}

// waitsOutTheKeepalive reports whether a plan runs a @slow scenario.
func waitsOutTheKeepalive(plan *testrun.Plan) bool {
	for _, s := range plan.Scenarios {
		if s.Status == "" && slices.Contains(s.Tags, "@slow") {
			return true
		}
	}
	return false
}
