package main

import (
	"encoding/json"
	"strings"
	"testing"

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
	code, md, _ := invoke(t, "rules")
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
