// Package clientconf runs a client's own test command against the reference
// server once per legal variant of the spec (`invokeconf clients`): each run
// gets a fresh server with that variant on, and the base URL, keys and IDs
// in the INVOKECONF_* variables of the profile. A client that passes against
// the default server but fails a variant breaks on a behaviour the spec
// allows a service; the verdict quotes the spec's words for it and shows,
// on one small exchange, what the variant changes on the wire (wire.go).
//
// Runs against defects (Config.Defects) show how the client copes with a
// broken service: they are reported apart and never fail the run.
package clientconf

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/invokeconf/invokeconf/fakeserver"
	"github.com/invokeconf/invokeconf/fixtures"
	"github.com/invokeconf/invokeconf/internal/safetext"
	"github.com/invokeconf/invokeconf/internal/suggest"
	"github.com/invokeconf/invokeconf/invokeconftest"
	"github.com/invokeconf/invokeconf/profile"
)

// Defaults.
const (
	DefaultTimeout   = 2 * time.Minute
	DefaultKeepalive = time.Second
	DefaultTailBytes = 4 << 10
)

// Config says what to run and how.
type Config struct {
	// Command is the client's test command and its arguments.
	Command []string
	// Dir is the command's working directory ("" is the current one).
	Dir string
	// Env is the environment the command starts from (nil: this process's);
	// the INVOKECONF_* variables of the served profile are added to it, and
	// any INVOKECONF_* variable already in it is dropped.
	Env []string
	// Variants narrows the variant runs to these names (nil: every
	// variant, and the combined runs).
	Variants []string
	// Defects are defect switches to run the command against as well,
	// reported apart, never failing the run.
	Defects []string
	// Timeout bounds each run of the command (DefaultTimeout); the whole
	// process group is killed on it.
	Timeout time.Duration
	// Keepalive is the servers' keepalive interval (DefaultKeepalive;
	// shorter than the spec's 20 s so that a client's tests meet ": ping"
	// comments, which a client must skip).
	Keepalive time.Duration
	// TailBytes bounds the output kept of each run (DefaultTailBytes).
	TailBytes int
	// Parallel is how many runs go at once (1 by default: a client's tests
	// may not bear running twice at the same time).
	Parallel int
	// Seed seeds the servers (nil: fixtures/reference.yaml).
	Seed *profile.Profile
	// Progress, when set, gets a line as each run ends.
	Progress io.Writer
	// NoWire leaves out the wire examples (each costs two small exchanges
	// with two more servers).
	NoWire bool
	// SecretEnv names variables of Env whose values are hidden in the
	// reports, beside those whose names or values look like secrets
	// (secretsOf).
	SecretEnv []string
}

// Kind tells the runs apart.
type Kind string

// The kinds of runs.
const (
	KindDefault  Kind = "default"  // the reference server as it is
	KindVariant  Kind = "variant"  // one legal variant
	KindCombined Kind = "combined" // a compatible group of variants at once
	KindDefect   Kind = "defect"   // one defect: informational
)

// Verdict is what came of one run of the command.
type Verdict string

// The verdicts.
const (
	Pass    Verdict = "pass"    // the command exited 0
	Fail    Verdict = "fail"    // it exited non-zero, or a signal ended it
	Timeout Verdict = "timeout" // it outlasted Config.Timeout and was killed
	Error   Verdict = "error"   // the harness could not run it (server, start)
	// Interrupted: the harness was stopped (Ctrl-C, SIGTERM) while the
	// run went on, or before it started: no verdict on the client.
	Interrupted Verdict = "interrupted"
)

