package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/invokeconf/invokeconf/features"
	"github.com/invokeconf/invokeconf/outcome"
	"github.com/invokeconf/invokeconf/profile"
	"github.com/invokeconf/invokeconf/runner"
	"github.com/invokeconf/invokeconf/testrun"
)

const profileUsage = `Usage:
  invokeconf profile check --profile FILE   validate a profile against its live target and forecast the run
  invokeconf profile vars [--profile FILE]  list the environment variables that override profile fields

Run 'invokeconf help profile check' or 'invokeconf help profile vars' for their flags.

Exit codes:
  0  the profile is usable (check: the run may still be PARTIAL, the forecast says so); listed (vars)
  2  bad usage, a bad profile, a target that does not answer, or a key it does not take as the profile says
  3  the check broke
  4  check --require-complete: the run will be PARTIAL
`

func cmdProfile(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, profileUsage)
		return usageError{fmt.Errorf("profile needs a subcommand: check or vars")}
	}
	switch args[0] {
	case "check":
		return cmdProfileCheck(ctx, args[1:], stdout, stderr)
	case "vars":
		return cmdProfileVars(args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, profileUsage)
		return nil
	}
	fmt.Fprint(stderr, profileUsage)
	return usageError{fmt.Errorf("unknown profile subcommand %q", args[0])}
}

// cmdProfileCheck reads a profile the way run does and asks its target: is
// it reachable, are the keys accepted. It then plans the run the same
// selection flags would make and forecasts it (runner.Predict): every rule
// the run will leave untested and why, those it will find not applicable,
// and whether it will be PARTIAL.
func cmdProfileCheck(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("profile check", stderr)
	path := fs.String("profile", "", "target profile (YAML), with INVOKECONF_* overrides from the environment")
	selection := selectionFlags(fs)
	requireComplete := fs.Bool("require-complete", false, "exit 4 when the run will be PARTIAL (as 'run --require-complete' would)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *path == "" {
		return usageError{fmt.Errorf("--profile is required")}
	}
	p, used, err := profile.LoadWithEnv(*path, os.LookupEnv)
	if err != nil {
		return usageError{err}
	}
	if err := p.Validate(); err != nil {
		return usageError{fmt.Errorf("profile %s: %w", *path, err)}
	}
	plan, err := runner.NewPlan(p, selection())
	if err != nil {
		var se *runner.SelectionError
		if errors.As(err, &se) {
			return usageError{err}
		}
		return err
	}
	warnUnknownVars(stderr, p, os.Environ())
	fmt.Fprintf(stdout, "profile %s: well formed", *path)
	if len(used) > 0 {
		fmt.Fprintf(stdout, "; from the environment: %s", strings.Join(used, ", "))
	}
	fmt.Fprintln(stdout)

	var problems []string
	if err := runner.Reachable(ctx, p); err != nil {
		fmt.Fprintf(stdout, "target: %v\n", err)
		return usageError{fmt.Errorf("the target is not reachable")}
	}
	fmt.Fprintf(stdout, "target %s: reachable\n", p.RedactEnv(p.BaseURL))
	fmt.Fprintln(stdout, "keys (each sent once to an agent that does not exist, so no run starts):")
	for _, kc := range runner.CheckKeys(ctx, p) {
		mark := "ok     "
		if !kc.OK {
			mark = "PROBLEM"
			problems = append(problems, "keys."+kc.Role)
		}
		fmt.Fprintf(stdout, "  %s %-16s %-34s %s\n", mark, kc.Role, kc.Env, kc.Note)
	}
	gaps := runner.Gaps(p, plan)
	printCapabilities(stdout, capabilityStatuses(p, plan, gaps))
	printGaps(stdout, gaps)
	problems = append(problems, printDemands(stdout, p)...)
	fc, err := runner.Predict(p, plan)
	if err != nil {
		return err
	}
	printForecast(stdout, plan, fc)
	if runner.EchoUnknown(p) {
		fmt.Fprintln(stdout, "note: capabilities.script lacks echo: the scenarios that read the answer to a prompt without directives will also be untested, which only the run can tell")
	}
	if len(problems) > 0 {
		return usageError{fmt.Errorf("the profile check found problems: %s", strings.Join(problems, ", "))}
	}
	if fc.Partial() {
		if *requireComplete {
			return exitError{outcome.ExitPartial, fmt.Errorf("the run will be PARTIAL, and --require-complete fails it (exit %d)", outcome.ExitPartial)}
		}
		fmt.Fprintln(stdout, "profile check passed; the run will be PARTIAL")
		return nil
	}
	fmt.Fprintln(stdout, "profile check passed")
	return nil
}

