package reports

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

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
	// Passive reports only (BuildPassive):
	NotSeen      Verdict = "not seen"      // no recorded exchange could decide it
	NotDecidable Verdict = "not decidable" // traffic alone cannot decide it (the catalog's passive_why)
)

// Verdicts lists every verdict in order of severity.
var Verdicts = []Verdict{Fail, HarnessError, Warning, ExpectedFailure, Untested, Pass, NotApplicable, NotSelected, NotObservable, NotSeen, NotDecidable}

// jsonNames are the verdicts' names in the JSON summary's counts.
var jsonNames = map[Verdict]string{Pass: "pass", Fail: "fail", Warning: "warning", ExpectedFailure: "expectedFailure",
	NotApplicable: "notApplicable", Untested: "untested", HarnessError: "harnessError", NotObservable: "notObservable",
	NotSelected: "notSelected", NotSeen: "notSeen", NotDecidable: "notDecidable"}

func severity(v Verdict) int {
	for i, x := range Verdicts {
		if x == v {
			return i
		}
	}
	return len(Verdicts)
}

// judged reports whether a verdict says something about the target: the
// rule was checked, or the target lawfully lacks what it is about.
func judged(v Verdict) bool {
	switch v {
	case Pass, Fail, Warning, ExpectedFailure, NotApplicable:
		return true
	}
	return false
}

// Counts holds how many rules got each verdict.
type Counts map[Verdict]int

// Get returns the count of one verdict.
func (c Counts) Get(v Verdict) int { return c[v] }

