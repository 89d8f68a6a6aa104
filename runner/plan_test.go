package runner

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/invokeconf/invokeconf/features"
	"github.com/invokeconf/invokeconf/fixtures"
	"github.com/invokeconf/invokeconf/profile"
)

func reference(t *testing.T) *profile.Profile {
	t.Helper()
	p, err := fixtures.Reference()
	if err != nil {
		t.Fatal(err)
	}
	p.BaseURL = "http://127.0.0.1:1"
	return p
}

// planned returns the IDs of the scenarios a plan runs, and of those it
// gave a status.
func planned(p *Plan) (run []string, other map[string]Status) {
	other = map[string]Status{}
	for _, s := range p.Scenarios {
		if s.Status == "" {
			run = append(run, s.ID)
		} else {
			other[s.ID] = s.Status
		}
	}
	return run, other
}

func TestSelection(t *testing.T) {
	pickles, err := features.Pickles()
	if err != nil {
		t.Fatal(err)
	}
	rules, err := features.RuleIndex()
	if err != nil {
		t.Fatal(err)
	}
	// want derives, from the catalog, which scenarios a selection keeps.
	for _, tc := range []struct {
		name string
		sel  Selection
		keep func(features.Pickle) bool
	}{
		{"everything", Selection{}, func(features.Pickle) bool { return true }},
		{"rules", Selection{Rules: []string{"SSE-01", "fmt-02"}}, func(pk features.Pickle) bool {
			return has(pk.Rules, "SSE-01") || has(pk.Rules, "FMT-02")
		}},
		{"areas", Selection{Areas: []string{"sse", "Events"}}, func(pk features.Pickle) bool {
			for _, id := range pk.Rules {
				if a := rules[id].Area; a == "sse" || a == "events" {
					return true
				}
			}
			return false
		}},
		{"quick", Selection{Quick: true}, func(pk features.Pickle) bool { return !has(pk.Tags, "@slow") }},
		{"tags and area", Selection{Areas: []string{"sse"}, Tags: "~@SSE-02,@SSE-03"}, func(pk features.Pickle) bool {
			return rules[pk.Rules[0]].Area == "sse" && (!has(pk.Tags, "@SSE-02") || has(pk.Tags, "@SSE-03"))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan, err := NewPlan(reference(t), tc.sel)
			if err != nil {
				t.Fatal(err)
			}
			run, _ := planned(plan)
			var want []string
			for _, pk := range pickles {
				if tc.keep(pk) {
					want = append(want, pk.ID)
				}
			}
			if strings.Join(run, " ") != strings.Join(want, " ") {
				t.Errorf("runs %v\nwant %v", run, want)
			}
			if len(run) == 0 {
				t.Error("selects nothing")
			}
		})
	}
}

func TestSelectionErrors(t *testing.T) {
	for _, sel := range []Selection{
		{Rules: []string{"SSE-01", "NOPE-99"}},
		{Areas: []string{"sse", "telepathy"}},
		{Tags: "@sse,,@events"},
		{Tags: "@sse && "},
		{Tags: "@a b"},
	} {
		_, err := NewPlan(reference(t), sel)
		var se *SelectionError
		if !errors.As(err, &se) {
			t.Errorf("%+v: error %v, want a SelectionError", sel, err)
		}
	}
}