// printForecast names every rule the run will not judge, grouped by why,
// and says whether the run will be PARTIAL.
func printForecast(w io.Writer, plan *testrun.Plan, fc *runner.Forecast) {
	fmt.Fprintf(w, "forecast for the run (%s), from the profile and the scenarios' steps; only a failure can add to it:\n", plan.Selection)
	groups := map[string][]string{}
	var order []string
	var unselected []string
	for _, r := range fc.Rules {
		if r.Status == testrun.NotSelected {
			unselected = append(unselected, r.ID)
			continue
		}
		key := string(r.Status) + ": " + strings.Join(r.Reasons, "; ")
		if r.Source == features.SourceContract {
			key = string(r.Status) + " (contract rule): " + strings.Join(r.Reasons, "; ")
		}
		if _, ok := groups[key]; !ok {
			order = append(order, key)
		}
		groups[key] = append(groups[key], r.ID)
	}
	for _, key := range order {
		fmt.Fprintf(w, "  %s\n    %s\n", key, strings.Join(groups[key], " "))
	}
	switch n := len(unselected); {
	case n > 0 && n <= maxForecastNamed:
		fmt.Fprintf(w, "  not selected: outside the selection (%s)\n    %s\n", plan.Selection, strings.Join(unselected, " "))
	case n > maxForecastNamed:
		fmt.Fprintf(w, "  not selected: %d rules outside the selection (%s); 'invokeconf rules' lists the catalog\n", n, plan.Selection)
	}
	if len(order) == 0 && len(unselected) == 0 {
		fmt.Fprintln(w, "  every observable rule will be judged")
	}
	if fc.Partial() {
		fmt.Fprintf(w, "the run will be PARTIAL: it can judge at most %d of %d observable spec rules (%s); not a certification\n",
			fc.SpecJudged, fc.SpecObservable, forecastCounts(fc))
		return
	}
	if fc.SpecNotApplicable > 0 {
		fmt.Fprintf(w, "the run can judge all observable spec rules that apply: %d of %d, %d not applicable\n",
			fc.SpecJudged, fc.SpecObservable, fc.SpecNotApplicable)
		return
	}
	fmt.Fprintf(w, "the run can judge all %d observable spec rules\n", fc.SpecObservable)
}

// capabilityStatus is what a profile's capability that is not on does to
// the scenarios: declared false, its @capability scenarios are not
// applicable (the target lacks it); left out, they are untested, since
// nothing says the target lacks it.
type capabilityStatus struct {
	Name     string
	Declared bool
	// NotApplicable and Untested count the scenarios it takes out of the
	// run; Untested includes those whose steps need it (runner.Gaps).
	NotApplicable, Untested int
}

// capabilityStatuses lists the capabilities that are not on, in the
// profile's order, with what each takes out of plan.
func capabilityStatuses(p *profile.Profile, plan *testrun.Plan, gaps []testrun.Gap) []capabilityStatus {
	var out []capabilityStatus
	for _, name := range profile.CapabilityNames() {
		if on, _ := p.Capability(name); on {
			continue
		}
		st := capabilityStatus{Name: name, Declared: p.CapabilityDeclared(name)}
		untested := map[string]bool{}
		for _, s := range plan.Scenarios {
			switch {
			case s.Capability != name:
			case s.Status == testrun.NotApplicable:
				st.NotApplicable++
			case s.Status == testrun.Untested:
				untested[s.ID] = true
			}
		}
		for _, g := range gaps {
			if g.Path == "capabilities."+name {
				for _, id := range g.Scenarios {
					untested[id] = true
				}
			}
		}
		st.Untested = len(untested)
		out = append(out, st)
	}
	return out
}

// printCapabilities tells a capability declared false from one left out:
// the first makes scenarios not applicable, the second leaves them
// untested.
func printCapabilities(w io.Writer, caps []capabilityStatus) {
	for _, declared := range []bool{true, false} {
		var items []string
		for _, c := range caps {
			if c.Declared == declared {
				items = append(items, c.Name+" ("+scenarioCounts(c)+")")
			}
		}
		if len(items) == 0 {
			continue
		}
		if declared {
			fmt.Fprintf(w, "capabilities declared false (the target lacks them): %s\n", strings.Join(items, ", "))
		} else {
			fmt.Fprintf(w, "capabilities left out (their scenarios are untested until each is declared true or false): %s\n", strings.Join(items, ", "))
		}
	}
}

func scenarioCounts(c capabilityStatus) string {
	var parts []string
	if c.NotApplicable > 0 {
		parts = append(parts, scenarios(c.NotApplicable)+" not applicable")
	}
	if c.Untested > 0 {
		parts = append(parts, scenarios(c.Untested)+" untested")
	}
	if len(parts) == 0 {
		return "no selected scenario needs it"
	}
	return strings.Join(parts, ", ")
}

func scenarios(n int) string {
	if n == 1 {
		return "1 scenario"
	}
	return fmt.Sprintf("%d scenarios", n)
}

// printDemands reports what the scenarios ask of the profile's contents
// that it does not give (profile.UnmetDemands), and returns those that can
// fail an honest service.
func printDemands(w io.Writer, p *profile.Profile) []string {
	demands := p.UnmetDemands()
	if len(demands) == 0 {
		return nil
	}
	fmt.Fprintln(w, "profile demands not met (docs/vendor-guide.md, What the scenarios demand):")
	var problems []string
	for _, d := range demands {
		mark := "untested"
		if d.WrongVerdicts {
			mark = "PROBLEM "
			problems = append(problems, "key owners")
		}
		fmt.Fprintf(w, "  %s %s: %s\n", mark, d.What, d.Why)
	}
	return problems
}

// cmdProfileVars lists every profile field with its variable; with a
// profile, also whether it is set (keys are never shown).
func cmdProfileVars(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("profile vars", stderr)
	path := fs.String("profile", "", "show which fields this profile sets")
	if err := parse(fs, args); err != nil {
		return err
	}
	p := &profile.Profile{}
	if *path != "" {
		var err error
		if p, _, err = profile.LoadWithEnv(*path, os.LookupEnv); err != nil {
			return usageError{err}
		}
	}
	fmt.Fprintf(stdout, "%-36s %-28s %-6s %s\n", "variable", "profile field", "kind", "value")
	for _, f := range p.Fields() {
		v := f.Value()
		switch {
		case *path == "":
			v = ""
		case f.IsZero():
			v = "(empty)"
		case f.Secret:
			v = "(set, secret)"
		}
		fmt.Fprintf(stdout, "%-36s %-28s %-6s %s\n", f.Env, f.Path, f.Kind, v)
	}
	fmt.Fprintln(stdout, "\nlists are comma-separated (a,b); maps are comma-separated name=value pairs; a variable set to \"\" clears its field.")
	return nil
}
