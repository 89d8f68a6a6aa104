package runner

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/invokeconf/invokeconf/features"
	"github.com/invokeconf/invokeconf/internal/suggest"
	"github.com/invokeconf/invokeconf/profile"
	"github.com/invokeconf/invokeconf/testrun"
)

// Tags that tie a scenario to a capability of the profile (see README,
// "Capabilities"). NAME is a field of the profile's capabilities section.
const (
	// CapabilityTag marks a scenario that checks an optional capability the
	// spec lets a target lack: @capability-NAME. A profile that declares
	// NAME false makes the scenario "not applicable".
	CapabilityTag = "@capability-"
	// NeedsTag marks a scenario that needs something of the target only the
	// harness cares about: @needs-NAME. A profile that declares NAME false
	// leaves the scenario "untested", with the reason named.
	NeedsTag = "@needs-"
	// SlowTag marks the scenarios --quick leaves out.
	SlowTag = "@slow"
	// ContractTag marks a scenario that drives this project's bundle
	// contract (docs/bundles.md): it installs or updates through the
	// contract's routes, reads the installation record or trips its test
	// hooks. Under --spec-only, a profile that names no routes makes it
	// "not applicable": the spec defines no install route, so its rules
	// are judged by their other scenarios, or not applicable without the
	// contract. TestContractTag keeps the tag on exactly the scenarios
	// whose steps need the routes or the test hooks.
	ContractTag = "@bundle-contract"
)

// ContractReason is why a scenario that needs the bundle contract is not
// applicable in a --spec-only run.
const ContractReason = "not applicable without this project's bundle contract (--spec-only): it installs or updates " +
	"through the contract's routes (docs/bundles.md), which the spec does not define and the profile does not name"

// SelectionError is bad usage: an unknown rule, area or tag expression.
type SelectionError struct{ msg string }

func (e *SelectionError) Error() string { return e.msg }

// NewPlan decides, for every scenario of the features, whether it runs
// against the target p describes.
func NewPlan(p *profile.Profile, sel testrun.Selection) (*testrun.Plan, error) {
	rules, err := features.Rules()
	if err != nil {
		return nil, err
	}
	pickles, err := features.Pickles()
	if err != nil {
		return nil, err
	}
	if err := checkTagExpr(sel.Tags); err != nil {
		return nil, err
	}
	plan := &testrun.Plan{Selection: sel}
	var groups []string
	if sel.Scoped() {
		scope, err := scopeOf(rules, sel)
		if err != nil {
			return nil, err
		}
		plan.Scope = scope
		var tags []string
		for id := range scope {
			tags = append(tags, "@"+id)
		}
		sort.Strings(tags)
		if len(tags) > 0 {
			groups = append(groups, strings.Join(tags, ","))
		}
	}
	if sel.Tags != "" {
		groups = append(groups, sel.Tags)
	}
	if sel.Quick {
		groups = append(groups, "~"+SlowTag)
	}
	selected := strings.Join(groups, " && ")
	excluded := map[string]bool{}
	for _, pk := range pickles {
		pl := testrun.Planned{Pickle: pk, Example: exampleValues(pk)}
		switch {
		case sel.Scoped() && !anyIn(pk.Rules, plan.Scope):
			pl.Status, pl.Reason = testrun.NotSelected, "outside "+scopeFlags(sel)
		case !matchTags(selected, pk.Tags):
			pl.Status, pl.Reason = testrun.NotSelected, "excluded by "+sel.String()
		case sel.SpecOnly && len(p.Routes) == 0 && slices.Contains(pk.Tags, ContractTag):
			pl.Status, pl.Reason, pl.Contract = testrun.NotApplicable, ContractReason, true
			excluded[ContractTag] = true
		default:
			status, reason, tag, err := applicability(p, pk.Tags)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", pk.ID, err)
			}
			if status != testrun.Runs {
				pl.Status, pl.Reason = status, reason
				pl.Capability = strings.TrimPrefix(strings.TrimPrefix(tag, CapabilityTag), NeedsTag)
				excluded[tag] = true
			}
		}
		plan.Scenarios = append(plan.Scenarios, pl)
	}
	if err := selectsSomething(plan, rules, groups); err != nil {
		return nil, err
	}
	var ex []string
	for tag := range excluded {
		ex = append(ex, "~"+tag)
	}
	sort.Strings(ex)
	plan.Expr = strings.Join(append(nonEmpty(selected), ex...), " && ")
	plan.Gaps = Gaps(p, plan)
	return plan, nil
}

// selectsSomething refuses a selection that leaves no scenario at all: bad
// usage, said with what left everything out.
func selectsSomething(plan *testrun.Plan, rules []features.Rule, groups []string) error {
	for _, s := range plan.Scenarios {
		if s.Status != testrun.NotSelected {
			return nil
		}
	}
	sel := plan.Selection
	msg := "the selection " + sel.String() + " leaves no scenario to run"
	switch {
	case plan.Scope != nil && len(plan.Scope) == 0:
		msg += " (it names only rules of this project's contract, which --spec-only leaves out)"
	case sel.Quick && selectsWithout(plan, groups, "~"+SlowTag):
		msg += " (its scenarios are all @slow, which --quick leaves out: drop --quick)"
	case sel.Tags != "" && selectsWithout(plan, groups, sel.Tags):
		msg += " (--tags '" + sel.Tags + "' leaves out every scenario of its rules)"
	default:
		var none []string
		for _, r := range rules {
			if plan.InScope(r.ID) {
				none = append(none, r.ID)
			}
		}
		msg += " (no scenario checks " + strings.Join(none, " ") + ")"
	}
	return &SelectionError{msg + "; see 'invokeconf rules'"}
}