// Run is one run of the command and its verdict.
type Run struct {
	Name string `json:"name"`
	Kind Kind   `json:"kind"`
	// Variants and Defects are the switches that were on.
	Variants []string `json:"variants,omitempty"`
	Defects  []string `json:"defects,omitempty"`
	// Spec holds the spec's words that allow each variant ("name: words"
	// for a combined run).
	Spec string `json:"spec,omitempty"`
	// Description says what the switches do.
	Description string `json:"description,omitempty"`
	// Rules are the rule IDs a defect breaks.
	Rules []string `json:"rules,omitempty"`

	Verdict  Verdict `json:"verdict"`
	ExitCode int     `json:"exitCode"`
	// Signal names the signal that ended the command ("SIGSEGV"), if one
	// did (ExitCode is then -1).
	Signal string `json:"signal,omitempty"`
	// Problem says why the harness could not run the command (Error).
	Problem string  `json:"problem,omitempty"`
	Seconds float64 `json:"seconds"`
	// Output is the tail of what the command wrote (stdout and stderr
	// together): keys redacted, then cut, then escaped.
	Output string `json:"output"`
	// Wire shows what a variant changes on one small exchange.
	Wire *Wire `json:"wire,omitempty"`
}

// Counts reports against the run (defects aside): true for a legal run
// that did not pass.
func (r Run) Counts() bool { return r.Kind != KindDefect && r.Verdict != Pass }

// Result is every run of a command.
type Result struct {
	Command string    `json:"command"`
	Started time.Time `json:"started"`
	Seconds float64   `json:"seconds"`
	Runs    []Run     `json:"runs"`
	// Interrupted says the harness was stopped before every run ended.
	Interrupted bool `json:"interrupted,omitempty"`
}

// Exit codes.
const (
	ExitPass    = 0
	ExitFail    = 1
	ExitUsage   = 2
	ExitHarness = 3
)

// ExitCode is 1 when the command failed a legal run (the default server, a
// variant or a combined group), 3 when the harness could not run it or was
// interrupted, 0 otherwise; runs against defects never count.
func (r *Result) ExitCode() int {
	code := ExitPass
	if r.Interrupted {
		code = ExitHarness
	}
	for _, run := range r.Runs {
		switch {
		case run.Kind == KindDefect:
		case run.Verdict == Fail || run.Verdict == Timeout:
			return ExitFail
		case run.Verdict == Error || run.Verdict == Interrupted:
			code = ExitHarness
		}
	}
	return code
}

// Failed lists the legal runs that did not pass, interrupted ones aside.
func (r *Result) Failed() []Run {
	var out []Run
	for _, run := range r.Runs {
		if run.Counts() && run.Verdict != Interrupted {
			out = append(out, run)
		}
	}
	return out
}

// UsageError is bad input to Execute: exit code 2.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// Plan lists the runs Execute makes for cfg, in order: the default server,
// each variant, the combined groups, then each defect. A name it does not
// know is a *UsageError with a suggestion.
func Plan(cfg Config) ([]Run, error) {
	all := fakeserver.Variants()
	byName := map[string]fakeserver.Variant{}
	var names []string
	for _, v := range all {
		byName[v.Name] = v
		names = append(names, v.Name)
	}
	chosen := names
	if cfg.Variants != nil {
		chosen = nil
		for _, n := range cfg.Variants {
			if _, ok := byName[n]; !ok {
				return nil, &UsageError{fmt.Sprintf("unknown variant %q%s (see 'invokeconf variants')", n, suggest.DidYouMean(n, names))}
			}
			chosen = append(chosen, n)
		}
	}
	runs := []Run{{Name: "default", Kind: KindDefault, Description: "the reference server as it is, no switch on"}}
	for _, n := range chosen {
		v := byName[n]
		runs = append(runs, Run{Name: n, Kind: KindVariant, Variants: []string{n}, Spec: v.Spec, Description: v.Description})
	}
	if cfg.Variants == nil {
		for _, group := range CompatibleGroups() {
			var spec, desc, picked []string
			for _, n := range group {
				spec = append(spec, n+": "+byName[n].Spec)
				desc = append(desc, n+": "+byName[n].Description)
				if byName[n].Group != "" {
					picked = append(picked, n)
				}
			}
			runs = append(runs, Run{Name: "all compatible (" + strings.Join(picked, ", ") + ")", Kind: KindCombined, Variants: group,
				Spec: strings.Join(spec, "\n"), Description: strings.Join(desc, "\n")})
		}
	}
	var defectNames []string
	defects := map[string]fakeserver.Defect{}
	for _, d := range fakeserver.Defects() {
		defects[d.Name] = d
		defectNames = append(defectNames, d.Name)
	}
	for _, n := range cfg.Defects {
		d, ok := defects[n]
		if !ok {
			return nil, &UsageError{fmt.Sprintf("unknown defect %q%s (see 'invokeconf defects')", n, suggest.DidYouMean(n, defectNames))}
		}
		runs = append(runs, Run{Name: n, Kind: KindDefect, Defects: []string{n}, Rules: d.Rules, Description: d.Description})
	}
	return runs, nil
}

