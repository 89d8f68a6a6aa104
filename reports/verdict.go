package reports

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/invokeconf/invokeconf/features"
	"github.com/invokeconf/invokeconf/profile"
	"github.com/invokeconf/invokeconf/runner"
)

// Verdict is the judgement of one rule.
type Verdict string

// Verdicts, most severe first (see severity).
const (
	Fail            Verdict = "fail"             // a MUST rule failed: the run fails
	HarnessError    Verdict = "harness error"    // the harness broke while checking it
	Warning         Verdict = "warning"          // a SHOULD or MAY rule failed
	ExpectedFailure Verdict = "expected failure" // failed, and the baseline says so
	Untested        Verdict = "untested"         // a prerequisite is missing (named)
	Pass            Verdict = "pass"
	NotApplicable   Verdict = "not applicable" // the target lacks an optional capability
	NotSelected     Verdict = "not selected"   // the selection left it out
	NotObservable   Verdict = "not observable" // a client cannot check it (the catalog says why)
)

// Verdicts lists every verdict in order of severity.
var Verdicts = []Verdict{Fail, HarnessError, Warning, ExpectedFailure, Untested, Pass, NotApplicable, NotSelected, NotObservable}

func severity(v Verdict) int {
	for i, x := range Verdicts {
		if x == v {
			return i
		}
	}
	return len(Verdicts)
}

// Counts holds how many rules got each verdict. The JSON names are part of
// the summary schema.
type Counts struct {
	Pass            int `json:"pass"`
	Fail            int `json:"fail"`
	Warning         int `json:"warning"`
	ExpectedFailure int `json:"expectedFailure"`
	NotApplicable   int `json:"notApplicable"`
	Untested        int `json:"untested"`
	HarnessError    int `json:"harnessError"`
	NotObservable   int `json:"notObservable"`
	NotSelected     int `json:"notSelected"`
}

func (c *Counts) add(v Verdict) {
	switch v {
	case Pass:
		c.Pass++
	case Fail:
		c.Fail++
	case Warning:
		c.Warning++
	case ExpectedFailure:
		c.ExpectedFailure++
	case NotApplicable:
		c.NotApplicable++
	case Untested:
		c.Untested++
	case HarnessError:
		c.HarnessError++
	case NotObservable:
		c.NotObservable++
	case NotSelected:
		c.NotSelected++
	}
}

// Get returns the count of one verdict.
func (c Counts) Get(v Verdict) int {
	return map[Verdict]int{Pass: c.Pass, Fail: c.Fail, Warning: c.Warning, ExpectedFailure: c.ExpectedFailure,
		NotApplicable: c.NotApplicable, Untested: c.Untested, HarnessError: c.HarnessError,
		NotObservable: c.NotObservable, NotSelected: c.NotSelected}[v]
}

// Summary lists the non-zero counts, e.g. "5 pass · 1 fail · 2 untested".
func (c Counts) Summary() string {
	var parts []string
	for _, v := range Verdicts {
		if n := c.Get(v); n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, v))
		}
	}
	return strings.Join(parts, " · ")
}

// RuleResult is the verdict on one rule.
type RuleResult struct {
	features.Rule
	Verdict Verdict `json:"verdict"`
	// Reason explains every verdict but pass: what is missing, why not
	// observable, which baseline entry expects the failure.
	Reason string `json:"reason"`
	// Scenarios are the IDs of the rule's scenarios in this run.
	Scenarios []string `json:"scenarios"`
}

// AreaResult sums the verdicts of one spec area.
type AreaResult struct {
	Area    string  `json:"area"`
	Verdict Verdict `json:"verdict"`
	Counts  Counts  `json:"counts"`
}

