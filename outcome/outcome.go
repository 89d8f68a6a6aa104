// Package outcome holds the typed results of a check, shared by the steps
// that make them and the report writers that show them: a Failure carries
// what was checked, what was expected, what was seen and the spec's words,
// so no writer ever parses prose. Writers read them with errors.As.
package outcome

import (
	"errors"
	"fmt"
	"strings"
)

// Failure says that a target broke a check.
type Failure struct {
	// Check names what was checked ("the last SSE frame").
	Check string
	// Expected is the value or shape the spec demands, as a reader would
	// write it ("event: close with data {}").
	Expected string
	// Actual is what the target sent (bounded and redacted by the caller).
	Actual string
	// Spec holds the spec's words the check rests on; "" when the scenario's
	// rule says it all.
	Spec string
}

// Fail returns a Failure.
func Fail(check, expected, actual string) *Failure {
	return &Failure{Check: check, Expected: expected, Actual: actual}
}

// Failf returns a Failure whose actual value is formatted.
func Failf(check, expected, format string, args ...any) *Failure {
	return &Failure{Check: check, Expected: expected, Actual: fmt.Sprintf(format, args...)}
}

// WithSpec returns f with the spec's words set.
func (f *Failure) WithSpec(words string) *Failure { f.Spec = words; return f }

// Error reads "CHECK: expected EXPECTED, got ACTUAL".
func (f *Failure) Error() string {
	var b strings.Builder
	b.WriteString(f.Check)
	b.WriteString(": expected ")
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
