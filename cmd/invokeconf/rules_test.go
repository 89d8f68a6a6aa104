package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/invokeconf/invokeconf/fakeserver"
	"github.com/invokeconf/invokeconf/features"
)

// TestRulesListsEveryRuleWithItsScenarios, in both formats.
func TestRulesListsEveryRuleWithItsScenarios(t *testing.T) {
	rules, err := features.Rules()
	if err != nil {
		t.Fatal(err)
	}
	pickles, err := features.Pickles()
	if err != nil {
		t.Fatal(err)
	}
	code, md, _ := invoke(t, "rules", "--format", "markdown")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, r := range rules {
		if !strings.Contains(md, "\n| "+r.ID+" | "+r.Level+" | "+r.Area+" |") {
			t.Errorf("markdown lacks %s", r.ID)
		}
		passive := "| " + r.Passive
		if r.PassiveWhy != "" {
			passive += ": " + mdEscape(r.PassiveWhy)
		}
		if !strings.Contains(md, passive+" |\n") {
			t.Errorf("markdown lacks %s's passive column %q", r.ID, passive)
		}
	}
	for _, pk := range pickles {
		if !strings.Contains(md, pk.ID) {
			t.Errorf("markdown lacks scenario %s", pk.ID)
		}
	}

	code, js, _ := invoke(t, "rules", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var out []struct {
		ID        string `json:"id"`
		Spec      string `json:"spec"`
		Passive   string `json:"passive"`
		Scenarios []struct {
			ID, Name string
			Tags     []string
		} `json:"scenarios"`
	}
	if err := json.Unmarshal([]byte(js), &out); err != nil {
		t.Fatal(err)
	}
	if len(out) != len(rules) {
		t.Fatalf("%d rules in JSON, %d in the catalog", len(out), len(rules))
	}
	n := 0
	for _, r := range out {
		if r.Passive == "" {
			t.Errorf("%s: no passive field in JSON", r.ID)
		}
		for _, sc := range r.Scenarios {
			n++
			if sc.ID == "" || sc.Name == "" || !strings.Contains(strings.Join(sc.Tags, " "), "@"+r.ID) {
				t.Errorf("%s: scenario %+v", r.ID, sc)
			}
		}
	}
	if n == 0 {
		t.Error("no scenarios listed")
	}
	if code, _, _ := invoke(t, "rules", "--format", "yaml"); code != 2 {
		t.Errorf("--format yaml: exit %d, want 2", code)
	}
}

// TestRulesFitsTheTerminal: the default listing has a line per rule, no
// line wider than $COLUMNS (100 when unset), and the wide columns only
// where they fit.
func TestRulesFitsTheTerminal(t *testing.T) {
	rules, err := features.Rules()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		columns string
		width   int
		wide    bool
	}{{"", 100, true}, {"60", 60, false}, {"200", 200, true}, {"junk", 100, true}} {
		t.Run("COLUMNS="+tc.columns, func(t *testing.T) {
			t.Setenv("COLUMNS", tc.columns)
			code, out, _ := invoke(t, "rules")
			if code != 0 {
				t.Fatalf("exit %d", code)
			}
			lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
			for _, l := range lines {
				if n := utf8.RuneCountInString(l); n > tc.width {
					t.Errorf("a line of %d characters: %q", n, l)
				}
			}
			for _, r := range rules {
				if !regexp.MustCompile(`(?m)^` + r.ID + ` +` + r.Level + ` `).MatchString(out) {
					t.Errorf("no line for %s", r.ID)
				}
			}
			if got := strings.HasPrefix(lines[0], "RULE         LEVEL  AREA"); got != tc.wide {
				t.Errorf("header %q", lines[0])
			}
		})
	}
}

