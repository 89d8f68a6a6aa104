package reports

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/invokeconf/invokeconf/checks"
	"github.com/invokeconf/invokeconf/features"
	"github.com/invokeconf/invokeconf/outcome"
	"github.com/invokeconf/invokeconf/profile"
	"github.com/invokeconf/invokeconf/testrun"
	"github.com/invokeconf/invokeconf/transcript"
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

// judged reports whether a verdict says the rule was checked against the
// target: pass, fail, warning or expected failure. Not applicable is not
// judged (nothing was checked: the target lawfully lacks what the rule is
// about); it is counted apart, and a section or run whose rules are all
// not applicable never reads pass.
func judged(v Verdict) bool {
	switch v {
	case Pass, Fail, Warning, ExpectedFailure:
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
	// BlockedBy names the rules whose failure, in a step the rule's
	// scenarios rest on, kept them from checking it: the rule is untested,
	// blocked by them.
	BlockedBy []string `json:"blockedBy,omitempty"`
	// Traffic is what the recorded traffic showed of the rule, in a
	// passive report for a rule that traffic can decide; nil otherwise.
	Traffic *RuleTraffic `json:"traffic,omitempty"`
	// JudgedCells are the cells (checks.Cell: route, form, run outcome,
	// request headers) the run judged the rule on; UnjudgedCells the
	// combinations the catalog states it for (Rule.Cells) that none of them
	// meets.
	JudgedCells   []string `json:"judgedCells,omitempty"`
	UnjudgedCells []string `json:"unjudgedCells,omitempty"`
}

// AreaResult sums the verdicts of one spec area.
type AreaResult struct {
	Area    string  `json:"area"`
	Verdict Verdict `json:"verdict"`
	Counts  Counts  `json:"counts"`
	// Label is the verdict with what it leaves out: "pass, 4 untested".
	Label string `json:"label"`
}

// Finding is one piece of evidence that the target broke a rule: the
// failure as the check that found it made it (its rule, what was checked,
// expected, actual, the spec words), where it was seen (a scenario of an
// active run, or a recorded exchange in a passive judgement) and what it
// kept from being checked. Active runs and passive judgements both produce
// findings, and every writer reads them. A scenario that broke the harness
// is a finding too, of no rule.
type Finding struct {
	// Rule is the catalog entry of the rule the finding breaks; the zero
	// Rule for a harness error.
	Rule features.Rule `json:"-"`
	// RuleID is Rule's ID, "" for a harness error.
	RuleID string `json:"rule"`
	// Verdict is fail, warning, expected failure or harness error.
	Verdict Verdict `json:"verdict"`
	// Check, Expected and Actual are the check's values; Spec the spec's
	// words it rests on. A harness error has only Actual: its message.
	Check    string `json:"check"`
	Expected string `json:"expected"`
	Actual   string `json:"actual"`
	Spec     string `json:"spec,omitempty"`
	// Scenario is where an active run saw it; nil in a passive judgement.
	Scenario *testrun.ScenarioResult `json:"scenario,omitempty"`
	// Exchange is the recorded exchange a passive judgement saw it in; nil
	// in an active run.
	Exchange *ExchangeRef `json:"exchange,omitempty"`
	// Prerequisite is true when the rule is none of the scenario's own: it
	// broke in a step the scenario rests on.
	Prerequisite bool `json:"prerequisite,omitempty"`
	// Blocked are the scenario's own rules the failure kept from being
	// checked: they are untested, blocked by Rule.
	Blocked []string `json:"blocked,omitempty"`
	// Baseline is the reason the baseline gives, for an expected failure.
	Baseline string `json:"baseline"`
	// Transcript is every exchange of the scenario, or the one exchange of a
	// passive finding; Curl one command per exchange of an active run.
	Transcript []transcript.Exchange `json:"transcript"`
	Curl       []string              `json:"curl"`
}

// ExchangeRef names a recorded exchange of a passive judgement.
type ExchangeRef struct {
	ID      int    `json:"id"`
	Request string `json:"request"`
	Status  int    `json:"status"`
}

// ID names where the finding was seen: the scenario's ID, or
// "exchange-N-RULE".
func (f Finding) ID() string {
	if f.Scenario != nil && f.Exchange != nil {
		return fmt.Sprintf("%s-exchange-%d-%s", f.Scenario.ID, f.Exchange.ID, f.RuleID)
	}
	if f.Scenario != nil {
		return f.Scenario.ID
	}
	if f.Exchange != nil {
		return fmt.Sprintf("exchange-%d-%s", f.Exchange.ID, f.RuleID)
	}
	return ""
}

// Title names it for people: the scenario's title, or the exchange's
// request line.
func (f Finding) Title() string {
	if f.Scenario != nil && f.Exchange != nil {
		return fmt.Sprintf("exchange #%d of %s: %s", f.Exchange.ID, f.Scenario.Title(), f.Exchange.Request)
	}
	if f.Scenario != nil {
		return f.Scenario.Title()
	}
	if f.Exchange != nil {
		return fmt.Sprintf("exchange #%d: %s", f.Exchange.ID, f.Exchange.Request)
	}
	return ""
}

// Rules are the rules the finding's scenario checks (its own), or the
// finding's rule for an exchange.
func (f Finding) Rules() []string {
	if f.Scenario != nil {
		return f.Scenario.Rules
	}
	return []string{f.RuleID}
}

// Anchor is the HTML id of the finding's details.
func (f Finding) Anchor() string {
	r := strings.NewReplacer(".", "-", ":", "-", "/", "-")
	return "f-" + r.Replace(f.ID())
}

// Line is the finding in one line: "CHECK: expected X, got Y", clipped.
func (f Finding) Line() string {
	s := f.Actual
	if f.Expected != "" {
		s = (&outcome.Failure{Check: f.Check, Expected: f.Expected, Actual: f.Actual}).Error()
	}
	s = strings.Join(strings.Fields(s), " ")
	return clip(s, 240)
}

// Message is the scenario's whole message when it says more than Check,
// Expected and Actual (context a step wrapped around its failure); "" when
// it says nothing more.
func (f Finding) Message() string {
	if f.Scenario == nil {
		return ""
	}
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
	// Blocked are the rules this failure kept from being checked: untested,
	// blocked by it.
	Blocked []string `json:"blocked,omitempty"`
}

// SourceVerdict is the verdict on the rules of one source: the spec, or
// this project's own contract. A contract failure never turns the spec
// verdict red.
type SourceVerdict struct {
	Source string `json:"source"`
	// Outcome is "pass", "partial" (some observable rule was neither
	// judged nor not applicable), "fail", "harness error", "not tested"
	// (no rule of this source was judged, and some were untested), "not
	// applicable" (every selected observable rule was not applicable:
	// nothing to test), "not selected", "not run" (the target never
	// answered), or "none" (the catalog has no observable rule of this
	// source). Only "pass" and "partial" say that rules were tested and
	// none failed; "pass" never stands for a section nothing was tested in.
	Outcome string `json:"outcome"`
	// Judged of Observable: the observable rules checked against the
	// target (pass, fail, warning, expected failure). NotApplicable counts
	// those the target lawfully lacks, which were not checked: a section
	// is complete when Judged+NotApplicable is Observable.
	Judged        int    `json:"judged"`
	NotApplicable int    `json:"notApplicable"`
	Observable    int    `json:"observable"`
	Counts        Counts `json:"counts"`
	// Failed are the IDs of the rules that failed (MUST) or warned.
	Failed []string `json:"failed"`
}

// Scope says how much of the source a run judged: "judged 104 of 111
// observable spec rules, 7 not applicable".
func (s SourceVerdict) Scope() string {
	if s.Observable == 0 {
		return "no observable " + s.Source + " rules in the catalog"
	}
	scope := fmt.Sprintf("judged %d of %d observable %s rules", s.Judged, s.Observable, s.Source)
	if s.NotApplicable > 0 {
		scope += fmt.Sprintf(", %d not applicable", s.NotApplicable)
	}
	return scope
}

// Complete reports whether every observable rule of the source was judged
// or is not applicable.
func (s SourceVerdict) Complete() bool { return s.Judged+s.NotApplicable >= s.Observable }

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
	Profile     map[string]any    `json:"profile"`
	ProfileYAML string            `json:"-"`
	Selection   testrun.Selection `json:"selection"`
	// Outcome is "pass", "partial" (no MUST rule failed, but not every
	// observable spec rule was judged or not applicable: not a
	// certification; the headline names the rules left out), "fail",
	// "harness error", "not tested" (no scenario ran, or none that ran
	// tested a rule: exit 3) or "not run" (the target never answered);
	// Headline says why.
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
	Findings    []Finding      `json:"findings"`
	Gaps        []testrun.Gap  `json:"profileGaps"`
	Baseline    *BaselineCheck `json:"baseline,omitempty"`
	// Scenarios is every scenario of the run with its status; transcripts
	// are kept only in Findings.
	Scenarios []testrun.ScenarioResult `json:"scenarios"`
	// Passive is set in a passive report only.
	Passive *Passive `json:"passive,omitempty"`
	// Evidence is set for a run made with evidence (package evidence).
	Evidence *RunEvidence `json:"evidence,omitempty"`
	// stepLocations are the run's step definitions' places in the step
	// table, by step text (testrun.Result.StepLocations), for the Cucumber
	// JSON.
	stepLocations map[string]string
}

