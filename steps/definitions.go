package steps

import (
	"fmt"
	"path"
	"reflect"
	"runtime"
	"strings"
	"sync"
)

// Definition is a step definition as a report names it: its expression and
// where the function that runs it is defined.
type Definition struct {
	Expr string
	// Location is "steps/FILE.go:LINE", relative to the module: the line
	// of the handler's func (a func literal's, or a method's declaration).
	// A handler whose func cannot be found is located at its step() call.
	Location string
}

// DefinitionOf returns the step definition whose expression matches a
// step's text, as godog matches it (one at most: the suite is strict).
func DefinitionOf(text string) (Definition, bool) {
	for _, d := range registeredSteps() {
		if d.re.MatchString(text) {
			return Definition{Expr: d.expr, Location: handlerLocation(d)}, true
		}
	}
	return Definition{}, false
}

// Definitions returns every step definition, in the order they were
// first registered.
func Definitions() []Definition {
	var out []Definition
	for _, d := range registeredSteps() {
		out = append(out, Definition{Expr: d.expr, Location: handlerLocation(d)})
	}
	return out
}

// handlers holds, per registered step, its handler's entry PC and the
// call site of its step() call, the first time it is registered.
var handlers sync.Map // *registeredStep -> handlerSite

type handlerSite struct {
	pc       uintptr
	file     string
	line     int
	once     sync.Once
	location string
}

// noteHandler remembers the handler of a step definition; step() calls it,
// so the caller two frames up is the step group that registered it.
func noteHandler(d *registeredStep, fn any) {
	if _, ok := handlers.Load(d); ok {
		return
	}
	h := &handlerSite{}
	if v := reflect.ValueOf(fn); v.Kind() == reflect.Func {
		h.pc = v.Pointer()
	}
	_, h.file, h.line, _ = runtime.Caller(2)
	handlers.LoadOrStore(d, h)
}

// handlerLocation is where d's handler is defined, worked out once.
func handlerLocation(d *registeredStep) string {
	v, ok := handlers.Load(d)
	if !ok {
		return ""
	}
	h := v.(*handlerSite)
	h.once.Do(func() {
		h.location = relative(h.file, h.line)
		if file, line, ok := funcLine(h.pc); ok {
			h.location = relative(file, line)
		}
	})
	return h.location
}

// funcLine is the file and line of the func at pc. A method value
// (w.asyncAck) is a compiler-made wrapper "...asyncAck-fm" that has no
// line of its own: the method it calls is looked up by name instead.
func funcLine(pc uintptr) (string, int, bool) {
	f := runtime.FuncForPC(pc)
	if f == nil {
		return "", 0, false
	}
	name := f.Name()
	if strings.HasSuffix(name, "-fm") {
		method := strings.TrimSuffix(name, "-fm")
		if f = funcNamed(method, pc); f == nil {
			return inlinedStart(method, pc)
		}
	}
	file, line := f.FileLine(f.Entry())
	if line == 0 || strings.HasPrefix(file, "<") {
		return "", 0, false
	}
	return file, line, true
}

// funcNamed finds a function of the program by name. The runtime has no
// such index, but FuncForPC of the byte before a function's entry is the
// function laid out before it, so the text is walked backwards from its
// end, which is found from near; once, at report time.
func funcNamed(name string, near uintptr) *runtime.Func {
	funcIndex.once.Do(func() { funcIndex.m = indexFuncs(near) })
	return funcIndex.m[name]
}

var funcIndex struct {
	once sync.Once
	m    map[string]*runtime.Func
}

func indexFuncs(near uintptr) map[string]*runtime.Func {
	// The end of the text: the first PC beyond near that no function holds.
	lo, step := near, uintptr(1)
	for runtime.FuncForPC(lo+step) != nil {
		lo, step = lo+step, step*2
	}
	hi := lo + step
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if runtime.FuncForPC(mid) != nil {
			lo = mid
		} else {
			hi = mid
		}
	}
	m := map[string]*runtime.Func{}
	for pc := lo; ; {
		f := runtime.FuncForPC(pc)
		if f == nil {
			return m
		}
		entry := f.Entry()
		if outer := runtime.FuncForPC(entry); outer != nil {
			m[outer.Name()] = outer // the outer function, not one inlined at pc
		}
		if entry == 0 {
			return m
		}
		pc = entry - 1
	}
}

// inlinedStart finds a method that was inlined into its wrapper (and so
// has no function of its own) among the wrapper's inlined frames. Its
// first line is runtime.Frame's unexported startLine (the line of the func
// keyword), read by reflection: where a Go release lacks it, no line.
func inlinedStart(method string, wrapper uintptr) (string, int, bool) {
	entry := runtime.FuncForPC(wrapper).Entry()
	for pc := entry; ; pc++ {
		if f := runtime.FuncForPC(pc); f == nil || f.Entry() != entry {
			return "", 0, false
		}
		frames := runtime.CallersFrames([]uintptr{pc + 1})
		for {
			fr, more := frames.Next()
			if fr.Function == method {
				start := reflect.ValueOf(fr).FieldByName("startLine")
				if !start.IsValid() || !start.CanInt() || start.Int() <= 0 {
					return "", 0, false
				}
				return fr.File, int(start.Int()), true
			}
			if !more {
				break
			}
		}
	}
}

// moduleRoot is the folder that holds this package's folder.
var moduleRoot = func() string {
	_, file, _, _ := runtime.Caller(0)
	return path.Dir(path.Dir(file))
}()

// relative names a file by its path in the module ("steps/sse.go:40").
func relative(file string, line int) string {
	if file == "" {
		return ""
	}
	return fmt.Sprintf("%s:%d", strings.TrimPrefix(file, moduleRoot+"/"), line)
}
