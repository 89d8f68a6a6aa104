package reports

import (
	"net/http"
	"strings"
	"testing"

	"github.com/invokeconf/invokeconf/features"
	"github.com/invokeconf/invokeconf/outcome"
	"github.com/invokeconf/invokeconf/runner"
	"github.com/invokeconf/invokeconf/testrun"
	"github.com/invokeconf/invokeconf/transcript"
)

func sc(id string, status testrun.Status, msg string, rules ...string) testrun.ScenarioResult {
	return testrun.ScenarioResult{ID: id, Name: "scenario " + id, Status: status, Error: msg, Rules: rules}
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
	all := &testrun.Plan{}
	scoped, err := runner.NewPlan(reference(t), testrun.Selection{Rules: []string{"SSE-01"}})
	if err != nil {
		t.Fatal(err)
	}
	expectX := &Baseline{Expected: []BaselineEntry{{Rule: "X-01", Reason: "known gap"}}}
	expectA := &Baseline{Expected: []BaselineEntry{{Scenario: "a", Reason: "flaky proxy"}}}

	for _, tc := range []struct {
		name      string
		rule      features.Rule
		plan      *testrun.Plan
		inCatalog int
		ran       []testrun.ScenarioResult
		bl        *Baseline
		want      Verdict
		reason    string
	}{
		{"all pass", must, all, 2, []testrun.ScenarioResult{sc("a", testrun.Passed, ""), sc("b", testrun.Passed, "")}, nil, Pass, ""},
		{"MUST fails", must, all, 2, []testrun.ScenarioResult{sc("a", testrun.Passed, ""), sc("b", testrun.Failed, "boom")}, nil, Fail, "1 of 2 scenarios failed"},
		{"SHOULD fails: warning", should, all, 1, []testrun.ScenarioResult{sc("a", testrun.Failed, "boom")}, nil, Warning, "1 of 1"},
		{"failure beats harness error", must, all, 2, []testrun.ScenarioResult{sc("a", testrun.HarnessError, "panic"), sc("b", testrun.Failed, "boom")}, nil, Fail, ""},
		{"harness error", must, all, 2, []testrun.ScenarioResult{sc("a", testrun.HarnessError, "step is undefined"), sc("b", testrun.Passed, "")}, nil, HarnessError, "step is undefined"},
		{"untested names the missing part", must, all, 2, []testrun.ScenarioResult{sc("a", testrun.Untested, "the profile does not provide keys.alias"), sc("b", testrun.Passed, "")}, nil, Untested, "1 of 2 scenarios passed; the rest: the profile does not provide keys.alias"},
		{"all not applicable", must, all, 1, []testrun.ScenarioResult{sc("a", testrun.NotApplicable, "capabilities.researchMode false")}, nil, NotApplicable, "researchMode"},
		{"pass with some not applicable", must, all, 2, []testrun.ScenarioResult{sc("a", testrun.NotApplicable, "n/a"), sc("b", testrun.Passed, "")}, nil, Pass, "1 scenarios not applicable"},
		{"not observable", unobservable, all, 0, nil, nil, NotObservable, "needs the server's logs"},
		{"no scenario yet", pending, all, 0, nil, nil, Untested, "no scenario checks this rule yet (pending: issue 9)"},
		{"scenarios not selected", must, all, 3, nil, nil, NotSelected, "not selected"},
		{"outside --rules", must, scoped, 3, nil, nil, NotSelected, "outside the selection (--rules SSE-01)"},
		{"baseline expects the rule", must, all, 1, []testrun.ScenarioResult{sc("a", testrun.Failed, "boom")}, expectX, ExpectedFailure, "baseline: known gap"},
		{"baseline expects one of two failures", must, all, 2, []testrun.ScenarioResult{sc("a", testrun.Failed, "x"), sc("b", testrun.Failed, "y")}, expectA, Fail, ""},
		{"baseline expects the only failure", must, all, 2, []testrun.ScenarioResult{sc("a", testrun.Failed, "x"), sc("b", testrun.Passed, "")}, expectA, ExpectedFailure, "flaky proxy"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bl := tc.bl
			if bl == nil {
				bl = &Baseline{}
			}
			got := judge(tc.rule, tc.plan, tc.inCatalog, &ruleEvidence{own: tc.ran}, bl)
			if got.Verdict != tc.want || !strings.Contains(got.Reason, tc.reason) {
				t.Errorf("verdict %q (%s), want %q (%s)", got.Verdict, got.Reason, tc.want, tc.reason)
			}
		})
	}
}

