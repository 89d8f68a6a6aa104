package features_test

import (
	"testing"

	"github.com/invokeconf/invokeconf/checks"
	"github.com/invokeconf/invokeconf/features"
)

// TestPassiveFieldMatchesTheChecks: the catalog's passive field agrees with
// package checks, whatever checks are added there: a rule with a check is
// yes or partly, one without is no, and every check names a rule of the
// catalog.
func TestPassiveFieldMatchesTheChecks(t *testing.T) {
	idx, err := features.RuleIndex()
	if err != nil {
		t.Fatal(err)
	}
	checked := map[string]bool{}
	for _, id := range checks.Rules() {
		checked[id] = true
		r, ok := idx[id]
		switch {
		case !ok:
			t.Errorf("package checks judges %s, which is not in the catalog", id)
		case r.Passive == features.PassiveNo:
			t.Errorf("rule %s has a check (checks.Rules) but the catalog says traffic cannot decide it: set passive to yes or partly", id)
		}
	}
	rules, err := features.Rules()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rules {
		if !checked[r.ID] && r.Passive != features.PassiveNo {
			t.Errorf("rule %s is passive %q but package checks has no check for it: set passive to no with a passive_why, or add the check", r.ID, r.Passive)
		}
	}
}
