package steps

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/invokeconf/invokeconf/fixtures"
	"github.com/invokeconf/invokeconf/profile"
)

// Profile needs. Before a run, the runner predicts from each scenario's step
// texts which profile fields it needs, so a profile's empty fields can be
// reported up front with the scenarios and rules they leave untested
// (runner.Gaps). A step text needs:
//
//   - the fields its ${...} placeholders read, found by expanding each
//     placeholder against the reference profile with every field blanked in
//     turn (PlaceholderNeeds): there is no table to keep;
//   - the key roles it names (the "project" key, the agent key without
//     Bearer);
//   - what its step definition reads without the text naming it, declared
//     in the step table beside the expression and the function (Def.Need).
//
// runner's TestNeedsPredictUntested proves the prediction: it blanks each
// field, runs the suite, and compares.

// StepNeeds returns the profile fields (by path, e.g. "keys.agent") that a
// step reads, sorted. text is the step's text (features.Pickle.Texts), arg
// its doc string or table cells, "" for none. The error names a placeholder
// the reference profile cannot fill, a declared need that is not a profile
// field, or a text that no step definition, or more than one, matches; the
// fields found are returned with it.
func StepNeeds(text, arg string) ([]string, error) {
	// Memoized: the answer depends on the text and arg alone, and every
	// plan (runner.Gaps) asks it for every step of every scenario.
	return stepNeeds.get([2]string{text, arg}, func() ([]string, error) { return stepNeedsOf(text, arg) })
}

// stepNeeds memoizes StepNeeds by text and arg.
var stepNeeds memo[[2]string]

// memo keeps the answers of a pure function of K that lists strings (profile
// fields, prompts); each caller gets its own copy of the list.
type memo[K comparable] struct{ m sync.Map } // K -> neededBy

type neededBy struct {
	paths []string
	err   error
}

// get returns the answer for k, computing it with f the first time.
func (c *memo[K]) get(k K, f func() ([]string, error)) ([]string, error) {
	v, ok := c.m.Load(k)
	if !ok {
		paths, err := f()
		v, _ = c.m.LoadOrStore(k, neededBy{paths, err})
	}
	n := v.(neededBy)
	return slices.Clone(n.paths), n.err
}