// Partial reports whether the run left an observable spec rule neither
// judged nor not applicable.
func (r *Report) Partial() bool { return !r.Spec.Complete() }

// Input is what Build judges.
type Input struct {
	Result  *testrun.Result
	Profile *profile.Profile
	// Target describes the target for people ("http://127.0.0.1:8080 (the
	// embedded reference server)", or the profile's base URL).
	Target string
	// Baseline lists expected failures; nil for none.
	Baseline *Baseline
	// NotRun says why the run never started (the target did not answer);
	// "" for a run that ran.
	NotRun string
	// RequireComplete makes a partial run fail with outcome.ExitPartial.
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
		ProfileYAML: p.RedactEnv(string(profYAML)), Selection: res.Plan.Selection, Gaps: res.Plan.Gaps,
		stepLocations: res.StepLocations,
	}
	if err := yaml.Unmarshal([]byte(rep.ProfileYAML), &rep.Profile); err != nil {
		return nil, fmt.Errorf("render profile: %w", err)
	}
	if rep.Gaps == nil {
		rep.Gaps = []testrun.Gap{}
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
	byRule := map[string]*ruleEvidence{}
	ev := func(id string) *ruleEvidence {
		if byRule[id] == nil {
			byRule[id] = &ruleEvidence{}
		}
		return byRule[id]
	}
	scenarios := explainObserved(reconcile(res.Scenarios))
	for _, s := range scenarios {
		cause := causeOf(s)
		for _, id := range s.Rules {
			switch {
			case cause != "" && id != cause && contains(s.Checked, id):
				// Checked in full before the failure: a pass of id.
				ev(id).own = append(ev(id).own, passedAs(s))
			case cause != "" && id != cause:
				ev(id).blocked = append(ev(id).blocked, blockedBy{s, cause})
			default:
				ev(id).own = append(ev(id).own, s)
			}
		}
		if cause != "" && !contains(s.Rules, cause) {
			ev(cause).elsewhere = append(ev(cause).elsewhere, s)
		}
		seen := map[string]bool{}
		for _, o := range s.Observed {
			if !seen[o.Rule] {
				seen[o.Rule] = true
				ev(o.Rule).observed = append(ev(o.Rule).observed, s)
			}
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
		e := byRule[r.ID]
		if e == nil {
			e = &ruleEvidence{}
		}
		rr := judge(r, res.Plan, inCatalog[r.ID], e, bl)
		rr.JudgedCells, rr.UnjudgedCells = cellsOf(r, rr.Verdict, res.Cells[r.ID])
		rep.Rules = append(rep.Rules, rr)
		rep.Counts[rr.Verdict]++
	}
	rep.Areas = areasOf(rep.Rules)
	rep.Spec = sourceVerdict(features.SourceSpec, rep.Rules)
	rep.Contract = sourceVerdict(features.SourceContract, rep.Rules)
	if in.NotRun != "" {
		for _, sv := range []*SourceVerdict{&rep.Spec, &rep.Contract} {
			if sv.Observable > 0 {
				sv.Outcome = "not run"
			}
		}
	}
	rep.Findings = findings(scenarios, bl, idx)
	rep.FailedRules = failedRules(rep.Rules, rep.Findings)
	rep.Baseline = bl.check(rep.Rules, scenarios)
	rep.Outcome, rep.Headline, rep.ExitCode = decide(rep, res, in.NotRun)
	if in.RequireComplete && rep.Outcome == "partial" {
		rep.ExitCode, rep.Headline = outcome.ExitPartial, rep.Headline+"; --require-complete: a partial run fails"
	}
	return rep, nil
}

// reconcile blames each failure on the rule that best explains it, given
// what the whole run showed (outcome.Failure.ExplainedBy): a 404 where a
// 403 was due, in a run whose scenarios of ROUTE-01 failed too, is ROUTE-01's
// failure, and the scenario's own rule is blocked by it.
//
//  1. A tentative failure (blamed on its rule only because the scenario is
//     about it) goes to the first rule of its ExplainedBy that failed in
//     its own scenarios, when a scenario of its own rule passed: the run
//     shows the rule holds.
//  2. Of the rules that failed in a scenario of their own, the fewest that
//     explain every failure are chosen, greedily: the one that explains
//     most of the failures left first (ties: the one most failures name as
//     their own rule, then by ID).
//  3. A failure whose rule was not chosen goes to the first chosen rule its
//     ExplainedBy names; one that names none keeps its rule.
func reconcile(in []testrun.ScenarioResult) []testrun.ScenarioResult {
	out := make([]testrun.ScenarioResult, len(in))
	copy(out, in)
	passed := map[string]bool{}
	for _, s := range in {
		if s.Status == testrun.Passed {
			for _, id := range s.Rules {
				passed[id] = true
			}
		}
		for _, id := range s.Checked {
			passed[id] = true
		}
	}
	// failedOwn: the rules that failed in a scenario of their own, as its
	// failure's rule or as what explains it.
	failedOwn := func() map[string]bool {
		m := map[string]bool{}
		for _, s := range out {
			if s.Status != testrun.Failed || s.Failure == nil {
				continue
			}
			m[causeOf(s)] = true
			for _, e := range s.Failure.ExplainedBy {
				if contains(s.Rules, e) {
					m[e] = true
				}
			}
		}
		return m
	}
	blameOn := func(i int, rule, why string) {
		s := out[i]
		f := *s.Failure
		f.Rule, f.ExplainedBy, f.Tentative = rule, nil, false
		f.Check = "(" + why + ") " + f.Check
		out[i].Failure = &f
		out[i].Status = testrun.Failed
		if !contains(s.Rules, rule) {
			out[i].Status = testrun.Blocked
		}
	}
	own := failedOwn()
	for i, s := range out {
		if causeOf(s) == "" || !s.Failure.Tentative || !passed[s.Failure.Rule] {
			continue
		}
		for _, e := range s.Failure.ExplainedBy {
			if own[e] {
				blameOn(i, e, s.Failure.Rule+" holds in its own passing scenarios; "+e+" failed in its own and explains this")
				break
			}
		}
	}
	// Steps 2 and 3: the fewest rules that explain every failure, each
	// chosen among those that failed in a scenario of their own, the one
	// explaining most of what is left first.
	own = failedOwn()
	uncovered := map[int]bool{}
	for i, s := range out {
		if causeOf(s) != "" {
			uncovered[i] = true
		}
	}
	candidates := func(i int) []string {
		f := out[i].Failure
		return append([]string{causeOf(out[i])}, f.ExplainedBy...)
	}
	var picked []string
	pick := func(r string) {
		picked = append(picked, r)
		for i := range uncovered {
			if slices.Contains(candidates(i), r) {
				delete(uncovered, i)
			}
		}
	}
	// A failure that only one failing rule can explain forces that rule
	// in: it failed whatever else did. Only then does the count decide, so
	// a rule that merely explains many failures of forced rules is not
	// picked over them.
	var forced []string
	for i := range uncovered {
		var only []string
		for _, r := range candidates(i) {
			if own[r] && !slices.Contains(only, r) {
				only = append(only, r)
			}
		}
		if len(only) == 1 && !slices.Contains(forced, only[0]) {
			forced = append(forced, only[0])
		}
	}
	slices.Sort(forced)
	for _, r := range forced {
		pick(r)
	}
	for len(uncovered) > 0 {
		best, bestN, bestAsRule := "", 0, 0
		for r := range own {
			n, asRule := 0, 0
			for i := range uncovered {
				if slices.Contains(candidates(i), r) {
					n++
					if causeOf(out[i]) == r {
						asRule++
					}
				}
			}
			if n > bestN || n == bestN && n > 0 && (asRule > bestAsRule || asRule == bestAsRule && r < best) {
				best, bestN, bestAsRule = r, n, asRule
			}
		}
		if bestN == 0 {
			break
		}
		pick(best)
	}
	// explainsBack reports whether every failure of rule p in its own
	// scenarios names r as its explanation: two rules that only explain
	// each other are both kept.
	explainsBack := func(p, r string) bool {
		n := 0
		for _, s := range out {
			if s.Status == testrun.Failed && causeOf(s) == p && !s.Failure.Tentative {
				if !slices.Contains(s.Failure.ExplainedBy, r) {
					return false // p failed on its own somewhere r does not explain
				}
				n++
			}
		}
		return n > 0
	}
	for i, s := range out {
		cause := causeOf(s)
		if cause == "" || slices.Contains(picked, cause) {
			continue
		}
		for _, e := range s.Failure.ExplainedBy {
			if slices.Contains(picked, e) && e != cause && !(own[cause] && explainsBack(e, cause)) {
				blameOn(i, e, e+" failed in its own scenarios, which explains this")
				break
			}
		}
	}
	return out
}

// cellsOf names the cells a rule was judged on and, for a rule the run
// judged, the combinations of its catalog cells none of them meets.
func cellsOf(r features.Rule, v Verdict, cells []checks.Cell) (names, unmet []string) {
	for _, c := range cells {
		names = append(names, c.String())
	}
	if !judged(v) || len(r.Cells) == 0 {
		return names, nil
	}
	needs, err := checks.Unmet(r.Cells, cells)
	if err != nil {
		return names, []string{err.Error()}
	}
	for _, n := range needs {
		unmet = append(unmet, n.String())
	}
	return names, unmet
}

// explainObserved drops the observations (testrun.Observation) that a rule
// which failed in its own scenarios explains as well (their ExplainedBy):
// the judgement of every exchange blames one rule for a fault, as
// reconcile does for the scenarios. A rule whose own scenarios that rule's
// failure blocked explains them too: the fault behind both is one.
func explainObserved(in []testrun.ScenarioResult) []testrun.ScenarioResult {
	failedOwn := map[string]bool{}
	for _, s := range in {
		if s.Status == testrun.Failed && s.Failure != nil {
			failedOwn[causeOf(s)] = true
		}
	}
	for _, s := range in {
		if s.Status == testrun.Blocked && failedOwn[causeOf(s)] {
			for _, r := range s.Rules {
				failedOwn[r] = true
			}
		}
	}
	for i, s := range in {
		if len(s.Observed) == 0 {
			continue
		}
		var kept []testrun.Observation
		for _, o := range s.Observed {
			switch {
			case o.Rule == causeOf(s):
				// The scenario's own failure shows it already.
			case o.Failure != nil && slices.ContainsFunc(o.Failure.ExplainedBy, func(r string) bool { return failedOwn[r] }):
			default:
				kept = append(kept, o)
			}
		}
		in[i].Observed = kept
	}
	return in
}

// passedAs is s as the evidence of a rule it checked in full before its
// failure (ScenarioResult.Checked): a passed scenario of that rule.
func passedAs(s testrun.ScenarioResult) testrun.ScenarioResult {
	s.Status, s.Error, s.Failure = testrun.Passed, "", nil
	return s
}

// causeOf is the rule a failed or blocked scenario's failure breaks; "" for
// a scenario that did not fail (or broke the harness).
func causeOf(s testrun.ScenarioResult) string {
	if s.Status != testrun.Failed && s.Status != testrun.Blocked {
		return ""
	}
	if s.Failure != nil && s.Failure.Rule != "" {
		return s.Failure.Rule
	}
	if len(s.Rules) > 0 {
		return s.Rules[0] // a failure no check named a rule for: the scenario's own
	}
	return ""
}

// ruleEvidence is what a run showed of one rule: its own scenarios (passed,
// failed on it, untested...), those blocked by another rule's failure, and
// the scenarios of other rules that failed on it in a step they rest on.
type ruleEvidence struct {
	own       []testrun.ScenarioResult
	blocked   []blockedBy
	elsewhere []testrun.ScenarioResult
	// observed are the scenarios in whose exchanges the run's judgement of
	// every exchange found the rule broken (testrun.Observation).
	observed []testrun.ScenarioResult
}

type blockedBy struct {
	s     testrun.ScenarioResult
	cause string
}

// judge decides one rule's verdict from what the run showed of it. A
// failure is a failure wherever it was seen; a rule whose scenarios a
// prerequisite's failure stopped is untested, blocked by that rule.
func judge(r features.Rule, plan *testrun.Plan, inCatalog int, e *ruleEvidence, bl *Baseline) RuleResult {
	rr := RuleResult{Rule: r, Scenarios: []string{}}
	for _, s := range e.own {
		rr.Scenarios = append(rr.Scenarios, s.ID)
	}
	for _, b := range e.blocked {
		rr.Scenarios = append(rr.Scenarios, b.s.ID)
		rr.BlockedBy = appendUnique(rr.BlockedBy, b.cause)
	}
	by := map[testrun.Status][]testrun.ScenarioResult{}
	for _, s := range e.own {
		by[s.Status] = append(by[s.Status], s)
	}
	failed := append(append(append([]testrun.ScenarioResult(nil), by[testrun.Failed]...), e.elsewhere...), e.observed...)
	switch {
	case !r.Observable:
		rr.Verdict, rr.Reason = NotObservable, r.Why
		return rr
	case len(failed) > 0:
		// Seen failing: whatever the selection or the catalog says of
		// its scenarios, the target broke it.
	case !plan.InScope(r.ID):
		rr.Verdict, rr.Reason = NotSelected, "outside the selection ("+plan.Selection.String()+")"
		return rr
	case inCatalog == 0:
		rr.Verdict, rr.Reason = Untested, "no scenario checks this rule yet"
		if r.Pending != "" {
			rr.Reason += " (pending: " + r.Pending + ")"
		}
		return rr
	case len(e.own)+len(e.blocked) == 0:
		rr.Verdict, rr.Reason = NotSelected, "its scenarios were not selected ("+plan.Selection.String()+")"
		return rr
	}
	ran := len(e.own) + len(e.blocked)
	switch {
	case len(failed) > 0:
		var reasons []string
		expected := true
		for _, s := range failed {
			reason, ok := bl.expects(r.ID, s)
			expected = expected && ok
			reasons = appendUnique(reasons, reason)
		}
		rr.Verdict = failedVerdict(r.Level, expected)
		rr.Reason = failedReason(by, e)
		if expected {
			rr.Reason = "baseline: " + strings.Join(reasons, "; ")
		}
	case len(by[testrun.HarnessError]) > 0:
		rr.Verdict, rr.Reason = HarnessError, reasonsOf(by[testrun.HarnessError])
	case len(e.blocked) > 0 || len(by[testrun.Untested]) > 0:
		var parts []string
		if len(e.blocked) > 0 {
			// A scenario about both rules that failed on the other one
			// first did not reach this one's check; any other rested on it.
			where := "in a step the rule's scenarios rest on"
			if !slices.ContainsFunc(e.blocked, func(b blockedBy) bool { return !contains(b.s.Rules, b.cause) }) {
				where = "first, in a scenario about both, before this rule's check"
			}
			parts = append(parts, fmt.Sprintf("blocked by %s: it failed %s", strings.Join(rr.BlockedBy, ", "), where))
		}
		if len(by[testrun.Untested]) > 0 {
			parts = append(parts, reasonsOf(by[testrun.Untested]))
		}
		rr.Verdict, rr.Reason = Untested, strings.Join(parts, "; ")
		if n := len(by[testrun.Passed]); n > 0 {
			rr.Reason = fmt.Sprintf("%d of %d scenarios passed; the rest: %s", n, ran, rr.Reason)
		}
	case len(by[testrun.Passed]) == 0:
		rr.Verdict, rr.Reason = NotApplicable, reasonsOf(by[testrun.NotApplicable])
	default:
		rr.Verdict = Pass
		if n := len(by[testrun.NotApplicable]); n > 0 {
			rr.Reason = fmt.Sprintf("%d scenarios not applicable", n)
		}
	}
	return rr
}

// failedReason says where a failed rule was seen failing: in its own
// scenarios, in steps that other rules' scenarios rest on, or both. When
// only the others failed on it while its own scenarios passed, it says what
// their requests carried that its own did not.
func failedReason(own map[testrun.Status][]testrun.ScenarioResult, e *ruleEvidence) string {
	nOwn, nElse, nSeen := len(own[testrun.Failed]), len(e.elsewhere), len(e.observed)
	var parts []string
	if nOwn > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d scenarios failed", nOwn, len(e.own)+len(e.blocked)))
	}
	if nElse > 0 {
		parts = append(parts, fmt.Sprintf("it failed in a step that %s of other rules rest on", plural(nElse, "scenario", "scenarios")))
	}
	if nSeen > 0 {
		parts = append(parts, fmt.Sprintf("the judgement of every exchange found it broken in the traffic of %s", plural(nSeen, "scenario", "scenarios")))
	}
	if nOwn == 0 && nElse > 0 && len(own[testrun.Passed]) > 0 {
		parts = append(parts, fmt.Sprintf("its own %s passed", plural(len(own[testrun.Passed]), "scenario", "scenarios")))
		if d := differs(own[testrun.Passed], e.elsewhere); d != "" {
			parts = append(parts, "the failing requests carried what its own did not: "+d)
		}
	}
	return strings.Join(parts, "; ")
}

