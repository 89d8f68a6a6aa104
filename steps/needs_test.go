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

// TestStepTable: the table holds every step definition once, each with its
// location and a binding, and reading it runs no godog suite.
func TestStepTable(t *testing.T) {
	defs, err := table()
	if err != nil {
		t.Fatal(err)
	}
	if n := len(defs); n < 80 {
		t.Errorf("only %d steps in the table", n)
	}
	needs := 0
	for _, d := range defs {
		if d.re == nil || d.bind == nil || !strings.HasPrefix(d.Location, "steps/") {
			t.Errorf("step %q: compiled %t, bound %t, location %q", d.Expr, d.re != nil, d.bind != nil, d.Location)
		}
		needs += len(d.Needs)
	}
	if needs == 0 {
		t.Error("no step declares a need")
	}
	if d, ok := DefinitionOf(`the status is 2xx`); !ok || !strings.HasPrefix(d.Location, "steps/request.go:") {
		t.Errorf("DefinitionOf(the status is 2xx) = %+v, %t", d, ok)
	}
	if d := step0("^x$", func(*World) error { return nil }).Need("keys.agent").Asserts("SSE-01"); d.Rule != "SSE-01" ||
		len(d.Needs) != 1 || !strings.HasPrefix(d.Location, "steps/needs_test.go:") {
		t.Errorf("a built definition: %+v", d)
	}
}

// TestStepErrorsAreSettled: what a bound step returns reaches godog
// redacted, bounded and safe to show, its failure naming a rule: its own,
// else the step's, else the scenario's.
func TestStepErrorsAreSettled(t *testing.T) {
	w := testWorld(t)
	w.tags = []string{"@SSE-05", "@scripted"}
	key := w.P.Keys.Agent
	fail := outcome.Fail("the body", "an event", "\x1b[31m"+key[:22]+"\x00\xff")
	d := step1("^x (.*)$", func(_ *World, s string) error { return fmt.Errorf("%s: %w", s, fail) })
	fn := d.bind(w, &d).(func(string) error)
	err := fn(strings.Repeat("x", 2*maxMessage))
	msg := err.Error()
	if strings.Contains(msg, "topsec") || strings.ContainsAny(msg, "\x00\x1b") || !utf8.ValidString(msg) {
		t.Errorf("message not cleaned: %q", msg[len(msg)-200:])
	}
	if len(msg) > maxMessage+64 {
		t.Errorf("message of %d bytes, want at most about %d", len(msg), maxMessage)
	}
	f, ok := outcome.AsFailure(err)
	if !ok || f.Check != "the body" || f.Rule != "SSE-05" || !Settled(err) {
		t.Fatalf("the failure is lost or names no rule: %+v", f)
	}
	if strings.Contains(f.Actual, "topsec") || strings.ContainsAny(f.Actual, "\x00\x1b") {
		t.Errorf("Actual not cleaned: %q", f.Actual)
	}
	for _, tc := range []struct {
		failure *outcome.Failure
		asserts string
		want    string
	}{
		{outcome.Fail("c", "e", "a").Breaks("ROUTE-01"), "SSE-01", "ROUTE-01"}, // its own
		{outcome.Fail("c", "e", "a"), "SSE-01", "SSE-01"},                      // the step's
		{outcome.Fail("c", "e", "a"), "", "SSE-05"},                            // the scenario's
	} {
		d := step0("^y$", func(*World) error { return tc.failure }).Asserts(tc.asserts)
		f, _ := outcome.AsFailure(d.bind(w, &d).(func() error)())
		if f == nil || f.Rule != tc.want {
			t.Errorf("failure %+v in a step asserting %q: rule %v, want %s", tc.failure, tc.asserts, f, tc.want)
		}
	}
	skipDef := step0("^z$", func(*World) error { return need(&profile.MissingError{What: "keys.expired"}) })
	if skip := skipDef.bind(w, &skipDef).(func() error)(); !errors.Is(skip, godog.ErrSkip) {
		t.Error("an untested step must still be a skip")
	}
	harnessDef := step0("^h$", func(*World) error { return scenarioErrorf("no thread") })
	if err := harnessDef.bind(w, &harnessDef).(func() error)(); !IsHarnessError(err) {
		t.Errorf("a scenario error must stay a harness error, got %v", err)
	}
	okDef := step0("^ok$", func(*World) error { return nil })
	if okDef.bind(w, &okDef).(func() error)() != nil {
		t.Error("a passing step must stay nil")
	}
}
