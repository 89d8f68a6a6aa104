package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/invokeconf/invokeconf/fakeserver"
	"github.com/invokeconf/invokeconf/fixtures"
	"github.com/invokeconf/invokeconf/profile"
	"github.com/invokeconf/invokeconf/runner"
)

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlags("run", stderr)
	profilePath := fs.String("profile", "", "target profile (YAML); without it the embedded reference server is started and tested")
	tags := fs.String("tags", "", "godog tag expression selecting scenarios, e.g. '@SSE-01,@SSE-02' or '~@slow'")
	quick := fs.Bool("quick", false, "skip @slow scenarios (the 20 s keepalive)")
	out := fs.String("out", filepath.Join("reports", "out"), "folder for junit.xml and cucumber.json")
	concurrency := fs.Int("concurrency", 16, "scenarios run at once")
	var defects multiFlag
	fs.Var(&defects, "defect", "with the embedded server: switch on a defect (repeatable); see 'invokeconf defects'")
	if err := parse(fs, args); err != nil {
		return 0, err
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
		var err error
		if p, err = profile.Load(*profilePath); err != nil {
			return 0, usageError{err}
		}
		if err := p.Validate(); err != nil {
			return 0, usageError{fmt.Errorf("profile %s: %w", *profilePath, err)}
		}
		target = p.BaseURL
	}
	expr := *tags
	if *quick {
		expr = joinTags(expr, "~@slow")
	}
	fmt.Fprintf(stdout, "invokeconf: testing %s\n", target)
	res, err := runner.Run(ctx, runner.Config{
		Profile:     p,
		Tags:        expr,
		Concurrency: *concurrency,
		OutDir:      *out,
		Console:     stdout,
		NoColors:    !isTerminal(stdout),
	})
	if err != nil {
		return 0, err
	}
	printSummary(stdout, res, *out)
	return res.ExitCode(), nil
}

// joinTags ANDs two godog tag expressions.
func joinTags(a, b string) string {
	if a == "" {
		return b
	}
	return a + " && " + b
}

// printSummary writes the per-area summary, the failures and the reports.
func printSummary(w io.Writer, res *runner.Result, out string) {
	type counts struct{ passed, failed, untested int }
	areas := map[string]*counts{}
	for _, s := range res.Scenarios {
		c := areas[s.Feature]
		if c == nil {
			c = &counts{}
			areas[s.Feature] = c
		}
		switch s.Status {
		case runner.Passed:
			c.passed++
		case runner.Failed:
			c.failed++
		default:
			c.untested++
		}
	}
	names := make([]string, 0, len(areas))
	for n := range areas {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintf(w, "\n%-14s %7s %7s %9s\n", "area", "passed", "failed", "untested")
	for _, n := range names {
		c := areas[n]
		fmt.Fprintf(w, "%-14s %7d %7d %9d\n", n, c.passed, c.failed, c.untested)
	}
	fmt.Fprintf(w, "%-14s %7d %7d %9d   (%d scenarios in %s)\n", "total",
		res.Count(runner.Passed), res.Count(runner.Failed), res.Count(runner.Untested),
		len(res.Scenarios), res.Duration.Round(100*time.Millisecond))
	for _, s := range res.Failed() {
		fmt.Fprintf(w, "\nFAILED %s [%s] (%s)\n  %s\n", s.Name, strings.Join(s.Rules, " "), s.URI,
			strings.ReplaceAll(s.Error, "\n", "\n  "))
	}
	for _, s := range res.Scenarios {
		if s.Status == runner.Untested {
			fmt.Fprintf(w, "UNTESTED %s [%s]: %s\n", s.Name, strings.Join(s.Rules, " "), s.Error)
		}
	}
	if len(res.Scenarios) == 0 {
		fmt.Fprintln(w, "\nno scenario ran: check --tags")
	}
	if out != "" {
		fmt.Fprintf(w, "\nreports: %s, %s\n", filepath.Join(out, "junit.xml"), filepath.Join(out, "cucumber.json"))
	}
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