// TestBlockedAndElsewhere: a rule whose scenarios another rule's failure
// stopped is untested, blocked by it; a rule that failed only in steps of
// other rules' scenarios fails, and when its own scenarios passed the
// reason says what the failing requests carried.
func TestBlockedAndElsewhere(t *testing.T) {
	must := features.Rule{ID: "X-01", Area: "x", Level: features.MUST, Observable: true}
	all := &testrun.Plan{}
	blocked := judge(must, all, 2, &ruleEvidence{own: []testrun.ScenarioResult{sc("a", testrun.Passed, "")},
		blocked: []blockedBy{{sc("b", testrun.Blocked, "404", "X-01"), "ROUTE-01"}}}, &Baseline{})
	if blocked.Verdict != Untested || len(blocked.BlockedBy) != 1 || blocked.BlockedBy[0] != "ROUTE-01" ||
		!strings.Contains(blocked.Reason, "1 of 2 scenarios passed; the rest: blocked by ROUTE-01") {
		t.Errorf("blocked: %s (%s), blockedBy %v", blocked.Verdict, blocked.Reason, blocked.BlockedBy)
	}
	sibling := judge(must, all, 1, &ruleEvidence{blocked: []blockedBy{{sc("b", testrun.Failed, "x", "X-01", "X-02"), "X-02"}}}, &Baseline{})
	if sibling.Verdict != Untested || !strings.Contains(sibling.Reason, "blocked by X-02: it failed first, in a scenario about both") {
		t.Errorf("blocked by a rule of the same scenario: %s (%s)", sibling.Verdict, sibling.Reason)
	}
	own := sc("a", testrun.Passed, "")
	own.Transcript = []transcript.Exchange{{Method: "POST", URL: "http://t/api/invoke/agt_1", Header: http.Header{"Authorization": {"Bearer $K"}}}}
	other := sc("b", testrun.Blocked, "404", "SSE-05")
	other.Transcript = []transcript.Exchange{{Method: "POST", URL: "http://t/api/invoke/agt_1",
		Header: http.Header{"Authorization": {"Bearer $K"}, "Accept": {"text/event-stream"}}}}
	elsewhere := judge(must, all, 1, &ruleEvidence{own: []testrun.ScenarioResult{own}, elsewhere: []testrun.ScenarioResult{other}}, &Baseline{})
	if elsewhere.Verdict != Fail || !strings.Contains(elsewhere.Reason, "its own 1 scenario passed") ||
		!strings.Contains(elsewhere.Reason, "Accept: text/event-stream") || strings.Contains(elsewhere.Reason, "Authorization") {
		t.Errorf("elsewhere: %s (%s)", elsewhere.Verdict, elsewhere.Reason)
	}
	notSelected := judge(must, mustScope(t), 1, &ruleEvidence{elsewhere: []testrun.ScenarioResult{other}}, &Baseline{})
	if notSelected.Verdict != Fail {
		t.Errorf("a rule seen failing outside the selection: %s (%s), want fail", notSelected.Verdict, notSelected.Reason)
	}
}

func mustScope(t *testing.T) *testrun.Plan {
	t.Helper()
	p, err := runner.NewPlan(reference(t), testrun.Selection{Rules: []string{"SSE-01"}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestReconcile: a failure another rule explains (ExplainedBy) is that
// rule's when it failed in a scenario of its own that nothing explains; two
// failures that would explain each other stay each its own.
func TestReconcile(t *testing.T) {
	failed := func(id, rule string, status testrun.Status, explainedBy []string, rules ...string) testrun.ScenarioResult {
		s := sc(id, status, "x", rules...)
		s.Failure = &outcome.Failure{Rule: rule, Check: "c", ExplainedBy: explainedBy}
		return s
	}
	in := []testrun.ScenarioResult{
		failed("route", "ROUTE-01", testrun.Failed, nil, "ROUTE-01"),
		failed("auth", "AUTH-04", testrun.Failed, []string{"ROUTE-01"}, "AUTH-04"),
		failed("sse", "AUTH-01", testrun.Blocked, []string{"CRED-01"}, "SSE-05"), // CRED-01 passed: stays
		failed("p", "X-01", testrun.Failed, []string{"Y-01"}, "X-01"),
		failed("q", "Y-01", testrun.Failed, []string{"X-01"}, "Y-01"),
	}
	out := reconcile(in)
	for i, want := range []struct {
		rule   string
		status testrun.Status
	}{{"ROUTE-01", testrun.Failed}, {"ROUTE-01", testrun.Blocked}, {"AUTH-01", testrun.Blocked}, {"X-01", testrun.Failed}, {"Y-01", testrun.Failed}} {
		if out[i].Failure.Rule != want.rule || out[i].Status != want.status {
			t.Errorf("%s: %s %s, want %s %s", out[i].ID, out[i].Failure.Rule, out[i].Status, want.rule, want.status)
		}
	}
	if in[1].Failure.Rule != "AUTH-04" {
		t.Error("reconcile changed its input")
	}

	// A rule that explains the most failures is not the cause when the
	// rules that failed on their own (nothing else explains them) explain
	// all of its failures: thread-resume-echoed, where the async answer's
	// threadID (ASYNC-01) is only as wrong as the thread selection.
	in = []testrun.ScenarioResult{
		failed("t2", "THREAD-02", testrun.Failed, []string{"ASYNC-05"}, "THREAD-02"),
		failed("r4", "ROUTE-04", testrun.Failed, []string{"ASYNC-05"}, "ROUTE-04"),
		failed("t4", "THREAD-04", testrun.Failed, []string{"EVT-02"}, "THREAD-04"),
		failed("t4b", "THREAD-04", testrun.Failed, []string{"ASYNC-01"}, "THREAD-04"),
		failed("a1", "ASYNC-01", testrun.Failed, []string{"THREAD-02"}, "ASYNC-01"),
		failed("a3", "ASYNC-01", testrun.Blocked, []string{"ROUTE-04"}, "ASYNC-03"),
		failed("a3b", "ASYNC-01", testrun.Blocked, []string{"ROUTE-04"}, "ASYNC-03"),
	}
	out = reconcile(in)
	for i, want := range []struct {
		rule   string
		status testrun.Status
	}{{"THREAD-02", testrun.Failed}, {"ROUTE-04", testrun.Failed}, {"THREAD-04", testrun.Failed}, {"THREAD-04", testrun.Failed},
		{"THREAD-02", testrun.Blocked}, {"ROUTE-04", testrun.Blocked}, {"ROUTE-04", testrun.Blocked}} {
		if out[i].Failure.Rule != want.rule || out[i].Status != want.status {
			t.Errorf("%s: %s %s, want %s %s", out[i].ID, out[i].Failure.Rule, out[i].Status, want.rule, want.status)
		}
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
