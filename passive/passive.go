// Package passive judges recorded traffic, for invokeconf proxy (each
// exchange as it ends) and invokeconf judge (each entry of a HAR file as it
// is read), the same way: a Session judges each exchange with the rule
// checks (package checks), prints its progress and findings, keeps the
// evidence of the exchanges that broke a rule (bodies cut, or stripped
// with RedactBodies), and at the end writes the reports (package reports,
// in passive mode) and passive-summary.json, and prints a short summary,
// failures first. Nothing it keeps grows with the recording but the
// judgement's thread history and the evidence of failures (bounded).
package passive

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/invokeconf/invokeconf/checks"
	"github.com/invokeconf/invokeconf/internal/safetext"
	"github.com/invokeconf/invokeconf/outcome"
	"github.com/invokeconf/invokeconf/reports"
	"github.com/invokeconf/invokeconf/traffic"
)

// SummaryFile is the JSON judgement a passive run writes beside the
// reports (schema checks.SummarySchema: the rules traffic can decide).
const SummaryFile = "passive-summary.json"

// Config says what a Session judges and where its output goes.
type Config struct {
	// Source is where the traffic comes from: "proxy" or "har".
	Source string
	// Target describes the traffic for people ("proxy to
	// https://svc.example", "HAR file staging.har"); BaseURL is the
	// service's URL when known.
	Target, BaseURL string
	// Started, when set, starts the judged span (a proxy's start): it
	// ends at Finish. When zero, the span is the recording's own, from
	// the first exchange's start to the last byte any exchange recorded.
	Started time.Time
	// ReportLag is how long after a run surely completed its thread's
	// follow-ups must show it; 0 means checks.DefaultReportLag.
	ReportLag time.Duration
	// RedactBodies keeps body text out of every output: findings say
	// checks.BodyTextRedacted, reports show bodies' lengths.
	RedactBodies bool
	// Out is the directory the reports and SummaryFile go to; "" writes
	// none (the console summary only).
	Out string
	// Report holds the report writers' options.
	Report reports.Options
	// Console receives each finding as it is found and the summary at
	// the end; nil discards them.
	Console io.Writer
	// Progress receives a line per exchange as it is judged; nil prints
	// none (--quiet).
	Progress io.Writer
}

// Session judges exchanges one by one and sums up. It is safe for
// concurrent use: a proxy ends exchanges on many goroutines.
type Session struct {
	cfg      Config
	j        *checks.Judgement
	evidence *reports.Evidence
	mu       sync.Mutex // orders the console's lines
	first    time.Time  // the earliest start recorded
	last     time.Time  // the latest byte recorded
	seen     int        // exchanges added, with or without a response
	errs     int        // exchanges without a response
	failing  int        // exchanges that broke a rule
}

// New returns a Session.
func New(cfg Config) *Session {
	if cfg.Console == nil {
		cfg.Console = io.Discard
	}
	j := checks.NewJudgement()
	if cfg.ReportLag > 0 {
		j.SetReportLag(cfg.ReportLag)
	}
	if cfg.RedactBodies {
		j.RedactBodies()
	}
	return &Session{cfg: cfg, j: j, evidence: reports.NewEvidence(reports.DefaultEvidence, cfg.RedactBodies)}
}

