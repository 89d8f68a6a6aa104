package main

import (
	"context"
	"crypto/ed25519"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/invokeconf/invokeconf/checks"
	"github.com/invokeconf/invokeconf/evidence"
	"github.com/invokeconf/invokeconf/fakeserver"
	"github.com/invokeconf/invokeconf/features"
	"github.com/invokeconf/invokeconf/fixtures"
	"github.com/invokeconf/invokeconf/internal/suggest"
	"github.com/invokeconf/invokeconf/outcome"
	"github.com/invokeconf/invokeconf/profile"
	"github.com/invokeconf/invokeconf/reports"
	"github.com/invokeconf/invokeconf/runner"
	"github.com/invokeconf/invokeconf/steps"
	"github.com/invokeconf/invokeconf/testrun"
)

// runOptions are the flags of run.
type runOptions struct {
	profilePath, out, baseline, writeBaseline, junitWarnings string
	sel                                                      testrun.Selection
	concurrency                                              int
	defects                                                  multiFlag
	requireComplete                                          bool
	// evidence keeps the run's traffic, plan and profile beside the
	// reports (package evidence); signKey signs the run's statement.
	evidence bool
	signKey  ed25519.PrivateKey
}

// target is what a run tests: its profile, a name for people, and how to
// stop the embedded server when there is one.
type target struct {
	p     *profile.Profile
	name  string
	close func()
	// replay is, for the embedded server, the command that starts the same
	// server again on the same port, so that the reports' curl commands
	// reach it after the run; "" for a target of a profile.
	replay string
}

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	opts, err := parseRun(args, stderr)
	if err != nil {
		return 0, err
	}
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(runner.MemoryLimit))
	}
	// The harness's identity digests the executable: beside the target's
	// start and the plan, not before them.
	go reports.Identify(nil)
	var bl *reports.Baseline
	if opts.baseline != "" {
		if bl, err = reports.LoadBaseline(opts.baseline); err != nil {
			return 0, usageError{err}
		}
	}
	t, err := resolveTarget(opts, stdout, stderr)
	if err != nil {
		return 0, err
	}
	defer t.close()
	plan, err := planRun(opts, t, stdout)
	if err != nil {
		return 0, err
	}
	if t.replay != "" {
		t.p.ProductVersion = reports.Identify(nil).HarnessVersion // the embedded server is this build
	}
	ev, err := startEvidence(opts, t)
	if err != nil {
		return 0, err
	}
	res, notRun, err := execute(ctx, opts, t, plan, ev, stdout)
	if err != nil {
		return 0, err
	}
	rep, err := writeReports(opts, t, res, notRun, bl, ev, stdout)
	if err != nil {
		return 0, err
	}
	if ctx.Err() != nil && notRun == nil {
		cut := res.Count(testrun.HarnessError)
		return 0, exitError{max(rep.ExitCode, outcome.ExitHarness), fmt.Errorf("interrupted (Ctrl-C or SIGTERM): %s cut or never started "+
			"(harness errors, \"the run was interrupted\"); the reports hold what ran before", plural(cut, "scenario was", "scenarios were"))}
	}
	// A target that never answered is exit 2; the reason was printed
	// once, in the verdict line (the reports' headline).
	return rep.ExitCode, nil
}

