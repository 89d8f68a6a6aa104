package runner

import (
	"errors"
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
func planned(p *Plan) (run []string, other map[string]string) {
	other = map[string]string{}
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

// TestCapabilityTags: @capability-NAME makes a scenario not applicable and
// @needs-NAME leaves it untested, when the profile declares NAME false;
// neither applies when it is true; an unknown NAME is an error. (What the
// agent script needs is checked per prompt by the steps: capabilities.script.)
func TestCapabilityTags(t *testing.T) {
	off := &profile.Profile{}
	on := &profile.Profile{Capabilities: profile.Capabilities{ResearchMode: true}}
	for _, tc := range []struct {
		tags   []string
		p      *profile.Profile
		status string
	}{
		{[]string{"@MODE-02", "@capability-researchMode"}, off, NotApplicable},
		{[]string{"@MODE-02", "@capability-researchMode"}, on, ""},
		{[]string{"@needs-researchMode"}, off, Untested},
		{[]string{"@needs-researchMode"}, on, ""},
		{[]string{"@scripted"}, off, ""},
		{[]string{"@sse", "@slow"}, off, ""},
	} {
		status, reason, tag, err := applicability(tc.p, tc.tags)
		if err != nil {
			t.Fatal(err)
		}
		if status != tc.status {
			t.Errorf("%v with researchMode %v: status %q, want %q", tc.tags, tc.p.Capabilities.ResearchMode, status, tc.status)
		}
		if status != "" && (!strings.Contains(reason, "capabilities.researchMode") || tag == "") {
			t.Errorf("%v: reason %q, tag %q", tc.tags, reason, tag)
		}
	}
	if _, _, _, err := applicability(on, []string{"@capability-teleport"}); err == nil {
		t.Error("an unknown capability tag is accepted")
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
