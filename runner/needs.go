package runner

import (
	"regexp"
	"sort"
	"strings"

	"github.com/invokeconf/invokeconf/features"
	"github.com/invokeconf/invokeconf/profile"
)

// The profile fields a scenario needs are read from its step texts before a
// run, so that a profile's gaps can be reported up front with what they
// disable. The steps themselves decide at run time (a missing field makes a
// scenario untested); TestNeedsPredictUntested shows this prediction agrees
// with them.

var (
	placeholderRe = regexp.MustCompile(`\$\{([A-Za-z0-9_.]+)\}`)
	keyRoleRe     = regexp.MustCompile(`"?(\w+)"? key\b`)
)

// implicitNeeds are step phrases that use profile fields without naming
// them: the thread set-up steps run on the main agent with the agent key.
var implicitNeeds = []struct {
	phrase *regexp.Regexp
	paths  []string
}{
	{regexp.MustCompile(`on the main agent|^run "\w+" on thread "\w+" said`), []string{"keys.agent", "agents.main.id"}},
}

// Needs returns the profile fields (by path, e.g. "keys.agent") that a
// scenario's steps use.
func Needs(pk features.Pickle) []string {
	fields := map[string]bool{}
	for _, f := range (&profile.Profile{}).Fields() {
		fields[f.Path] = true
	}
	roles := (&profile.Keys{}).Roles()
	set := map[string]bool{}
	for _, st := range pk.Steps {
		for _, m := range placeholderRe.FindAllStringSubmatch(st, -1) {
			for _, p := range placeholderNeeds(m[1], fields) {
				set[p] = true
			}
		}
		for _, m := range keyRoleRe.FindAllStringSubmatch(st, -1) {
			if _, ok := roles[m[1]]; ok {
				set["keys."+m[1]] = true
			}
		}
		for _, in := range implicitNeeds {
			if in.phrase.MatchString(st) {
				for _, p := range in.paths {
					set[p] = true
				}
			}
		}
	}
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// placeholderNeeds maps a ${...} placeholder to the fields it reads. A
// field of a role needs the role's id too (the steps look the role up by
// it): ${agents.main.alias} reads the agent's id and alias,
// ${agents.main.plainTool} its id and tools.
func placeholderNeeds(name string, fields map[string]bool) []string {
	var out []string
	if fields[name] {
		out = append(out, name)
	}
	parts := strings.Split(name, ".")
	if len(parts) < 2 {
		return out
	}
	owner := strings.Join(parts[:len(parts)-1], ".")
	if fields[owner+".id"] && name != owner+".id" {
		out = append(out, owner+".id")
	}
	if parts[len(parts)-1] == "plainTool" && fields[owner+".tools"] {
		out = append(out, owner+".tools")
	}
	return out
}

// Gap is a profile field left empty that scenarios need.
type Gap struct {
	Path string `json:"path"`
	Env  string `json:"env"`
	// Scenarios are the IDs of the scenarios it leaves untested.
	Scenarios []string `json:"scenarios"`
	// Rules are the rules none of whose scenarios can run without it: they
	// will be reported untested.
	Rules []string `json:"rules"`
	// Weakened are rules that lose some scenarios but keep others.
	Weakened []string `json:"weakened,omitempty"`
}

// Gaps lists the profile's empty fields that planned scenarios need, with
// the scenarios and rules each leaves untested. Scenarios the plan does not
// run are left out.
func Gaps(p *profile.Profile, plan *Plan) []Gap {
	empty := map[string]string{} // path -> env
	for _, f := range p.Fields() {
		if f.IsZero() {
			empty[f.Path] = f.Env
		}
	}
	byPath := map[string]*Gap{}
	blocked := map[string]bool{} // scenario IDs blocked by some gap
	for _, pl := range plan.Scenarios {
		if pl.Status != "" {
			continue
		}
		for _, need := range Needs(pl.Pickle) {
			env, ok := empty[need]
			if !ok {
				continue
			}
			g := byPath[need]
			if g == nil {
				g = &Gap{Path: need, Env: env}
				byPath[need] = g
			}
			g.Scenarios = append(g.Scenarios, pl.ID)
			blocked[pl.ID] = true
		}
	}
	// A rule is lost when every scenario of it that runs is blocked.
	runnable := map[string]int{}
	for _, pl := range plan.Scenarios {
		if pl.Status == "" && !blocked[pl.ID] {
			for _, id := range pl.Rules {
				runnable[id]++
			}
		}
	}
	var out []Gap
	for _, g := range byPath {
		rules := map[string]bool{}
		for _, pl := range plan.Scenarios {
			if contains(g.Scenarios, pl.ID) {
				for _, id := range pl.Rules {
					rules[id] = true
				}
			}
		}
		for id := range rules {
			if runnable[id] == 0 {
				g.Rules = append(g.Rules, id)
			} else {
				g.Weakened = append(g.Weakened, id)
			}
		}
		sort.Strings(g.Rules)
		sort.Strings(g.Weakened)
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
