package steps

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cucumber/godog"

	"github.com/invokeconf/invokeconf/outcome"
	"github.com/invokeconf/invokeconf/profile"
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
	steps := registeredSteps()
	if n := len(steps); n < 80 {
		t.Errorf("only %d steps registered", n)
	}
	var d *registeredStep
	for _, s := range steps {
		if len(s.needs) > 0 {
			d = s
			break
		}
	}
	if d == nil {
		t.Fatal("no step declares a need")
	}
	if again, err := register(d.expr, d.needs); err != nil || again != d {
		t.Errorf("registering %q again with the same needs = %v, %v; want the same definition", d.expr, again, err)
	}
	for _, other := range [][]string{nil, append(append([]string(nil), d.needs...), "keys.agent")} {
		if _, err := register(d.expr, other); err == nil || !strings.Contains(err.Error(), "registered twice") {
			t.Errorf("registering %q again needing %q: error %v, want a refusal", d.expr, other, err)
		}
	}
}

// TestStepErrorsAreCleaned: what a bound step returns reaches godog
// redacted, bounded and safe to show, with its error chain intact.
func TestStepErrorsAreCleaned(t *testing.T) {
	w := testWorld(t)
	key := w.P.Keys.Agent
	fail := outcome.Fail("the body", "an event", "\x1b[31m"+key[:22]+"\x00\xff")
	fn := cleaning(w, func(s string) error { return fmt.Errorf("%s: %w", s, fail) }).(func(string) error)
	err := fn(strings.Repeat("x", 2*maxMessage))
	msg := err.Error()
	if strings.Contains(msg, "topsec") || strings.ContainsAny(msg, "\x00\x1b") || !utf8.ValidString(msg) {
		t.Errorf("message not cleaned: %q", msg[len(msg)-200:])
	}
	if len(msg) > maxMessage+64 {
		t.Errorf("message of %d bytes, want at most about %d", len(msg), maxMessage)
	}
	f, ok := outcome.AsFailure(err)
	if !ok || f != fail {
		t.Fatal("the structured failure is lost")
	}
	if strings.Contains(f.Actual, "topsec") || strings.ContainsAny(f.Actual, "\x00\x1b") {
		t.Errorf("Actual not cleaned: %q", f.Actual)
	}
	skip := cleaning(w, func() error { return need(&profile.MissingError{What: "keys.expired"}) }).(func() error)()
	if !errors.Is(skip, godog.ErrSkip) {
		t.Error("an untested step must still be a skip")
	}
	if cleaning(w, func() error { return nil }).(func() error)() != nil {
		t.Error("a passing step must stay nil")
	}
}
