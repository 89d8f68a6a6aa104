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
	"time"

	"github.com/invokeconf/invokeconf/checks"
	"github.com/invokeconf/invokeconf/har"
	"github.com/invokeconf/invokeconf/internal/safetext"
	"github.com/invokeconf/invokeconf/reports"
	"github.com/invokeconf/invokeconf/runner"
	"github.com/invokeconf/invokeconf/traffic"
	"github.com/invokeconf/invokeconf/transcript"
)

// passiveSummaryFile is the JSON judgement a passive run writes beside the
// reports (schema checks.SummarySchema: the rules traffic can decide).
const passiveSummaryFile = "passive-summary.json"

func cmdJudge(_ context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlags("judge", stderr)
	out := fs.String("out", "", "write report.html, summary.json, junit.xml and "+passiveSummaryFile+" into this directory")
	junitWarnings := fs.String("junit-warnings", reports.JUnitWarningsPass, "how junit.xml shows a failed SHOULD rule: pass or failure")
	reportLag := fs.Duration("report-lag", checks.DefaultReportLag, "how long after a run surely completed its thread's follow-ups must show it (the spec gives no time)")
	redactBodies := fs.Bool("redact-bodies", false, "keep body text out of every output: reports show only bodies' lengths, findings say "+checks.BodyTextRedacted)
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
	j.SetReportLag(*reportLag)
	if *redactBodies {
		j.RedactBodies()
	}
	byID := map[int]*traffic.Exchange{}
	var first, last time.Time
	for i := range xs {
		x := &xs[i]
		byID[x.ID] = x
		if !x.Start.IsZero() {
			if first.IsZero() || x.Start.Before(first) {
				first = x.Start
			}
			if end := exchangeEnd(x); end.After(last) {
				last = end
			}
		}
		if x.Response == nil {
			continue
		}
		for _, fd := range j.Add(x) {
			printFinding(stdout, fd)
		}
	}
	var span time.Duration
	if first.IsZero() {
		first = time.Now() // the file gives no times: the report is dated when judged
	} else {
		span = last.Sub(first)
	}
	in := reports.PassiveInput{Summary: j.Summary(), Source: "har", Target: "HAR file " + file, Started: first, Duration: span,
		Exchange: func(id int) (transcript.Exchange, bool) {
			if x, ok := byID[id]; ok {
				if *redactBodies {
					stripped := traffic.StripBodies(*x)
					x = &stripped
				}
				return reports.EvidenceOf(x), true
			}
			return transcript.Exchange{}, false
		}}
	return writePassive(in, *out, reports.Options{JUnitWarnings: *junitWarnings}, stdout)
}

// usageCode is the exit code of a parse error: 0 for help, else 2.
func usageCode(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return runner.ExitPass
	}
	return runner.ExitUsage
}

// exchangeEnd is when an exchange's last byte arrived, as far as the
// recording says.
func exchangeEnd(x *traffic.Exchange) time.Time {
	end := x.Start
	if r := x.Response; r != nil {
		if r.HeaderAt > 0 {
			end = x.Start.Add(r.HeaderAt)
		}
		if n := len(r.Body.Chunks); n > 0 && r.Body.Timed {
			if t := x.Start.Add(r.Body.Chunks[n-1].At); t.After(end) {
				end = t
			}
		}
	}
	return end
}

// printFinding prints a failure as it is found, made printable: its text
// comes from the target.
func printFinding(w io.Writer, f checks.Finding) {
	fmt.Fprintln(w, safetext.Clean(f.String()))
}

// writePassive writes a passive judgement: the reports that run writes
// (report.html, summary.json, junit.xml) and passive-summary.json into dir
// when dir is not "", then the console summary. It returns the exit code:
// 0 no rule failed, 1 a MUST rule failed, 3 a report could not be written.
func writePassive(in reports.PassiveInput, dir string, opts reports.Options, stdout io.Writer) (int, error) {
	rep, err := reports.BuildPassive(in)
	if err != nil {
		return runner.ExitHarness, err
	}
	var paths []string
	if dir != "" {
		if paths, err = reports.Write(dir, rep, nil, opts); err != nil {
			return runner.ExitHarness, err
		}
		if err := writeSummary(dir, in.Summary); err != nil {
			return runner.ExitHarness, err
		}
		paths = append(paths, filepath.Join(dir, passiveSummaryFile))
	}
	reports.WriteConsole(stdout, rep, paths)
	return rep.ExitCode, nil
}

// writeSummary writes the JSON judgement into dir.
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
