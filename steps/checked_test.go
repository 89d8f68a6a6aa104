package steps

import (
	"errors"
	"slices"
	"testing"

	"github.com/invokeconf/invokeconf/outcome"
)

// TestChecked: a failed scenario's other rules count as checked only when
// a passed step checked them and the failure came in the last step, on one
// of the scenario's own rules.
func TestChecked(t *testing.T) {
	tags := []string{"@EVT-01", "@EVT-04"}
	fail := func(rule string) error { return outcome.Fail("c", "e", "a").Breaks(rule) }
	for _, tc := range []struct {
		name       string
		checked    []string
		err        error
		failedLast bool
		want       []string
	}{
		{"the sibling passed before the last step failed", []string{"EVT-01"}, fail("EVT-04"), true, []string{"EVT-01"}},
		{"steps were left after the failure", []string{"EVT-01"}, fail("EVT-04"), false, nil},
		{"the last step failed on a prerequisite", []string{"EVT-01"}, fail("ROUTE-01"), true, nil},
		{"nothing of the sibling was checked", []string{"ROUTE-01"}, fail("EVT-04"), true, nil},
		{"the failing rule is not its own pass", []string{"EVT-04", "EVT-01"}, fail("EVT-04"), true, []string{"EVT-01"}},
		{"an error that is no failure", []string{"EVT-01"}, errors.New("x"), true, nil},
		{"no failure", []string{"EVT-01"}, nil, false, nil},
	} {
		w := &World{tags: tags, checked: tc.checked, firstErr: tc.err, failedLast: tc.failedLast}
		if got := w.Checked(); !slices.Equal(got, tc.want) {
			t.Errorf("%s: Checked() = %v, want %v", tc.name, got, tc.want)
		}
	}
}
