package testrun

import (
	"strings"

	"github.com/invokeconf/invokeconf/features"
)

// Selection says which scenarios a run covers. Empty fields select all.
type Selection struct {
	Rules []string `json:"rules,omitempty"` // rule IDs, e.g. SSE-01
	Areas []string `json:"areas,omitempty"` // catalog areas, e.g. sse
	Tags  string   `json:"tags,omitempty"`  // godog tag expression
	Quick bool     `json:"quick,omitempty"` // skip @slow
	// SpecOnly leaves out the rules of this project's own contract
	// (features.SourceContract): a run that certifies the spec alone.
	SpecOnly bool `json:"specOnly,omitempty"`
}

// Scoped reports whether the selection narrows by rule or area.
func (s Selection) Scoped() bool { return len(s.Rules) > 0 || len(s.Areas) > 0 || s.SpecOnly }

// String renders the selection as its flags.
func (s Selection) String() string {
	var parts []string
	if len(s.Rules) > 0 {
		parts = append(parts, "--rules "+strings.Join(s.Rules, ","))
	}
	if len(s.Areas) > 0 {
		parts = append(parts, "--areas "+strings.Join(s.Areas, ","))
	}
	if s.Tags != "" {
		parts = append(parts, "--tags '"+s.Tags+"'")
	}
	if s.Quick {
		parts = append(parts, "--quick")
	}
	if s.SpecOnly {
		parts = append(parts, "--spec-only")
	}
	if len(parts) == 0 {
		return "every scenario"
	}
	return strings.Join(parts, " ")
}

// Planned is one scenario and what the plan decided for it: Status is Runs
// when it runs, else NotApplicable, Untested or NotSelected, with a Reason.
type Planned struct {
	features.Pickle
	Status Status
	Reason string
	// Example holds an outline row's values ("text/plain, 200"), which tell
	// the rows of one outline apart; "" for a plain scenario.
	Example string
	// Capability names the capability whose tag decided Status, if any.
	Capability string
	// Contract is set when Status is NotApplicable because the scenario
	// needs the bundle contract in a --spec-only run (runner.ContractTag).
	Contract bool
}

// Plan is what a run will do, decided before it starts.
type Plan struct {
	Selection Selection
	Scenarios []Planned
	// Expr is the godog tag expression that runs exactly the scenarios with
	// an empty Status.
	Expr string
	// Scope holds the rule IDs the selection names (nil: every rule).
	Scope map[string]bool
	// Gaps are the profile's empty fields and missing capabilities that
	// leave planned scenarios untested (runner.Gaps, when planned).
	Gaps []Gap
}

// InScope reports whether the selection covers a rule (every rule when it
// names neither rules nor areas).
func (p *Plan) InScope(ruleID string) bool { return p.Scope == nil || p.Scope[ruleID] }

// ToRun counts the scenarios the run will execute.
func (p *Plan) ToRun() int {
	n := 0
	for _, s := range p.Scenarios {
		if s.Status == Runs {
			n++
		}
	}
	return n
}

// Gap is a profile field left empty that scenarios need.
type Gap struct {
	Path string `json:"path"`
	Env  string `json:"env"`
	// Scenarios are the IDs of the scenarios it leaves untested.
	Scenarios []string `json:"scenarios"`
	// Rules are the selected rules it leaves untested: every rule with a
	// scenario among Scenarios. A rule with an untested scenario is
	// untested, whatever its other scenarios show, unless one of them
	// fails (package reports judges so; see runner.Predict).
	Rules []string `json:"rules"`
}
