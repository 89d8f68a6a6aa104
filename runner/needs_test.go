package runner_test

import (
	"context"
	"errors"
	"net"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/invokeconf/invokeconf/checks"
	"github.com/invokeconf/invokeconf/fakeserver"
	"github.com/invokeconf/invokeconf/features"
	"github.com/invokeconf/invokeconf/internal/sweep"
	"github.com/invokeconf/invokeconf/profile"
	"github.com/invokeconf/invokeconf/runner"
	"github.com/invokeconf/invokeconf/steps"
	"github.com/invokeconf/invokeconf/testrun"
)

// TestNeedsPredictUntested: for every profile field, a profile without it
// leaves untested exactly the scenarios that the up-front gap report
// (runner.Gaps) names, no more and no fewer.
//
// Every field is blanked in turn, not only those some step is known to
// read: a step that reads a field without declaring it shows up here. Two
// are left alone: baseURL (nothing runs without it) and capabilities.script,
// whose needs are per directive, read from the prompts as they are sent
// (steps/capabilities.go). A field the reference profile leaves empty needs
// no run: blanking it changes nothing, and the gap report for the reference
// profile itself must be empty.
//
// Its runs share suiteRuns with the other tests' (a timing rule is none of
// its business: a scenario that fails is not untested). With
// INVOKECONF_FULL=1 every field is blanked;
// otherwise sampleBlanked. A scenario a timing check left untested because
// the harness itself ran late is left out of the comparison: that is the
// machine's load, not the profile.
func TestNeedsPredictUntested(t *testing.T) {
	t.Parallel()
	full := startReference(t, fakeserver.Config{})
	plan, err := runner.NewPlan(full, testrun.Selection{Quick: true})
	if err != nil {
		t.Fatal(err)
	}
	if gaps := runner.Gaps(full, plan); len(gaps) > 0 {
		t.Errorf("the reference profile has gaps: %+v", gaps)
	}

	var paths []string
	for _, f := range full.Fields() {
		if f.IsZero() || f.Path == "baseURL" || f.Path == "capabilities.script" {
			continue
		}
		paths = append(paths, f.Path)
	}
	if len(paths) < 40 {
		t.Fatalf("only %d fields to blank: %v", len(paths), paths)
	}
	for _, path := range sampleBlanked {
		if !slices.Contains(paths, path) {
			t.Errorf("sampleBlanked names %s, which is not a field to blank", path)
		}
	}
	paths = slices.DeleteFunc(paths, func(path string) bool { return !sweep.Includes(path, sampleBlanked) })

	var wg sync.WaitGroup
	for _, path := range paths {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := full.Clone()
			for _, f := range p.Fields() {
				if f.Path == path {
					f.Blank()
				}
			}
			plan, err := runner.NewPlan(p, testrun.Selection{Quick: true, Tags: sampled("")})
			if err != nil {
				t.Errorf("%s: %v", path, err)
				return
			}
			var predicted []string
			for _, g := range runner.Gaps(p, plan) {
				if g.Path != path {
					t.Errorf("blanking %s predicts a gap in %s", path, g.Path)
				}
				predicted = append(predicted, g.Scenarios...)
			}
			res, err := runSuite(runner.Config{Profile: p, Plan: plan})
			if err != nil {
				t.Errorf("%s: %v", path, err)
				return
			}
			var actual []string
			for _, s := range res.Scenarios {
				switch s.Status {
				case testrun.Untested:
					if checks.HarnessWasLate(s.Error) && !slices.Contains(predicted, s.ID) {
						t.Logf("without %s, %s was not judged: %s", path, s.ID, s.Error)
						continue
					}
					actual = append(actual, s.ID)
				case testrun.HarnessError:
					t.Errorf("without %s, %s is a harness error: %s", path, s.ID, s.Error)
				}
			}
			sort.Strings(predicted)
			sort.Strings(actual)
			if strings.Join(predicted, " ") != strings.Join(actual, " ") {
				t.Errorf("without %s:\n predicted untested %v\n actually untested %v", path, predicted, actual)
			}
		}()
	}
	wg.Wait()
}

// sampleBlanked are the fields TestNeedsPredictUntested blanks when the
// complete sweep is off: the key most scenarios use, a field a step reads
// without naming it (agents.main.tools), and a bundle fixture. (Keys few
// scenarios use and the contract's routes are blanked, and their untested
// rules forecast, by TestForecastAgreesWithTheRun and cmd/invokeconf's
// TestProfileCheckForecastsThePartialRun.)
var sampleBlanked = []string{"keys.agent", "agents.main.tools", "bundles.export.knowledgeAttached"}