// TestRulesShowsARuleWhole: 'rules ID...' shows every field of each rule
// named, in the order named, with its scenarios; flags may follow the IDs;
// an unknown ID is bad usage with the nearest one.
func TestRulesShowsARuleWhole(t *testing.T) {
	idx, err := features.RuleIndex()
	if err != nil {
		t.Fatal(err)
	}
	code, out, stderr := invoke(t, "rules", "SSE-04", "body-03")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	sse, body := idx["SSE-04"], idx["BODY-03"]
	if !strings.HasPrefix(out, "SSE-04  MUST spec rule, area sse\n") || !strings.Contains(out, "\nBODY-03  MUST spec rule, area body\n") {
		t.Errorf("headings:\n%s", out)
	}
	flat := strings.Join(strings.Fields(out), " ")
	for _, want := range []string{sse.Section, sse.Rule, sse.Spec, sse.Strictness, sse.PassiveWhy, "sse.feature:44", "@slow",
		"observable: no: " + body.Why, body.Rule} {
		if !strings.Contains(flat, strings.Join(strings.Fields(want), " ")) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
	code, js, _ := invoke(t, "rules", "ERR-02,ERR-05", "--format", "json")
	var got []struct{ ID string }
	if code != 0 || json.Unmarshal([]byte(js), &got) != nil || len(got) != 2 || got[0].ID != "ERR-02" || got[1].ID != "ERR-05" {
		t.Errorf("json of two rules: exit %d: %s", code, js)
	}
	if code, _, stderr := invoke(t, "rules", "SSE-50"); code != 2 || !strings.Contains(stderr, "unknown rule SSE-50 (did you mean SSE-05?)") {
		t.Errorf("unknown rule: exit %d: %s", code, stderr)
	}
}

// TestProfileVars lists a variable for every field and, with a profile,
// which are set, without showing a key.
func TestProfileVars(t *testing.T) {
	p, path := serveProfile(t)
	code, out, stderr := invoke(t, "profile", "vars", "--profile", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, f := range p.Fields() {
		if !strings.Contains(out, f.Env) {
			t.Errorf("no line for %s", f.Env)
		}
	}
	if !strings.Contains(out, "INVOKECONF_KEYS_AGENT") || !strings.Contains(out, "(set, secret)") || !strings.Contains(out, p.BaseURL) {
		t.Errorf("output:\n%s", out)
	}
	for _, k := range p.Secrets() {
		if strings.Contains(out, k) {
			t.Errorf("profile vars shows a key")
		}
	}
}

// TestDefectsStayInLine: every line of 'invokeconf defects' keeps its three
// columns where the header line has them, however long a defect's rule
// list or description, within the terminal's width; every defect and every
// rule it breaks is listed.
func TestDefectsStayInLine(t *testing.T) {
	nameWidth := defectNameWidth(fakeserver.Defects())
	for _, width := range []int{60, 100, 160} {
		var b strings.Builder
		writeDefects(&b, fakeserver.Defects(), width)
		lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
		var names, rules []string
		for _, line := range lines {
			if len(line) > max(width, nameWidth+defectRulesWidth+2+30) {
				t.Errorf("width %d: a line of %d characters: %q", width, len(line), line)
			}
			rulesOnly := len(line) <= nameWidth+defectRulesWidth+1 // a rule list's next line, its description done
			if len(line) <= nameWidth || line[nameWidth] != ' ' ||
				!rulesOnly && (line[nameWidth+defectRulesWidth+1] != ' ' || line[nameWidth+defectRulesWidth+2] == ' ') {
				t.Errorf("width %d: out of line: %q", width, line)
				continue
			}
			line += strings.Repeat(" ", max(nameWidth+defectRulesWidth+1-len(line), 0))
			if name := strings.TrimSpace(line[:nameWidth]); name != "" {
				names = append(names, name)
			}
			rules = append(rules, strings.FieldsFunc(line[nameWidth:nameWidth+defectRulesWidth+1], func(r rune) bool { return r == ',' || r == ' ' })...)
		}
		var wantNames, wantRules []string
		for _, d := range fakeserver.Defects() {
			wantNames = append(wantNames, d.Name)
			wantRules = append(wantRules, d.Rules...)
		}
		if strings.Join(names, " ") != strings.Join(wantNames, " ") || strings.Join(rules, " ") != strings.Join(wantRules, " ") {
			t.Errorf("width %d: the table does not list every defect with its rules, in order", width)
		}
	}
}

// TestRulesUncovered: 'rules --uncovered' lists the spec's normative
// statements no rule quotes, each with its line and why, as text and as
// JSON; with a rule ID it is bad usage.
func TestRulesUncovered(t *testing.T) {
	d, err := features.Spec()
	if err != nil {
		t.Fatal(err)
	}
	want := d.Uncovered()
	if len(want) == 0 {
		t.Fatal("no uncovered statement to list")
	}
	code, stdout, stderr := invoke(t, "rules", "--uncovered")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, fmt.Sprintf("no rule quotes: %d of ", len(want))) {
		t.Errorf("the listing does not count %d statements:\n%s", len(want), stdout)
	}
	for _, s := range want {
		if !strings.Contains(stdout, fmt.Sprintf("spec.md:%d ", s.Line)) || !strings.Contains(stdout, s.Text) {
			t.Errorf("the listing lacks line %d: %s", s.Line, s.Text)
		}
	}
	if strings.Contains(stdout, "not explained") {
		t.Errorf("a statement is not explained:\n%s", stdout)
	}
	code, stdout, _ = invoke(t, "rules", "--uncovered", "--format", "json")
	var list []struct {
		Line int    `json:"line"`
		Text string `json:"text"`
		Why  string `json:"why"`
	}
	if err := json.Unmarshal([]byte(stdout), &list); code != 0 || err != nil || len(list) != len(want) || list[0].Why == "" {
		t.Errorf("--format json: exit %d, %v, %d entries (want %d)", code, err, len(list), len(want))
	}
	if code, _, _ := invoke(t, "rules", "--uncovered", "SSE-01"); code != 2 {
		t.Errorf("--uncovered with a rule ID: exit %d, want 2", code)
	}
}
