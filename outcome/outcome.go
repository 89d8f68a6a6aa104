// Package outcome holds the typed result of a check, shared by the checks
// that make it and the report writers that show it: a Failure carries the
// rule it breaks, what was checked, what was expected, what was seen and the
// spec's words, so no writer ever parses prose or guesses a rule. Writers
// read it with errors.As. It also holds the CLI's exit codes (exit.go),
// which the active and the passive verdicts share.
package outcome

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Failure says that a target broke a rule. Its JSON form keeps the Go
// field names (summary.json's schema).
type Failure struct {
	// Rule is the catalog ID of the rule the failure breaks ("SSE-05"). It
	// is set where the check runs: by the checks table, by the step that
	// asserts the rule, or by a prerequisite step naming the rule its
	// success rests on. "" only before that (a helper's failure that its
	// step has not claimed yet).
	Rule string
	// Check names what was checked ("the last SSE frame").
	Check string
	// Expected is the value or shape the spec demands, as a reader would
	// write it ("event: close with data {}").
	Expected string
	// Actual is what the target sent (bounded and redacted by the caller).
	Actual string
	// Spec holds the spec's words the check rests on; "" when the rule's
	// catalog entry says it all.
	Spec string
	// ExplainedBy names rules whose failure would explain this one as well
	// (a 404 where a 403 was due is what an unresolved agent ID gives
	// too): when one of them fails in its own scenarios in the same run,
	// the report blames it, and this failure's rule is blocked by it.
	ExplainedBy []string
	// Tentative says the answer does not show that Rule broke: it was
	// blamed because the scenario is about it (a key without credential
	// scopes refused, in a scenario about credential scopes). When a
	// scenario of Rule passes in the same run, the report blames the first
	// of ExplainedBy that failed in its own scenarios instead.
	Tentative bool
}

// Fail returns a Failure whose rule its step will name.
func Fail(check, expected, actual string) *Failure {
	return &Failure{Check: check, Expected: expected, Actual: actual}
}

// Failf returns a Failure whose actual value is formatted.
func Failf(check, expected, format string, args ...any) *Failure {
	return &Failure{Check: check, Expected: expected, Actual: fmt.Sprintf(format, args...)}
}

// WithSpec returns f with the spec's words set.
func (f *Failure) WithSpec(words string) *Failure { f.Spec = words; return f }

// Breaks returns f with its rule set.
func (f *Failure) Breaks(rule string) *Failure { f.Rule = rule; return f }

// Explained returns f with rules that would explain it too added to
// ExplainedBy (none twice, never its own rule).
func (f *Failure) Explained(rules ...string) *Failure {
	for _, r := range rules {
		if r == "" || r == f.Rule || slices.Contains(f.ExplainedBy, r) {
			continue
		}
		f.ExplainedBy = append(f.ExplainedBy, r)
	}
	return f
}

// Error reads "CHECK: expected EXPECTED, got ACTUAL" ("expected ..." when
// no check is named).
func (f *Failure) Error() string {
	var b strings.Builder
	if f.Check != "" {
		b.WriteString(f.Check)
		b.WriteString(": ")
	}
	b.WriteString("expected ")
	b.WriteString(f.Expected)
	b.WriteString(", got ")
	if f.Actual == "" {
		b.WriteString("nothing")
	} else {
		b.WriteString(f.Actual)
	}
	return b.String()
}

// AsFailure returns the Failure in err's chain, if any.
func AsFailure(err error) (*Failure, bool) {
	var f *Failure
	if errors.As(err, &f) {
		return f, true
	}
	return nil, false
}

// Explain adds rules to the ExplainedBy of the Failure in err's chain, if
// any, and returns err.
func Explain(err error, rules ...string) error {
	if f, ok := AsFailure(err); ok {
		f.Explained(rules...)
	}
	return err
}

// Claim sets the rule of the Failure in err's chain when it has none yet,
// and returns err. A step claims the failures of the helpers it calls for
// the rule it asserts; a failure a prerequisite already named keeps its
// rule.
func Claim(err error, rule string) error {
	if f, ok := AsFailure(err); ok && f.Rule == "" {
		f.Rule = rule
	}
	return err
}