// TestNeedsResolve: every step of the features has readable needs (its
// placeholders fill from the reference profile, its declared needs are
// profile fields), and the thread set-up steps need what they use.
func TestNeedsResolve(t *testing.T) {
	pickles, err := features.Pickles()
	if err != nil {
		t.Fatal(err)
	}
	fields := map[string]bool{}
	for _, f := range (&profile.Profile{}).Fields() {
		fields[f.Path] = true
	}
	for _, pk := range pickles {
		for i, text := range pk.Texts {
			paths, err := steps.StepNeeds(text, pk.Arg(i))
			if err != nil {
				t.Errorf("%s: %v", pk.ID, err)
			}
			for _, p := range paths {
				if !fields[p] {
					t.Errorf("%s: %q needs %q, not a profile field", pk.ID, text, p)
				}
			}
		}
	}
	for _, tc := range []struct {
		step, arg string
		want      []string
	}{
		{`a thread "T" on the main agent`, "", []string{"agents.main.id", "keys.agent"}},
		{`a thread "R" on the restricted agent, opened with the "wildcard" key`, "", []string{"agents.restricted.id", "keys.wildcard"}},
		{`a project thread "P" on the main project`, "", []string{"keys.project", "projects.main.id"}},
		{`a target that manages bundles`, "", []string{"capabilities.bundles", "keys.bundles"}},
		{`the export mentions none of the export project's dropped "members"`, "", []string{"bundles.export.agentID", "bundles.export.dropped.members", "bundles.export.projectID"}},
		{`the "alias" key`, "", []string{"keys.alias"}},
		{`the Authorization header is the agent key without Bearer`, "", []string{"keys.agent"}},
		{"I invoke \"/api/invoke/${agents.main.id}/thread/${thread:T}\" with the prompt:", "@tools ${projects.main.tasks}", []string{"agents.main.id", "projects.main.tasks"}},
		{`the run's tools include "${projects.main.credentialTools}"`, "", []string{"agents.main.credentialTools", "agents.main.id", "agents.main.tools", "projects.main.credentials"}},
		{`the status is 200`, "", []string{}},
	} {
		got, err := steps.StepNeeds(tc.step, tc.arg)
		if err != nil || strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("StepNeeds(%q) = %v, %v; want %v", tc.step, got, err, tc.want)
		}
	}
}

func TestReachable(t *testing.T) {
	p := startReference(t, fakeserver.Config{})
	if err := runner.Reachable(context.Background(), p); err != nil {
		t.Errorf("the reference server: %v", err)
	}

	// A port nobody listens on: refused at once, with a message that names
	// the URL and the variable to fix it.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.BaseURL = "http://" + ln.Addr().String()
	ln.Close()
	start := time.Now()
	err = runner.Reachable(context.Background(), p)
	var ue *runner.UnreachableError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), p.BaseURL) || !strings.Contains(err.Error(), "INVOKECONF_BASE_URL") {
		t.Errorf("closed port: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %s", d)
	}
}

// TestCheckKeys: the reference server accepts every key of its profile and
// answers 401 for the expired one; a target that does not know a key, or
// answers an expired key with 403, is reported.
func TestCheckKeys(t *testing.T) {
	for _, tc := range []struct {
		name    string
		defects []string
		change  func(*profile.Profile)
		bad     []string
	}{
		{"clean", nil, func(*profile.Profile) {}, nil},
		{"unknown key", nil, func(p *profile.Profile) { p.Keys.Alias = "sk-svc-alice-kalias-wrongsecret" }, []string{"alias"}},
		{"expired accepted", []string{"expired-403"}, func(*profile.Profile) {}, []string{"expired"}},
		{"empty role", nil, func(p *profile.Profile) { p.Keys.APIDisabled = "" }, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := startReference(t, fakeserver.Config{Defects: tc.defects})
			tc.change(p)
			var bad []string
			checks := runner.CheckKeys(context.Background(), p)
			for _, kc := range checks {
				if !kc.OK {
					bad = append(bad, kc.Role)
				}
			}
			if strings.Join(bad, ",") != strings.Join(tc.bad, ",") {
				t.Errorf("problems with %v, want %v: %+v", bad, tc.bad, checks)
			}
			if len(checks) != len(p.Keys.Roles()) {
				t.Errorf("%d checks for %d roles", len(checks), len(p.Keys.Roles()))
			}
		})
	}
}
