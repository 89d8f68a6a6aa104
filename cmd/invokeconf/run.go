package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/invokeconf/invokeconf/fakeserver"
	"github.com/invokeconf/invokeconf/fixtures"
	"github.com/invokeconf/invokeconf/profile"
	"github.com/invokeconf/invokeconf/reports"
	"github.com/invokeconf/invokeconf/runner"
)

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlags("run", stderr)
	profilePath := fs.String("profile", "", "target profile (YAML; every field can be overridden by an INVOKECONF_* variable, see 'invokeconf profile vars'); without it the embedded reference server is started and tested")
	tags := fs.String("tags", "", "godog tag expression selecting scenarios, e.g. '@sse && ~@slow' or '@FMT-01,@FMT-02'")
	rules := fs.String("rules", "", "comma-separated rule IDs to check, e.g. SSE-01,SSE-02")
	areas := fs.String("areas", "", "comma-separated spec areas to check, e.g. sse,events (see 'invokeconf rules')")
	quick := fs.Bool("quick", false, "skip @slow scenarios (the 20 s keepalive)")
	out := fs.String("out", filepath.Join("reports", "out"), "folder for report.html, summary.json, junit.xml and cucumber.json")
	concurrency := fs.Int("concurrency", 16, "scenarios run at once")
	baseline := fs.String("baseline", "", "YAML file of expected failures (rule or scenario, each with a reason); an entry that now passes fails the run")
	writeBaseline := fs.String("write-baseline", "", "write a baseline of this run's failures to this file")
	var defects multiFlag
	fs.Var(&defects, "defect", "with the embedded server: switch on a defect (repeatable); see 'invokeconf defects'")
	if err := parse(fs, args); err != nil {
		return 0, err
	}
	sel := runner.Selection{Rules: splitList(*rules), Areas: splitList(*areas), Tags: strings.TrimSpace(*tags), Quick: *quick}

	var bl *reports.Baseline
	if *baseline != "" {
		var err error
		if bl, err = reports.LoadBaseline(*baseline); err != nil {
			return 0, usageError{err}
		}
	}

	var p *profile.Profile
	target := ""
	if *profilePath == "" {
		ref, err := fixtures.Reference()
		if err != nil {
			return 0, err
		}
		srv, err := fakeserver.Listen(fakeserver.Config{Profile: ref, Defects: defects}, "127.0.0.1:0")
		if err != nil {
			return 0, usageError{err}
		}
		defer srv.Close()
		p = ref.Clone()
		p.BaseURL = srv.URL
		target = "embedded reference server at " + srv.URL
		if len(defects) > 0 {
			target += " with defects " + strings.Join(defects, ", ")
		}
	} else {
		if len(defects) > 0 {
			return 0, usageError{fmt.Errorf("--defect only applies to the embedded reference server (no --profile)")}
		}
		var used []string
		var err error
		if p, used, err = profile.LoadWithEnv(*profilePath, os.LookupEnv); err != nil {
			return 0, usageError{err}
		}
		if err := p.Validate(); err != nil {
			return 0, usageError{fmt.Errorf("profile %s: %w", *profilePath, err)}
		}
		target = p.BaseURL
		fmt.Fprintf(stdout, "invokeconf: profile %s", *profilePath)
		if len(used) > 0 {
			fmt.Fprintf(stdout, " with %s from the environment", strings.Join(used, ", "))
		}
		fmt.Fprintln(stdout)
	}

	plan, err := runner.NewPlan(p, sel)
	if err != nil {
		var se *runner.SelectionError
		if errors.As(err, &se) {
			return 0, usageError{err}
		}
		return 0, err
	}
	fmt.Fprintf(stdout, "invokeconf: testing %s\n", target)
	printPlan(stdout, p, plan)

	// An unreachable target would fail every scenario one by one: say so
	// once, at once.
	if *profilePath != "" {
		if err := runner.Reachable(ctx, p); err != nil {
			return 0, usageError{err}
		}
	}
	if *out != "" {
		for _, f := range []string{reports.HTMLFile, reports.JSONFile, reports.JUnitFile, reports.CucumberFile} {
			_ = os.Remove(filepath.Join(*out, f)) // no stale report from an earlier run
		}
	}

	res, err := runner.Run(ctx, runner.Config{
		Profile:     p,
		Plan:        plan,
		Concurrency: *concurrency,
		OutDir:      *out,
		Console:     stdout,
		NoColors:    !isTerminal(stdout),
	})
	if err != nil {
		return 0, err
	}
	rep, err := reports.Build(reports.Input{Result: res, Profile: p, Target: p.RedactEnv(target), Baseline: bl})
	if err != nil {
		return 0, err
	}
	var paths []string
	if *out != "" {
		if paths, err = reports.Write(*out, rep, p); err != nil {
			return 0, err
		}
	}
	if *writeBaseline != "" {
		if err := writeBaselineFile(*writeBaseline, rep); err != nil {
			return 0, err
		}
		paths = append(paths, *writeBaseline+" (baseline)")
	}
	reports.WriteConsole(stdout, rep, paths)
	return rep.ExitCode, nil
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

// printPlan says up front what the run will do and what the profile keeps
// it from doing.
func printPlan(w io.Writer, p *profile.Profile, plan *runner.Plan) {
	na, untested, unsel := 0, 0, 0
	for _, s := range plan.Scenarios {
		switch s.Status {
		case runner.NotApplicable:
			na++
		case runner.Untested:
			untested++
		case runner.NotSelected:
			unsel++
		}
	}
	fmt.Fprintf(w, "invokeconf: selection: %s; %d scenarios to run", plan.Selection, plan.ToRun())
	if unsel > 0 {
		fmt.Fprintf(w, ", %d not selected", unsel)
	}
	if na > 0 {
		fmt.Fprintf(w, ", %d not applicable (capabilities the profile declares absent)", na)
	}
	if untested > 0 {
		fmt.Fprintf(w, ", %d untested (capabilities they need are declared absent)", untested)
	}
	fmt.Fprintln(w)
	printGaps(w, runner.Gaps(p, plan))
}

// printGaps reports the profile's empty fields and what they disable.
func printGaps(w io.Writer, gaps []runner.Gap) {
	if len(gaps) == 0 {
		return
	}
	fmt.Fprintln(w, "profile gaps (fields left empty, or capabilities declared false; the scenarios that need them will be untested):")
	width := 0
	for _, g := range gaps {
		width = max(width, len(g.Path))
	}
	for _, g := range gaps {
		n := fmt.Sprintf("%d scenarios", len(g.Scenarios))
		if len(g.Scenarios) == 1 {
			n = "1 scenario"
		}
		fmt.Fprintf(w, "  %-*s (%s): %s", width, g.Path, g.Env, n)
		if len(g.Rules) > 0 {
			fmt.Fprintf(w, "; rules left untested: %s", strings.Join(g.Rules, " "))
		}
		if len(g.Weakened) > 0 {
			fmt.Fprintf(w, "; rules with fewer scenarios: %s", strings.Join(g.Weakened, " "))
		}
		fmt.Fprintln(w)
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
