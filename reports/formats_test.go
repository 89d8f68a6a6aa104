package reports

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"slices"
	"strings"
	"testing"

	"github.com/invokeconf/invokeconf/features"
	"github.com/invokeconf/invokeconf/outcome"
	"github.com/invokeconf/invokeconf/runner"
	"github.com/invokeconf/invokeconf/transcript"
)

// synthetic builds a report from a plan whose runnable scenarios all end
// as status says, except those change sets otherwise: no target needed.
func synthetic(t *testing.T, sel outcome.Selection, bl *Baseline, change func(*outcome.ScenarioResult)) *Report {
	t.Helper()
	p := reference(t)
	plan, err := runner.NewPlan(p, sel)
	if err != nil {
		t.Fatal(err)
	}
	res := &outcome.Result{Plan: plan}
	for _, pl := range plan.Scenarios {
		if pl.Status != outcome.Runs {
			continue
		}
		s := outcome.ScenarioResult{ID: pl.ID, Feature: strings.TrimSuffix(pl.File, ".feature"), Name: pl.Name, URI: pl.File,
			Line: pl.Line, Example: pl.Example, Tags: pl.Tags, Rules: pl.Rules, Status: outcome.Passed}
		if change != nil {
			change(&s)
		}
		res.Scenarios = append(res.Scenarios, s)
	}
	rep, err := Build(Input{Result: res, Profile: p, Target: "synthetic", Baseline: bl})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func failRule(id, msg string) func(*outcome.ScenarioResult) {
	return func(s *outcome.ScenarioResult) {
		if contains(s.Rules, id) {
			s.Status, s.Error = outcome.Failed, msg
			s.Failure = outcome.Fail("the check", "the spec's value", msg).Breaks(id)
			s.Transcript = []transcript.Exchange{{Method: "GET", URL: "http://t/x", Status: 200, RespBody: msg}}
		}
	}
}

type junitDoc struct {
	Failures int `xml:"failures,attr"`
	Errors   int `xml:"errors,attr"`
	Suites   []struct {
		Name  string `xml:"name,attr"`
		Cases []struct {
			Name      string    `xml:"name,attr"`
			Failure   *struct{} `xml:"failure"`
			SystemOut string    `xml:"system-out"`
		} `xml:"testcase"`
		Props []struct {
			Name  string `xml:"name,attr"`
			Value string `xml:"value,attr"`
		} `xml:"properties>property"`
	} `xml:"testsuite"`
}

func junitOf(t *testing.T, rep *Report, opts Options) junitDoc {
	t.Helper()
	var b bytes.Buffer
	if err := writeJUnit(&b, rep, opts); err != nil {
		t.Fatal(err)
	}
	var doc junitDoc
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("junit.xml is not XML: %v\n%s", err, b.String())
	}
	return doc
}

// TestFormatsAgreeWithTheExitCode: for a passing, partial, failing, warning
// and stale-baseline run, the outcome, the exit code, JUnit's failures and
// the HTML banner tell the same story.
func TestFormatsAgreeWithTheExitCode(t *testing.T) {
	all := outcome.Selection{}
	for _, tc := range []struct {
		name          string
		sel           outcome.Selection
		bl            *Baseline
		change        func(*outcome.ScenarioResult)
		opts          Options
		outcome       string
		exit          int
		junitFailures int
		banner        string
	}{
		{"full pass", all, nil, nil, Options{}, "pass", 0, 0, "certification report"},
		{"partial", outcome.Selection{Areas: []string{"sse"}}, nil, nil, Options{}, "partial", 0, 0, "partial, not a certification"},
		{"MUST failure", all, nil, failRule("SSE-05", "no close frame"), Options{}, "fail", 1, -1, "FAIL"},
		{"SHOULD warning", all, nil, failRule("EVT-08", "no waitingOnModel"), Options{}, "pass", 0, 0, "certification report"},
		{"SHOULD warning as failure", all, nil, failRule("EVT-08", "no waitingOnModel"), Options{JUnitWarnings: JUnitWarningsFailure}, "pass", 0, 1, "certification report"},
		{"stale baseline", all, &Baseline{File: "known.yaml", Expected: []BaselineEntry{{Rule: "SSE-05", Reason: "r"}}}, nil, Options{}, "fail", 1, 1, "stale"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := synthetic(t, tc.sel, tc.bl, tc.change)
			if rep.Outcome != tc.outcome || rep.ExitCode != tc.exit {
				t.Fatalf("outcome %s, exit %d (%s); want %s, %d", rep.Outcome, rep.ExitCode, rep.Headline, tc.outcome, tc.exit)
			}
			doc := junitOf(t, rep, tc.opts)
			if tc.junitFailures < 0 && doc.Failures > 0 {
				tc.junitFailures = doc.Failures // one per failed scenario
			}
			if doc.Failures != tc.junitFailures || doc.Errors != 0 {
				t.Errorf("junit: %d failures, %d errors; want %d failures", doc.Failures, doc.Errors, tc.junitFailures)
			}
			if (doc.Failures > 0) != (tc.exit != 0) && tc.opts.JUnitWarnings == "" {
				t.Errorf("junit shows %d failures for exit %d", doc.Failures, tc.exit)
			}
			props := map[string]string{}
			for _, p := range doc.Suites[0].Props {
				props[p.Name] = p.Value
			}
			if props["invokeconf.outcome"] != tc.outcome || props["invokeconf.exitCode"] != string(rune('0'+tc.exit)) {
				t.Errorf("junit properties: %v", props)
			}
			var html bytes.Buffer
			if err := WriteHTML(&html, rep); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(html.String(), tc.banner) {
				t.Errorf("report.html lacks %q", tc.banner)
			}
			if tc.name == "SHOULD warning" {
				warned := false
				for _, su := range doc.Suites {
					for _, c := range su.Cases {
						warned = warned || strings.HasPrefix(c.SystemOut, "WARNING: a SHOULD rule failed (EVT-08")
					}
				}
				if !warned {
					t.Error("no test case carries the SHOULD warning")
				}
			}
		})
	}
}