func stepNeedsOf(text, arg string) ([]string, error) {
	set := map[string]bool{}
	var errs []error
	add := func(paths []string, err error) {
		for _, p := range paths {
			set[p] = true
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	add(textNeeds(text + "\n" + arg))
	roles := (&profile.Keys{}).Roles()
	for _, m := range keyRoleRe.FindAllStringSubmatch(text+"\n"+arg, -1) {
		if _, ok := roles[m[1]]; ok {
			set["keys."+m[1]] = true
		}
	}
	// godog runs a step with the one definition that matches its text
	// (Strict: more than one is an error).
	var matched []string
	for _, d := range Definitions() {
		args, ok := d.Matches(text)
		if !ok {
			continue
		}
		matched = append(matched, d.Expr)
		for _, n := range d.Needs {
			add(resolveNeed(fillArgs(n, args)))
		}
	}
	if len(matched) != 1 {
		errs = append(errs, fmt.Errorf("%q matches %d step definitions %q", text, len(matched), matched))
	}
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Strings(out)
	return out, errors.Join(errs...)
}

// keyRoleRe finds a key role named in a step: the "project" key, the agent
// key without Bearer.
var keyRoleRe = regexp.MustCompile(`"?(\w+)"? key\b`)

// textNeeds returns the needs of every placeholder in a text.
func textNeeds(text string) ([]string, error) {
	var out []string
	var errs []error
	for _, m := range placeholder.FindAllStringSubmatch(text, -1) {
		n, err := PlaceholderNeeds(m[1])
		out = append(out, n...)
		if err != nil {
			errs = append(errs, err)
		}
	}
	return out, errors.Join(errs...)
}

// resolveNeed turns one declared need into field paths: a text with
// placeholders needs what they read; anything else must be a field path.
func resolveNeed(n string) ([]string, error) {
	if placeholder.MatchString(n) {
		return textNeeds(n)
	}
	for _, f := range (&profile.Profile{}).Fields() {
		if f.Path == n {
			return []string{n}, nil
		}
	}
	return nil, fmt.Errorf("declared need %q is not a profile field", n)
}

// argRef is $1, $2, ... in a declared need: the step's arguments.
var argRef = regexp.MustCompile(`\$(\d+)`)

// fillArgs puts the step's arguments into a declared need. A $ before
// anything but a digit (${...}) stays.
func fillArgs(n string, args []string) string {
	return argRef.ReplaceAllStringFunc(n, func(ref string) string {
		i, err := strconv.Atoi(ref[1:])
		if err != nil || i < 1 || i > len(args) {
			return ref
		}
		return args[i-1]
	})
}

// PlaceholderNeeds returns the profile fields a ${name} placeholder reads:
// those whose blanking makes it fail to expand against the reference
// profile. Placeholders of the form ${kind:NAME} read the scenario (threads,
// runs, markers), not the profile, and need nothing. The error says the
// reference profile cannot fill the placeholder at all (an unknown name).
func PlaceholderNeeds(name string) ([]string, error) {
	if strings.Contains(name, ":") {
		return nil, nil
	}
	// Memoized: the answer depends on the name alone, and finding it
	// expands the name against every blanked profile (every run's Gaps
	// asks for each step's placeholders).
	return placeholderNeeds.get(name, func() ([]string, error) { return placeholderNeedsOf(name) })
}

// placeholderNeeds memoizes PlaceholderNeeds by name.
var placeholderNeeds memo[string]

func placeholderNeedsOf(name string) ([]string, error) {
	ref, err := blankedProfiles()
	if err != nil {
		return nil, err
	}
	if err := expandWith(ref.full, name); err != nil {
		return nil, fmt.Errorf("${%s}: the reference profile cannot fill it: %w", name, err)
	}
	var out []string
	for _, b := range ref.blanked {
		err := expandWith(b.p, name)
		switch {
		case err == nil:
		case isMissing(err):
			out = append(out, b.path)
		default:
			return nil, fmt.Errorf("${%s} without %s: %w", name, b.path, err)
		}
	}
	return out, nil
}

// blankedProfiles is the reference profile, and a copy of it with each of
// its fields blanked in turn: made once, never changed.
var blankedProfiles = sync.OnceValues(func() (blankedSet, error) {
	ref, err := fixtures.Reference()
	if err != nil {
		return blankedSet{}, fmt.Errorf("placeholder needs: %w", err)
	}
	set := blankedSet{full: ref}
	fields := ref.Fields()
	copies := make([]*profile.Profile, len(fields))
	var wg sync.WaitGroup // a clone is a YAML round trip: one per field, side by side
	for i, f := range fields {
		if f.IsZero() {
			continue // blanking changes nothing
		}
		wg.Go(func() {
			p := ref.Clone()
			p.Fields()[i].Blank()
			copies[i] = p
		})
	}
	wg.Wait()
	for i, f := range fields {
		if copies[i] != nil {
			set.blanked = append(set.blanked, blankedProfile{f.Path, copies[i]})
		}
	}
	return set, nil
})

type blankedSet struct {
	full    *profile.Profile
	blanked []blankedProfile
}

type blankedProfile struct {
	path string
	p    *profile.Profile
}

// expandWith expands one placeholder as a scenario on profile p would.
func expandWith(p *profile.Profile, name string) error {
	w := &World{}
	w.reset(context.Background(), p, http.DefaultClient, nil)
	_, err := w.lookup(name)
	return err
}

// isMissing reports whether err says the profile lacks something.
func isMissing(err error) bool {
	var m *profile.MissingError
	_, untested := Untested(err)
	return untested || errors.As(err, &m)
}
