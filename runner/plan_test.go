package runner

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/invokeconf/invokeconf/features"
	"github.com/invokeconf/invokeconf/fixtures"
	"github.com/invokeconf/invokeconf/profile"
	"github.com/invokeconf/invokeconf/testrun"
)

func reference(t *testing.T) *profile.Profile {
	t.Helper()
	p, err := fixtures.Reference()
	if err != nil {
		t.Fatal(err)
	}
	p.BaseURL = "http://127.0.0.1:1"
	return p
}

// planned returns the IDs of the scenarios a plan runs, and of those it
// gave a status.
func planned(p *testrun.Plan) (run []string, other map[string]testrun.Status) {
	other = map[string]testrun.Status{}
	for _, s := range p.Scenarios {
		if s.Status == "" {
			run = append(run, s.ID)
		} else {
			other[s.ID] = s.Status
		}
	}
	return run, other
}

func TestSelection(t *testing.T) {
	pickles, err := features.Pickles()
	if err != nil {
		t.Fatal(err)
	}
	rules, err := features.RuleIndex()
	if err != nil {
		t.Fatal(err)
	}
	// want derives, from the catalog, which scenarios a selection keeps.
	for _, tc := range []struct {
		name string
		sel  testrun.Selection
		keep func(features.Pickle) bool
	}{
		{"everything", testrun.Selection{}, func(features.Pickle) bool { return true }},
		{"rules", testrun.Selection{Rules: []string{"SSE-01", "fmt-02"}}, func(pk features.Pickle) bool {
			return has(pk.Rules, "SSE-01") || has(pk.Rules, "FMT-02")
		}},
		{"areas", testrun.Selection{Areas: []string{"sse", "Events"}}, func(pk features.Pickle) bool {
			for _, id := range pk.Rules {
				if a := rules[id].Area; a == "sse" || a == "events" {
					return true
				}
			}
			return false
		}},
		{"quick", testrun.Selection{Quick: true}, func(pk features.Pickle) bool { return !has(pk.Tags, "@slow") }},
		{"tags and area", testrun.Selection{Areas: []string{"sse"}, Tags: "~@SSE-02,@SSE-03"}, func(pk features.Pickle) bool {
			inArea := slices.ContainsFunc(pk.Rules, func(id string) bool { return rules[id].Area == "sse" })
			return inArea && (!has(pk.Tags, "@SSE-02") || has(pk.Tags, "@SSE-03"))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan, err := NewPlan(reference(t), tc.sel)
			if err != nil {
				t.Fatal(err)
			}
			run, _ := planned(plan)
			var want []string
			for _, pk := range pickles {
				if tc.keep(pk) {
					want = append(want, pk.ID)
				}
			}
			if strings.Join(run, " ") != strings.Join(want, " ") {
				t.Errorf("runs %v\nwant %v", run, want)
			}
			if len(run) == 0 {
				t.Error("selects nothing")
			}
		})
	}
}

func TestSelectionErrors(t *testing.T) {
	for _, tc := range []struct {
		sel  testrun.Selection
		want string
	}{
		{testrun.Selection{Rules: []string{"SSE-01", "NOPE-99"}}, "unknown rule NOPE-99"},
		{testrun.Selection{Areas: []string{"sse", "telepathy"}}, "unknown area telepathy"},
		{testrun.Selection{Tags: "@sse,,@events"}, "is not a tag"},
		{testrun.Selection{Tags: "@sse && "}, "is not a tag"},
		{testrun.Selection{Tags: "@a b"}, "is not a tag"},
		// Selections that leave nothing to run are bad usage too, said
		// with what left everything out.
		{testrun.Selection{Rules: []string{"SSE-04"}, Quick: true}, "leaves no scenario to run (its scenarios are all @slow, which --quick leaves out: drop --quick)"},
		{testrun.Selection{Tags: "@no-such-tag"}, "leaves no scenario to run"},
		{testrun.Selection{Areas: []string{"sse"}, Tags: "@ERR-02"}, "(--tags '@ERR-02' leaves out every scenario of its rules)"},
		{testrun.Selection{Rules: []string{"BODY-03"}}, "(no scenario checks BODY-03)"},
		{testrun.Selection{Rules: []string{"BUNDLE-09"}, SpecOnly: true}, "names only rules of this project's contract"},
	} {
		_, err := NewPlan(reference(t), tc.sel)
		var se *SelectionError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want a SelectionError saying %q", tc.sel, err, tc.want)
		}
	}
}

