package features

import (
	"slices"
	"strings"
	"testing"
)

func TestCatalogIsWellFormed(t *testing.T) {
	rules, err := Rules()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, r := range rules {
		if !RuleTag.MatchString("@" + r.ID) {
			t.Errorf("rule ID %q is not of the form AREA-NN", r.ID)
		}
		if seen[r.ID] {
			t.Errorf("rule %s listed twice", r.ID)
		}
		seen[r.ID] = true
		if r.Level != MUST && r.Level != SHOULD && r.Level != MAY {
			t.Errorf("rule %s: level %q", r.ID, r.Level)
		}
		if r.Source != SourceSpec && r.Source != SourceContract {
			t.Errorf("rule %s: source %q, want %s or %s", r.ID, r.Source, SourceSpec, SourceContract)
		}
		if r.Area == "" || r.Section == "" || r.Rule == "" || r.Spec == "" {
			t.Errorf("rule %s: area, section, rule and spec are all required", r.ID)
		}
		if !r.Observable && r.Why == "" {
			t.Errorf("rule %s is not observable but does not say why", r.ID)
		}
		if r.Observable && r.Why != "" {
			t.Errorf("rule %s is observable but carries a why", r.ID)
		}
		switch r.Passive {
		case PassiveYes:
			if r.PassiveWhy != "" {
				t.Errorf("rule %s: passive yes carries a passive_why", r.ID)
			}
		case PassivePartly, PassiveNo:
			if r.PassiveWhy == "" {
				t.Errorf("rule %s: passive %s does not say why (passive_why)", r.ID, r.Passive)
			}
		default:
			t.Errorf("rule %s: passive %q, want yes, partly or no", r.ID, r.Passive)
		}
		if !r.Observable && r.Passive != PassiveNo {
			t.Errorf("rule %s is not observable, so traffic cannot decide it: passive %q, want no", r.ID, r.Passive)
		}
	}
	// What a rule rests on is other observable rules of the catalog, and
	// no rule rests, through others, on itself.
	idx, _ := RuleIndex()
	var restsOnItself func(id string, path []string) []string
	restsOnItself = func(id string, path []string) []string {
		for _, on := range idx[id].RestsOn {
			if on == path[0] {
				return append(path, on)
			}
			if !slices.Contains(path, on) {
				if loop := restsOnItself(on, append(path, on)); loop != nil {
					return loop
				}
			}
		}
		return nil
	}
	for _, r := range rules {
		for _, on := range r.RestsOn {
			if o, ok := idx[on]; !ok || !o.Observable || on == r.ID {
				t.Errorf("rule %s rests on %q: not another observable rule of the catalog", r.ID, on)
			}
		}
		if loop := restsOnItself(r.ID, []string{r.ID}); loop != nil {
			t.Errorf("rule %s rests on itself: %s", r.ID, strings.Join(loop, " -> "))
		}
	}
}

// TestScenariosTagKnownRules: every scenario checks at least one rule, and
// only rules of the catalog that a client can observe.
func TestScenariosTagKnownRules(t *testing.T) {
	idx, err := RuleIndex()
	if err != nil {
		t.Fatal(err)
	}
	scenarios, err := Scenarios()
	if err != nil {
		t.Fatal(err)
	}
	if len(scenarios) == 0 {
		t.Fatal("no scenarios")
	}
	for _, sc := range scenarios {
		if len(sc.Rules) == 0 {
			t.Errorf("%s:%d %q tags no rule", sc.File, sc.Line, sc.Name)
		}
		for _, tag := range sc.Tags {
			if strings.HasPrefix(tag, "@") && strings.ContainsRune(tag, '-') && !RuleTag.MatchString(tag) && strings.ToUpper(tag) == tag {
				t.Errorf("%s:%d tag %s looks like a rule ID but is not of the form @AREA-NN", sc.File, sc.Line, tag)
			}
		}
		for _, id := range sc.Rules {
			r, ok := idx[id]
			switch {
			case !ok:
				t.Errorf("%s:%d %q tags unknown rule %s", sc.File, sc.Line, sc.Name, id)
			case !r.Observable:
				t.Errorf("%s:%d %q tags %s, which the catalog says is not observable", sc.File, sc.Line, sc.Name, id)
			}
		}
	}
}

// TestObservableRulesHaveScenarios: every rule a client can observe is
// checked, unless the catalog names the issue that will add its scenarios.
func TestObservableRulesHaveScenarios(t *testing.T) {
	rules, err := Rules()
	if err != nil {
		t.Fatal(err)
	}
	scenarios, err := Scenarios()
	if err != nil {
		t.Fatal(err)
	}
	checked := map[string]int{}
	for _, sc := range scenarios {
		for _, id := range sc.Rules {
			checked[id]++
		}
	}
	for _, r := range rules {
		switch {
		case r.Observable && r.Pending == "" && checked[r.ID] == 0:
			t.Errorf("rule %s (%s) has no scenario", r.ID, r.Rule)
		case r.Pending != "" && checked[r.ID] > 0:
			t.Errorf("rule %s has scenarios but is still marked pending (%s): drop the pending field", r.ID, r.Pending)
		}
	}
}