// CompatibleGroups returns sets of variants that can be on together and,
// between them, hold every variant: every variant without a group, with
// the i-th member of each group (the last one where a group has fewer).
func CompatibleGroups() [][]string {
	groups := map[string][]string{}
	var order []string
	var free []string
	for _, v := range fakeserver.Variants() {
		switch {
		case v.Group == "":
			free = append(free, v.Name)
		default:
			if _, seen := groups[v.Group]; !seen {
				order = append(order, v.Group)
			}
			groups[v.Group] = append(groups[v.Group], v.Name)
		}
	}
	widest := 1
	for _, g := range groups {
		widest = max(widest, len(g))
	}
	var out [][]string
	for i := range widest {
		set := append([]string(nil), free...)
		for _, g := range order {
			set = append(set, groups[g][min(i, len(groups[g])-1)])
		}
		// In the table's order, as the servers list them.
		slices.SortFunc(set, func(a, b string) int { return variantIndex(a) - variantIndex(b) })
		out = append(out, set)
	}
	return out
}

func variantIndex(name string) int {
	for i, v := range fakeserver.Variants() {
		if v.Name == name {
			return i
		}
	}
	return -1
}

// CheckCommand checks, before any run, that cfg's command can be started: a
// bare name is looked up in PATH, a path (relative to Dir) must be an
// executable file. A command that cannot start is a *UsageError, said once,
// not a failure of every run.
func CheckCommand(cfg Config) error {
	if len(cfg.Command) == 0 {
		return &UsageError{"no command to run: give it after --, e.g. invokeconf clients -- go test ./..."}
	}
	name := cfg.Command[0]
	if !strings.Contains(name, string(os.PathSeparator)) {
		if _, err := exec.LookPath(name); err != nil {
			return &UsageError{fmt.Sprintf("command %q: %v", name, err)}
		}
		return nil
	}
	path := name
	if !filepath.IsAbs(path) && cfg.Dir != "" {
		path = filepath.Join(cfg.Dir, path)
	}
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &UsageError{fmt.Sprintf("command %q: no such file", name)}
	case err != nil:
		return &UsageError{fmt.Sprintf("command %q: %v", name, err)}
	case st.IsDir():
		return &UsageError{fmt.Sprintf("command %q is a directory, not an executable file", name)}
	case st.Mode()&0o111 == 0:
		return &UsageError{fmt.Sprintf("command %q is not executable (chmod +x %s, or run it through its interpreter, e.g. bash %s)", name, name, name)}
	}
	return nil
}