// Failure is a scenario that failed or broke the harness, with what a reader
// needs to understand and reproduce it.
type Failure struct {
	Scenario runner.ScenarioResult `json:"scenario"`
	// Verdict is fail, warning, expected failure or harness error.
	Verdict Verdict `json:"verdict"`
	// Rules are the catalog entries the scenario checks (their spec
	// sentences are the expectation).
	Rules []features.Rule `json:"rules"`
	// Baseline is the reason the baseline gives, for an expected failure.
	Baseline string `json:"baseline"`
	// Message split into the check, and what was expected and observed,
	// when the message has gomega's shape; Actual holds the whole message
	// otherwise.
	Check    string `json:"check"`
	Expected string `json:"expected"`
	Actual   string `json:"actual"`
	// Curl holds one command per exchange of the transcript; the last one
	// is the request the scenario judged last.
	Curl []string `json:"curl"`
}

// Anchor is the HTML id of the failure.
func (f Failure) Anchor() string {
	r := strings.NewReplacer(".", "-", ":", "-", "/", "-")
	return "f-" + r.Replace(f.Scenario.ID)
}

// Report is one run, judged.
type Report struct {
	Schema   string    `json:"schema"`
	Harness  string    `json:"harness"`
	Target   string    `json:"target"`
	BaseURL  string    `json:"baseURL"`
	Started  time.Time `json:"started"`
	Duration float64   `json:"durationSeconds"`
	// Profile is the profile as YAML with every key replaced by a reference
	// to its environment variable.
	Profile   string           `json:"profile"`
	Selection runner.Selection `json:"selection"`
	// Outcome is "pass", "fail" or "harness error"; Headline says why.
	Outcome  string         `json:"outcome"`
	Headline string         `json:"headline"`
	ExitCode int            `json:"exitCode"`
	Counts   Counts         `json:"counts"`
	Areas    []AreaResult   `json:"areas"`
	Rules    []RuleResult   `json:"rules"`
	Failures []Failure      `json:"failures"`
	Gaps     []runner.Gap   `json:"profileGaps"`
	Baseline *BaselineCheck `json:"baseline,omitempty"`
	// Scenarios is every scenario of the run with its status; transcripts
	// are kept only in Failures.
	Scenarios []runner.ScenarioResult `json:"scenarios"`
}

// Input is what Build judges.
type Input struct {
	Result  *runner.Result
	Profile *profile.Profile
	// Target describes the target for people ("embedded reference server at ...").
	Target string
	// Baseline lists expected failures; nil for none.
	Baseline *Baseline
}

// Build judges every rule of the catalog from a run.
func Build(in Input) (*Report, error) {
	catalog, err := features.Rules()
	if err != nil {
		return nil, err
	}
	pickles, err := features.Pickles()
	if err != nil {
		return nil, err
	}
	res, p := in.Result, in.Profile
	profYAML, err := p.Marshal()
	if err != nil {
		return nil, fmt.Errorf("render profile: %w", err)
	}
	rep := &Report{
		Schema: SchemaVersion, Harness: HarnessVersion(), Target: in.Target, BaseURL: redactURL(p.BaseURL),
		Started: res.Started.UTC().Truncate(time.Second), Duration: res.Duration.Round(time.Millisecond).Seconds(),
		Profile: p.RedactEnv(string(profYAML)), Selection: res.Plan.Selection, Gaps: runner.Gaps(p, res.Plan),
	}
	if rep.Gaps == nil {
		rep.Gaps = []runner.Gap{}
	}
	inCatalog := map[string]int{}
	for _, pk := range pickles {
		for _, id := range pk.Rules {
			inCatalog[id]++
		}
	}
	byRule := map[string][]runner.ScenarioResult{}
	for _, s := range res.Scenarios {
		for _, id := range s.Rules {
			byRule[id] = append(byRule[id], s)
		}
		lean := s
		lean.Transcript = nil
		rep.Scenarios = append(rep.Scenarios, lean)
	}
	bl := in.Baseline
	if bl == nil {
		bl = &Baseline{}
	}
	areas := map[string]*AreaResult{}
	var areaOrder []string
	for _, r := range catalog {
		rr := judge(r, res.Plan, inCatalog[r.ID], byRule[r.ID], bl)
		rep.Rules = append(rep.Rules, rr)
		rep.Counts.add(rr.Verdict)
		a := areas[r.Area]
		if a == nil {
			a = &AreaResult{Area: r.Area}
			areas[r.Area] = a
			areaOrder = append(areaOrder, r.Area)
		}
		a.Counts.add(rr.Verdict)
	}
	for _, name := range areaOrder {
		a := areas[name]
		a.Verdict = areaVerdict(a.Counts)
		rep.Areas = append(rep.Areas, *a)
	}
	rep.Failures = failures(res, bl, rep.Rules)
	rep.Baseline = bl.check(rep.Rules, res.Scenarios)
	rep.Outcome, rep.Headline, rep.ExitCode = outcome(rep, res)
	return rep, nil
}

