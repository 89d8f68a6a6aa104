package runner

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/invokeconf/invokeconf/agentscript"
	"github.com/invokeconf/invokeconf/features"
	"github.com/invokeconf/invokeconf/profile"
	"github.com/invokeconf/invokeconf/steps"
	"github.com/invokeconf/invokeconf/testrun"
)

// Forecast is what a run will make of the catalog's rules, known from its
// plan and the profile before it starts: which rules it cannot judge, with
// why, which it will find not applicable, and so whether it will be
// PARTIAL. 'invokeconf profile check' prints it; the run's own report must
// agree (TestForecastAgreesWithTheRun).
//
// It reads the plan's scenario statuses, the profile's gaps (Gaps) and the
// script directives the scenarios' prompts use (ScriptNeeds), and judges
// each rule from them as package reports judges it from the scenarios'
// results: a rule with an untested scenario is untested, one whose
// scenarios are all not applicable is not applicable, one whose scenarios
// were all left out is not selected. Only the run can add to it: a failure
// (which outranks untested), a failure that blocks a rule, and, for a
// profile whose capabilities.script lacks echo, the scenarios that read the
// answer to a prompt without directives (EchoUnknown).
type Forecast struct {
	// Rules are the observable rules the run will not judge, or will find
	// not applicable, in the catalog's order.
	Rules []RuleForecast `json:"rules"`
	// SpecObservable counts the catalog's observable spec rules, SpecJudged
	// those the run can judge (check: pass or fail), SpecNotApplicable
	// those it will find not applicable (not checked, yet no gap).
	SpecObservable    int `json:"specObservable"`
	SpecJudged        int `json:"specJudged"`
	SpecNotApplicable int `json:"specNotApplicable"`
}

// RuleForecast is one rule the run will not judge, or will find not
// applicable: Status is Untested, NotApplicable or NotSelected.
type RuleForecast struct {
	ID      string         `json:"id"`
	Source  string         `json:"source"`
	Status  testrun.Status `json:"status"`
	Reasons []string       `json:"reasons"`
}

// EchoUnknown reports whether the forecast cannot see every scenario the run
// will leave untested: the profile's agent does not echo, and which
// scenarios read an echoed answer only the steps know, at run time.
func EchoUnknown(p *profile.Profile) bool { return !p.Capabilities.CanScript("echo") }

// Partial reports whether the run will leave an observable spec rule
// neither judged nor not applicable: a PARTIAL run, never a certification.
func (f *Forecast) Partial() bool { return f.SpecJudged+f.SpecNotApplicable < f.SpecObservable }

// With returns the forecasts of one status.
func (f *Forecast) With(status testrun.Status) []RuleForecast {
	var out []RuleForecast
	for _, r := range f.Rules {
		if r.Status == status {
			out = append(out, r)
		}
	}
	return out
}

// Predict forecasts what the run of plan against the target p describes
// will make of every rule.
func Predict(p *profile.Profile, plan *testrun.Plan) (*Forecast, error) {
	rules, err := features.Rules()
	if err != nil {
		return nil, err
	}
	// Why the gaps leave a scenario the plan runs untested; a scenario the
	// plan itself makes untested carries its reason.
	blocked := map[string][]string{}
	for _, g := range Gaps(p, plan) {
		for _, id := range g.Scenarios {
			blocked[id] = append(blocked[id], "the profile does not provide "+g.Path+" ("+g.Env+")")
		}
	}
	for _, pl := range plan.Scenarios {
		if pl.Status != testrun.Runs {
			continue
		}
		for _, kind := range ScriptNeeds(pl.Pickle) {
			if !p.Capabilities.CanScript(kind) {
				// The words the step uses when it meets the prompt: the
				// first directive it lacks, as the run meets them.
				blocked[pl.ID] = append(blocked[pl.ID], fmt.Sprintf("the target's agent cannot be made to show @%s (capabilities.script lacks %s)", kind, kind))
				break
			}
		}
	}
	byRule := map[string][]testrun.Planned{}
	for _, pl := range plan.Scenarios {
		for _, id := range pl.Rules {
			byRule[id] = append(byRule[id], pl)
		}
	}
	f := &Forecast{}
	for _, r := range rules {
		if !r.Observable {
			continue
		}
		rf := forecastRule(r, plan, byRule[r.ID], blocked)
		if r.Source != features.SourceContract {
			f.SpecObservable++
			switch rf.Status {
			case testrun.Runs:
				f.SpecJudged++
			case testrun.NotApplicable:
				f.SpecNotApplicable++
			}
		}
		if rf.Status != testrun.Runs {
			f.Rules = append(f.Rules, rf)
		}
	}
	return f, nil
}