// TestCapabilityTags: a capability the profile declares false makes a
// @capability-NAME scenario not applicable and a @needs-NAME one untested;
// a capability the profile leaves out leaves both untested; neither applies
// when it is true; an unknown NAME is an error.
func TestCapabilityTags(t *testing.T) {
	left := &profile.Profile{}
	off := &profile.Profile{}
	off.DeclareCapability("researchMode")
	on := &profile.Profile{Capabilities: profile.Capabilities{ResearchMode: true}}
	on.DeclareCapability("researchMode")
	for _, tc := range []struct {
		name   string
		tags   []string
		p      *profile.Profile
		status Status
		reason string
	}{
		{"declared false", []string{"@MODE-02", "@capability-researchMode"}, off, NotApplicable, "declares capabilities.researchMode false"},
		{"left out", []string{"@MODE-02", "@capability-researchMode"}, left, Untested, "does not declare capabilities.researchMode"},
		{"declared true", []string{"@MODE-02", "@capability-researchMode"}, on, Runs, ""},
		{"needs, declared false", []string{"@needs-researchMode"}, off, Untested, "declares capabilities.researchMode false"},
		{"needs, left out", []string{"@needs-researchMode"}, left, Untested, "does not declare capabilities.researchMode"},
		{"needs, declared true", []string{"@needs-researchMode"}, on, Runs, ""},
		{"no capability", []string{"@scripted"}, off, Runs, ""},
		{"slow", []string{"@sse", "@slow"}, off, Runs, ""},
	} {
		status, reason, tag, err := applicability(tc.p, tc.tags)
		if err != nil {
			t.Fatal(err)
		}
		if status != tc.status || !strings.Contains(reason, tc.reason) {
			t.Errorf("%s: status %q (%s), want %q (%s)", tc.name, status, reason, tc.status, tc.reason)
		}
		if status != Runs && tag == "" {
			t.Errorf("%s: no tag named", tc.name)
		}
	}
	if _, _, _, err := applicability(on, []string{"@capability-researchMod"}); err == nil || !strings.Contains(err.Error(), "did you mean researchMode") {
		t.Errorf("an unknown capability tag: %v", err)
	}
}

// TestCapabilityStepsAreTagged: a scenario whose steps read a capability of
// the profile carries its @capability- or @needs- tag, so that the plan,
// not the step, decides between not applicable and untested.
func TestCapabilityStepsAreTagged(t *testing.T) {
	pickles, err := features.Pickles()
	if err != nil {
		t.Fatal(err)
	}
	caps := profile.CapabilityNames()
	for _, pk := range pickles {
		for _, need := range Needs(pk) {
			name, ok := strings.CutPrefix(need, "capabilities.")
			if !ok || !slices.Contains(caps, name) {
				continue
			}
			if !slices.Contains(pk.Tags, CapabilityTag+name) && !slices.Contains(pk.Tags, NeedsTag+name) {
				t.Errorf("%s %q reads capabilities.%s but has neither %s%s nor %s%s", pk.ID, pk.Name, name, CapabilityTag, name, NeedsTag, name)
			}
		}
	}
}

// TestEveryCapabilityTagIsKnown: the features name only capabilities the
// profile has, so a plan never fails on a tag.
func TestEveryCapabilityTagIsKnown(t *testing.T) {
	pickles, err := features.Pickles()
	if err != nil {
		t.Fatal(err)
	}
	for _, pk := range pickles {
		if _, _, _, err := applicability(&profile.Profile{}, pk.Tags); err != nil {
			t.Errorf("%s: %v", pk.ID, err)
		}
	}
}

func TestMatchTags(t *testing.T) {
	tags := []string{"@sse", "@SSE-01", "@scripted"}
	for expr, want := range map[string]bool{
		"":                        true,
		"@sse":                    true,
		"~@sse":                   false,
		"@events,@SSE-01":         true,
		"@sse && ~@slow":          true,
		"@sse && @slow":           false,
		"~@slow,@slow && @sse":    true,
		"@SSE-02,@SSE-03 && @sse": false,
	} {
		if got := matchTags(expr, tags); got != want {
			t.Errorf("matchTags(%q) = %v, want %v", expr, got, want)
		}
	}
}

func has(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func TestClosest(t *testing.T) {
	known := []string{"SSE-01", "SSE-05", "ERR-05", "ERR-10", "researchMode", "bundles"}
	for name, want := range map[string]string{
		"SSE-50": "SSE-05", "ERR-50": "ERR-05", "researchmod": "researchMode", "bundels": "bundles", "zzzzzz": "", "SSE-01": "",
	} {
		if got := Closest(name, known); got != want {
			t.Errorf("Closest(%q) = %q, want %q", name, got, want)
		}
	}
}