// MarshalJSON writes every verdict, zeros included, under its schema name.
func (c Counts) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, v := range Verdicts {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%q:%d", jsonNames[v], c[v])
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads what MarshalJSON writes.
func (c *Counts) UnmarshalJSON(b []byte) error {
	var m map[string]int
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*c = Counts{}
	for v, name := range jsonNames {
		if n := m[name]; n > 0 {
			(*c)[v] = n
		}
	}
	return nil
}

// Summary lists the non-zero counts, e.g. "5 pass · 1 fail · 2 untested".
func (c Counts) Summary() string {
	var parts []string
	for _, v := range Verdicts {
		if n := c[v]; n > 0 {
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
	// observable, which baseline entry expects the failure, which failure
	// blocked it.
	Reason string `json:"reason"`
	// Scenarios are the IDs of the rule's scenarios in this run.
	Scenarios []string `json:"scenarios"`
	// Traffic is what the recorded traffic showed of the rule, in a
	// passive report for a rule that traffic can decide; nil otherwise.
	Traffic *RuleTraffic `json:"traffic,omitempty"`
}

// AreaResult sums the verdicts of one spec area.
type AreaResult struct {
	Area    string  `json:"area"`
	Verdict Verdict `json:"verdict"`
	Counts  Counts  `json:"counts"`
	// Label is the verdict with what it leaves out: "pass, 4 untested".
	Label string `json:"label"`
}

// Failure is a scenario that failed or broke the harness, with what a reader
// needs to understand and reproduce it.
type Failure struct {
	Scenario runner.ScenarioResult `json:"scenario"`
	// Verdict is fail, warning, expected failure or harness error.
	Verdict Verdict `json:"verdict"`
	// Rules are the catalog entries the failure breaks (their spec
	// sentences are the expectation).
	Rules []features.Rule `json:"rules"`
	// Blocked are the other rules of the scenario, which the failure kept
	// from being checked: they are untested, "blocked by" the first rule.
	Blocked []string `json:"blocked,omitempty"`
	// Baseline is the reason the baseline gives, for an expected failure.
	Baseline string `json:"baseline"`
	// Check, Expected and Actual come from the step's structured failure
	// (outcome.Failure); for an error of another kind Actual holds the
	// whole message. Spec holds the spec's words the check rests on.
	Check    string `json:"check"`
	Expected string `json:"expected"`
	Actual   string `json:"actual"`
	Spec     string `json:"spec,omitempty"`
	// Curl holds one command per exchange of the transcript; the last one
	// is the request the scenario judged last.
	Curl []string `json:"curl"`
}

// Anchor is the HTML id of the failure's details.
func (f Failure) Anchor() string {
	r := strings.NewReplacer(".", "-", ":", "-", "/", "-")
	return "f-" + r.Replace(f.Scenario.ID)
}

// Line is the failure in one line: "CHECK: expected X, got Y", clipped.
func (f Failure) Line() string {
	var s string
	switch {
	case f.Expected != "":
		s = f.Check
		if s != "" {
			s += ": "
		}
		s += "expected " + f.Expected + ", got " + orNothing(f.Actual)
	default:
		s = f.Actual
	}
	s = strings.Join(strings.Fields(s), " ")
	return clip(s, 240)
}

// Message is the scenario's whole message when it says more than Check,
// Expected and Actual (context a step wrapped around its failure); "" when
// it says nothing more.
func (f Failure) Message() string {
	sf := f.Scenario.Failure
	if sf == nil || strings.TrimSpace(f.Scenario.Error) == sf.Error() {
		return ""
	}
	return f.Scenario.Error
}

func orNothing(s string) string {
	if s == "" {
		return "nothing"
	}
	return s
}

// FailedRule is one row of the report's "Failed rules" table: a rule that
// failed (or warned, or broke the harness), with its first failure.
type FailedRule struct {
	ID      string  `json:"id"`
	Level   string  `json:"level"`
	Source  string  `json:"source"`
	Verdict Verdict `json:"verdict"`
	// Line is expected vs actual of its first failure, in one line.
	Line string `json:"line"`
	// Scenario and Anchor name the first failure and its HTML id.
	Scenario string `json:"scenario"`
	Anchor   string `json:"anchor"`
}

// SourceVerdict is the verdict on the rules of one source: the spec, or
// this project's own contract. A contract failure never turns the spec
// verdict red.
type SourceVerdict struct {
	Source string `json:"source"`
	// Outcome is "pass", "partial" (some observable rule was not judged),
	// "fail", "harness error", "not selected", or "none" (the catalog has
	// no observable rule of this source).
	Outcome string `json:"outcome"`
	// Judged of Observable: the observable rules that got a verdict about
	// the target (pass, fail, warning, expected failure, not applicable).
	Judged     int    `json:"judged"`
	Observable int    `json:"observable"`
	Counts     Counts `json:"counts"`
	// Failed are the IDs of the rules that failed (MUST) or warned.
	Failed []string `json:"failed"`
}

// Scope says how much of the spec a run certifies.
func (s SourceVerdict) Scope() string {
	if s.Observable == 0 {
		return "no observable " + s.Source + " rules in the catalog"
	}
	return fmt.Sprintf("judged %d of %d observable %s rules", s.Judged, s.Observable, s.Source)
}

// Report is one run, judged.
type Report struct {
	Schema string `json:"schema"`
	// Mode is ModeActive (invokeconf run) or ModePassive (invokeconf proxy
	// and judge: a judgement of recorded traffic, never a certification).
	Mode     string `json:"mode"`
	Harness  string `json:"harness"`
	Identity `json:"identity"`
	Target   string    `json:"target"`
	BaseURL  string    `json:"baseURL"`
	Started  time.Time `json:"started"`
	Duration float64   `json:"durationSeconds"`
	// Profile is the profile with every key replaced by a reference to its
	// environment variable; ProfileYAML the same as YAML, for people.
	Profile     map[string]any   `json:"profile"`
	ProfileYAML string           `json:"-"`
	Selection   runner.Selection `json:"selection"`
	// Outcome is "pass", "partial" (no MUST rule failed, but not every
	// observable spec rule was judged: not a certification), "fail",
	// "harness error" or "not run" (the target never answered); Headline
	// says why.
	Outcome  string `json:"outcome"`
	Headline string `json:"headline"`
	ExitCode int    `json:"exitCode"`
	// Spec and Contract are the verdicts on each source's rules apart.
	Spec        SourceVerdict  `json:"spec"`
	Contract    SourceVerdict  `json:"contract"`
	Counts      Counts         `json:"counts"`
	Areas       []AreaResult   `json:"areas"`
	FailedRules []FailedRule   `json:"failedRules"`
	Rules       []RuleResult   `json:"rules"`
	Failures    []Failure      `json:"failures"`
	Gaps        []runner.Gap   `json:"profileGaps"`
	Baseline    *BaselineCheck `json:"baseline,omitempty"`
	// Scenarios is every scenario of the run with its status; transcripts
	// are kept only in Failures.
	Scenarios []runner.ScenarioResult `json:"scenarios"`
	// Passive is set in a passive report only.
	Passive *Passive `json:"passive,omitempty"`
}

// Partial reports whether the run judged less than every observable spec
// rule.
func (r *Report) Partial() bool { return r.Spec.Judged < r.Spec.Observable }

// Input is what Build judges.
type Input struct {
	Result  *runner.Result
	Profile *profile.Profile
	// Target describes the target for people ("http://127.0.0.1:8080 (the
	// embedded reference server)", or the profile's base URL).
	Target string
	// Baseline lists expected failures; nil for none.
	Baseline *Baseline
	// NotRun says why the run never started (the target did not answer);
	// "" for a run that ran.
	NotRun string
	// RequireComplete makes a partial run fail with runner.ExitPartial.
	RequireComplete bool
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
	id := Identify(p)
	rep := &Report{
		Schema: SchemaVersion, Mode: ModeActive, Harness: id.Harness, Identity: id, Target: printable(in.Target), BaseURL: redactURL(p.BaseURL),
		Started: res.Started.UTC().Truncate(time.Second), Duration: res.Duration.Round(time.Millisecond).Seconds(),
		ProfileYAML: p.RedactEnv(string(profYAML)), Selection: res.Plan.Selection, Gaps: runner.Gaps(p, res.Plan),
	}
	if err := yaml.Unmarshal([]byte(rep.ProfileYAML), &rep.Profile); err != nil {
		return nil, fmt.Errorf("render profile: %w", err)
	}
	if rep.Gaps == nil {
		rep.Gaps = []runner.Gap{}
	}
	idx := map[string]features.Rule{}
	for _, r := range catalog {
		idx[r.ID] = r
	}
	inCatalog := map[string]int{}
	for _, pk := range pickles {
		for _, id := range pk.Rules {
			inCatalog[id]++
		}
	}
	scenarios := make([]runner.ScenarioResult, 0, len(res.Scenarios))
	for _, s := range res.Scenarios {
		scenarios = append(scenarios, sanitize(s))
	}
	byRule := map[string][]runner.ScenarioResult{}
	for _, s := range scenarios {
		_, blocked := splitRules(s, idx)
		for _, id := range s.Rules {
			if blocker, ok := blocked[id]; ok {
				b := s
				b.Status, b.Error = runner.Untested, "blocked by "+blocker+": its failure came first"
				byRule[id] = append(byRule[id], b)
				continue
			}
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
	rep.Counts = Counts{}
	for _, r := range catalog {
		rr := judge(r, res.Plan, inCatalog[r.ID], byRule[r.ID], bl)
		rep.Rules = append(rep.Rules, rr)
		rep.Counts[rr.Verdict]++
	}
	rep.Areas = areasOf(rep.Rules)
	rep.Spec = sourceVerdict(features.SourceSpec, rep.Rules)
	rep.Contract = sourceVerdict(features.SourceContract, rep.Rules)
	rep.Failures = failures(scenarios, bl, idx)
	rep.FailedRules = failedRules(rep.Rules, rep.Failures)
	rep.Baseline = bl.check(rep.Rules, scenarios)
	rep.Outcome, rep.Headline, rep.ExitCode = decide(rep, res, in.NotRun)
	if in.RequireComplete && rep.Outcome == "partial" {
		rep.ExitCode, rep.Headline = runner.ExitPartial, rep.Headline+"; --require-complete: a partial run fails"
	}
	return rep, nil
}

// splitRules tells, for a failed scenario that checks several rules, which
// rules its failure breaks and which it only kept from being checked: a
// structured failure whose spec words belong to some of the scenario's
// rules breaks those, and blocks the others. Without such words every rule
// of the scenario failed. blocked maps a blocked rule to the rule that
// blocked it.
func splitRules(s runner.ScenarioResult, idx map[string]features.Rule) (failed []string, blocked map[string]string) {
	if s.Status != runner.Failed || s.Failure == nil || s.Failure.Spec == "" || len(s.Rules) < 2 {
		return s.Rules, nil
	}
	words := normal(s.Failure.Spec)
	for _, id := range s.Rules {
		spec := normal(idx[id].Spec)
		if spec != "" && (strings.Contains(spec, words) || strings.Contains(words, spec)) {
			failed = append(failed, id)
		}
	}
	if len(failed) == 0 || len(failed) == len(s.Rules) {
		return s.Rules, nil
	}
	blocked = map[string]string{}
	for _, id := range s.Rules {
		if !contains(failed, id) {
			blocked[id] = failed[0]
		}
	}
	return failed, blocked
}

func normal(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }

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
		rr.Verdict, rr.Reason = NotSelected, "outside the selection ("+plan.Selection.String()+")"
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
	by := map[runner.Status][]runner.ScenarioResult{}
	for _, s := range ran {
		by[s.Status] = append(by[s.Status], s)
	}
	switch failed := by[runner.Failed]; {
	case len(failed) > 0:
		var reasons []string
		expected := true
		for _, s := range failed {
			reason, ok := bl.expects(r.ID, s)
			expected = expected && ok
			reasons = appendUnique(reasons, reason)
		}
		rr.Verdict, rr.Reason = failedVerdict(r.Level, expected), fmt.Sprintf("%d of %d scenarios failed", len(failed), len(ran))
		if expected {
			rr.Reason = "baseline: " + strings.Join(reasons, "; ")
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

// failedVerdict is the one rule for a failure: expected by the baseline,
// else a MUST rule fails and a SHOULD or MAY rule warns.
func failedVerdict(level string, expected bool) Verdict {
	switch {
	case expected:
		return ExpectedFailure
	case level == features.MUST:
		return Fail
	}
	return Warning
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
// untested when a rule is (never a pass beside untested rules), else pass
// when a rule passed (or failed as expected), else the most telling of the
// rest.
func areaVerdict(c Counts) Verdict {
	for _, v := range []Verdict{Fail, HarnessError, Warning, Untested} {
		if c[v] > 0 {
			return v
		}
	}
	if c[Pass]+c[ExpectedFailure] > 0 {
		return Pass
	}
	for _, v := range []Verdict{Untested, NotApplicable, NotSelected, NotObservable, NotSeen, NotDecidable} {
		if c[v] > 0 {
			return v
		}
	}
	return NotSelected
}

// areaLabel is an area's verdict with the rules it did not judge, and for
// an untested area those it passed: "5 untested, 3 pass", "pass, 1 not
// selected".
func areaLabel(v Verdict, c Counts) string {
	parts := []string{string(v)}
	if v == Untested {
		parts[0] = fmt.Sprintf("%d %s", c[Untested], Untested)
		if n := c[Pass]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, Pass))
		}
	}
	for _, other := range []Verdict{Untested, NotSelected, NotSeen} {
		if n := c[other]; n > 0 && other != v {
			parts = append(parts, fmt.Sprintf("%d %s", n, other))
		}
	}
	return strings.Join(parts, ", ")
}

// sourceVerdict judges the rules of one source together.
func sourceVerdict(source string, rules []RuleResult) SourceVerdict {
	sv := SourceVerdict{Source: source, Counts: Counts{}, Failed: []string{}}
	selected := 0
	for _, r := range rules {
		if r.Source != source && !(source == features.SourceSpec && r.Source == "") {
			continue
		}
		sv.Counts[r.Verdict]++
		if !r.Observable {
			continue
		}
		sv.Observable++
		if judged(r.Verdict) {
			sv.Judged++
		}
		if r.Verdict != NotSelected {
			selected++
		}
		if r.Verdict == Fail || r.Verdict == Warning {
			sv.Failed = append(sv.Failed, r.ID)
		}
	}
	switch {
	case sv.Counts[Fail] > 0:
		sv.Outcome = "fail"
	case sv.Counts[HarnessError] > 0:
		sv.Outcome = "harness error"
	case sv.Observable == 0:
		sv.Outcome = "none"
	case selected == 0:
		sv.Outcome = "not selected"
	case sv.Judged < sv.Observable:
		sv.Outcome = "partial"
	default:
		sv.Outcome = "pass"
	}
	return sv
}

// failures collects the failed and broken scenarios, each with the rules it
// breaks, its structured failure and curl commands.
func failures(scenarios []runner.ScenarioResult, bl *Baseline, idx map[string]features.Rule) []Failure {
	out := []Failure{}
	for _, s := range scenarios {
		if s.Status != runner.Failed && s.Status != runner.HarnessError {
			continue
		}
		failed, blocked := splitRules(s, idx)
		f := Failure{Scenario: s, Verdict: HarnessError}
		if s.Status == runner.Failed {
			// The scenario's verdict is the most severe of its failed
			// rules' verdicts, each by the rule's own judgement.
			f.Verdict = NotSelected
			var reasons []string
			for _, id := range failed {
				reason, ok := bl.expects(id, s)
				if v := failedVerdict(idx[id].Level, ok); severity(v) < severity(f.Verdict) {
					f.Verdict = v
				}
				if ok {
					reasons = appendUnique(reasons, reason)
				}
			}
			switch f.Verdict {
			case NotSelected: // a scenario that names no rule still failed
				f.Verdict = Fail
			case ExpectedFailure:
				f.Baseline = strings.Join(reasons, "; ")
			}
		}
		for _, id := range failed {
			f.Rules = append(f.Rules, idx[id])
		}
		for _, id := range s.Rules {
			if _, ok := blocked[id]; ok {
				f.Blocked = append(f.Blocked, id)
			}
		}
		if sf := s.Failure; sf != nil {
			f.Check, f.Expected, f.Actual, f.Spec = sf.Check, sf.Expected, sf.Actual, sf.Spec
		} else {
			f.Actual = s.Error
		}
		f.Curl = []string{}
		for _, ex := range s.Transcript {
			f.Curl = append(f.Curl, Curl(ex))
		}
		out = append(out, f)
	}
	sort.SliceStable(out, func(i, j int) bool { return severity(out[i].Verdict) < severity(out[j].Verdict) })
	return out
}

// failedRules lists the rules that failed, warned or broke the harness,
// most severe first, each with its first failure.
func failedRules(rules []RuleResult, fs []Failure) []FailedRule {
	out := []FailedRule{}
	for _, r := range rules {
		if r.Verdict != Fail && r.Verdict != Warning && r.Verdict != HarnessError && r.Verdict != ExpectedFailure {
			continue
		}
		row := FailedRule{ID: r.ID, Level: r.Level, Source: r.Source, Verdict: r.Verdict, Line: r.Reason}
		for _, f := range fs {
			if contains(f.Scenario.Rules, r.ID) && !contains(f.Blocked, r.ID) {
				row.Line, row.Scenario, row.Anchor = f.Line(), f.Scenario.Title(), f.Anchor()
				break
			}
		}
		out = append(out, row)
	}
	sort.SliceStable(out, func(i, j int) bool { return severity(out[i].Verdict) < severity(out[j].Verdict) })
	return out
}

// decide is the one exit-code policy: 3 when the harness broke or no
// scenario ran, 1 when a MUST rule failed (spec or contract) or a baseline
// entry is stale, 2 when the target never answered, else 0, a partial run
// included (it is reported amber and never called a certification).
func decide(rep *Report, res *runner.Result, notRun string) (string, string, int) {
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
	case notRun != "":
		return "not run", notRun, runner.ExitUsage
	case res.Ran() == 0:
		return "harness error", "no scenario ran: check the selection (" + res.Plan.Selection.String() + ") and the profile's capabilities", runner.ExitHarness
	case harness > 0 || res.GodogStatus == 2:
		return "harness error", fmt.Sprintf("the harness broke in %d scenarios: their rules could not be judged", harness), runner.ExitHarness
	case rep.Counts[Fail] > 0 || stale > 0:
		var parts []string
		if n := rep.Counts[Fail]; n > 0 {
			parts = append(parts, plural(n, "MUST rule", "MUST rules")+" failed: "+strings.Join(ruleIDs(rep.Rules, Fail), " "))
		}
		if stale > 0 {
			parts = append(parts, plural(stale, "baseline entry is", "baseline entries are")+" stale (now passing)")
		}
		return "fail", strings.Join(parts, "; "), runner.ExitFail
	}
	var parts []string
	result := "pass"
	if rep.Partial() {
		result = "partial"
		parts = append(parts, rep.Spec.Scope()+": not a certification; no MUST rule that ran failed")
	} else {
		parts = append(parts, "every applicable MUST rule passed ("+rep.Spec.Scope()+")")
	}
	if n := rep.Counts[Warning]; n > 0 {
		parts = append(parts, plural(n, "SHOULD rule", "SHOULD rules")+" failed (warnings): "+strings.Join(ruleIDs(rep.Rules, Warning), " "))
	}
	if n := rep.Counts[ExpectedFailure]; n > 0 {
		parts = append(parts, plural(n, "expected failure", "expected failures")+" (baseline)")
	}
	if n := rep.Counts[Untested]; n > 0 {
		parts = append(parts, plural(n, "rule", "rules")+" untested")
	}
	return result, strings.Join(parts, "; "), runner.ExitPass
}

func ruleIDs(rules []RuleResult, v Verdict) []string {
	var ids []string
	for _, r := range rules {
		if r.Verdict == v {
			ids = append(ids, r.ID)
		}
	}
	return ids
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// areasOf tallies the rules' verdicts per area, areas in the catalog's
// order.
func areasOf(rules []RuleResult) []AreaResult {
	areas := map[string]*AreaResult{}
	var order []string
	for _, rr := range rules {
		a := areas[rr.Area]
		if a == nil {
			a = &AreaResult{Area: rr.Area, Counts: Counts{}}
			areas[rr.Area] = a
			order = append(order, rr.Area)
		}
		a.Counts[rr.Verdict]++
	}
	out := make([]AreaResult, 0, len(order))
	for _, name := range order {
		a := areas[name]
		a.Verdict = areaVerdict(a.Counts)
		a.Label = areaLabel(a.Verdict, a.Counts)
		out = append(out, *a)
	}
	return out
}