// parseRun reads run's flags and checks them before anything starts.
func parseRun(args []string, stderr io.Writer) (*runOptions, error) {
	o := &runOptions{}
	fs := newFlags("run", stderr)
	fs.StringVar(&o.profilePath, "profile", "", "target profile (YAML; every field can be overridden by an INVOKECONF_* variable, see 'invokeconf profile vars'); without it the embedded reference server is started and tested")
	selection := selectionFlags(fs)
	fs.BoolVar(&o.requireComplete, "require-complete", false, "a PARTIAL run (one that does not judge every observable spec rule) fails with exit 4")
	fs.StringVar(&o.out, "out", filepath.Join("reports", "out"), "folder for report.html, summary.json, junit.xml and cucumber.json (\"\" writes none)")
	fs.IntVar(&o.concurrency, "concurrency", 16, "scenarios run at once (a positive number)")
	fs.StringVar(&o.baseline, "baseline", "", "YAML file of expected failures (rule or scenario, each with a reason); an entry that now passes fails the run")
	fs.StringVar(&o.writeBaseline, "write-baseline", "", "write a baseline of this run's failures to this file")
	fs.StringVar(&o.junitWarnings, "junit-warnings", reports.JUnitWarningsPass, "how junit.xml shows a failed SHOULD rule: pass (a passed test case with a warning, as the exit code does) or failure")
	fs.Var(&o.defects, "defect", "with the embedded server: switch on a defect (repeatable); see 'invokeconf defects'")
	fs.BoolVar(&o.evidence, "evidence", true, "keep the run's traffic ("+evidence.HARFile+", keys hidden), plan and profile beside the reports, bound by digest in summary.json, for 'invokeconf verify' (--evidence=false: none)")
	signPath := fs.String("sign", "", "sign the run's statement (the digests of its reports and evidence, and its verdicts) with this ed25519 private key, a PEM file as 'openssl genpkey -algorithm ed25519' writes it: "+evidence.SignatureFile+", checked by 'invokeconf verify --key PUB'")
	if err := parse(fs, args); err != nil {
		return nil, err
	}
	if *signPath != "" {
		switch {
		case o.out == "":
			return nil, usageError{errors.New("--sign needs the reports: --out must name a folder")}
		case !o.evidence:
			return nil, usageError{errors.New("--sign signs the evidence too: it cannot go with --evidence=false")}
		}
		k, err := evidence.LoadPrivateKey(*signPath)
		if err != nil {
			return nil, usageError{fmt.Errorf("--sign: %w", err)}
		}
		o.signKey = k
	}
	o.sel = selection()
	switch {
	case o.concurrency < 1:
		return nil, usageError{fmt.Errorf("--concurrency must be a positive number, not %d", o.concurrency)}
	case o.junitWarnings != reports.JUnitWarningsPass && o.junitWarnings != reports.JUnitWarningsFailure:
		return nil, usageError{fmt.Errorf("--junit-warnings must be %s or %s, not %q", reports.JUnitWarningsPass, reports.JUnitWarningsFailure, o.junitWarnings)}
	case len(o.defects) > 0 && o.profilePath != "":
		return nil, usageError{fmt.Errorf("--defect only applies to the embedded reference server (no --profile)")}
	}
	if err := checkSwitches(o.defects, nil); err != nil {
		return nil, err
	}
	if o.out != "" {
		if err := os.MkdirAll(o.out, 0o755); err != nil {
			return nil, usageError{fmt.Errorf("--out %s cannot be created: %w", o.out, err)}
		}
	}
	return o, nil
}

// selectionFlags defines the flags that select scenarios, shared by run and
// profile check (which forecasts the same run); the function it returns
// reads them once parsed.
func selectionFlags(fs *flag.FlagSet) func() testrun.Selection {
	tags := fs.String("tags", "", "godog tag expression selecting scenarios, e.g. '@sse && ~@slow' or '@FMT-01,@FMT-02'")
	rules := fs.String("rules", "", "comma-separated rule IDs to check, e.g. SSE-01,SSE-02")
	areas := fs.String("areas", "", "comma-separated spec areas to check, e.g. sse,events (see 'invokeconf rules')")
	quick := fs.Bool("quick", false, "skip @slow scenarios (the 20 s keepalive); the run is then partial")
	specOnly := fs.Bool("spec-only", false, "judge only the spec's rules, leaving out this project's own contract (docs/bundles.md); without the contract's routes in the profile, the scenarios that install through them are not applicable")
	return func() testrun.Selection {
		return testrun.Selection{Rules: splitList(*rules), Areas: splitList(*areas), Tags: strings.TrimSpace(*tags), Quick: *quick, SpecOnly: *specOnly}
	}
}

// resolveTarget starts the embedded reference server, or loads the profile
// (warning about INVOKECONF_* variables that override nothing).
func resolveTarget(o *runOptions, stdout, stderr io.Writer) (*target, error) {
	if o.profilePath == "" {
		ref, err := fixtures.Reference()
		if err != nil {
			return nil, err
		}
		srv, err := fakeserver.Listen(fakeserver.Config{Profile: ref, Defects: o.defects}, "127.0.0.1:0")
		if err != nil {
			return nil, usageError{err}
		}
		p := ref.Clone()
		p.BaseURL = srv.URL
		p.Product = "invokeconf reference server" // its version once the run is planned (cmdRun)
		name := srv.URL + " (the embedded reference server"
		replay := "invokeconf serve --addr " + strings.TrimPrefix(srv.URL, "http://")
		if len(o.defects) > 0 {
			name += " with defects " + strings.Join(o.defects, ", ")
			for _, d := range o.defects {
				replay += " --defect " + d
			}
		}
		return &target{p: p, name: name + ")", close: func() { srv.Close() }, replay: replay}, nil
	}
	p, used, err := profile.LoadWithEnv(o.profilePath, os.LookupEnv)
	if err != nil {
		return nil, usageError{err}
	}
	if err := p.Validate(); err != nil {
		return nil, usageError{fmt.Errorf("profile %s: %w", o.profilePath, err)}
	}
	warnUnknownVars(stderr, p, os.Environ())
	fmt.Fprintf(stdout, "invokeconf: profile %s", o.profilePath)
	if len(used) > 0 {
		fmt.Fprintf(stdout, " with %s from the environment", strings.Join(used, ", "))
	}
	fmt.Fprintln(stdout)
	return &target{p: p, name: p.BaseURL, close: func() {}}, nil
}

