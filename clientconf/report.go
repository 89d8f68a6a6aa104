package clientconf

import (
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/invokeconf/invokeconf/internal/junitxml"
	"github.com/invokeconf/invokeconf/internal/safetext"
)

// The reports of a client run, as `invokeconf run` writes its own:
// report.html, junit.xml and summary.json in one folder. A run's verdict is
// per switch, not per rule, so these are writers of their own. Every text
// from the command (its output) was redacted and escaped when it was kept
// (Run.Output); the writers escape once more for their format.

// Report file names.
const (
	HTMLFile    = "report.html"
	JUnitFile   = "junit.xml"
	SummaryFile = "summary.json"
)

// WriteReports writes the three reports into dir (made if missing) and
// returns their paths.
func WriteReports(dir string, res *Result) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("reports: %w", err)
	}
	var paths []string
	for _, w := range []struct {
		name  string
		write func(io.Writer, *Result) error
	}{{HTMLFile, WriteHTML}, {JUnitFile, WriteJUnit}, {SummaryFile, WriteJSON}} {
		p := filepath.Join(dir, w.name)
		f, err := os.Create(p)
		if err != nil {
			return paths, fmt.Errorf("reports: %w", err)
		}
		err = w.write(f, res)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return paths, fmt.Errorf("reports: %s: %w", w.name, err)
		}
		paths = append(paths, p)
	}
	return paths, nil
}

// summary is summary.json.
type summary struct {
	Mode     string         `json:"mode"`
	Command  string         `json:"command"`
	Started  string         `json:"started"`
	Seconds  float64        `json:"seconds"`
	ExitCode int            `json:"exitCode"`
	Verdict  string         `json:"verdict"`
	Counts   map[string]int `json:"counts"`
	Failed   []string       `json:"failed"`
	Runs     []Run          `json:"runs"`
}

// Headline is the one-line verdict of a result.
func (r *Result) Headline() string {
	legal, failed, defects, cut := 0, len(r.Failed()), 0, 0
	for _, run := range r.Runs {
		switch {
		case run.Kind == KindDefect:
			defects++
		case run.Verdict == Interrupted:
			legal++
			cut++
		default:
			legal++
		}
	}
	s := fmt.Sprintf("the client passed %d of %d legal runs", legal-failed-cut, legal)
	if r.Interrupted {
		s = "interrupted: " + s + fmt.Sprintf("; %d not judged (the harness was stopped)", cut)
	}
	if failed > 0 {
		var names []string
		for _, f := range r.Failed() {
			names = append(names, f.Name)
		}
		s += "; failed: " + strings.Join(names, "; ")
	}
	if defects > 0 {
		s += fmt.Sprintf("; %d defect runs (informational)", defects)
	}
	return s
}

func counts(r *Result) map[string]int {
	c := map[string]int{}
	for _, run := range r.Runs {
		if run.Kind == KindDefect {
			c["defect "+string(run.Verdict)]++
		} else {
			c[string(run.Verdict)]++
		}
	}
	return c
}

