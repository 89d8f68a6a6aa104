package steps

import (
	"strings"
	"testing"
)

// TestPlaceholderNeeds: a placeholder needs the fields whose blanking stops
// it from expanding, found by evaluation.
func TestPlaceholderNeeds(t *testing.T) {
	for _, tc := range []struct {
		name string
		want string // needs joined by spaces, or "error"
	}{
		{"agents.main.id", "agents.main.id"},
		{"agents.main.alias", "agents.main.id agents.main.alias"},
		{"agents.main.plainTool", "agents.main.id agents.main.tools"},
		{"agents.main.searchTools", "agents.main.id agents.main.tools agents.main.credentialTools"},
		{"projects.main.tasks", "projects.main.tasks"},
		{"projects.main.credentialTools", "agents.main.id agents.main.tools agents.main.credentialTools projects.main.credentials"},
		{"nonAgentID", "nonAgentID"},
		{"unknownID", ""},
		{"unknownTool", ""},
		{"thread:T", ""},
		{"run:R", ""},
		{"marker:b", ""},
		{"escaped:b", ""},
		{"agents.nobody.id", "error"},
		{"nope", "error"},
	} {
		needs, err := PlaceholderNeeds(tc.name)
		got := strings.Join(needs, " ")
		if err != nil {
			got = "error"
		}
		if got != tc.want {
			t.Errorf("PlaceholderNeeds(%q) = %q, %v; want %q", tc.name, needs, err, tc.want)
		}
	}
}

func TestFillArgs(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"bundles.export.dropped.$1", "bundles.export.dropped.members"},
		{"/api/invoke/${agents.$2.id}", "/api/invoke/${agents.other.id}"},
		{"$3 stays", "$3 stays"},
		{"${projects.main.id}", "${projects.main.id}"},
	} {
		if got := fillArgs(tc.in, []string{"members", "other"}); got != tc.want {
			t.Errorf("fillArgs(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestEveryStepIsRegistered: the registry holds every step definition, and
// a step registered twice with different needs is refused.
func TestEveryStepIsRegistered(t *testing.T) {
	if n := len(registeredSteps()); n < 80 {
		t.Errorf("only %d steps registered", n)
	}
	defer func() {
		if recover() == nil {
			t.Error("a step registered again with other needs should panic")
		}
	}()
	step(nil, `^a target that manages bundles$`, func() error { return nil }, "keys.agent")
}
