package steps

import (
	"fmt"
	"path"
	"runtime"
	"strings"
	"sync"
)

// Definition is a step definition as a report names it: its expression and
// where it is bound to its handler.
type Definition struct {
	Expr string
	// Location is "steps/FILE.go:LINE", relative to the module: the line of
	// the step(...) call that binds the expression to its handler (a method
	// it names, or a func literal that starts there). godog itself would
	// name the one line inside bind() where every step reaches sc.Step.
	Location string
}

// DefinitionOf returns the step definition whose expression matches a
// step's text, as godog matches it (one at most: the suite is strict).
func DefinitionOf(text string) (Definition, bool) {
	for _, d := range registeredSteps() {
		if d.re.MatchString(text) {
			return Definition{Expr: d.expr, Location: definedAt(d)}, true
		}
	}
	return Definition{}, false
}

// Definitions returns every step definition, in the order they were
// first registered.
func Definitions() []Definition {
	var out []Definition
	for _, d := range registeredSteps() {
		out = append(out, Definition{Expr: d.expr, Location: definedAt(d)})
	}
	return out
}

// sites holds, per registered step, where its step() call is.
var sites sync.Map // *registeredStep -> string

// noteSite remembers where d was bound: step() calls it, so the caller two
// frames up is the step group's step(...) line.
func noteSite(d *registeredStep) {
	if _, ok := sites.Load(d); ok {
		return
	}
	_, file, line, ok := runtime.Caller(2)
	if !ok {
		return
	}
	sites.LoadOrStore(d, relative(file, line))
}

func definedAt(d *registeredStep) string {
	if v, ok := sites.Load(d); ok {
		return v.(string)
	}
	return ""
}

// moduleRoot is the folder that holds this package's folder.
var moduleRoot = func() string {
	_, file, _, _ := runtime.Caller(0)
	return path.Dir(path.Dir(file))
}()

// relative names a file by its path in the module ("steps/sse.go:40").
func relative(file string, line int) string {
	return fmt.Sprintf("%s:%d", strings.TrimPrefix(file, moduleRoot+"/"), line)
}