// forecastRule judges one observable rule from its planned scenarios, as
// package reports judges it from their results.
func forecastRule(r features.Rule, plan *testrun.Plan, planned []testrun.Planned, blocked map[string][]string) RuleForecast {
	rf := RuleForecast{ID: r.ID, Source: r.Source, Status: testrun.Runs}
	if rf.Source == "" {
		rf.Source = features.SourceSpec
	}
	if !plan.InScope(r.ID) {
		rf.Status, rf.Reasons = testrun.NotSelected, []string{"outside the selection (" + plan.Selection.String() + ")"}
		return rf
	}
	if len(planned) == 0 {
		rf.Status, rf.Reasons = testrun.Untested, []string{"no scenario checks this rule yet"}
		if r.Pending != "" {
			rf.Reasons[0] += " (pending: " + r.Pending + ")"
		}
		return rf
	}
	var untested, notApplicable []string
	selected, runs := 0, 0
	for _, pl := range planned {
		switch {
		case pl.Status == testrun.NotSelected:
			continue
		case pl.Status == testrun.Untested:
			untested = appendNew(untested, pl.Reason)
		case pl.Status == testrun.NotApplicable:
			notApplicable = appendNew(notApplicable, pl.Reason)
		case len(blocked[pl.ID]) > 0:
			for _, why := range blocked[pl.ID] {
				untested = appendNew(untested, why)
			}
		default:
			runs++
		}
		selected++
	}
	switch {
	case selected == 0:
		rf.Status, rf.Reasons = testrun.NotSelected, []string{"its scenarios were not selected (" + plan.Selection.String() + ")"}
	case len(untested) > 0:
		rf.Status, rf.Reasons = testrun.Untested, untested
	case runs == 0:
		rf.Status, rf.Reasons = testrun.NotApplicable, notApplicable
	}
	sort.Strings(rf.Reasons)
	return rf
}

func appendNew(list []string, s string) []string {
	for _, v := range list {
		if v == s {
			return list
		}
	}
	return append(list, s)
}

// promptInStep finds a prompt quoted in a step's text ("... with the prompt
// "@say hi""): the steps unquote it as a Go string body.
var promptInStep = regexp.MustCompile(`prompt "((?:[^"\\]|\\.)*)"`)

// ScriptNeeds returns the agent script directives a scenario's prompts use,
// read from its steps before the run (the prompts in doc strings and quoted
// in step texts), in the order the scenario first uses each. A directive
// the profile's capabilities.script lacks makes the scenario untested when
// the step sends the prompt (steps.needPrompt), which names the first one
// the prompt lacks: so the first of this list that the profile lacks is the
// one the run will name, and the forecast names it beforehand. A prompt a
// step writes itself, or an echo prompt (capabilities.script's echo,
// checked when a step reads the answer), is left to the run.
func ScriptNeeds(pk features.Pickle) []string {
	var out []string
	for i, text := range pk.Texts {
		var prompts []string
		if arg := pk.Arg(i); arg != "" && strings.Contains(text, "prompt") {
			prompts = append(prompts, arg)
		}
		for _, m := range promptInStep.FindAllStringSubmatch(text, -1) {
			if v, err := strconv.Unquote(`"` + m[1] + `"`); err == nil {
				prompts = append(prompts, v)
			}
		}
		prompts = append(prompts, steps.StepPrompts(text)...)
		for _, prompt := range prompts {
			if !agentscript.IsScript(prompt) {
				continue
			}
			for _, line := range strings.Split(prompt, "\n") {
				word, _, _ := strings.Cut(strings.TrimSpace(line), " ")
				if name, ok := strings.CutPrefix(word, "@"); ok && slices.Contains(agentscript.Kinds(), agentscript.Kind(strings.ToLower(name))) {
					out = appendNew(out, strings.ToLower(name))
				}
			}
		}
	}
	return out
}
