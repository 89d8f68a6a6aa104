package features

import (
	"reflect"
	"strings"
	"testing"
)

// TestEveryRuleQuotesTheSpec: the spec words of every spec rule stand in
// the spec text, so that the annotated spec marks where each rule rests.
func TestEveryRuleQuotesTheSpec(t *testing.T) {
	d, err := Spec()
	if err != nil {
		t.Fatal(err)
	}
	for id, part := range d.Unlocated {
		t.Errorf("%s: its spec words %q stand nowhere in features/spec.md", id, part)
	}
	quoted := map[string]bool{}
	for _, s := range d.Statements {
		for _, id := range s.Rules {
			quoted[id] = true
		}
	}
	rules, _ := Rules()
	for _, r := range rules {
		if r.Source == SourceSpec && !quoted[r.ID] {
			t.Errorf("%s quotes no statement of the spec", r.ID)
		}
	}
}

// TestUncoveredStatementsAreExplained: every normative statement of the
// spec that no rule quotes is explained in uncovered.yaml, and the file
// explains no other; the rules an explanation names exist.
func TestUncoveredStatementsAreExplained(t *testing.T) {
	d, err := Spec()
	if err != nil {
		t.Fatal(err)
	}
	reasons, err := UncoveredReasons()
	if err != nil {
		t.Fatal(err)
	}
	idx, _ := RuleIndex()
	explained := map[string]bool{}
	for _, r := range reasons {
		if explained[r.Statement] {
			t.Errorf("uncovered.yaml explains %q twice", r.Statement)
		}
		explained[r.Statement] = true
		if strings.TrimSpace(r.Why) == "" {
			t.Errorf("uncovered.yaml: %q has no why", r.Statement)
		}
		for _, id := range r.Rules {
			if _, ok := idx[id]; !ok {
				t.Errorf("uncovered.yaml: %q names the rule %s, which the catalog lacks", r.Statement, id)
			}
		}
	}
	uncovered := map[string]bool{}
	for _, s := range d.Uncovered() {
		uncovered[s.Text] = true
		if !explained[s.Text] {
			t.Errorf("no rule quotes the spec's statement (line %d, %s), and uncovered.yaml does not say why:\n- statement: %q\n  why: ...", s.Line, s.Section, s.Text)
		}
	}
	for _, r := range reasons {
		if !uncovered[r.Statement] {
			t.Errorf("uncovered.yaml explains %q, which is no uncovered normative statement of the spec (a rule quotes it now, or the spec changed)", r.Statement)
		}
	}
}

// TestStatements: how spec text is cut into statements and where quotes
// are found: sentences, table rows, a cell of several sentences, remarks
// that state nothing, and quotes that join cells with ": ", leave words
// out ("..."), use a column's name or join two sentences.
func TestStatements(t *testing.T) {
	text := "# Title\n\nThis document covers it.\n\n## Area\n\n" +
		"The service answers. It never waits, e.g. for a client.\n\n" +
		"| Field | Type | Default | Meaning |\n|---|---|---|---|\n" +
		"| async | boolean | false | Runs later |\n" +
		"| label | text | - | First sentence. Second sentence holds `a. B` inside. |\n\n" +
		"Rules:\n\n1. Errors: not shown.\n2. A missing `close` is an abnormal end of the stream.\n"
	d := parseSpec(text)
	var got []string
	for _, s := range d.Statements {
		mark := ""
		if !s.Normative {
			mark = "~"
		}
		got = append(got, mark+s.Text)
	}
	want := []string{"~This document covers it.", "The service answers.", "It never waits, e.g. for a client.",
		"async | boolean | false | Runs later", "label | text | - | First sentence.",
		"label | text | - | Second sentence holds `a. B` inside.", "~Rules:", "~Errors: not shown.",
		"A missing `close` is an abnormal end of the stream."}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("statements:\n%q\nwant\n%q", got, want)
	}
	d.locate([]Rule{
		{ID: "A-01", Source: SourceSpec, Spec: "The service answers. It never waits"},
		{ID: "A-02", Source: SourceSpec, Spec: "async: boolean, default false"},
		{ID: "A-03", Source: SourceSpec, Spec: "label: Second sentence holds a. B inside."},
		{ID: "A-04", Source: SourceSpec, Spec: "A missing close is an ... end of the stream"},
		{ID: "A-05", Source: SourceSpec, Spec: "Something the text never says"},
		{ID: "A-06", Source: SourceContract, Spec: "docs/bundles.md: refused when it is wrong"},
	})
	rulesOf := map[int][]string{}
	for _, s := range d.Statements {
		rulesOf[s.N] = s.Rules
	}
	for n, ids := range map[int][]string{2: {"A-01"}, 3: {"A-01"}, 4: {"A-02"}, 5: nil, 6: {"A-03"}, 9: {"A-04"}} {
		if !reflect.DeepEqual(rulesOf[n], ids) {
			t.Errorf("statement %d (%s): rules %v, want %v", n, d.Statements[n-1].Text, rulesOf[n], ids)
		}
	}
	if len(d.Unlocated) != 1 || d.Unlocated["A-05"] == "" {
		t.Errorf("unlocated: %v, want A-05 only (a contract rule's quote of docs/ is not looked for)", d.Unlocated)
	}
}
