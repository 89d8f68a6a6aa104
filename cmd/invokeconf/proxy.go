package main

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/invokeconf/invokeconf/checks"
	"github.com/invokeconf/invokeconf/har"
	"github.com/invokeconf/invokeconf/internal/httpserve"
	"github.com/invokeconf/invokeconf/outcome"
	"github.com/invokeconf/invokeconf/passive"
	"github.com/invokeconf/invokeconf/proxy"
	"github.com/invokeconf/invokeconf/traffic"
)

func cmdProxy(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlags("proxy", stderr)
	target := fs.String("target", "", "the service's base URL (required)")
	listen := fs.String("listen", "127.0.0.1:8089", "listen address (127.0.0.1:0 picks a free port)")
	harFile := fs.String("har", "", "HAR file to write (default OUT/traffic.har)")
	out := fs.String("out", "reports/out/passive", "directory for the HAR file, report.html, summary.json, junit.xml and "+passiveSummaryFile)
	duration := fs.Duration("duration", 0, "stop after this long (0: at Ctrl-C or SIGTERM)")
	maxRecord := fs.Int64("max-record", traffic.DefaultMaxRecord, "bytes recorded per body (the traffic passes whole)")
	redactBodies := fs.Bool("redact-bodies", false, "keep body text out of every output: the HAR file keeps only lengths, chunk timings and hashes of bodies, findings say "+checks.BodyTextRedacted)
	reportLag := fs.Duration("report-lag", checks.DefaultReportLag, "how long after a run surely completed its thread's follow-ups must show it (the spec gives no time)")
	quiet := fs.Bool("quiet", false, "print no line per exchange (failures and the summary still print)")
	spillThreshold := fs.Int64("spill-threshold", traffic.DefaultSpillThreshold,
		"recorded bytes of a body held in memory before the rest goes to a temporary file in OUT (keys hidden first)")
	var hide multiFlag
	fs.Var(&hide, "hide", hideUsage)
	if err := parse(fs, args); err != nil {
		return outcome.ExitUsage, err
	}
	u, err := url.Parse(*target)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return outcome.ExitUsage, usageError{fmt.Errorf("--target must be an http(s) base URL, got %q", *target)}
	}
	if *harFile == "" {
		*harFile = filepath.Join(*out, "traffic.har")
	}
	// Nothing of the recording stays in memory: bodies past the threshold
	// and finished exchanges go to temporary files, removed at the end.
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return outcome.ExitHarness, err
	}
	tmp, err := os.MkdirTemp(*out, ".spool-")
	if err != nil {
		return outcome.ExitHarness, err
	}
	defer os.RemoveAll(tmp)
	spool, err := har.NewSpool(tmp)
	if err != nil {
		return outcome.ExitHarness, err
	}
	defer spool.Close()
	rec := traffic.NewRecorder(*maxRecord, nil)
	rec.SpillDir, rec.SpillThreshold = tmp, *spillThreshold
	rec.Redactor.Hide(splitValues(hide)...)
	var progress io.Writer = stdout
	if *quiet {
		progress = nil
	}
	session := passive.New(passive.Config{Source: "proxy", Target: "proxy to " + u.Redacted(), BaseURL: u.String(),
		Started: time.Now(), ReportLag: *reportLag, RedactBodies: *redactBodies, Out: *out, Console: stdout, Progress: progress})
	done := func(x traffic.Exchange) {
		session.Add(&x)
		if *redactBodies {
			x = traffic.StripBodies(x)
		}
		_ = spool.Add(x) // a write error is kept and returned by writeHAR
	}
	p := proxy.New(proxy.Config{Target: u, Recorder: rec, Done: done})
	l, err := httpserve.Start(p, *listen)
	if err != nil {
		return outcome.ExitUsage, usageError{err}
	}
	fmt.Fprintf(stdout, "invokeconf proxy: %s -> %s (Ctrl-C writes %s and the reports in %s)\n", l.URL, u,
		*harFile, *out)
	if *duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *duration)
		defer cancel()
	}
	select {
	case <-ctx.Done():
	case <-l.Done():
		return outcome.ExitHarness, fmt.Errorf("the listener stopped: %v", l.Err())
	}
	// Open streams get a moment to end, then are cut (and recorded as such).
	_ = l.Stop(2 * time.Second)
	p.Wait(2 * time.Second)
	if err := writeHAR(*harFile, spool); err != nil {
		return outcome.ExitHarness, err
	}
	added, _ := session.Exchanges()
	fmt.Fprintf(stdout, "wrote %s (%s)\n", *harFile, plural(added, "exchange", "exchanges"))
	return session.Finish()
}

func writeHAR(file string, spool *har.Spool) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if err := spool.WriteHAR(f, "invokeconf"); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// hideUsage is the --hide flag's help, for proxy and judge.
const hideUsage = "also hide the values of these headers, query parameters and JSON members (comma-separated or repeated), " +
	"beside the credentials hidden by default (docs/passive.md)"
