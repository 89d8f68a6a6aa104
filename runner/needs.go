package runner

import (
	"sort"

	"github.com/invokeconf/invokeconf/features"
	"github.com/invokeconf/invokeconf/profile"
	"github.com/invokeconf/invokeconf/steps"
	"github.com/invokeconf/invokeconf/testrun"
)

// The profile fields a scenario needs are read from its step texts before a
// run (steps.StepNeeds), so that a profile's gaps can be reported up front
// with what they disable. The steps themselves decide at run time (a missing
// field makes a scenario untested); TestNeedsPredictUntested shows this
// prediction agrees with them.

// Needs returns the profile fields (by path, e.g. "keys.agent") that a
// scenario's steps use, sorted. A step whose needs cannot be read (an unknown
// placeholder) adds those that can: the scenario fails at run time anyway,
// and TestNeedsResolve keeps the features free of such steps.
func Needs(pk features.Pickle) []string {
	set := map[string]bool{}
	for i, text := range pk.Texts {
		paths, _ := steps.StepNeeds(text, pk.Arg(i))
		for _, p := range paths {
			set[p] = true
		}
	}
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// Gaps lists the profile's empty fields that planned scenarios need, and
// the capabilities that leave scenarios untested (left out, or a @needs one
// declared false), with the scenarios and rules each leaves untested.
// Scenarios the plan does not select, or makes not applicable, are left
// out.
func Gaps(p *profile.Profile, plan *testrun.Plan) []testrun.Gap {
	empty := map[string]string{} // path -> env
	for _, f := range p.Fields() {
		if f.IsZero() {
			empty[f.Path] = f.Env
		}
	}
	byPath := map[string]*testrun.Gap{}
	for _, pl := range plan.Scenarios {
		if pl.Status == testrun.Untested && pl.Capability != "" {
			// A capability left out, or a @needs one declared false: the
			// plan leaves the scenario untested.
			path := "capabilities." + pl.Capability
			g := byPath[path]
			if g == nil {
				g = &testrun.Gap{Path: path, Env: profile.EnvName(path)}
				byPath[path] = g
			}
			g.Scenarios = append(g.Scenarios, pl.ID)
			continue
		}
		if pl.Status != testrun.Runs {
			continue
		}
		for _, need := range Needs(pl.Pickle) {
			env, ok := empty[need]
			if !ok {
				continue
			}
			g := byPath[need]
			if g == nil {
				g = &testrun.Gap{Path: need, Env: env}
				byPath[need] = g
			}
			g.Scenarios = append(g.Scenarios, pl.ID)
		}
	}
	var out []testrun.Gap
	for _, g := range byPath {
		rules := map[string]bool{}
		for _, pl := range plan.Scenarios {
			if contains(g.Scenarios, pl.ID) {
				for _, id := range pl.Rules {
					if plan.InScope(id) {
						rules[id] = true
					}
				}
			}
		}
		g.Rules = []string{}
		for id := range rules {
			g.Rules = append(g.Rules, id)
		}
		sort.Strings(g.Rules)
		out = append(out, *g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
