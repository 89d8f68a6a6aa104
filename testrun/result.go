package testrun

import (
	"time"

	"github.com/invokeconf/invokeconf/checks"
	"github.com/invokeconf/invokeconf/outcome"
	"github.com/invokeconf/invokeconf/transcript"
)

// Status is how a scenario ended, or what the plan decided for it. Rules
// get a verdict of their own from their scenarios' statuses (package
// reports).
type Status string

// Statuses of a scenario.
const (
	Runs          Status = ""               // planned to run (only in a Plan)
	Passed        Status = "passed"         // every step passed
	Failed        Status = "failed"         // the target broke one of the scenario's own rules
	Blocked       Status = "blocked"        // the target broke a rule a step rests on (Failure.Rule), before the scenario's own check
	Untested      Status = "untested"       // a prerequisite is missing; the reason names it
	NotApplicable Status = "not applicable" // the target lacks an optional capability
	HarnessError  Status = "harness error"  // the harness broke, not the target
	NotSelected   Status = "not selected"   // left out by the selection (only in a Plan)
)

// ScenarioResult is how one scenario ended.
type ScenarioResult struct {
	// ID is "file:line" (the example row's line for an outline row).
	ID      string `json:"id"`
	Feature string `json:"feature"`
	Name    string `json:"name"`
	URI     string `json:"uri"`
	Line    int    `json:"line"`
	// Example holds an outline row's values, "" for a plain scenario.
	Example string   `json:"example,omitempty"`
	Tags    []string `json:"tags"`
	Rules   []string `json:"rules"`
	Status  Status   `json:"status"`
	Error   string   `json:"error"`
	// Failure is the failure a step returned (Failed and Blocked), as the
	// step made it: the rule it breaks, keys as their variables, bytes
	// bounded and printable. A Blocked scenario's Failure.Rule is none of
	// its own rules: it blocked them.
	Failure *outcome.Failure `json:"failure,omitempty"`
	// Checked are the scenario's own rules, other than Failure.Rule, that
	// it checked in full before failing (steps.World.Checked): each is a
	// pass of that rule, not blocked by the failure.
	Checked []string `json:"checked,omitempty"`
	// Observed are the rules the run's judgement of every exchange found
	// broken in this scenario's exchanges, whatever the scenario's own
	// rules (runner/observe.go).
	Observed []Observation `json:"observed,omitempty"`
	// Cell is where the scenario's last invoke sits among the spec's
	// quantifiers (checks.Cell): a passing scenario judged its own rules
	// there. Nil when it made no invoke.
	Cell     *checks.Cell  `json:"cell,omitempty"`
	Started  time.Time     `json:"started,omitzero"`
	Duration time.Duration `json:"-"`
	// Transcript is every exchange of the scenario, keys replaced by
	// references to their environment variables ($INVOKECONF_KEYS_AGENT).
	Transcript []transcript.Exchange `json:"transcript,omitempty"`
}

// Title names the scenario for people and for CI systems that keep test
// history by name: its name, and an outline row's values in brackets.
func (s ScenarioResult) Title() string {
	if s.Example == "" {
		return s.Name
	}
	return s.Name + " [" + s.Example + "]"
}

// Result is a whole run.
type Result struct {
	// Scenarios holds every scenario the plan selected: those that ran and
	// those the profile made not applicable or untested before the run.
	Scenarios []ScenarioResult
	// Cells are, per rule, the cells (checks.Cell.String) it was judged on:
	// by the judgement of every exchange, and by its own scenarios that
	// passed or checked it in full.
	Cells map[string][]string
	// Judgement is the run's judgement of every exchange, rule by rule
	// (failures as its checks made them: keys whole, not for reports).
	Judgement   *checks.Summary
	Plan        *Plan
	GodogStatus int
	Started     time.Time
	Duration    time.Duration
	// StepLocations holds, for each step text of the scenarios that ran,
	// where its definition is in the step table ("steps/sse.go:40"): the
	// Cucumber JSON names it (godog names the line where the step was
	// bound, which tells a reader nothing). Filled when the run writes
	// Cucumber JSON.
	StepLocations map[string]string
}

// Count returns how many scenarios ended with a status.
func (r *Result) Count(status Status) int {
	n := 0
	for _, s := range r.Scenarios {
		if s.Status == status {
			n++
		}
	}
	return n
}

// Ran counts the scenarios that were executed.
func (r *Result) Ran() int {
	return len(r.Scenarios) - r.Count(NotApplicable) - r.Count(NotSelected) - r.planUntested()
}

func (r *Result) planUntested() int {
	if r.Plan == nil {
		return 0
	}
	n := 0
	for _, p := range r.Plan.Scenarios {
		if p.Status == Untested {
			n++
		}
	}
	return n
}

// Observation is a rule broken in an exchange a scenario made, found by the
// run's judgement of every exchange: each is judged by every check that
// traffic can decide (checks.Judgement, as invokeconf judge judges a
// recording), whichever scenario made it, so a rule the spec states for
// every route, form or run fails wherever the suite's traffic breaks it.
type Observation struct {
	Rule string `json:"rule"`
	// Exchange numbers the exchange in the run (its transcript's ID).
	Exchange int    `json:"exchange"`
	Request  string `json:"request"`
	Status   int    `json:"status"`
	// Failure is the check's, naming Rule.
	Failure *outcome.Failure `json:"failure"`
}
