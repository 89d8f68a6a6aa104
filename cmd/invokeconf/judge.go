package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/invokeconf/invokeconf/checks"
	"github.com/invokeconf/invokeconf/har"
	"github.com/invokeconf/invokeconf/runner"
	"github.com/invokeconf/invokeconf/traffic"
)

// passiveSummaryFile is the JSON summary a passive judgement writes.
const passiveSummaryFile = "passive-summary.json"

func cmdJudge(_ context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlags("judge", stderr)
	out := fs.String("out", "", "also write "+passiveSummaryFile+" into this directory")
	var file string
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return runner.ExitPass, &helpError{"judge", fs}
		}
		return runner.ExitUsage, usageError{err}
	}
	switch fs.NArg() {
	case 1:
		file = fs.Arg(0)
	case 0:
		return runner.ExitUsage, usageError{fmt.Errorf("name a HAR file")}
	default:
		return runner.ExitUsage, usageError{fmt.Errorf("unexpected argument %q", fs.Arg(1))}
	}
	f, err := os.Open(file)
	if err != nil {
		return runner.ExitUsage, usageError{err}
	}
	defer f.Close()
	xs, err := har.Read(f, traffic.NewRecorder(0, nil))
	if err != nil {
		return runner.ExitUsage, usageError{err}
	}
	j := checks.NewJudgement()
	for i := range xs {
		if xs[i].Response == nil {
			continue
		}
		for _, fd := range j.Add(&xs[i]) {
			fmt.Fprintln(stdout, fd)
		}
	}
	s := j.Summary()
	printSummary(stdout, s)
	if *out != "" {
		if err := writeSummary(*out, s); err != nil {
			return runner.ExitHarness, err
		}
	}
	if s.Failed() {
		return runner.ExitFail, nil
	}
	return runner.ExitPass, nil
}

// printSummary prints the verdict per rule, then the headline.
func printSummary(w io.Writer, s checks.Summary) {
	fmt.Fprintln(w)
	for _, v := range s.Verdicts {
		switch v.Verdict {
		case checks.Pass:
			fmt.Fprintf(w, "  pass      %-9s %-6s decided by %d exchange(s)\n", v.Rule, v.Level, v.Decided)
		case checks.Fail:
			fmt.Fprintf(w, "  FAIL      %-9s %-6s %d of %d exchange(s) broke it, first #%d\n", v.Rule, v.Level,
				len(v.Failures), v.Decided, v.Failures[0].Exchange)
		case checks.Untested:
			fmt.Fprintf(w, "  untested  %-9s %-6s %s\n", v.Rule, v.Level, v.Reason)
		default:
			fmt.Fprintf(w, "  not seen  %-9s %-6s no recorded exchange could decide it\n", v.Rule, v.Level)
		}
	}
	for _, e := range s.Errors {
		fmt.Fprintf(w, "  harness error: %s\n", e)
	}
	fmt.Fprintf(w, "\n%s (passive: not a certification)\n", s.Headline)
}

// writeSummary writes the JSON summary into dir.
func writeSummary(dir string, s checks.Summary) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, passiveSummaryFile), append(b, '\n'), 0o644)
}
