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
	"github.com/invokeconf/invokeconf/profile"
	"github.com/invokeconf/invokeconf/runner"
	"github.com/invokeconf/invokeconf/testrun"
	"github.com/invokeconf/invokeconf/transcript"
)

// synthetic builds a report from a plan whose runnable scenarios all end
// as status says, except those change sets otherwise: no target needed.
func synthetic(t *testing.T, sel testrun.Selection, bl *Baseline, change func(*testrun.ScenarioResult)) *Report {
	t.Helper()
	p := reference(t)
	plan, err := runner.NewPlan(p, sel)
	if err != nil {
		t.Fatal(err)
	}
	res := &testrun.Result{Plan: plan}
	for _, pl := range plan.Scenarios {
		if pl.Status != testrun.Runs {
			continue
		}
		s := testrun.ScenarioResult{ID: pl.ID, Feature: strings.TrimSuffix(pl.File, ".feature"), Name: pl.Name, URI: pl.File,
			Line: pl.Line, Example: pl.Example, Tags: pl.Tags, Rules: pl.Rules, Status: testrun.Passed}
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

func failRule(id, msg string) func(*testrun.ScenarioResult) {
	return func(s *testrun.ScenarioResult) {
		if contains(s.Rules, id) {
			s.Status, s.Error = testrun.Failed, msg
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
	all := testrun.Selection{}
	for _, tc := range []struct {
		name          string
		sel           testrun.Selection
		bl            *Baseline
		change        func(*testrun.ScenarioResult)
		opts          Options
		outcome       string
		exit          int
		junitFailures int
		banner        string
	}{
		{"full pass", all, nil, nil, Options{}, "pass", 0, 0, "certification report"},
		{"partial", testrun.Selection{Areas: []string{"sse"}}, nil, nil, Options{}, "partial", 0, 0, "partial, not a certification"},
		{"MUST failure", all, nil, failRule("SSE-05", "no close frame"), Options{}, "fail", 1, -1, "FAIL"},
		{"SHOULD warning", all, nil, failRule("EVT-08", "no waitingOnModel"), Options{}, "pass", 0, 0, "certification report"},
		{"SHOULD warning as failure", all, nil, failRule("EVT-08", "no waitingOnModel"), Options{JUnitWarnings: JUnitWarningsFailure}, "pass", 0, -1, "certification report"},
		{"stale baseline", all, &Baseline{File: "known.yaml", Expected: []BaselineEntry{{Rule: "SSE-05", Reason: "r"}}}, nil, Options{}, "fail", 1, 1, "stale"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// junitFailures -1: one failure per scenario the change failed.
			failedScenarios, change := 0, tc.change
			if change != nil {
				change = func(s *testrun.ScenarioResult) {
					if tc.change(s); s.Status == testrun.Failed {
						failedScenarios++
					}
				}
			}
			rep := synthetic(t, tc.sel, tc.bl, change)
			if rep.Outcome != tc.outcome || rep.ExitCode != tc.exit {
				t.Fatalf("outcome %s, exit %d (%s); want %s, %d", rep.Outcome, rep.ExitCode, rep.Headline, tc.outcome, tc.exit)
			}
			doc := junitOf(t, rep, tc.opts)
			if tc.junitFailures < 0 {
				tc.junitFailures = failedScenarios
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
	plan, err := runner.NewPlan(reference(t), testrun.Selection{Tags: "@ERR-02"})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Build(Input{Result: &testrun.Result{Plan: plan}, Profile: reference(t), Target: "synthetic"})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Outcome != "not tested" || rep.ExitCode != outcome.ExitHarness {
		t.Fatalf("outcome %s, exit %d", rep.Outcome, rep.ExitCode)
	}
	if doc := junitOf(t, rep, Options{}); doc.Errors != 1 {
		t.Errorf("junit: %d errors, want 1", doc.Errors)
	}
}

// TestPartialSaysHowMuch: a run of one area is partial everywhere it is
// shown, with how many observable spec rules it judged.
func TestPartialSaysHowMuch(t *testing.T) {
	rep := synthetic(t, testrun.Selection{Areas: []string{"sse"}}, nil, nil)
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
	rep := synthetic(t, testrun.Selection{}, nil, func(s *testrun.ScenarioResult) {
		if s.ID == pk.ID {
			s.Status, s.Error = testrun.Failed, "boom"
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
	prereq := synthetic(t, testrun.Selection{}, nil, func(s *testrun.ScenarioResult) {
		if s.ID == pk.ID {
			s.Status, s.Error = testrun.Blocked, "404"
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
	rep := synthetic(t, testrun.Selection{}, nil, failRule("SSE-05", evil))
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
		sel     testrun.Selection
		change  func(*testrun.ScenarioResult)
		outcome string
		code    int
	}{
		{"partial", testrun.Selection{Areas: []string{"sse"}}, nil, "partial", outcome.ExitPartial},
		{"complete", testrun.Selection{}, nil, "pass", outcome.ExitPass},
		{"partial and failed", testrun.Selection{Areas: []string{"sse"}}, failRule("SSE-01", "boom"), "fail", outcome.ExitFail},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan, err := runner.NewPlan(p, tc.sel)
			if err != nil {
				t.Fatal(err)
			}
			res := &testrun.Result{Plan: plan}
			for _, pl := range plan.Scenarios {
				if pl.Status == testrun.Runs {
					s := testrun.ScenarioResult{ID: pl.ID, URI: pl.File, Line: pl.Line, Tags: pl.Tags, Rules: pl.Rules, Status: testrun.Passed}
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

// formatsOf renders a report in every format a person or a machine reads
// its verdicts in: the console, report.html, summary.json and junit.xml's
// properties (name=value lines).
func formatsOf(t *testing.T, rep *Report) map[string]string {
	t.Helper()
	var console, html, js bytes.Buffer
	WriteConsole(&console, rep, nil)
	if err := WriteHTML(&html, rep); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(&js, rep); err != nil {
		t.Fatal(err)
	}
	var props strings.Builder
	for _, su := range junitOf(t, rep, Options{}).Suites {
		for _, p := range su.Props {
			props.WriteString(p.Name + "=" + p.Value + "\n")
		}
	}
	return map[string]string{"console": console.String(), "report.html": html.String(), "summary.json": js.String(), "junit properties": props.String()}
}

// TestNothingTestedNeverPasses: a section (spec or contract) or a run in
// which no rule was tested never reads pass in any format, and "judged N"
// counts only rules that were checked: not applicable is counted apart.
func TestNothingTestedNeverPasses(t *testing.T) {
	noBundles := func(p *profile.Profile) {
		p.Capabilities.Bundles, p.Capabilities.BundleTestHooks = false, false
		p.DeclareCapability("bundles")
		p.DeclareCapability("bundleTestHooks")
	}
	untested := func(s *testrun.ScenarioResult) {
		s.Status, s.Error = testrun.Untested, "the target's agent cannot be made to show @say"
	}
	for _, tc := range []struct {
		name      string
		change    func(*profile.Profile)
		sel       testrun.Selection
		scenario  func(*testrun.ScenarioResult)
		notRun    string
		section   func(*Report) SourceVerdict
		outcome   string // the section's
		runResult string
		exit      int
	}{
		{"a target without bundles: the contract", noBundles, testrun.Selection{}, nil, "", func(r *Report) SourceVerdict { return r.Contract }, "not applicable", "pass", outcome.ExitPass},
		{"spec only without the contract's routes", func(p *profile.Profile) { p.Routes = nil }, testrun.Selection{SpecOnly: true}, nil, "",
			func(r *Report) SourceVerdict { return r.Contract }, "not selected", "pass", outcome.ExitPass},
		{"an unreachable target: the spec", noBundles, testrun.Selection{}, nil, "the target is not reachable", func(r *Report) SourceVerdict { return r.Spec }, "not run", "not run", outcome.ExitUsage},
		{"an unreachable target: the contract", noBundles, testrun.Selection{}, nil, "the target is not reachable", func(r *Report) SourceVerdict { return r.Contract }, "not run", "not run", outcome.ExitUsage},
		{"every scenario untested: the spec", nil, testrun.Selection{Areas: []string{"sse"}}, untested, "", func(r *Report) SourceVerdict { return r.Spec }, "not tested", "not tested", outcome.ExitHarness},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := reference(t)
			if tc.change != nil {
				tc.change(p)
			}
			plan, err := runner.NewPlan(p, tc.sel)
			if err != nil {
				t.Fatal(err)
			}
			// As the runner records them: the planned scenarios that do
			// not run with their plan's status, the others as they end.
			const ran = "(ran)"
			res := runner.Unattempted(plan, ran)
			if tc.notRun != "" {
				res = runner.Unattempted(plan, tc.notRun)
			}
			for i, s := range res.Scenarios {
				if s.Error == ran {
					res.Scenarios[i].Status, res.Scenarios[i].Error = testrun.Passed, ""
					if tc.scenario != nil {
						tc.scenario(&res.Scenarios[i])
					}
				}
			}
			rep, err := Build(Input{Result: res, Profile: p, Target: "synthetic", NotRun: tc.notRun})
			if err != nil {
				t.Fatal(err)
			}
			sv := tc.section(rep)
			if sv.Outcome != tc.outcome || rep.Outcome != tc.runResult || rep.ExitCode != tc.exit {
				t.Fatalf("section %s, run %s (exit %d); want section %s, run %s (exit %d)", sv.Outcome, rep.Outcome, rep.ExitCode, tc.outcome, tc.runResult, tc.exit)
			}
			// Judged counts only what was checked.
			checked, na := 0, 0
			for _, r := range rep.Rules {
				if r.Observable && (r.Source == sv.Source || sv.Source == features.SourceSpec && r.Source == "") {
					switch r.Verdict {
					case Pass, Fail, Warning, ExpectedFailure:
						checked++
					case NotApplicable:
						na++
					}
				}
			}
			if sv.Judged != checked || sv.NotApplicable != na {
				t.Errorf("%s judged %d, not applicable %d; the rules say %d checked, %d not applicable", sv.Source, sv.Judged, sv.NotApplicable, checked, na)
			}
			label := strings.ToUpper(sv.Source[:1]) + sv.Source[1:] + ":"
			for name, text := range formatsOf(t, rep) {
				if name == "summary.json" {
					var sum map[string]json.RawMessage
					var sec struct{ Outcome string }
					err := json.Unmarshal([]byte(text), &sum)
					if err == nil {
						err = json.Unmarshal(sum[sv.Source], &sec)
					}
					if err != nil || checked == 0 && sec.Outcome == "pass" {
						t.Errorf("summary.json reads pass for the %s, in which no rule was tested (%v)", sv.Source, err)
					}
				}
				for _, bad := range []string{label + "     PASS", label + " PASS", `<b>` + sv.Source + `:</b><span class="badge v-pass">`,
					"invokeconf." + sv.Source + ".verdict=pass"} {
					if checked == 0 && strings.Contains(text, bad) {
						t.Errorf("%s reads pass for the %s, in which no rule was tested: %q", name, sv.Source, bad)
					}
				}
				if tc.runResult != "pass" && (strings.Contains(text, "Verdict: PASS") || strings.Contains(text, `class="banner o-pass"`) ||
					strings.Contains(text, "invokeconf.outcome=pass\n")) {
					t.Errorf("%s reads pass for a run that is %s", name, rep.Outcome)
				}
			}
		})
	}
}

// TestPartialNamesWhatIsMissing: a partial run names the rules it left
// out, in the headline every format shows (console, report.html's banner,
// summary.json, junit.xml); past a few, it counts them and says where they
// are listed, and the console's "Not judged" list names the not selected
// rules too.
func TestPartialNamesWhatIsMissing(t *testing.T) {
	quick := synthetic(t, testrun.Selection{Quick: true}, nil, nil)
	if quick.Outcome != "partial" || !strings.Contains(quick.Headline, "not judged: SSE-04 (not selected)") {
		t.Fatalf("outcome %s, headline %q: want SSE-04 named", quick.Outcome, quick.Headline)
	}
	for name, text := range formatsOf(t, quick) {
		if !strings.Contains(text, "SSE-04 (not selected)") {
			t.Errorf("%s does not name SSE-04, the rule --quick leaves out", name)
		}
	}
	if console := formatsOf(t, quick)["console"]; !strings.Contains(console, "not selected: its scenarios were not selected (--quick)\n    SSE-04\n") {
		t.Errorf("the console's Not judged list does not name SSE-04:\n%s", console)
	}
	sse := synthetic(t, testrun.Selection{Areas: []string{"sse"}}, nil, nil)
	missing := unjudged(sse.Rules, features.SourceSpec)
	if len(missing) <= maxNamed || !strings.Contains(sse.Headline, itoa(len(missing))+" rules not judged ("+itoa(len(missing))+" not selected; ") {
		t.Errorf("headline %q: want the %d rules counted and where they are listed", sse.Headline, len(missing))
	}
	if console := formatsOf(t, sse)["console"]; !strings.Contains(console, "rules (report.html's rule matrix names each)") {
		t.Errorf("the console lists %d not selected rules one by one:\n%s", len(missing), console)
	}
}

// TestNotRunPrintsItsReasonOnce: the console of a run whose target never
// answered shows no table of untested rules, and its reason once, in the
// verdict line.
func TestNotRunPrintsItsReasonOnce(t *testing.T) {
	p := reference(t)
	plan, err := runner.NewPlan(p, testrun.Selection{})
	if err != nil {
		t.Fatal(err)
	}
	const why = "the target http://127.0.0.1:9 is not reachable"
	rep, err := Build(Input{Result: runner.Unattempted(plan, why), Profile: p, Target: "synthetic", NotRun: why})
	if err != nil {
		t.Fatal(err)
	}
	var console bytes.Buffer
	WriteConsole(&console, rep, nil)
	if n := strings.Count(console.String(), why); n != 1 || !strings.Contains(console.String(), "Verdict: NOT RUN (exit 2): "+why) {
		t.Errorf("the reason is printed %d times, want once in the verdict line:\n%s", n, console.String())
	}
	if lines := strings.Count(console.String(), "\n"); lines > 8 {
		t.Errorf("%d lines for a run that never started:\n%s", lines, console.String())
	}
}