// WriteJSON writes summary.json.
func WriteJSON(w io.Writer, r *Result) error {
	s := summary{Mode: "clients", Command: r.Command, Started: r.Started.Format("2006-01-02T15:04:05Z"), Seconds: r.Seconds,
		ExitCode: r.ExitCode(), Verdict: r.Headline(), Counts: counts(r), Failed: []string{}, Runs: r.Runs}
	for _, f := range r.Failed() {
		s.Failed = append(s.Failed, f.Name)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(s)
}

// WriteJUnit writes junit.xml: the suite "variants" has a test case per
// legal run (a failure when the command failed it); the suite "defects
// (informational)" one per defect run, never failed, its outcome in
// system-out.
func WriteJUnit(w io.Writer, r *Result) error {
	legal := junitxml.Suite{Name: "variants"}
	defects := junitxml.Suite{Name: "defects (informational)"}
	var legalTime, defectTime float64
	for _, run := range r.Runs {
		c := junitxml.Case{Name: string(run.Kind) + " " + run.Name, Classname: "invokeconf.clients." + string(run.Kind),
			Time: fmt.Sprintf("%.3f", run.Seconds)}
		detail := runDetail(run)
		if run.Kind == KindDefect {
			c.SystemOut = fmt.Sprintf("%s\n%s", outcome(run), detail)
			defects.Cases = append(defects.Cases, c)
			defects.Tests++
			defectTime += run.Seconds
			continue
		}
		switch run.Verdict {
		case Fail, Timeout:
			c.Failure = &junitxml.Problem{Message: outcome(run), Type: string(run.Verdict), Text: detail}
			legal.Failures++
		case Interrupted:
			c.Skipped = &junitxml.Problem{Message: outcome(run), Type: string(run.Verdict), Text: detail}
		case Error:
			c.Error = &junitxml.Problem{Message: outcome(run), Type: "harness", Text: detail}
			legal.Errors++
		default:
			c.SystemOut = detail
		}
		legal.Cases = append(legal.Cases, c)
		legal.Tests++
		legalTime += run.Seconds
	}
	legal.Time, defects.Time = fmt.Sprintf("%.3f", legalTime), fmt.Sprintf("%.3f", defectTime)
	root := junitxml.Suites{Name: "invokeconf clients: " + r.Command, Tests: legal.Tests + defects.Tests,
		Failures: legal.Failures, Errors: legal.Errors, Time: fmt.Sprintf("%.3f", r.Seconds), Suites: []junitxml.Suite{legal}}
	if defects.Tests > 0 {
		root.Suites = append(root.Suites, defects)
	}
	return junitxml.Write(w, root)
}

// outcome says in a few words what the command did.
func outcome(run Run) string {
	switch run.Verdict {
	case Pass:
		return "exit 0"
	case Fail:
		if run.Signal != "" {
			return "killed by " + run.Signal
		}
		return fmt.Sprintf("exit %d", run.ExitCode)
	case Timeout:
		return "timeout: " + run.Problem
	case Interrupted:
		return "interrupted: " + run.Problem
	}
	return "harness error: " + run.Problem
}

// runDetail is a run as text: what was on, the spec's words, what changes
// on the wire, the output's tail.
func runDetail(run Run) string {
	var b strings.Builder
	if run.Description != "" {
		fmt.Fprintf(&b, "what it does: %s\n", run.Description)
	}
	if run.Spec != "" {
		fmt.Fprintf(&b, "the spec allows it: %s\n", run.Spec)
	}
	if len(run.Rules) > 0 {
		fmt.Fprintf(&b, "rules it breaks: %s\n", strings.Join(run.Rules, ", "))
	}
	if run.Wire != nil {
		fmt.Fprintf(&b, "on the wire (%s):\n%s", run.Wire.Probe, wireText(run.Wire, "  "))
	}
	if run.Output != "" {
		fmt.Fprintf(&b, "output (tail):\n%s\n", run.Output)
	}
	return safetext.Clean(b.String())
}

// wireText renders a Wire's lines, "-" the default server's and "+" the
// variant's.
func wireText(wire *Wire, indent string) string {
	var b strings.Builder
	for _, l := range wire.Lines {
		fmt.Fprintf(&b, "%s%s %s\n", indent, l.Op, l.Text)
	}
	if wire.Note != "" {
		fmt.Fprintf(&b, "%s(%s)\n", indent, wire.Note)
	}
	return b.String()
}

// WriteConsole writes what a developer reads at the end of a run: every
// failed legal run with its spec words, wire example and output, the defect
// runs in one line each, the verdict line and the reports' paths.
func WriteConsole(w io.Writer, r *Result, paths []string) {
	failed := r.Failed()
	failedAlone := map[string]bool{}
	for _, run := range failed {
		if run.Kind == KindVariant {
			failedAlone[run.Name] = true
		}
	}
	for _, run := range failed {
		fmt.Fprintf(w, "\nFAILED %s %s: %s\n", run.Kind, run.Name, outcome(run))
		detail := runDetail(run)
		if run.Kind == KindCombined {
			// The spec words of each variant are in its own run and in
			// the reports; here, which of them the client fails alone.
			detail = combinedDetail(run, failedAlone)
		}
		for _, line := range strings.Split(strings.TrimRight(detail, "\n"), "\n") {
			fmt.Fprintf(w, "  %s\n", clipLine(line, 240))
		}
	}
	var defects []string
	for _, run := range r.Runs {
		if run.Kind == KindDefect {
			defects = append(defects, fmt.Sprintf("  %-36s %s (breaks %s)", run.Name, outcome(run), strings.Join(run.Rules, ", ")))
		}
	}
	if len(defects) > 0 {
		fmt.Fprintf(w, "\nagainst defects (informational, never failing the run):\n%s\n", strings.Join(defects, "\n"))
	}
	verdict := "PASSED"
	switch code := r.ExitCode(); {
	case code == ExitFail:
		verdict = "FAILED"
	case r.Interrupted:
		verdict = "INTERRUPTED"
	case code == ExitHarness:
		verdict = "HARNESS ERROR"
	}
	fmt.Fprintf(w, "\n%s: %s\n", verdict, r.Headline())
	if len(paths) > 0 {
		fmt.Fprintf(w, "reports: %s\n", strings.Join(paths, ", "))
	}
}

// combinedDetail says of a failed combined run which of its variants the
// client fails alone, and its output.
func combinedDetail(run Run, failedAlone map[string]bool) string {
	var alone []string
	for _, v := range run.Variants {
		if failedAlone[v] {
			alone = append(alone, v)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "variants on: %s\n", strings.Join(run.Variants, ", "))
	if len(alone) > 0 {
		if len(alone) == 1 {
			fmt.Fprintf(&b, "holds %s, which fails alone too\n", alone[0])
		} else {
			fmt.Fprintf(&b, "holds %s, which fail alone too\n", strings.Join(alone, ", "))
		}
	} else {
		b.WriteString("each of them passed alone: the client fails on their combination\n")
	}
	if run.Problem != "" {
		fmt.Fprintf(&b, "%s\n", run.Problem)
	}
	if run.Output != "" {
		fmt.Fprintf(&b, "output (tail):\n%s\n", run.Output)
	}
	return safetext.Clean(b.String())
}

func clipLine(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + fmt.Sprintf("... (%d more bytes)", len(s)-n)
}

// WriteHTML writes report.html: the verdict first, then a row per run,
// the failed legal runs first and open (as run's report puts failures
// first), then the rest in plan order.
func WriteHTML(w io.Writer, r *Result) error {
	type row struct {
		Run
		Outcome string
		Open    bool
		Wire    string
	}
	var rows []row
	for _, run := range r.Runs {
		rw := row{Run: run, Outcome: outcome(run), Open: run.Counts()}
		if run.Wire != nil {
			rw.Wire = wireText(run.Wire, "")
		}
		rows = append(rows, rw)
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].Open && !rows[j].Open })
	return htmlReport.Execute(w, map[string]any{"R": r, "Rows": rows, "Headline": r.Headline(),
		"Failed": r.ExitCode() != ExitPass, "Counts": counts(r)})
}