// judge decides one rule's verdict from its scenarios in the run.
func judge(r features.Rule, plan *runner.Plan, inCatalog int, ran []runner.ScenarioResult, bl *Baseline) RuleResult {
	rr := RuleResult{Rule: r, Scenarios: []string{}}
	for _, s := range ran {
		rr.Scenarios = append(rr.Scenarios, s.ID)
	}
	switch {
	case !r.Observable:
		rr.Verdict, rr.Reason = NotObservable, r.Why
		return rr
	case !plan.InScope(r.ID):
		rr.Verdict, rr.Reason = NotSelected, "outside --rules/--areas"
		return rr
	case inCatalog == 0:
		rr.Verdict, rr.Reason = Untested, "no scenario checks this rule yet"
		if r.Pending != "" {
			rr.Reason += " (pending: " + r.Pending + ")"
		}
		return rr
	case len(ran) == 0:
		rr.Verdict, rr.Reason = NotSelected, "its scenarios were not selected ("+plan.Selection.String()+")"
		return rr
	}
	by := map[string][]runner.ScenarioResult{}
	for _, s := range ran {
		by[s.Status] = append(by[s.Status], s)
	}
	switch failed := by[runner.Failed]; {
	case len(failed) > 0:
		rr.Verdict = Warning
		if r.Level == features.MUST {
			rr.Verdict = Fail
		}
		var reasons []string
		expected := true
		for _, s := range failed {
			reason, ok := bl.expects(r.ID, s)
			expected = expected && ok
			reasons = appendUnique(reasons, reason)
		}
		rr.Reason = fmt.Sprintf("%d of %d scenarios failed", len(failed), len(ran))
		if expected {
			rr.Verdict, rr.Reason = ExpectedFailure, "baseline: "+strings.Join(reasons, "; ")
		}
	case len(by[runner.HarnessError]) > 0:
		rr.Verdict, rr.Reason = HarnessError, reasonsOf(by[runner.HarnessError])
	case len(by[runner.Untested]) > 0:
		rr.Verdict, rr.Reason = Untested, reasonsOf(by[runner.Untested])
		if n := len(by[runner.Passed]); n > 0 {
			rr.Reason = fmt.Sprintf("%d of %d scenarios passed; the rest: %s", n, len(ran), rr.Reason)
		}
	case len(by[runner.Passed]) == 0:
		rr.Verdict, rr.Reason = NotApplicable, reasonsOf(by[runner.NotApplicable])
	default:
		rr.Verdict = Pass
		if n := len(by[runner.NotApplicable]); n > 0 {
			rr.Reason = fmt.Sprintf("%d scenarios not applicable", n)
		}
	}
	return rr
}

func reasonsOf(ss []runner.ScenarioResult) string {
	var out []string
	for _, s := range ss {
		first, _, _ := strings.Cut(s.Error, "\n")
		out = appendUnique(out, first)
	}
	return strings.Join(out, "; ")
}

func appendUnique(list []string, s string) []string {
	for _, v := range list {
		if v == s {
			return list
		}
	}
	return append(list, s)
}

