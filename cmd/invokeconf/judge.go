package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/invokeconf/invokeconf/checks"
	"github.com/invokeconf/invokeconf/har"
	"github.com/invokeconf/invokeconf/passive"
	"github.com/invokeconf/invokeconf/reports"
	"github.com/invokeconf/invokeconf/runner"
	"github.com/invokeconf/invokeconf/traffic"
)

// passiveSummaryFile is the JSON judgement a passive run writes beside the
// reports.
const passiveSummaryFile = passive.SummaryFile

func cmdJudge(_ context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlags("judge", stderr)
	out := fs.String("out", "", "write report.html, summary.json, junit.xml and "+passiveSummaryFile+" into this directory")
	junitWarnings := fs.String("junit-warnings", reports.JUnitWarningsPass, "how junit.xml shows a failed SHOULD rule: pass or failure")
	reportLag := fs.Duration("report-lag", checks.DefaultReportLag, "how long after a run surely completed its thread's follow-ups must show it (the spec gives no time)")
	redactBodies := fs.Bool("redact-bodies", false, "keep body text out of every output: reports show only bodies' lengths, findings say "+checks.BodyTextRedacted)
	maxRecord := fs.Int64("max-record", traffic.DefaultMaxRecord, "bytes read of each body (the rest is counted, not kept: rules that need the whole body are untested)")
	var file string
	parse := func(args []string) error {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return &helpError{"judge", fs}
			}
			return usageError{err}
		}
		return nil
	}
	if err := parse(args); err != nil {
		return usageCode(err), err
	}
	// Flags may follow the file too: judge FILE.har --out DIR.
	if fs.NArg() > 0 {
		file = fs.Arg(0)
		if err := parse(fs.Args()[1:]); err != nil {
			return usageCode(err), err
		}
	}
	switch {
	case file == "":
		return runner.ExitUsage, usageError{fmt.Errorf("name a HAR file")}
	case fs.NArg() > 0:
		return runner.ExitUsage, usageError{fmt.Errorf("unexpected argument %q", fs.Arg(0))}
	case *junitWarnings != reports.JUnitWarningsPass && *junitWarnings != reports.JUnitWarningsFailure:
		return runner.ExitUsage, usageError{fmt.Errorf("--junit-warnings must be %s or %s, not %q", reports.JUnitWarningsPass, reports.JUnitWarningsFailure, *junitWarnings)}
	case *maxRecord <= 0:
		return runner.ExitUsage, usageError{fmt.Errorf("--max-record must be positive, not %d", *maxRecord)}
	}
	f, err := os.Open(file)
	if err != nil {
		return runner.ExitUsage, usageError{err}
	}
	defer f.Close()
	s := passive.New(passive.Config{Source: "har", Target: "HAR file " + file, ReportLag: *reportLag,
		RedactBodies: *redactBodies, Out: *out, Report: reports.Options{JUnitWarnings: *junitWarnings}, Console: stdout})
	// The file is read entry by entry, each judged as it comes.
	r := har.NewReader(f, traffic.NewRecorder(*maxRecord, nil))
	for {
		x, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return runner.ExitUsage, usageError{fmt.Errorf("%s: %w", file, err)}
		}
		s.Add(&x)
	}
	// A file of no exchange is judged as the proxy judges a recording of
	// none: the verdict NOTHING OBSERVED, exit 2, reports written.
	return s.Finish()
}

// usageCode is the exit code of a parse error: 0 for help, else 2.
func usageCode(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return runner.ExitPass
	}
	return runner.ExitUsage
}

// plural is "1 entry" or "N entries".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
