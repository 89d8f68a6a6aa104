package runner

import (
	"runtime"
	"sort"
	"sync"

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

// warmNeeds reads the needs of every step the plan runs, on every core:
// steps.StepNeeds keeps them, and reading them one by one is most of what
// planning a run costs.
func warmNeeds(plan *testrun.Plan) {
	type step struct{ text, arg string }
	seen := map[step]bool{}
	var todo []step
	for _, pl := range plan.Scenarios {
		if pl.Status != testrun.Runs {
			continue
		}
		for i, text := range pl.Texts {
			if st := (step{text, pl.Arg(i)}); !seen[st] {
				seen[st] = true
				todo = append(todo, st)
			}
		}
	}
	next := make(chan step)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for st := range next {
				_, _ = steps.StepNeeds(st.text, st.arg) // an error comes again where it is read
			}
		})
	}
	for _, st := range todo {
		next <- st
	}
	close(next)
	wg.Wait()
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
	if len(empty) > 0 {
		warmNeeds(plan)
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
		if pl.Status != testrun.Runs || len(empty) == 0 {
			continue // nothing to read a scenario's needs for
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