// areaVerdict: fail, harness error or warning when any rule has it, else
// pass when a rule passed (or failed as expected), else the most telling of
// the rest.
func areaVerdict(c Counts) Verdict {
	for _, v := range []Verdict{Fail, HarnessError, Warning} {
		if c.Get(v) > 0 {
			return v
		}
	}
	if c.Pass+c.ExpectedFailure > 0 {
		return Pass
	}
	for _, v := range []Verdict{Untested, NotApplicable, NotSelected, NotObservable} {
		if c.Get(v) > 0 {
			return v
		}
	}
	return NotSelected
}

// failures collects the failed and broken scenarios, each with the rules it
// checks, its message split up and curl commands.
func failures(res *runner.Result, bl *Baseline, rules []RuleResult) []Failure {
	byID := map[string]RuleResult{}
	for _, r := range rules {
		byID[r.ID] = r
	}
	out := []Failure{}
	for _, s := range res.Scenarios {
		if s.Status != runner.Failed && s.Status != runner.HarnessError {
			continue
		}
		f := Failure{Scenario: s, Verdict: HarnessError}
		if s.Status == runner.Failed {
			f.Verdict = ExpectedFailure
			var reasons []string
			for _, id := range s.Rules {
				reason, ok := bl.expects(id, s)
				switch {
				case !ok && byID[id].Level == features.MUST:
					f.Verdict = Fail
				case !ok && f.Verdict == ExpectedFailure:
					f.Verdict = Warning
				case ok:
					reasons = appendUnique(reasons, reason)
				}
			}
			if f.Verdict == ExpectedFailure {
				f.Baseline = strings.Join(reasons, "; ")
			}
		}
		for _, id := range s.Rules {
			f.Rules = append(f.Rules, byID[id].Rule)
		}
		f.Check, f.Expected, f.Actual = splitMessage(s.Error)
		f.Curl = []string{}
		for _, ex := range s.Transcript {
			f.Curl = append(f.Curl, Curl(ex))
		}
		out = append(out, f)
	}
	sort.SliceStable(out, func(i, j int) bool { return severity(out[i].Verdict) < severity(out[j].Verdict) })
	return out
}

// outcome decides the run's exit code (design: Exit codes and output).
func outcome(rep *Report, res *runner.Result) (string, string, int) {
	harness := 0
	for _, s := range res.Scenarios {
		if s.Status == runner.HarnessError {
			harness++
		}
	}
	var stale int
	if rep.Baseline != nil {
		stale = len(rep.Baseline.Stale)
	}
	switch {
	case res.Ran() == 0:
		return "harness error", "no scenario ran: check the selection (" + res.Plan.Selection.String() + ") and the profile's capabilities", runner.ExitHarness
	case harness > 0 || res.GodogStatus == 2:
		return "harness error", fmt.Sprintf("the harness broke in %d scenarios: their rules could not be judged", harness), runner.ExitHarness
	case rep.Counts.Fail > 0 || stale > 0:
		var parts []string
		if n := rep.Counts.Fail; n > 0 {
			parts = append(parts, plural(n, "MUST rule", "MUST rules")+" failed")
		}
		if stale > 0 {
			parts = append(parts, plural(stale, "baseline entry is", "baseline entries are")+" stale (now passing)")
		}
		return "fail", strings.Join(parts, "; "), runner.ExitFail
	}
	parts := []string{"every applicable MUST rule that ran passed"}
	if n := rep.Counts.Warning; n > 0 {
		parts = append(parts, plural(n, "SHOULD rule", "SHOULD rules")+" failed (warnings)")
	}
	if n := rep.Counts.ExpectedFailure; n > 0 {
		parts = append(parts, plural(n, "expected failure", "expected failures")+" (baseline)")
	}
	if n := rep.Counts.Untested; n > 0 {
		parts = append(parts, plural(n, "rule", "rules")+" untested")
	}
	return "pass", strings.Join(parts, "; "), runner.ExitPass
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