// Add judges x (an exchange without a response is counted, not judged),
// keeps it as evidence when it broke a rule, prints its progress line and
// its findings, and returns the findings.
func (s *Session) Add(x *traffic.Exchange) []checks.Finding {
	var found []checks.Finding
	if x.Response != nil {
		// What the report shows of a failure; an answer whose thread a
		// follow-up or the summary blames later too.
		if found = s.j.Add(x); len(found) > 0 || s.j.Pending(x.ID) {
			s.evidence.Add(x)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen++
	if x.Response == nil {
		s.errs++
	}
	if len(found) > 0 {
		s.failing++
	}
	if !x.Start.IsZero() {
		if s.first.IsZero() || x.Start.Before(s.first) {
			s.first = x.Start
		}
		if end := exchangeEnd(x); end.After(s.last) {
			s.last = end
		}
	}
	if s.cfg.Progress != nil {
		fmt.Fprintln(s.cfg.Progress, safetext.Clean(progressLine(x, found)))
	}
	for _, f := range found {
		fmt.Fprintln(s.cfg.Console, safetext.Clean(indentFinding(f, s.cfg.Progress != nil)))
	}
	if x.Error != "" && s.cfg.Progress == nil {
		fmt.Fprintln(s.cfg.Console, safetext.Clean(fmt.Sprintf("exchange #%d: %s %s: %s", x.ID, x.Request.Method, x.Request.URL, x.Error)))
	}
	return found
}

// indentFinding is a finding's console line, indented under its progress
// line when there is one.
func indentFinding(f checks.Finding, underProgress bool) string {
	if underProgress {
		return "    " + f.String()
	}
	return f.String()
}

// progressLine says what an exchange was and what the judge made of it:
// "#12 POST /api/invoke/agt_main01 -> 200 text/event-stream, 1.2s, complete: ok".
func progressLine(x *traffic.Exchange, found []checks.Finding) string {
	var b strings.Builder
	fmt.Fprintf(&b, "#%d %s %s", x.ID, x.Request.Method, pathOf(x.Request))
	r := x.Response
	if r == nil {
		fmt.Fprintf(&b, " -> no answer: %s", x.Error)
		return b.String()
	}
	fmt.Fprintf(&b, " -> %d", r.Status)
	if mt := traffic.MediaType(r.Header.Get("Content-Type")); mt != "" {
		b.WriteString(" " + mt)
	}
	if end, ok := r.LastByte(); ok {
		fmt.Fprintf(&b, ", %s", roundDuration(end))
	}
	if r.End != traffic.EndUnknown && r.End != traffic.EndComplete {
		fmt.Fprintf(&b, ", %s", r.End)
	}
	if len(found) == 0 {
		b.WriteString(": ok")
		return b.String()
	}
	rules := make([]string, 0, len(found))
	for _, f := range found {
		rules = append(rules, f.Rule)
	}
	fmt.Fprintf(&b, ": broke %s", strings.Join(rules, " "))
	return b.String()
}

// pathOf is a request's path and query, shorter than its URL.
func pathOf(r traffic.Request) string {
	if _, rest, ok := strings.Cut(r.URL, "://"); ok {
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			return rest[i:]
		}
	}
	return r.URL
}

func roundDuration(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(100 * time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(time.Millisecond)
	}
	return d.Round(time.Microsecond)
}

// exchangeEnd is when an exchange's last byte arrived, as far as the
// recording says.
func exchangeEnd(x *traffic.Exchange) time.Time {
	end := x.Start
	if r := x.Response; r != nil {
		if r.HeaderAt > 0 {
			end = x.Start.Add(r.HeaderAt)
		}
		if last, ok := r.LastByte(); ok {
			if t := x.Start.Add(last); t.After(end) {
				end = t
			}
		}
	}
	return end
}

// Interrupted notes in every report that the traffic was not judged whole
// (Ctrl-C or SIGTERM): why is said after the target's name.
func (s *Session) Interrupted(why string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cfg.Target += " (interrupted: " + why + ")"
}

// Exchanges returns the number of exchanges added, and of those the
// number judged (those with a response).
func (s *Session) Exchanges() (added, judged int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen, s.seen - s.errs
}

// Input returns the judgement so far as the reports take it.
func (s *Session) Input() reports.PassiveInput {
	s.mu.Lock()
	started, span := s.cfg.Started, time.Duration(0)
	switch {
	case !started.IsZero():
		span = time.Since(started)
	case !s.first.IsZero():
		started, span = s.first, s.last.Sub(s.first)
	default:
		started = time.Now() // the recording gives no times: the report is dated when judged
	}
	unanswered := s.errs
	s.mu.Unlock()
	return reports.PassiveInput{Summary: s.j.Summary(), Source: s.cfg.Source, Target: s.cfg.Target, BaseURL: s.cfg.BaseURL,
		Started: started, Duration: span, Exchange: s.evidence.Lookup, Unanswered: unanswered}
}

// Finish writes the reports (report.html, summary.json, junit.xml) and
// SummaryFile into Config.Out when it is set, then prints the summary. It
// returns the exit code: 0 no rule failed, 1 a MUST rule failed, 2 nothing
// was observed (no exchange with a response: nothing judged, which is no
// pass), 3 a report could not be written.
func (s *Session) Finish() (int, error) {
	in := s.Input()
	rep, err := reports.BuildPassive(in)
	if err != nil {
		return outcome.ExitHarness, err
	}
	var paths []string
	if dir := s.cfg.Out; dir != "" {
		if paths, err = reports.Write(dir, rep, nil, s.cfg.Report); err != nil {
			return outcome.ExitHarness, err
		}
		if err := WriteSummary(dir, in.Summary); err != nil {
			return outcome.ExitHarness, err
		}
		paths = append(paths, filepath.Join(dir, SummaryFile))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	reports.WriteConsole(s.cfg.Console, rep, paths)
	return rep.ExitCode, nil
}

// WriteSummary writes the JSON judgement into dir as SummaryFile.
func WriteSummary(dir string, sum checks.Summary) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create output folder: %w", err)
	}
	b, err := json.MarshalIndent(sum, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, SummaryFile), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", SummaryFile, err)
	}
	return nil
}

// plural is "1 exchange" or "N exchanges".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