// warnUnknownVars names INVOKECONF_* variables that set no profile field: a
// misspelt variable would otherwise leave its field silently unset.
func warnUnknownVars(w io.Writer, p *profile.Profile, environ []string) {
	var names []string
	known := map[string]bool{}
	for _, f := range p.Fields() {
		names = append(names, f.Env)
		known[f.Env] = true
	}
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "INVOKECONF_") || known[name] || strings.HasPrefix(name, "INVOKECONF_TEST_") || name == adminKeyEnv {
			continue
		}
		fmt.Fprintf(w, "invokeconf: warning: %s is set but overrides no profile field%s (see 'invokeconf profile vars')\n", name, suggest.DidYouMean(name, names))
	}
}

// planRun decides what runs and says so.
func planRun(o *runOptions, t *target, stdout io.Writer) (*testrun.Plan, error) {
	plan, err := runner.NewPlan(t.p, o.sel)
	if err != nil {
		var se *runner.SelectionError
		if errors.As(err, &se) {
			return nil, usageError{err}
		}
		return nil, err
	}
	fmt.Fprintf(stdout, "invokeconf: testing %s\n", t.p.RedactEnv(t.name))
	if err := printPlan(stdout, t.p, plan); err != nil {
		return nil, err
	}
	if o.requireComplete {
		fmt.Fprintln(stdout, "invokeconf: --require-complete: a PARTIAL run fails with exit 4")
	}
	return plan, nil
}

// startEvidence starts keeping the run's evidence in the reports' folder,
// unless --evidence=false or no folder; nil then.
func startEvidence(o *runOptions, t *target) (*evidence.Recorder, error) {
	if o.out == "" {
		return nil, nil
	}
	if !o.evidence {
		evidence.RemoveStale(o.out)
		return nil, nil
	}
	return evidence.Create(o.out, t.p, reports.Identify(nil).Harness)
}

// execute runs the plan, each exchange kept by ev when it is not nil. A
// target that does not answer at all is not run against (it would fail
// every scenario one by one): the result then holds every planned scenario
// untested, and notRun says why.
func execute(ctx context.Context, o *runOptions, t *target, plan *testrun.Plan, ev *evidence.Recorder, stdout io.Writer) (res *testrun.Result, notRun, err error) {
	if o.out != "" {
		for _, f := range []string{reports.HTMLFile, reports.JSONFile, reports.JUnitFile, reports.CucumberFile} {
			_ = os.Remove(filepath.Join(o.out, f)) // no stale report from an earlier run
		}
	}
	if o.profilePath != "" {
		if err := runner.Reachable(ctx, t.p); err != nil {
			return runner.Unattempted(plan, err.Error()), err, nil
		}
	}
	cfg := runner.Config{
		Profile:     t.p,
		Plan:        plan,
		Concurrency: o.concurrency,
		OutDir:      o.out,
		Console:     stdout,
		NoColors:    !isTerminal(stdout),
	}
	if ev != nil {
		cfg.Evidence = func(sc steps.Scenario, v *checks.View) { ev.Add(sc.ID, sc.URI+": "+sc.Name, v) }
	}
	res, err = runner.Run(ctx, cfg)
	return res, nil, err
}

// writeReports judges the run and writes every report (bound to the
// evidence ev keeps, and signed with --sign), the baseline and the console
// summary.
func writeReports(o *runOptions, t *target, res *testrun.Result, notRun error, bl *reports.Baseline, ev *evidence.Recorder, stdout io.Writer) (*reports.Report, error) {
	in := reports.Input{Result: res, Profile: t.p, Target: t.p.RedactEnv(t.name), Baseline: bl, RequireComplete: o.requireComplete}
	if notRun != nil {
		in.NotRun = t.p.RedactEnv(notRun.Error())
	}
	rep, err := reports.Build(in)
	if err != nil {
		return nil, err
	}
	if ev != nil {
		if notRun != nil {
			ev.Abandon() // no run, no evidence
		} else if err := ev.Finish(res, rep); err != nil {
			return nil, err
		}
	}
	var paths []string
	if o.out != "" {
		if paths, err = reports.Write(o.out, rep, t.p, reports.Options{JUnitWarnings: o.junitWarnings}); err != nil {
			return nil, err
		}
	}
	if rep.Evidence != nil {
		for _, f := range rep.Evidence.Files {
			paths = append(paths, filepath.Join(o.out, f.Name)+" (evidence)")
		}
		if o.signKey != nil {
			if err := evidence.Sign(o.out, rep, o.signKey); err != nil {
				return nil, err
			}
			paths = append(paths, filepath.Join(o.out, evidence.SignatureFile)+" (signature, key "+evidence.KeyID(o.signKey.Public().(ed25519.PublicKey))+")")
		}
	}
	if o.writeBaseline != "" {
		if err := writeBaselineFile(o.writeBaseline, rep); err != nil {
			return nil, err
		}
		paths = append(paths, o.writeBaseline+" (baseline)")
	}
	reports.WriteConsole(stdout, rep, paths)
	if t.replay != "" && len(rep.Findings) > 0 {
		fmt.Fprintf(stdout, "The embedded server stopped with the run. To replay a reproduce command, start the same one:\n  %s\n"+
			"and set the INVOKECONF_KEYS_* variables to the keys it prints (a busy port: pick another --addr and change the URL).\n", t.replay)
	}
	return rep, nil
}