// Execute plans the runs and makes them, each against a fresh reference
// server, and the wire examples of the variants. A bad Config is a
// *UsageError; ctx cancelled stops the command being run and the rest.
func Execute(ctx context.Context, cfg Config) (*Result, error) {
	if err := CheckCommand(cfg); err != nil {
		return nil, err
	}
	runs, err := Plan(cfg)
	if err != nil {
		return nil, err
	}
	cfg = withDefaults(cfg)
	if cfg.Seed == nil {
		if cfg.Seed, err = fixtures.Reference(); err != nil {
			return nil, err
		}
	}
	res := &Result{Command: commandLine(cfg.Command, cfg.Seed, secretsOf(cfg.Env, cfg.SecretEnv)), Started: time.Now().UTC()}
	var wire *wireProbes
	if !cfg.NoWire {
		wire = newWireProbes(cfg.Seed)
	}
	// Workers take the runs in plan order.
	next := make(chan int)
	go func() {
		defer close(next)
		for i := range runs {
			next <- i
		}
	}()
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	for range min(cfg.Parallel, len(runs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if ctx.Err() != nil {
					runs[i].Verdict, runs[i].Problem = Interrupted, "not run: the harness was interrupted before it started"
					continue
				}
				runOne(ctx, cfg, &runs[i])
				if wire != nil && runs[i].Kind == KindVariant {
					runs[i].Wire = wire.example(ctx, runs[i].Name)
				}
				mu.Lock()
				done++
				progress(cfg.Progress, done, len(runs), runs[i])
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	res.Runs = runs
	res.Seconds = time.Since(res.Started).Seconds()
	res.Interrupted = ctx.Err() != nil
	return res, nil
}

func withDefaults(cfg Config) Config {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Keepalive <= 0 {
		cfg.Keepalive = DefaultKeepalive
	}
	if cfg.TailBytes <= 0 {
		cfg.TailBytes = DefaultTailBytes
	}
	if cfg.Parallel <= 0 {
		cfg.Parallel = 1
	}
	if cfg.Env == nil {
		cfg.Env = os.Environ()
	}
	return cfg
}

// runOne starts a server with the run's switches and runs the command
// against it.
func runOne(ctx context.Context, cfg Config, run *Run) {
	start := time.Now()
	defer func() { run.Seconds = time.Since(start).Seconds() }()
	srv, err := invokeconftest.Start(invokeconftest.WithSeed(cfg.Seed), invokeconftest.WithKeepalive(cfg.Keepalive),
		invokeconftest.WithVariants(run.Variants...), invokeconftest.WithDefects(run.Defects...))
	if err != nil {
		run.Verdict, run.Problem = Error, "the reference server did not start: "+err.Error()
		return
	}
	defer srv.Close()
	env := append(withoutInvokeconf(cfg.Env), srv.Env()...)
	out := newTail(cfg.TailBytes)
	keys, secrets := srv.Profile.Redactor(), secretsOf(cfg.Env, cfg.SecretEnv)
	code, sig, timedOut, err := runCommand(ctx, cfg.Command, cfg.Dir, env, out, cfg.Timeout)
	run.Output = safetext.Clean(out.text(func(s string) string { return secrets.Redact(keys.Redact(s)) }))
	switch {
	case ctx.Err() != nil:
		run.Verdict, run.ExitCode = Interrupted, code
		run.Problem = "the harness was interrupted while it ran: the command and everything it started were killed"
	case err != nil:
		run.Verdict, run.Problem, run.ExitCode = Error, err.Error(), -1
	case timedOut:
		run.Verdict, run.ExitCode = Timeout, code
		run.Problem = fmt.Sprintf("still running after %s: it and everything it started were killed", cfg.Timeout)
	case code == 0:
		run.Verdict = Pass
	default:
		run.Verdict, run.ExitCode, run.Signal = Fail, code, sig
	}
}

// withoutInvokeconf drops the INVOKECONF_* variables of env: the command
// must see the served profile's, and only those.
func withoutInvokeconf(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, profile.EnvPrefix) {
			out = append(out, kv)
		}
	}
	return out
}

// commandLine shows the command as one line, keys and the environment's
// secrets hidden.
func commandLine(argv []string, p *profile.Profile, secrets *profile.Redactor) string {
	var words []string
	for _, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		words = append(words, a)
	}
	return safetext.Clean(secrets.Redact(p.Redactor().Redact(strings.Join(words, " "))))
}

func progress(w io.Writer, done, total int, run Run) {
	if w == nil {
		return
	}
	what := string(run.Verdict)
	switch run.Verdict {
	case Fail:
		what = "FAIL (" + outcome(run) + ")"
	case Timeout:
		what = "TIMEOUT"
	case Error:
		what = "ERROR: " + run.Problem
	case Interrupted:
		what = "INTERRUPTED"
	}
	if run.Kind == KindDefect {
		what = fmt.Sprintf("exit %d (defect: informational)", run.ExitCode)
		if run.Verdict == Timeout || run.Verdict == Error {
			what = string(run.Verdict) + " (defect: informational)"
		}
	}
	fmt.Fprintf(w, "[%*d/%d] %-9s %-40s %s (%.1fs)\n", len(fmt.Sprint(total)), done, total, run.Kind, run.Name, what, run.Seconds)
}
