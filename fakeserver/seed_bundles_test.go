package fakeserver

import (
	"encoding/json"
	"testing"

	"github.com/invokeconf/invokeconf/fixtures"
)

// TestExportSeedFillsEveryPlaceholder guards seed_bundles.json against a
// placeholder that no variable fills: it would reach the export verbatim.
func TestExportSeedFillsEveryPlaceholder(t *testing.T) {
	p, err := fixtures.Reference()
	if err != nil {
		t.Fatal(err)
	}
	st, err := seed(p)
	if err != nil {
		t.Fatal(err)
	}
	var payloads []any
	for _, r := range st.bundles.resources {
		payloads = append(payloads, r.payload)
	}
	for _, pr := range st.bundles.projects {
		payloads = append(payloads, pr.thread)
		for _, tk := range pr.tasks {
			payloads = append(payloads, tk.payload)
		}
	}
	if len(payloads) < 3 {
		t.Fatalf("the reference profile seeds %d export payloads; want the project, its agent and its tasks", len(payloads))
	}
	for _, pl := range payloads {
		b, _ := json.Marshal(pl)
		if m := placeholder.FindString(string(b)); m != "" {
			t.Errorf("placeholder %s left unfilled in %s", m, b)
		}
	}
}

func TestFill(t *testing.T) {
	vars := map[string]any{"name": "kb", "list": []any{"a"}}
	tests := []struct {
		in   any
		want string
	}{
		{"{name}.md", `"kb.md"`},
		{"{list}", `["a"]`},
		{"{other}", `"{other}"`},
		{map[string]any{"x": []any{"{name}", "#{name}"}}, `{"x":["kb","#kb"]}`},
	}
	for _, tt := range tests {
		b, _ := json.Marshal(fill(tt.in, vars))
		if got := string(b); got != tt.want {
			t.Errorf("fill(%v) = %s, want %s", tt.in, got, tt.want)
		}
	}
}
