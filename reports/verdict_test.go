package reports

import (
	"strings"
	"testing"

	"github.com/invokeconf/invokeconf/features"
	"github.com/invokeconf/invokeconf/runner"
)

func sc(id string, status runner.Status, msg string, rules ...string) runner.ScenarioResult {
	return runner.ScenarioResult{ID: id, Name: "scenario " + id, Status: status, Error: msg, Rules: rules}
}

// TestJudge: a rule's verdict from its scenarios, for rules the package has
// never heard of: everything comes from the rule's fields and the
// scenario statuses.
func TestJudge(t *testing.T) {
	must := features.Rule{ID: "X-01", Area: "x", Level: features.MUST, Observable: true}
	should := must
	should.Level = features.SHOULD
	unobservable := must
	unobservable.Observable, unobservable.Why = false, "needs the server's logs"
	pending := must
	pending.Pending = "issue 9"
	all := &runner.Plan{}
	scoped, err := runner.NewPlan(reference(t), runner.Selection{Rules: []string{"SSE-01"}})
	if err != nil {
		t.Fatal(err)
	}
	expectX := &Baseline{Expected: []BaselineEntry{{Rule: "X-01", Reason: "known gap"}}}
	expectA := &Baseline{Expected: []BaselineEntry{{Scenario: "a", Reason: "flaky proxy"}}}

	for _, tc := range []struct {
		name      string
		rule      features.Rule
		plan      *runner.Plan
		inCatalog int
		ran       []runner.ScenarioResult
		bl        *Baseline
		want      Verdict
		reason    string
	}{
		{"all pass", must, all, 2, []runner.ScenarioResult{sc("a", runner.Passed, ""), sc("b", runner.Passed, "")}, nil, Pass, ""},
		{"MUST fails", must, all, 2, []runner.ScenarioResult{sc("a", runner.Passed, ""), sc("b", runner.Failed, "boom")}, nil, Fail, "1 of 2 scenarios failed"},
		{"SHOULD fails: warning", should, all, 1, []runner.ScenarioResult{sc("a", runner.Failed, "boom")}, nil, Warning, "1 of 1"},
		{"failure beats harness error", must, all, 2, []runner.ScenarioResult{sc("a", runner.HarnessError, "panic"), sc("b", runner.Failed, "boom")}, nil, Fail, ""},
		{"harness error", must, all, 2, []runner.ScenarioResult{sc("a", runner.HarnessError, "step is undefined"), sc("b", runner.Passed, "")}, nil, HarnessError, "step is undefined"},
		{"untested names the missing part", must, all, 2, []runner.ScenarioResult{sc("a", runner.Untested, "the profile does not provide keys.alias"), sc("b", runner.Passed, "")}, nil, Untested, "1 of 2 scenarios passed; the rest: the profile does not provide keys.alias"},
		{"all not applicable", must, all, 1, []runner.ScenarioResult{sc("a", runner.NotApplicable, "capabilities.researchMode false")}, nil, NotApplicable, "researchMode"},
		{"pass with some not applicable", must, all, 2, []runner.ScenarioResult{sc("a", runner.NotApplicable, "n/a"), sc("b", runner.Passed, "")}, nil, Pass, "1 scenarios not applicable"},
		{"not observable", unobservable, all, 0, nil, nil, NotObservable, "needs the server's logs"},
		{"no scenario yet", pending, all, 0, nil, nil, Untested, "no scenario checks this rule yet (pending: issue 9)"},
		{"scenarios not selected", must, all, 3, nil, nil, NotSelected, "not selected"},
		{"outside --rules", must, scoped, 3, nil, nil, NotSelected, "outside the selection (--rules SSE-01)"},
		{"baseline expects the rule", must, all, 1, []runner.ScenarioResult{sc("a", runner.Failed, "boom")}, expectX, ExpectedFailure, "baseline: known gap"},
		{"baseline expects one of two failures", must, all, 2, []runner.ScenarioResult{sc("a", runner.Failed, "x"), sc("b", runner.Failed, "y")}, expectA, Fail, ""},
		{"baseline expects the only failure", must, all, 2, []runner.ScenarioResult{sc("a", runner.Failed, "x"), sc("b", runner.Passed, "")}, expectA, ExpectedFailure, "flaky proxy"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bl := tc.bl
			if bl == nil {
				bl = &Baseline{}
			}
			got := judge(tc.rule, tc.plan, tc.inCatalog, tc.ran, bl)
			if got.Verdict != tc.want || !strings.Contains(got.Reason, tc.reason) {
				t.Errorf("verdict %q (%s), want %q (%s)", got.Verdict, got.Reason, tc.want, tc.reason)
			}
		})
	}
}

func TestAreaVerdict(t *testing.T) {
	for _, tc := range []struct {
		c    Counts
		want Verdict
	}{
		{Counts{Pass: 3, Untested: 2, NotObservable: 1}, Untested}, // never a pass beside untested rules
		{Counts{Pass: 3, NotSelected: 2, NotObservable: 1}, Pass},
		{Counts{Pass: 3, Fail: 1}, Fail},
		{Counts{Pass: 3, Warning: 1}, Warning},
		{Counts{Pass: 1, HarnessError: 1, Warning: 1}, HarnessError},
		{Counts{Untested: 4, NotObservable: 1}, Untested},
		{Counts{NotApplicable: 2}, NotApplicable},
		{Counts{ExpectedFailure: 1}, Pass},
		{Counts{}, NotSelected},
	} {
		if got := areaVerdict(tc.c); got != tc.want {
			t.Errorf("%+v: %s, want %s", tc.c, got, tc.want)
		}
	}
	for _, tc := range []struct {
		c    Counts
		want string
	}{
		{Counts{Pass: 3, Untested: 5, NotObservable: 1}, "5 untested, 3 pass"},
		{Counts{Pass: 3, NotSelected: 1}, "pass, 1 not selected"},
		{Counts{Pass: 3, Untested: 1, NotSelected: 2}, "1 untested, 3 pass, 2 not selected"},
		{Counts{Pass: 2, Fail: 1, Untested: 1}, "fail, 1 untested"},
	} {
		if got := areaLabel(areaVerdict(tc.c), tc.c); got != tc.want {
			t.Errorf("%+v: label %q, want %q", tc.c, got, tc.want)
		}
	}
}
