package runner_test

import (
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/invokeconf/invokeconf/checks"
	"github.com/invokeconf/invokeconf/fakeserver"
	"github.com/invokeconf/invokeconf/internal/sweep"
	"github.com/invokeconf/invokeconf/profile"
	"github.com/invokeconf/invokeconf/reports"
	"github.com/invokeconf/invokeconf/runner"
	"github.com/invokeconf/invokeconf/testrun"
)

// TestForecastAgreesWithTheRun: what 'invokeconf profile check' forecasts
// (runner.Predict) is what the run's report then says, rule by rule, for
// the rules it does not judge (untested, not applicable, not selected) and
// for whether it is partial: for a profile without the keys threadRead,
// threadChat and otherProject, and for a --spec-only run of a profile that
// names no contract routes; with INVOKECONF_FULL=1 also for profiles whose
// script lacks directives (sampleForecasts otherwise). A rule a timing check
// left untested because the harness itself ran late is left out: that is
// the machine's load, which no forecast can know.
func TestForecastAgreesWithTheRun(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		change func(*profile.Profile)
		sel    testrun.Selection
	}{
		{"three keys missing", func(p *profile.Profile) { p.Keys.ThreadRead, p.Keys.ThreadChat, p.Keys.OtherProject = "", "", "" },
			testrun.Selection{Quick: true}},
		{"spec only without the contract", func(p *profile.Profile) { p.Routes = nil }, testrun.Selection{SpecOnly: true, Quick: true}},
		// The vendor guide's stand-in: an agent that cannot show @step or @ask.
		{"script lacks step and ask", func(p *profile.Profile) { p.Capabilities.Script = without(p.Capabilities.Script, "step", "ask") },
			testrun.Selection{Quick: true}},
		{"script lacks pause, tool and waiting", func(p *profile.Profile) {
			p.Capabilities.Script = without(p.Capabilities.Script, "pause", "tool", "waiting")
		}, testrun.Selection{Quick: true}},
	} {
		if !sweep.Includes(tc.name, sampleForecasts) {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := startReference(t, fakeserver.Config{})
			tc.change(p)
			tc.sel.Tags = sampled(tc.sel.Tags)
			plan, err := runner.NewPlan(p, tc.sel)
			if err != nil {
				t.Fatal(err)
			}
			fc, err := runner.Predict(p, plan)
			if err != nil {
				t.Fatal(err)
			}
			res, err := runSuite(runner.Config{Profile: p, Plan: plan})
			if err != nil {
				t.Fatal(err)
			}
			rep, err := reports.Build(reports.Input{Result: res, Profile: p, Target: tc.name})
			if err != nil {
				t.Fatal(err)
			}
			late := map[string]bool{} // rules the harness's lateness left untested
			for _, s := range res.Scenarios {
				if s.Status == testrun.Untested && checks.HarnessWasLate(s.Error) {
					for _, id := range s.Rules {
						late[id] = true
					}
				}
			}
			for _, v := range []struct {
				status  testrun.Status
				verdict reports.Verdict
			}{{testrun.Untested, reports.Untested}, {testrun.NotApplicable, reports.NotApplicable}, {testrun.NotSelected, reports.NotSelected}} {
				var predicted, actual []string
				for _, r := range fc.With(v.status) {
					if !late[r.ID] {
						predicted = append(predicted, r.ID+": "+strings.Join(r.Reasons, "; "))
					}
				}
				for _, r := range rep.Rules {
					if r.Verdict == v.verdict && !late[r.ID] && r.Observable {
						actual = append(actual, r.ID+": "+strings.Join(runReasons(r.Reason), "; "))
					}
				}
				sort.Strings(predicted)
				sort.Strings(actual)
				// Rule by rule, with the same reasons: the forecast's words
				// are the run's.
				if strings.Join(predicted, "\n") != strings.Join(actual, "\n") {
					t.Errorf("%s: the forecast and the run differ:\n forecast:\n  %s\n run:\n  %s", v.status, strings.Join(predicted, "\n  "), strings.Join(actual, "\n  "))
				}
			}
			switch {
			case len(late) > 0:
				t.Logf("the harness ran late, so these rules were not judged and the counts not compared: %v", late)
			case fc.Partial() != rep.Partial() || fc.SpecJudged != rep.Spec.Judged || fc.SpecNotApplicable != rep.Spec.NotApplicable || fc.SpecObservable != rep.Spec.Observable:
				t.Errorf("forecast judged %d of %d (%d not applicable), the run %d of %d (%d not applicable)", fc.SpecJudged, fc.SpecObservable, fc.SpecNotApplicable,
					rep.Spec.Judged, rep.Spec.Observable, rep.Spec.NotApplicable)
			}
			if len(fc.With(testrun.Untested))+len(fc.With(testrun.NotApplicable)) == 0 {
				t.Error("the forecast leaves nothing out: the test proves nothing")
			}
		})
	}
}

// runReasons are the reasons a report gives a rule it did not judge, sorted,
// without the count of its scenarios that passed.
func runReasons(reason string) []string {
	if _, rest, ok := strings.Cut(reason, "; the rest: "); ok {
		reason = rest
	}
	out := strings.Split(reason, "; ")
	sort.Strings(out)
	return out
}

// sampleForecasts are the cases TestForecastAgreesWithTheRun runs when the
// complete sweep is off: --spec-only (the missing keys are forecast and run
// end to end by cmd/invokeconf's TestProfileCheckForecastsThePartialRun).
var sampleForecasts = []string{"spec only without the contract"}

func without(list []string, drop ...string) []string {
	var out []string
	for _, v := range list {
		if !slices.Contains(drop, v) {
			out = append(out, v)
		}
	}
	return out
}
