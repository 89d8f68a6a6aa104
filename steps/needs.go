package steps

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/cucumber/godog"

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
//     where the step is registered: every step is registered with step(),
//     which takes those needs beside the expression and the function.
//
// runner's TestNeedsPredictUntested proves the prediction: it blanks each
// field, runs the suite, and compares.

// StepNeeds returns the profile fields (by path, e.g. "keys.agent") that a
// step reads, sorted. text is the step's text (features.Pickle.Texts), arg
// its doc string or table cells, "" for none. The error names a placeholder
// the reference profile cannot fill, a declared need that is not a profile
// field, or a text that no step definition, or more than one, matches; the
// fields found are returned with it. Results are cached and shared: callers
// must not change them.
func StepNeeds(text, arg string) ([]string, error) {
	key := text + "\x00" + arg
	if r, ok := stepNeedsCache.Load(key); ok {
		r := r.(needsResult)
		return r.needs, r.err
	}
	needs, err := stepNeeds(text, arg)
	stepNeedsCache.Store(key, needsResult{needs, err})
	return needs, err
}

// stepNeedsCache holds StepNeeds by step: a gap report asks for every step
// of every scenario.
var stepNeedsCache sync.Map

func stepNeeds(text, arg string) ([]string, error) {
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
	for _, d := range registeredSteps() {
		m := d.re.FindStringSubmatch(text)
		if m == nil {
			continue
		}
		matched = append(matched, d.expr)
		for _, n := range d.needs {
			add(resolveNeed(fillArgs(n, m[1:])))
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

// registeredStep is a step definition with the profile fields its function
// reads beyond those its text names.
type registeredStep struct {
	expr  string
	re    *regexp.Regexp
	needs []string
}

var registered struct {
	sync.Mutex
	once   sync.Once
	steps  []*registeredStep // in the order they were first registered
	byExpr map[string]*registeredStep
}

// step registers a step definition, like sc.Step, together with what its
// function reads of the profile that the step text does not name
// (placeholders and key roles in the text are found without help). Each need
// is a field path ("keys.bundles", "capabilities.researchMode") or a text
// with placeholders that the step expands ("/api/invoke/${agents.main.id}"),
// which needs what its placeholders read; $1, $2, ... stand for the step's
// arguments ("bundles.export.dropped.$1", "/api/invoke/${agents.$2.id}").
//
// Every step of the package is registered with it, so whoever adds a step
// sees where its needs go; a step registered with sc.Step directly leaves
// the feature texts that use it unmatched (TestNeedsResolve). The expression
// is compiled once, not once per scenario as sc.Step would: godog sets every
// step up again for each scenario.
func step(sc *godog.ScenarioContext, expr string, fn any, needs ...string) {
	d, err := register(expr, needs)
	if err != nil {
		panic(err)
	}
	noteSite(d)
	bind(sc, d, fn)
}

// register records a step definition with its needs, once per expression.
// An expression registered again with other needs is an error: the needs of
// a step would depend on which registration ran first.
func register(expr string, needs []string) (*registeredStep, error) {
	registered.Lock()
	defer registered.Unlock()
	d, ok := registered.byExpr[expr]
	if !ok {
		re, err := regexp.Compile(expr)
		if err != nil {
			return nil, fmt.Errorf("step %q: %w", expr, err)
		}
		if registered.byExpr == nil {
			registered.byExpr = map[string]*registeredStep{}
		}
		d = &registeredStep{expr: expr, re: re, needs: append([]string(nil), needs...)}
		registered.byExpr[expr] = d
		registered.steps = append(registered.steps, d)
		return d, nil
	}
	if strings.Join(d.needs, "\x00") != strings.Join(needs, "\x00") {
		return nil, fmt.Errorf("step %q is registered twice, needing %q and %q", expr, d.needs, needs)
	}
	return d, nil
}

// bind binds a registered step to a scenario. The error the step returns
// is cleaned by the scenario's World (cleanErr) before godog sees it, so no
// writer (godog's cucumber formatter included) ever gets a key or a raw
// target byte from a step.
func bind(sc *godog.ScenarioContext, d *registeredStep, fn any) {
	if w, ok := binding.Load(sc); ok {
		fn = cleaning(w.(*World), fn)
	}
	sc.Step(d.re, fn)
}

// binding holds the World of each scenario context while its steps are
// bound (Suite.InitializeScenario).
var binding sync.Map

var errorType = reflect.TypeOf((*error)(nil)).Elem()

// cleaning returns fn with its error result passed through w.cleanErr.
// The function keeps its type: godog reads a step's arguments from it.
func cleaning(w *World, fn any) any {
	v := reflect.ValueOf(fn)
	t := v.Type()
	if t.Kind() != reflect.Func || t.NumOut() == 0 || t.Out(t.NumOut()-1) != errorType {
		return fn
	}
	last := t.NumOut() - 1
	return reflect.MakeFunc(t, func(args []reflect.Value) []reflect.Value {
		var out []reflect.Value
		if t.IsVariadic() {
			out = v.CallSlice(args)
		} else {
			out = v.Call(args)
		}
		if err, _ := out[last].Interface().(error); err != nil {
			out[last] = reflect.ValueOf(w.cleanErr(err)).Convert(errorType)
		}
		return out
	}).Interface()
}

// registeredSteps returns every step definition with its needs. They are
// recorded as the step groups register their steps, so the first call
// registers them once, on a godog context that only lists step definitions.
func registeredSteps() []*registeredStep {
	registered.once.Do(func() {
		godog.TestSuite{
			Name:                "invokeconf-needs",
			ScenarioInitializer: (&Suite{Profile: &profile.Profile{}}).InitializeScenario,
			Options:             &godog.Options{ShowStepDefinitions: true, Format: "progress", Output: io.Discard, NoColors: true},
		}.Run()
	})
	registered.Lock()
	defer registered.Unlock()
	return registered.steps
}

// PlaceholderNeeds returns the profile fields a ${name} placeholder reads:
// those whose blanking makes it fail to expand against the reference
// profile. Placeholders of the form ${kind:NAME} read the scenario (threads,
// runs, markers), not the profile, and need nothing. The error says the
// reference profile cannot fill the placeholder at all (an unknown name).
// Results are cached and shared: callers must not change them.
func PlaceholderNeeds(name string) ([]string, error) {
	if strings.Contains(name, ":") {
		return nil, nil
	}
	pc := &placeholderCache
	pc.once.Do(pc.init)
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if r, ok := pc.results[name]; ok {
		return r.needs, r.err
	}
	r := pc.evaluate(name)
	pc.results[name] = r
	return r.needs, r.err
}

// placeholderNeedsCache holds the reference profile with each field blanked,
// made once, and the needs found for each placeholder.
type placeholderNeedsCache struct {
	once    sync.Once
	err     error
	full    *profile.Profile
	blanked []blankedProfile
	mu      sync.Mutex
	results map[string]needsResult
}

var placeholderCache placeholderNeedsCache

type blankedProfile struct {
	path string
	p    *profile.Profile
}

// needsResult is what PlaceholderNeeds or StepNeeds found.
type needsResult struct {
	needs []string
	err   error
}

func (pc *placeholderNeedsCache) init() {
	pc.results = map[string]needsResult{}
	ref, err := fixtures.Reference()
	if err != nil {
		pc.err = fmt.Errorf("placeholder needs: %w", err)
		return
	}
	pc.full = ref
	for i, f := range ref.Fields() {
		if f.IsZero() {
			continue // blanking changes nothing
		}
		p := ref.Clone()
		p.Fields()[i].Blank()
		pc.blanked = append(pc.blanked, blankedProfile{f.Path, p})
	}
}

func (pc *placeholderNeedsCache) evaluate(name string) needsResult {
	if pc.err != nil {
		return needsResult{err: pc.err}
	}
	if err := expandWith(pc.full, name); err != nil {
		return needsResult{err: fmt.Errorf("${%s}: the reference profile cannot fill it: %w", name, err)}
	}
	var out []string
	for _, b := range pc.blanked {
		err := expandWith(b.p, name)
		switch {
		case err == nil:
		case isMissing(err):
			out = append(out, b.path)
		default:
			return needsResult{err: fmt.Errorf("${%s} without %s: %w", name, b.path, err)}
		}
	}
	return needsResult{needs: out}
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
