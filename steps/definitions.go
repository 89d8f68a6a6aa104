package steps

import (
	"fmt"
	"path"
	"regexp"
	"runtime"
	"strings"
	"sync"

	"github.com/cucumber/godog"
)

// Def is one step definition, as data: the expression a step's text must
// match, the function it runs, what it reads of the profile beyond its text,
// the rule it asserts and where it is defined. The step table (Definitions)
// lists every one; godog, the profile-needs prediction and the reports'
// step locations all read that table, and nothing registers a step anywhere
// else.
type Def struct {
	// Expr is the step's regular expression.
	Expr string
	// Needs are the profile fields its function reads that its text does not
	// name (placeholders and key roles in the text are found without help):
	// a field path ("keys.bundles"), or a text with placeholders the function
	// expands ("/api/invoke/${agents.main.id}"); $1, $2, ... stand for the
	// step's arguments ("bundles.export.dropped.$1").
	Needs []string
	// Rule is the catalog rule the step asserts in whatever scenario it
	// stands ("SSE-05"). "" for a step that asserts its scenario's own rule
	// (the status a scenario expects, the text an answer holds) or whose
	// failures name their rule themselves (a prerequisite, a shared check).
	Rule string
	// Location is the table line that defines the step ("steps/sse.go:40").
	Location string
	// AboutTheRun says the step judges what the agent did on the run (its
	// tools, model, answer, events): a failure of it is explained too by
	// the rules the run rests on (World.runRules), should one of them fail
	// in its own scenarios.
	AboutTheRun bool
	// Prompts returns the prompts its function sends that its text does not
	// show (a cell's script), from the step's arguments: what a forecast of
	// the agent's capabilities reads beside the prompts in the text.
	Prompts func(args []string) []string

	re *regexp.Regexp
	// bind returns the function godog calls for the step in one scenario:
	// the step's function on the scenario's World, its error settled
	// (World.settle) before godog or a report sees it.
	bind func(w *World, d *Def) any
}

// Need returns d with the profile fields its function reads.
func (d Def) Need(paths ...string) Def {
	d.Needs = append(append([]string(nil), d.Needs...), paths...)
	return d
}

// Asserts returns d with the rule it asserts.
func (d Def) Asserts(rule string) Def { d.Rule = rule; return d }

// Sends returns d with the prompts its function sends unseen in its text.
func (d Def) Sends(prompts func(args []string) []string) Def { d.Prompts = prompts; return d }

// AboutRun returns d marked as judging what the agent did on the run.
func (d Def) AboutRun() Def { d.AboutTheRun = true; return d }

// arg is a type godog can pass a step function: a captured group as text or
// a number, or the step's doc string.
type arg interface {
	string | int | *godog.DocString
}

// newDef returns a definition located at its caller's caller: the table
// line that calls step0..step5.
func newDef(expr string, bind func(w *World, d *Def) any) Def {
	_, file, line, _ := runtime.Caller(2)
	return Def{Expr: expr, Location: relative(file, line), bind: bind}
}

// step0 .. step5 define a step whose function takes the scenario's World
// and 0 to 5 arguments. Each binds by a plain closure: godog reads the
// argument types from it.
func step0(expr string, fn func(*World) error) Def {
	return newDef(expr, func(w *World, d *Def) any {
		return func() error { return w.settle(d, fn(w)) }
	})
}

func step1[A arg](expr string, fn func(*World, A) error) Def {
	return newDef(expr, func(w *World, d *Def) any {
		return func(a A) error { return w.settle(d, fn(w, a)) }
	})
}

func step2[A, B arg](expr string, fn func(*World, A, B) error) Def {
	return newDef(expr, func(w *World, d *Def) any {
		return func(a A, b B) error { return w.settle(d, fn(w, a, b)) }
	})
}

func step3[A, B, C arg](expr string, fn func(*World, A, B, C) error) Def {
	return newDef(expr, func(w *World, d *Def) any {
		return func(a A, b B, c C) error { return w.settle(d, fn(w, a, b, c)) }
	})
}

func step4[A, B, C, D arg](expr string, fn func(*World, A, B, C, D) error) Def {
	return newDef(expr, func(w *World, d *Def) any {
		return func(a A, b B, c C, e D) error { return w.settle(d, fn(w, a, b, c, e)) }
	})
}

func step5[A, B, C, D, E arg](expr string, fn func(*World, A, B, C, D, E) error) Def {
	return newDef(expr, func(w *World, d *Def) any {
		return func(a A, b B, c C, e D, f E) error { return w.settle(d, fn(w, a, b, c, e, f)) }
	})
}

// stepTable lists the step groups, one per spec area.
func stepTable() []Def {
	var all []Def
	for _, group := range [][]Def{
		requestDefs(), formatDefs(), sseDefs(), eventDefs(), asyncDefs(), errorDefs(), toolDefs(), bundleDefs(), exportDefs(), cellDefs(),
	} {
		all = append(all, group...)
	}
	return all
}

// table is the step table, its expressions compiled once: godog would
// compile each again for every scenario. It is built on first use and never
// changes.
var table = sync.OnceValues(func() ([]Def, error) {
	defs := stepTable()
	seen := map[string]string{}
	for i := range defs {
		d := &defs[i]
		if at, dup := seen[d.Expr]; dup {
			return nil, fmt.Errorf("step %q is defined twice: %s and %s", d.Expr, at, d.Location)
		}
		seen[d.Expr] = d.Location
		re, err := regexp.Compile(d.Expr)
		if err != nil {
			return nil, fmt.Errorf("step %q (%s): %w", d.Expr, d.Location, err)
		}
		d.re = re
	}
	return defs, nil
})

// Definitions returns the step table: every step definition, in the order
// of the groups. It panics on a malformed table, which TestStepTable keeps
// from being committed.
func Definitions() []Def {
	defs, err := table()
	if err != nil {
		panic(err)
	}
	return defs
}

// DefinitionOf returns the step definition whose expression matches a
// step's text, as godog matches it (one at most: the suite is strict).
func DefinitionOf(text string) (Def, bool) {
	for _, d := range Definitions() {
		if d.re.MatchString(text) {
			return d, true
		}
	}
	return Def{}, false
}

// Matches reports whether the step's expression matches a step's text, and
// returns its arguments.
func (d Def) Matches(text string) (args []string, ok bool) {
	m := d.re.FindStringSubmatch(text)
	if m == nil {
		return nil, false
	}
	return m[1:], true
}

// StepPrompts returns the prompts the step definition that text matches
// sends without its text showing them (Def.Prompts), before expansion;
// nil for none.
func StepPrompts(text string) []string {
	// Memoized as StepNeeds is: every forecast asks it for every step.
	out, _ := stepPrompts.get(text, func() ([]string, error) {
		var out []string
		for _, d := range Definitions() {
			if args, ok := d.Matches(text); ok && d.Prompts != nil {
				out = append(out, d.Prompts(args)...)
			}
		}
		return out, nil
	})
	return out
}

// stepPrompts memoizes StepPrompts by text.
var stepPrompts memo[string]

// moduleRoot is the folder that holds this package's folder.
var moduleRoot = func() string {
	_, file, _, _ := runtime.Caller(0)
	return path.Dir(path.Dir(file))
}()

// relative names a file by its path in the module ("steps/sse.go:40").
func relative(file string, line int) string {
	return fmt.Sprintf("%s:%d", strings.TrimPrefix(file, moduleRoot+"/"), line)
}
