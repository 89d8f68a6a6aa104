package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/invokeconf/invokeconf/checks"
	"github.com/invokeconf/invokeconf/har"
	"github.com/invokeconf/invokeconf/outcome"
	"github.com/invokeconf/invokeconf/passive"
	"github.com/invokeconf/invokeconf/reports"
	"github.com/invokeconf/invokeconf/traffic"
)

// passiveSummaryFile is the JSON judgement a passive run writes beside the
// reports.
const passiveSummaryFile = passive.SummaryFile

func cmdJudge(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlags("judge", stderr)
	out := fs.String("out", "", "write report.html, summary.json, junit.xml and "+passiveSummaryFile+" into this directory")
	junitWarnings := fs.String("junit-warnings", reports.JUnitWarningsPass, "how junit.xml shows a failed SHOULD rule: pass or failure")
	reportLag := fs.Duration("report-lag", checks.DefaultReportLag, "how long after a run surely completed its thread's follow-ups must show it (the spec gives no time)")
	redactBodies := fs.Bool("redact-bodies", false, "keep body text out of every output: reports show only bodies' lengths, findings say "+checks.BodyTextRedacted)
	maxRecord := fs.Int64("max-record", traffic.DefaultMaxRecord, "bytes read of each body (the rest is counted, not kept: rules that need the whole body are untested)")
	var hide multiFlag
	fs.Var(&hide, "hide", hideUsage)
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
		return outcome.ExitUsage, usageError{fmt.Errorf("name a HAR file")}
	case fs.NArg() > 0:
		return outcome.ExitUsage, usageError{fmt.Errorf("unexpected argument %q", fs.Arg(0))}
	case *junitWarnings != reports.JUnitWarningsPass && *junitWarnings != reports.JUnitWarningsFailure:
		return outcome.ExitUsage, usageError{fmt.Errorf("--junit-warnings must be %s or %s, not %q", reports.JUnitWarningsPass, reports.JUnitWarningsFailure, *junitWarnings)}
	case *maxRecord <= 0:
		return outcome.ExitUsage, usageError{fmt.Errorf("--max-record must be positive, not %d", *maxRecord)}
	}
	f, err := os.Open(file)
	if err != nil {
		return outcome.ExitUsage, usageError{err}
	}
	defer f.Close()
	// Ctrl-C or SIGTERM stops the reading, even mid-entry and on a pipe
	// that sends nothing more: what was judged is reported.
	stop := context.AfterFunc(ctx, func() { _ = f.SetReadDeadline(time.Now()) })
	defer stop()
	s := passive.New(passive.Config{Source: "har", Target: "HAR file " + file, ReportLag: *reportLag,
		RedactBodies: *redactBodies, Out: *out, Report: reports.Options{JUnitWarnings: *junitWarnings}, Console: stdout})
	// The file is read entry by entry, each judged as it comes.
	rec := traffic.NewRecorder(*maxRecord, nil)
	rec.Redactor.Hide(splitValues(hide)...)
	r := har.NewReader(ctxReader{ctx, f}, rec)
	for ctx.Err() == nil {
		x, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if ctx.Err() != nil {
			break
		}
		if err != nil {
			return outcome.ExitUsage, usageError{fmt.Errorf("%s: %w", file, err)}
		}
		s.Add(&x)
	}
	if ctx.Err() != nil {
		added, _ := s.Exchanges()
		return judgeInterrupted(s, file, added, stderr)
	}
	// A file of no exchange is judged as the proxy judges a recording of
	// none: the verdict NOTHING OBSERVED, exit 2, reports written.
	return s.Finish()
}

// judgeInterrupted writes the reports of what was judged before Ctrl-C or
// SIGTERM and says so. The exit code is 1 when a MUST rule failed in what
// was judged, else 3: the file was not judged whole (nothing observed
// included).
func judgeInterrupted(s *passive.Session, file string, added int, stderr io.Writer) (int, error) {
	s.Interrupted(fmt.Sprintf("Ctrl-C or SIGTERM after %s; the rest not read", plural(added, "entry", "entries")))
	code, err := s.Finish()
	if err != nil {
		return code, err
	}
	fmt.Fprintf(stderr, "invokeconf judge: interrupted (Ctrl-C or SIGTERM) after %s of %s: the reports hold those; the rest of the file was not read\n",
		plural(added, "entry", "entries"), file)
	if code != outcome.ExitFail {
		code = outcome.ExitHarness
	}
	return code, nil
}

// ctxReader reads r until ctx ends, then fails every read with ctx's error.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// usageCode is the exit code of a parse error: 0 for help, else 2.
func usageCode(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return outcome.ExitPass
	}
	return outcome.ExitUsage
}

// plural is "1 entry" or "N entries".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