// differs says what the last request of the failing scenarios carried that
// no request of the passing ones did: a header with its value, a query
// parameter, the method and route shape.
func differs(passed, failing []testrun.ScenarioResult) string {
	seen := map[string]bool{}
	for _, s := range passed {
		for _, ex := range s.Transcript {
			for _, f := range requestFeatures(ex) {
				seen[f] = true
			}
		}
	}
	var out []string
	for _, s := range failing {
		if n := len(s.Transcript); n > 0 {
			for _, f := range requestFeatures(s.Transcript[n-1]) {
				if !seen[f] {
					out = appendUnique(out, f)
				}
			}
		}
	}
	sort.Strings(out)
	return clip(strings.Join(out, "; "), 300)
}

// requestFeatures lists what a request carried, as differs compares it:
// its headers with their values (keys are their variables already), its
// query parameters, and its method with the route's shape.
func requestFeatures(ex transcript.Exchange) []string {
	var out []string
	for name, vs := range ex.Header {
		switch strings.ToLower(name) {
		case "content-type", "user-agent", "accept-encoding", "content-length":
			continue
		}
		for _, v := range vs {
			out = append(out, name+": "+v)
		}
	}
	if u, err := url.Parse(ex.URL); err == nil {
		for k, vs := range u.Query() {
			for _, v := range vs {
				out = append(out, "?"+k+"="+v)
			}
		}
		segs := apiPath(u.Path)
		out = append(out, ex.Method+" /"+strings.Join(segs, "/"))
	}
	return out
}