// selectsWithout reports whether the selection would keep a scenario in
// scope without one of its tag groups.
func selectsWithout(plan *testrun.Plan, groups []string, group string) bool {
	var rest []string
	for _, g := range groups {
		if g != group {
			rest = append(rest, g)
		}
	}
	expr := strings.Join(rest, " && ")
	for _, s := range plan.Scenarios {
		if (plan.Scope == nil || anyIn(s.Rules, plan.Scope)) && matchTags(expr, s.Tags) {
			return true
		}
	}
	return false
}

// applicability checks a scenario's capability tags against the profile.
// A capability the profile declares false makes a @capability scenario not
// applicable and a @needs scenario untested; one the profile leaves out
// leaves either untested, since nothing says the target lacks it. It returns
// the tag that excludes the scenario, if any.
func applicability(p *profile.Profile, tags []string) (status testrun.Status, reason, tag string, err error) {
	for _, t := range tags {
		var name string
		kind := testrun.Untested
		switch {
		case strings.HasPrefix(t, CapabilityTag):
			name, kind = strings.TrimPrefix(t, CapabilityTag), testrun.NotApplicable
		case strings.HasPrefix(t, NeedsTag):
			name = strings.TrimPrefix(t, NeedsTag)
		default:
			continue
		}
		on, known := p.Capability(name)
		if !known {
			return testrun.Runs, "", "", fmt.Errorf("tag %s names no capability of the profile%s", t, suggest.DidYouMean(name, profile.CapabilityNames()))
		}
		switch {
		case on:
			continue
		case !p.CapabilityDeclared(name):
			return testrun.Untested, "the profile does not declare capabilities." + name + " (true or false): declare it to have these scenarios judged", t, nil
		case kind == testrun.NotApplicable:
			return kind, "the profile declares capabilities." + name + " false: the target lacks this optional capability", t, nil
		}
		return kind, "the profile declares capabilities." + name + " false, and this scenario needs it", t, nil
	}
	return testrun.Runs, "", "", nil
}

// scopeOf resolves --rules, --areas and --spec-only to a set of rule IDs.
func scopeOf(rules []features.Rule, sel testrun.Selection) (map[string]bool, error) {
	var ids, areaNames []string
	areas := map[string]bool{}
	byID := map[string]features.Rule{}
	for _, r := range rules {
		byID[r.ID] = r
		ids = append(ids, r.ID)
		if !areas[r.Area] {
			areaNames = append(areaNames, r.Area)
		}
		areas[r.Area] = true
	}
	sort.Strings(areaNames)
	scope := map[string]bool{}
	var problems []string
	for _, id := range sel.Rules {
		id = strings.ToUpper(strings.TrimPrefix(strings.TrimSpace(id), "@"))
		if _, ok := byID[id]; !ok {
			problems = append(problems, "unknown rule "+id+suggest.DidYouMean(id, ids))
			continue
		}
		scope[id] = true
	}
	if len(problems) > 0 {
		return nil, &SelectionError{"--rules: " + strings.Join(problems, "; ") + " (see 'invokeconf rules')"}
	}
	for _, a := range sel.Areas {
		a = strings.ToLower(strings.TrimPrefix(strings.TrimSpace(a), "@"))
		if !areas[a] {
			problems = append(problems, "unknown area "+a+suggest.DidYouMean(a, areaNames))
			continue
		}
		for _, r := range rules {
			if r.Area == a {
				scope[r.ID] = true
			}
		}
	}
	if len(problems) > 0 {
		return nil, &SelectionError{fmt.Sprintf("--areas: %s (known: %s)", strings.Join(problems, "; "), strings.Join(areaNames, ", "))}
	}
	if len(sel.Rules) == 0 && len(sel.Areas) == 0 {
		for _, id := range ids {
			scope[id] = true
		}
	}
	if sel.SpecOnly {
		for id := range scope {
			if byID[id].Source == features.SourceContract {
				delete(scope, id)
			}
		}
	}
	return scope, nil
}

// scopeFlags names the flags that narrow a selection by rule.
func scopeFlags(sel testrun.Selection) string {
	var flags []string
	if len(sel.Rules) > 0 {
		flags = append(flags, "--rules")
	}
	if len(sel.Areas) > 0 {
		flags = append(flags, "--areas")
	}
	if sel.SpecOnly {
		flags = append(flags, "--spec-only (a rule of this project's contract)")
	}
	return strings.Join(flags, "/")
}

// exampleValues returns the cells of an outline row ("a, b"), read from the
// feature file at the pickle's line; "" for a plain scenario.
func exampleValues(pk features.Pickle) string {
	b, err := features.FS.ReadFile(pk.File)
	if err != nil {
		return ""
	}
	lines := strings.Split(string(b), "\n")
	if pk.Line < 1 || pk.Line > len(lines) {
		return ""
	}
	row := strings.TrimSpace(lines[pk.Line-1])
	if !strings.HasPrefix(row, "|") {
		return ""
	}
	var cells []string
	for _, c := range strings.Split(strings.Trim(row, "|"), "|") {
		cells = append(cells, strings.TrimSpace(c))
	}
	return strings.Join(cells, ", ")
}

func anyIn(ids []string, set map[string]bool) bool {
	for _, id := range ids {
		if set[id] {
			return true
		}
	}
	return false
}

func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}