var htmlReport = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>invokeconf clients</title>
<style>
body{font:14px/1.45 system-ui,sans-serif;margin:2em;max-width:72em}
h1{font-size:1.4em} .pass{color:#176317} .fail,.timeout,.error{color:#a11} .interrupted{color:#8a5a00}
.verdict{padding:.6em 1em;border-radius:4px;background:#eef7ee} .verdict.bad{background:#fbeaea}
details{border:1px solid #ddd;border-radius:4px;margin:.3em 0;padding:.3em .6em}
summary{cursor:pointer} pre{white-space:pre-wrap;word-break:break-all;background:#f6f6f6;padding:.5em;font-size:12px}
.minus{color:#a11} .plus{color:#176317} .kind{color:#666;font-size:.9em}
</style></head><body>
<h1>invokeconf clients</h1>
<p class="verdict{{if .Failed}} bad{{end}}">{{.Headline}}</p>
<p>Command: <code>{{.R.Command}}</code>. Started {{.R.Started.Format "2006-01-02 15:04:05 UTC"}}, {{printf "%.1f" .R.Seconds}} s.
Each run had a fresh reference server with the switches named on; a variant is a behaviour the spec allows a service, so a client
must pass it. Runs against defects show how the client copes with a broken service and never fail the run.</p>
{{range .Rows}}<details{{if .Open}} open{{end}}><summary><span class="{{.Verdict}}">{{.Verdict}}</span>
<span class="kind">{{.Kind}}</span> <b>{{.Name}}</b>: {{.Outcome}} ({{printf "%.1f" .Seconds}} s)</summary>
{{if .Description}}<p>What it does: {{.Description}}</p>{{end}}
{{if .Spec}}<p>The spec allows it:</p><pre>{{.Spec}}</pre>{{end}}
{{if .Rules}}<p>Rules it breaks: {{range .Rules}}{{.}} {{end}}</p>{{end}}
{{if .Problem}}<p>{{.Problem}}</p>{{end}}
{{if .Wire}}<p>On the wire ({{.Run.Wire.Probe}}; <span class="minus">-</span> the default server,
<span class="plus">+</span> with the variant):</p><pre>{{.Wire}}</pre>{{end}}
{{if .Output}}<p>Output (tail, keys redacted):</p><pre>{{.Output}}</pre>{{end}}
</details>
{{end}}</body></html>
`))