// apiPath is a path's segments from "api" on, with its IDs written {}: the
// route's shape.
func apiPath(p string) []string {
	segs := strings.Split(strings.Trim(p, "/"), "/")
	for i := range segs {
		if segs[i] == "api" {
			segs = segs[i:]
			break
		}
	}
	out := append([]string(nil), segs...)
	for i, sg := range out {
		switch sg {
		case "api", "invoke", "thread", "threads", "events", "abort", "projects", "bundles", "installations", "tasks", "assistants", "bundle":
		default:
			out[i] = "{}"
		}
	}
	return out
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

func reasonsOf(ss []testrun.ScenarioResult) string {
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
		switch {
		case judged(r.Verdict):
			sv.Judged++
		case r.Verdict == NotApplicable:
			sv.NotApplicable++
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
	case sv.Judged == 0 && sv.NotApplicable == selected:
		sv.Outcome = "not applicable"
	case sv.Judged == 0:
		sv.Outcome = "not tested"
	case !sv.Complete():
		sv.Outcome = "partial"
	default:
		sv.Outcome = "pass"
	}
	return sv
}

// findings turns the failed, blocked and broken scenarios into findings:
// each with the rule its failure breaks, its verdict, the scenario's own
// rules it blocked, the transcript and curl commands.
func findings(scenarios []testrun.ScenarioResult, bl *Baseline, idx map[string]features.Rule) []Finding {
	out := []Finding{}
	for _, s := range scenarios {
		if s.Status != testrun.Failed && s.Status != testrun.Blocked && s.Status != testrun.HarnessError {
			continue
		}
		s := s
		f := Finding{Scenario: &s, Verdict: HarnessError, Transcript: s.Transcript, Curl: []string{}, Actual: s.Error}
		if cause := causeOf(s); cause != "" {
			f.Rule, f.RuleID = idx[cause], cause
			if sf := s.Failure; sf != nil {
				f.Check, f.Expected, f.Actual, f.Spec = sf.Check, sf.Expected, sf.Actual, sf.Spec
			}
			f.Prerequisite = !contains(s.Rules, cause)
			reason, expected := bl.expects(cause, s)
			f.Verdict = failedVerdict(idx[cause].Level, expected)
			if expected {
				f.Baseline = reason
			}
			for _, id := range s.Rules {
				if id != cause && !contains(s.Checked, id) {
					f.Blocked = append(f.Blocked, id)
				}
			}
		}
		for _, ex := range s.Transcript {
			f.Curl = append(f.Curl, Curl(ex))
		}
		lean := s
		lean.Transcript = nil
		f.Scenario = &lean
		out = append(out, f)
	}
	for _, s := range scenarios {
		out = append(out, observedFindings(s, bl, idx)...)
	}
	sort.SliceStable(out, func(i, j int) bool { return severity(out[i].Verdict) < severity(out[j].Verdict) })
	return out
}

// observedFindings are the findings of the rules the run's judgement of
// every exchange found broken in s's exchanges: each with the exchange,
// its transcript and curl command, and the scenario that made it.
func observedFindings(s testrun.ScenarioResult, bl *Baseline, idx map[string]features.Rule) []Finding {
	var out []Finding
	lean := s
	lean.Transcript = nil
	for _, o := range s.Observed {
		f := Finding{Rule: idx[o.Rule], RuleID: o.Rule, Scenario: &lean, Curl: []string{}, Transcript: []transcript.Exchange{},
			Exchange: &ExchangeRef{ID: o.Exchange, Request: o.Request, Status: o.Status}}
		if o.Failure != nil {
			f.Check, f.Expected, f.Actual, f.Spec = o.Failure.Check, o.Failure.Expected, o.Failure.Actual, o.Failure.Spec
		}
		reason, expected := bl.expects(o.Rule, s)
		f.Verdict = failedVerdict(idx[o.Rule].Level, expected)
		if expected {
			f.Baseline = reason
		}
		for _, ex := range s.Transcript {
			if ex.ID == o.Exchange {
				f.Transcript = append(f.Transcript, ex)
				f.Curl = append(f.Curl, Curl(ex))
			}
		}
		out = append(out, f)
	}
	return out
}

// failedRules lists the rules that failed, warned or broke the harness,
// most severe first, each with its first finding and the rules its failure
// blocked.
func failedRules(rules []RuleResult, fs []Finding) []FailedRule {
	out := []FailedRule{}
	for _, r := range rules {
		if r.Verdict != Fail && r.Verdict != Warning && r.Verdict != HarnessError && r.Verdict != ExpectedFailure {
			continue
		}
		row := FailedRule{ID: r.ID, Level: r.Level, Source: r.Source, Verdict: r.Verdict, Line: r.Reason}
		for _, f := range fs {
			if f.RuleID == r.ID || (r.Verdict == HarnessError && f.Verdict == HarnessError && contains(f.Rules(), r.ID)) {
				row.Line, row.Scenario, row.Anchor = f.Line(), f.Title(), f.Anchor()
				break
			}
		}
		for _, o := range rules {
			if contains(o.BlockedBy, r.ID) {
				row.Blocked = append(row.Blocked, o.ID)
			}
		}
		out = append(out, row)
	}
	sort.SliceStable(out, func(i, j int) bool { return severity(out[i].Verdict) < severity(out[j].Verdict) })
	return out
}

// decide is the one exit-code policy: 3 when the harness broke or no rule
// was tested (no scenario ran, or every one that ran was untested), 1 when a
// MUST rule failed (spec or contract) or a baseline entry is stale, 2 when
// the target never answered, else 0, a partial run included (it is reported
// amber, names the rules it left out, and is never called a certification).
func decide(rep *Report, res *testrun.Result, notRun string) (string, string, int) {
	harness := 0
	for _, s := range res.Scenarios {
		if s.Status == testrun.HarnessError {
			harness++
		}
	}
	var stale int
	if rep.Baseline != nil {
		stale = len(rep.Baseline.Stale)
	}
	switch {
	case notRun != "":
		return "not run", notRun, outcome.ExitUsage
	case res.Ran() == 0:
		return "not tested", "no scenario ran, so no rule was tested: check the selection (" + res.Plan.Selection.String() + ") and the profile's capabilities", outcome.ExitHarness
	case harness > 0 || res.GodogStatus == 2:
		return "harness error", fmt.Sprintf("the harness broke in %d scenarios: their rules could not be judged", harness), outcome.ExitHarness
	case rep.Counts[Fail] > 0 || stale > 0:
		var parts []string
		if n := rep.Counts[Fail]; n > 0 {
			parts = append(parts, plural(n, "MUST rule", "MUST rules")+" failed: "+strings.Join(ruleIDs(rep.Rules, Fail), " "))
			if b := blockedCount(rep.Rules); b > 0 {
				parts = append(parts, plural(b, "rule", "rules")+" blocked by "+map[bool]string{true: "it", false: "them"}[n == 1]+" (untested)")
			}
		}
		if stale > 0 {
			parts = append(parts, plural(stale, "baseline entry is", "baseline entries are")+" stale (now passing)")
		}
		return "fail", strings.Join(parts, "; "), outcome.ExitFail
	case rep.Spec.Judged+rep.Contract.Judged == 0:
		return "not tested", fmt.Sprintf("no rule was tested: every scenario that ran was untested (%s untested; the console's \"Not judged\" list says why)",
			plural(rep.Counts[Untested], "rule", "rules")), outcome.ExitHarness
	}
	var parts []string
	result := "pass"
	if rep.Partial() || rep.Spec.Judged == 0 {
		result = "partial"
		parts = append(parts, rep.Spec.Scope()+": not a certification")
		if missing := unjudged(rep.Rules, features.SourceSpec); len(missing) > 0 {
			parts = append(parts, namedMissing(missing))
		}
		parts = append(parts, "no MUST rule that ran failed")
	} else {
		parts = append(parts, "every applicable MUST rule passed ("+rep.Spec.Scope()+")")
	}
	if n := rep.Counts[Warning]; n > 0 {
		parts = append(parts, plural(n, "SHOULD rule", "SHOULD rules")+" failed (warnings): "+strings.Join(ruleIDs(rep.Rules, Warning), " "))
	}
	if n := rep.Counts[ExpectedFailure]; n > 0 {
		parts = append(parts, plural(n, "expected failure", "expected failures")+" (baseline)")
	}
	if c := rep.Contract; c.Outcome != "not selected" && c.Outcome != "none" {
		if missing := unjudged(rep.Rules, features.SourceContract); len(missing) > 0 {
			parts = append(parts, "contract rules "+namedMissing(missing))
		}
	}
	return result, strings.Join(parts, "; "), outcome.ExitPass
}

// maxNamed is how many rules a headline names; past it, it counts them and
// says where they are listed.
const maxNamed = 10

// unjudged lists the observable rules of a source that were neither judged
// nor not applicable: untested, not selected, harness error.
func unjudged(rules []RuleResult, source string) []RuleResult {
	var out []RuleResult
	for _, r := range rules {
		src := r.Source
		if src == "" {
			src = features.SourceSpec
		}
		if src == source && r.Observable && !judged(r.Verdict) && r.Verdict != NotApplicable {
			out = append(out, r)
		}
	}
	return out
}

// namedMissing names the rules a partial run left out, by verdict: "not
// judged: EVT-01 EVT-04 (untested), SSE-04 (not selected)"; past maxNamed,
// their counts and where each is listed.
func namedMissing(missing []RuleResult) string {
	by := map[Verdict][]string{}
	var order []Verdict
	for _, r := range missing {
		if by[r.Verdict] == nil {
			order = append(order, r.Verdict)
		}
		by[r.Verdict] = append(by[r.Verdict], r.ID)
	}
	sort.SliceStable(order, func(i, j int) bool { return severity(order[i]) < severity(order[j]) })
	var parts []string
	for _, v := range order {
		if len(missing) <= maxNamed {
			parts = append(parts, strings.Join(by[v], " ")+" ("+string(v)+")")
		} else {
			parts = append(parts, fmt.Sprintf("%d %s", len(by[v]), v))
		}
	}
	if len(missing) <= maxNamed {
		return "not judged: " + strings.Join(parts, ", ")
	}
	return fmt.Sprintf("%d rules not judged (%s; the console's \"Not judged\" list and report.html's rule matrix name each)", len(missing), strings.Join(parts, ", "))
}

// blockedCount counts the untested rules that a failure blocked.
func blockedCount(rules []RuleResult) int {
	n := 0
	for _, r := range rules {
		if r.Verdict == Untested && len(r.BlockedBy) > 0 {
			n++
		}
	}
	return n
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
