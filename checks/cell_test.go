package checks

import (
	"testing"

	"github.com/invokeconf/invokeconf/features"
)

// TestCatalogCells: every rule's cells are well formed.
func TestCatalogCells(t *testing.T) {
	rules, err := features.Rules()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rules {
		if _, err := Needs(r.Cells); err != nil {
			t.Errorf("%s: %v", r.ID, err)
		}
	}
}

func TestNeeds(t *testing.T) {
	needs, err := Needs([]string{"route=alias,project form outcome"})
	if err != nil {
		t.Fatal(err)
	}
	// 2 routes x 4 forms x 3 outcomes, less json x aborted (ruled out).
	if len(needs) != 2*4*3-2 {
		t.Fatalf("%d needs", len(needs))
	}
	judged := []Cell{{Route: RouteAlias, Form: FormSSE, Outcome: OutcomeFailed, Headers: []string{HeaderScopedTools}}}
	unmet, err := Unmet([]string{"route=alias form=sse outcome=failed", "route=alias headers=scoped-tools"}, judged)
	if err != nil || len(unmet) != 0 {
		t.Fatalf("unmet %v, %v", unmet, err)
	}
	unmet, _ = Unmet([]string{"route=alias,project"}, judged)
	if len(unmet) != 1 || unmet[0].String() != "route=project" {
		t.Fatalf("unmet %v", unmet)
	}
	if _, err := Needs([]string{"form=xml"}); err == nil {
		t.Error("an unknown value passed")
	}
}