func writeBaselineFile(path string, rep *reports.Report) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("write baseline: %w", err)
	}
	if err := reports.WriteBaseline(f, rep); err != nil {
		f.Close()
		return fmt.Errorf("write baseline: %w", err)
	}
	return f.Close()
}

// printPlan says up front what the run will do, what the profile keeps it
// from doing, and whether it will be PARTIAL (runner.Predict: the same
// forecast as 'invokeconf profile check').
func printPlan(w io.Writer, p *profile.Profile, plan *testrun.Plan) error {
	var na, contract, untested, unsel int
	for _, s := range plan.Scenarios {
		switch {
		case s.Contract:
			contract++
		case s.Status == testrun.NotApplicable:
			na++
		case s.Status == testrun.Untested:
			untested++
		case s.Status == testrun.NotSelected:
			unsel++
		}
	}
	fmt.Fprintf(w, "invokeconf: selection: %s; %d scenarios to run", plan.Selection, plan.ToRun())
	if unsel > 0 {
		fmt.Fprintf(w, ", %d not selected", unsel)
	}
	if na > 0 {
		fmt.Fprintf(w, ", %d not applicable (capabilities the profile declares false)", na)
	}
	if contract > 0 {
		fmt.Fprintf(w, ", %d not applicable without this project's bundle contract (--spec-only, no routes in the profile)", contract)
	}
	if untested > 0 {
		fmt.Fprintf(w, ", %d untested (capabilities the profile leaves out, or declares false where a scenario needs them)", untested)
	}
	fmt.Fprintln(w)
	printGaps(w, runner.Gaps(p, plan))
	fc, err := runner.Predict(p, plan)
	if err != nil {
		return err
	}
	if fc.Partial() {
		fmt.Fprintf(w, "invokeconf: this run will be PARTIAL: it can judge at most %d of %d observable spec rules (%s)\n",
			fc.SpecJudged, fc.SpecObservable, forecastCounts(fc))
	}
	return nil
}

// maxForecastNamed is how many rules of one status forecastCounts names;
// past it, it counts them.
const maxForecastNamed = 10

// forecastCounts says which spec rules a forecast leaves unjudged, and why
// in a word: "5 spec rules untested: EVT-01 EVT-04 ..., 1 spec rule not
// selected: SSE-04"; past a few of one status, only how many.
func forecastCounts(fc *runner.Forecast) string {
	var parts []string
	for _, st := range []testrun.Status{testrun.Untested, testrun.NotSelected} {
		var ids []string
		for _, r := range fc.With(st) {
			if r.Source == features.SourceSpec {
				ids = append(ids, r.ID)
			}
		}
		if len(ids) == 0 {
			continue
		}
		part := plural(len(ids), "spec rule", "spec rules") + " " + string(st)
		if len(ids) <= maxForecastNamed {
			part += ": " + strings.Join(ids, " ")
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, ", ")
}

// printGaps reports the profile's empty fields and what they disable.
func printGaps(w io.Writer, gaps []testrun.Gap) {
	if len(gaps) == 0 {
		return
	}
	fmt.Fprintln(w, "profile gaps (fields left empty, capabilities left out, or capabilities declared false that a scenario needs; those scenarios will be untested, and so their rules):")
	width := 0
	for _, g := range gaps {
		width = max(width, len(g.Path))
	}
	for _, g := range gaps {
		fmt.Fprintf(w, "  %-*s (%s): %s; rules left untested: %s\n", width, g.Path, g.Env, scenarios(len(g.Scenarios)), strings.Join(g.Rules, " "))
	}
}

// splitList splits a comma-separated flag value.
func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// multiFlag is a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
