package features

import (
	"fmt"
	"sort"
	"strings"
	"testing"
)

// TestPicklesMatchScenarios: the pickles the runner plans with are the
// scenarios of the catalog, one per example row, with the same IDs, and
// each can be told apart by its Key.
func TestPicklesMatchScenarios(t *testing.T) {
	pickles, err := Pickles()
	if err != nil {
		t.Fatal(err)
	}
	scenarios, err := Scenarios()
	if err != nil {
		t.Fatal(err)
	}
	var a, b []string
	keys := map[string]string{}
	for _, p := range pickles {
		a = append(a, p.ID)
		if other, dup := keys[p.Key()]; dup {
			t.Errorf("%s and %s have the same key: godog's results could not be told apart", p.ID, other)
		}
		keys[p.Key()] = p.ID
		if len(p.Steps) == 0 || len(p.Rules) == 0 {
			t.Errorf("%s: %d steps, rules %v", p.ID, len(p.Steps), p.Rules)
		}
	}
	for _, s := range scenarios {
		b = append(b, fmt.Sprintf("%s:%d", s.File, s.Line))
	}
	sort.Strings(a)
	sort.Strings(b)
	if len(a) != len(b) {
		t.Fatalf("%d pickles, %d scenarios", len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("pickle %s where the catalog has scenario %s", a[i], b[i])
		}
	}
}

// TestPickleTexts: each step's text alone, and its argument, make up its
// Steps entry; some texts hold line breaks and some steps an argument.
func TestPickleTexts(t *testing.T) {
	pickles, err := Pickles()
	if err != nil {
		t.Fatal(err)
	}
	multiline, args := 0, 0
	for _, p := range pickles {
		if len(p.Texts) != len(p.Steps) {
			t.Fatalf("%s: %d texts for %d steps", p.ID, len(p.Texts), len(p.Steps))
		}
		for i, text := range p.Texts {
			want := text
			if a := p.Arg(i); a != "" {
				want += "\n" + a
				args++
			}
			if p.Steps[i] != want {
				t.Errorf("%s step %d: text %q and argument %q do not make %q", p.ID, i, text, p.Arg(i), p.Steps[i])
			}
			if strings.Contains(text, "\n") {
				multiline++
			}
		}
	}
	if multiline == 0 || args == 0 {
		t.Errorf("%d texts with line breaks, %d steps with arguments: the cases this test is for are gone", multiline, args)
	}
}