// TestContractTag: @bundle-contract marks exactly the scenarios whose steps
// need the bundle contract: its routes, or its test hooks.
func TestContractTag(t *testing.T) {
	pickles, err := features.Pickles()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, pk := range pickles {
		needs := Needs(pk)
		want := slices.Contains(needs, "routes") || slices.Contains(needs, "capabilities.bundleTestHooks")
		if got := slices.Contains(pk.Tags, ContractTag); got != want {
			t.Errorf("%s %q: tagged %s %v, but its steps need %v", pk.ID, pk.Name, ContractTag, got, needs)
		}
		if want {
			n++
		}
	}
	if n == 0 {
		t.Error("no scenario needs the bundle contract: the test proves nothing")
	}
}

// TestSpecOnlyWithoutTheContract: a --spec-only plan for a profile that
// names no contract routes makes the scenarios that need them not
// applicable, so their spec rules are judged by their other scenarios
// (BUNDLE-01, through the spec's export route) or not applicable without
// the contract (INSTALL-01); nothing is left untested for it, and the run
// is not partial for it. With the routes named, they run.
func TestSpecOnlyWithoutTheContract(t *testing.T) {
	p := reference(t)
	p.Routes = nil
	plan, err := NewPlan(p, testrun.Selection{SpecOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	contract := 0
	for _, s := range plan.Scenarios {
		tagged := slices.Contains(s.Tags, ContractTag)
		switch {
		case s.Status == testrun.NotSelected:
		case tagged && (s.Status != testrun.NotApplicable || !s.Contract || s.Reason != ContractReason):
			t.Errorf("%s: %q (%s), want not applicable without the contract", s.ID, s.Status, s.Reason)
		case tagged:
			contract++
		case s.Contract:
			t.Errorf("%s: marked as needing the contract without the tag", s.ID)
		}
	}
	if contract == 0 || !strings.Contains(plan.Expr, "~"+ContractTag) {
		t.Fatalf("%d scenarios need the contract; expression %q", contract, plan.Expr)
	}
	if gaps := Gaps(p, plan); len(gaps) > 0 {
		t.Errorf("gaps: %+v", gaps)
	}
	fc, err := Predict(p, plan)
	if err != nil {
		t.Fatal(err)
	}
	statuses := map[string]RuleForecast{}
	for _, r := range fc.Rules {
		statuses[r.ID] = r
	}
	for id, want := range map[string]testrun.Status{"BUNDLE-01": testrun.Runs, "BUNDLE-05": testrun.Runs, "EXPORT-01": testrun.Runs, "INSTALL-01": testrun.NotApplicable,
		"UPDATE-07": testrun.NotApplicable, "UNINSTALL-05": testrun.NotApplicable, "DROP-07": testrun.NotApplicable, "BUNDLE-06": testrun.NotApplicable, "BUNDLE-09": testrun.NotSelected} {
		got, ok := statuses[id]
		if !ok {
			got.Status = testrun.Runs
		}
		if got.Status != want {
			t.Errorf("%s: forecast %q (%v), want %q", id, got.Status, got.Reasons, want)
		}
		if want == testrun.NotApplicable && (len(got.Reasons) != 1 || got.Reasons[0] != ContractReason) {
			t.Errorf("%s: reasons %v", id, got.Reasons)
		}
	}
	if fc.Partial() {
		t.Errorf("a --spec-only run without the contract is partial: %+v", fc.With(testrun.Untested))
	}

	// The contract's routes named: everything runs as without --spec-only.
	plan, err = NewPlan(reference(t), testrun.Selection{SpecOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range plan.Scenarios {
		if s.Contract || s.Status == testrun.NotApplicable {
			t.Errorf("%s: %q with the routes named", s.ID, s.Status)
		}
	}
}

// TestForecast: the forecast of a profile without the keys threadRead,
// threadChat and otherProject names each rule those keys leave untested,
// with the key, and calls the run partial; the reference profile's run is
// complete, and a selection's is partial.
func TestForecast(t *testing.T) {
	p := reference(t)
	p.Keys.ThreadRead, p.Keys.ThreadChat, p.Keys.OtherProject = "", "", ""
	plan, err := NewPlan(p, testrun.Selection{})
	if err != nil {
		t.Fatal(err)
	}
	fc, err := Predict(p, plan)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range fc.With(testrun.Untested) {
		got[r.ID] = strings.Join(r.Reasons, "; ")
	}
	// Every rule with a scenario that needs one of the keys.
	want := map[string]string{}
	for _, g := range Gaps(p, plan) {
		for _, id := range g.Rules {
			want[id] = "the profile does not provide " + g.Path + " (" + g.Env + ")"
		}
	}
	if len(want) < 5 || !reflect.DeepEqual(got, want) {
		t.Errorf("untested %v\nwant %v", got, want)
	}
	if !fc.Partial() || fc.SpecJudged != fc.SpecObservable-len(want) {
		t.Errorf("judged %d of %d, partial %v", fc.SpecJudged, fc.SpecObservable, fc.Partial())
	}

	full := reference(t)
	for sel, partial := range map[*testrun.Selection]bool{{}: false, {Quick: true}: true, {Areas: []string{"sse"}}: true} {
		plan, err := NewPlan(full, *sel)
		if err != nil {
			t.Fatal(err)
		}
		fc, err := Predict(full, plan)
		if err != nil {
			t.Fatal(err)
		}
		if fc.Partial() != partial || len(fc.With(testrun.Untested)) > 0 {
			t.Errorf("%s: partial %v, untested %+v", sel, fc.Partial(), fc.With(testrun.Untested))
		}
	}
}

// TestCapabilityTags: a capability the profile declares false makes a
// @capability-NAME scenario not applicable and a @needs-NAME one untested;
// a capability the profile leaves out leaves both untested; neither applies
// when it is true; an unknown NAME is an error.
func TestCapabilityTags(t *testing.T) {
	left := &profile.Profile{}
	off := &profile.Profile{}
	off.DeclareCapability("researchMode")
	on := &profile.Profile{Capabilities: profile.Capabilities{ResearchMode: true}}
	on.DeclareCapability("researchMode")
	for _, tc := range []struct {
		name   string
		tags   []string
		p      *profile.Profile
		status testrun.Status
		reason string
	}{
		{"declared false", []string{"@MODE-02", "@capability-researchMode"}, off, testrun.NotApplicable, "declares capabilities.researchMode false"},
		{"left out", []string{"@MODE-02", "@capability-researchMode"}, left, testrun.Untested, "does not declare capabilities.researchMode"},
		{"declared true", []string{"@MODE-02", "@capability-researchMode"}, on, testrun.Runs, ""},
		{"needs, declared false", []string{"@needs-researchMode"}, off, testrun.Untested, "declares capabilities.researchMode false"},
		{"needs, left out", []string{"@needs-researchMode"}, left, testrun.Untested, "does not declare capabilities.researchMode"},
		{"needs, declared true", []string{"@needs-researchMode"}, on, testrun.Runs, ""},
		{"no capability", []string{"@scripted"}, off, testrun.Runs, ""},
		{"slow", []string{"@sse", "@slow"}, off, testrun.Runs, ""},
	} {
		status, reason, tag, err := applicability(tc.p, tc.tags)
		if err != nil {
			t.Fatal(err)
		}
		if status != tc.status || !strings.Contains(reason, tc.reason) {
			t.Errorf("%s: status %q (%s), want %q (%s)", tc.name, status, reason, tc.status, tc.reason)
		}
		if status != testrun.Runs && tag == "" {
			t.Errorf("%s: no tag named", tc.name)
		}
	}
	if _, _, _, err := applicability(on, []string{"@capability-researchMod"}); err == nil || !strings.Contains(err.Error(), "did you mean researchMode") {
		t.Errorf("an unknown capability tag: %v", err)
	}
}

// TestCapabilityStepsAreTagged: a scenario whose steps read a capability of
// the profile carries its @capability- or @needs- tag, so that the plan,
// not the step, decides between not applicable and untested.
func TestCapabilityStepsAreTagged(t *testing.T) {
	pickles, err := features.Pickles()
	if err != nil {
		t.Fatal(err)
	}
	caps := profile.CapabilityNames()
	for _, pk := range pickles {
		for _, need := range Needs(pk) {
			name, ok := strings.CutPrefix(need, "capabilities.")
			if !ok || !slices.Contains(caps, name) {
				continue
			}
			if !slices.Contains(pk.Tags, CapabilityTag+name) && !slices.Contains(pk.Tags, NeedsTag+name) {
				t.Errorf("%s %q reads capabilities.%s but has neither %s%s nor %s%s", pk.ID, pk.Name, name, CapabilityTag, name, NeedsTag, name)
			}
		}
	}
}

// TestEveryCapabilityTagIsKnown: the features name only capabilities the
// profile has, so a plan never fails on a tag.
func TestEveryCapabilityTagIsKnown(t *testing.T) {
	pickles, err := features.Pickles()
	if err != nil {
		t.Fatal(err)
	}
	for _, pk := range pickles {
		if _, _, _, err := applicability(&profile.Profile{}, pk.Tags); err != nil {
			t.Errorf("%s: %v", pk.ID, err)
		}
	}
}

func TestMatchTags(t *testing.T) {
	tags := []string{"@sse", "@SSE-01", "@scripted"}
	for expr, want := range map[string]bool{
		"":                        true,
		"@sse":                    true,
		"~@sse":                   false,
		"@events,@SSE-01":         true,
		"@sse && ~@slow":          true,
		"@sse && @slow":           false,
		"~@slow,@slow && @sse":    true,
		"@SSE-02,@SSE-03 && @sse": false,
	} {
		if got := matchTags(expr, tags); got != want {
			t.Errorf("matchTags(%q) = %v, want %v", expr, got, want)
		}
	}
}

func has(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