// TestNothingRanIsAnError: a run in which no scenario ran exits 3, and
// junit.xml shows an error, not an empty green suite. (A selection that
// selects nothing is bad usage before any run: runner.NewPlan refuses it.)
func TestNothingRanIsAnError(t *testing.T) {
	plan, err := runner.NewPlan(reference(t), outcome.Selection{Tags: "@ERR-02"})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Build(Input{Result: &outcome.Result{Plan: plan}, Profile: reference(t), Target: "synthetic"})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Outcome != "harness error" || rep.ExitCode != outcome.ExitHarness {
		t.Fatalf("outcome %s, exit %d", rep.Outcome, rep.ExitCode)
	}
	if doc := junitOf(t, rep, Options{}); doc.Errors != 1 {
		t.Errorf("junit: %d errors, want 1", doc.Errors)
	}
}

// TestPartialSaysHowMuch: a run of one area is partial everywhere it is
// shown, with how many observable spec rules it judged.
func TestPartialSaysHowMuch(t *testing.T) {
	rep := synthetic(t, outcome.Selection{Areas: []string{"sse"}}, nil, nil)
	want := "judged " + itoa(rep.Spec.Judged) + " of " + itoa(rep.Spec.Observable) + " observable spec rules"
	if rep.Spec.Judged == 0 || rep.Spec.Judged >= rep.Spec.Observable || !strings.Contains(rep.Headline, want) {
		t.Fatalf("spec %+v, headline %q", rep.Spec, rep.Headline)
	}
	var console, html, js bytes.Buffer
	WriteConsole(&console, rep, nil)
	_ = WriteHTML(&html, rep)
	_ = WriteJSON(&js, rep)
	if !strings.Contains(console.String(), "Verdict: PARTIAL (exit 0): "+want) {
		t.Errorf("console:\n%s", console.String())
	}
	if !strings.Contains(html.String(), `class="banner o-partial"`) || !strings.Contains(html.String(), want) {
		t.Error("report.html has no amber PARTIAL banner saying how much was judged")
	}
	var sum struct {
		Outcome string `json:"outcome"`
		Spec    struct {
			Judged, Observable int
			Outcome            string
		} `json:"spec"`
	}
	if err := json.Unmarshal(js.Bytes(), &sum); err != nil || sum.Outcome != "partial" || sum.Spec.Outcome != "partial" || sum.Spec.Judged != rep.Spec.Judged {
		t.Errorf("summary.json: %+v (%v)", sum, err)
	}
	for _, a := range rep.Areas {
		if a.Area == "sse" && a.Label != "pass" {
			t.Errorf("sse: %q", a.Label)
		}
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestBlockedBy: a failure fails the rule it names; the scenario's other
// rules are untested, "blocked by" it, not failed. A failure of a rule the
// scenario is not about (a step it rests on) fails that rule and blocks
// every rule of the scenario.
func TestBlockedBy(t *testing.T) {
	idx, err := features.RuleIndex()
	if err != nil {
		t.Fatal(err)
	}
	pickles, _ := features.Pickles()
	var pk features.Pickle
	for _, p := range pickles {
		if len(p.Rules) >= 2 && !strings.Contains(strings.Join(p.Tags, " "), "capability") {
			pk = p
			break
		}
	}
	if pk.ID == "" {
		t.Skip("no scenario checks two rules")
	}
	first, second := pk.Rules[0], pk.Rules[1]
	rep := synthetic(t, outcome.Selection{}, nil, func(s *outcome.ScenarioResult) {
		if s.ID == pk.ID {
			s.Status, s.Error = outcome.Failed, "boom"
			s.Failure = outcome.Fail("a check", "x", "y").WithSpec(idx[first].Spec).Breaks(first)
		}
	})
	verdicts := map[string]RuleResult{}
	for _, r := range rep.Rules {
		verdicts[r.ID] = r
	}
	if v := verdicts[first].Verdict; v != Fail && v != Warning {
		t.Errorf("%s: %s, want it failed", first, v)
	}
	if r := verdicts[second]; r.Verdict != Untested || !strings.Contains(r.Reason, "blocked by "+first) {
		t.Errorf("%s: %s (%s), want untested, blocked by %s", second, r.Verdict, r.Reason, first)
	}
	prereq := synthetic(t, outcome.Selection{}, nil, func(s *outcome.ScenarioResult) {
		if s.ID == pk.ID {
			s.Status, s.Error = outcome.Blocked, "404"
			s.Failure = outcome.Fail("the status", "a 2xx status", "404").Breaks("ROUTE-01")
		}
	})
	for _, r := range prereq.Rules {
		switch {
		case r.ID == "ROUTE-01" && r.Verdict != Fail:
			t.Errorf("ROUTE-01 failed in a step of %s: %s (%s), want fail", pk.ID, r.Verdict, r.Reason)
		case (r.ID == first || r.ID == second) && (r.Verdict != Untested || !slices.Contains(r.BlockedBy, "ROUTE-01")):
			t.Errorf("%s: %s (%s), want untested, blocked by ROUTE-01", r.ID, r.Verdict, r.Reason)
		}
	}
	if len(prereq.FailedRules) != 1 || prereq.FailedRules[0].ID != "ROUTE-01" || !slices.Contains(prereq.FailedRules[0].Blocked, first) {
		t.Errorf("failed rules %+v, want ROUTE-01 blocking %s", prereq.FailedRules, first)
	}
	if !strings.Contains(prereq.Headline, "1 MUST rule failed: ROUTE-01") || !strings.Contains(prereq.Headline, "blocked by it") {
		t.Errorf("headline %q", prereq.Headline)
	}
}

// TestHostileBytes: NUL, ESC, CR and invalid UTF-8 from a target leave
// every format valid and never reach a terminal raw.
func TestHostileBytes(t *testing.T) {
	evil := "bad \x00 \x1b[31mred\x1b[0m \r over \xff\xfe \u202e end"
	rep := synthetic(t, outcome.Selection{}, nil, failRule("SSE-05", evil))
	var console, html, js bytes.Buffer
	WriteConsole(&console, rep, nil)
	_ = WriteHTML(&html, rep)
	_ = WriteJSON(&js, rep)
	junitOf(t, rep, Options{}) // fails unless it is XML
	for name, out := range map[string]string{"console": console.String(), "html": html.String(), "json": js.String()} {
		for _, bad := range []string{"\x00", "\x1b", "\r", "\xff", "\u202e"} {
			if strings.Contains(out, bad) {
				t.Errorf("%s holds the raw byte %q", name, bad)
			}
		}
	}
	if !strings.Contains(console.String(), `\x1b[31mred`) {
		t.Error("the console does not show the escape code as text")
	}
	if !json.Valid(js.Bytes()) {
		t.Error("summary.json is not JSON")
	}
}

// TestRequireComplete: with RequireComplete a partial run exits 4 and says
// why in its headline; a complete pass stays 0, a failure stays 1.
func TestRequireComplete(t *testing.T) {
	p := reference(t)
	for _, tc := range []struct {
		name    string
		sel     outcome.Selection
		change  func(*outcome.ScenarioResult)
		outcome string
		code    int
	}{
		{"partial", outcome.Selection{Areas: []string{"sse"}}, nil, "partial", outcome.ExitPartial},
		{"complete", outcome.Selection{}, nil, "pass", outcome.ExitPass},
		{"partial and failed", outcome.Selection{Areas: []string{"sse"}}, failRule("SSE-01", "boom"), "fail", outcome.ExitFail},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan, err := runner.NewPlan(p, tc.sel)
			if err != nil {
				t.Fatal(err)
			}
			res := &outcome.Result{Plan: plan}
			for _, pl := range plan.Scenarios {
				if pl.Status == outcome.Runs {
					s := outcome.ScenarioResult{ID: pl.ID, URI: pl.File, Line: pl.Line, Tags: pl.Tags, Rules: pl.Rules, Status: outcome.Passed}
					if tc.change != nil {
						tc.change(&s)
					}
					res.Scenarios = append(res.Scenarios, s)
				}
			}
			rep, err := Build(Input{Result: res, Profile: p, Target: "synthetic", RequireComplete: true})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Outcome != tc.outcome || rep.ExitCode != tc.code {
				t.Errorf("outcome %s, exit %d; want %s, %d", rep.Outcome, rep.ExitCode, tc.outcome, tc.code)
			}
			if tc.code == outcome.ExitPartial && !strings.Contains(rep.Headline, "--require-complete") {
				t.Errorf("headline %q does not say why the run fails", rep.Headline)
			}
			// junit.xml agrees with the exit code: a partial run that fails
			// is a failed test case.
			if doc := junitOf(t, rep, Options{}); (doc.Failures > 0) != (tc.code != outcome.ExitPass) {
				t.Errorf("junit: %d failures with exit %d", doc.Failures, tc.code)
			}
		})
	}
}
