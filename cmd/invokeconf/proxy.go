package main

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/invokeconf/invokeconf/checks"
	"github.com/invokeconf/invokeconf/har"
	"github.com/invokeconf/invokeconf/internal/httpserve"
	"github.com/invokeconf/invokeconf/proxy"
	"github.com/invokeconf/invokeconf/runner"
	"github.com/invokeconf/invokeconf/traffic"
)

const proxyHelp = `Usage: invokeconf proxy --target URL [flags]

Sits between any client and the service: forwards every request and response
unchanged and unbuffered, records each exchange with the arrival time of every
response chunk, judges it against every rule that traffic can decide and
prints each failure as it happens (rule, level, what was seen, which request).
On Ctrl-C, SIGTERM or the end of --duration it writes the HAR file and
` + passiveSummaryFile + ` (pass with the number of exchanges that decided a rule,
fail with the exchange, untested, not seen). A passive report says "observed N
exchanges; judged M of K rules" and is never a certification.

No key is recorded: an Authorization header is kept as the key's <user>-<key>
ID, and keys in bodies are hidden. --redact-bodies keeps only lengths, chunk
timings and hashes of bodies.

Examples:
  invokeconf proxy --target https://svc.staging.example --listen 127.0.0.1:8089
  invokeconf proxy --target http://127.0.0.1:8080 --duration 10m --out passive/ --redact-bodies
  # then point the client at http://127.0.0.1:8089 instead of the service

Exit codes: 0 no rule failed, 1 a rule failed, 2 bad usage, 3 the proxy broke.

Flags:
`

func cmdProxy(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlags("proxy", stderr)
	target := fs.String("target", "", "the service's base URL (required)")
	listen := fs.String("listen", "127.0.0.1:8089", "listen address (127.0.0.1:0 picks a free port)")
	harFile := fs.String("har", "", "HAR file to write (default OUT/traffic.har)")
	out := fs.String("out", "reports/out/passive", "directory for the HAR file and "+passiveSummaryFile)
	duration := fs.Duration("duration", 0, "stop after this long (0: at Ctrl-C or SIGTERM)")
	maxRecord := fs.Int64("max-record", traffic.DefaultMaxRecord, "bytes recorded per body (the traffic passes whole)")
	redactBodies := fs.Bool("redact-bodies", false, "keep only lengths, chunk timings and hashes of bodies in the HAR file")
	fs.Usage = func() { fmt.Fprint(stderr, proxyHelp); fs.PrintDefaults() }
	if err := parse(fs, args); err != nil {
		return runner.ExitUsage, err
	}
	u, err := url.Parse(*target)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return runner.ExitUsage, usageError{fmt.Errorf("--target must be an http(s) base URL, got %q", *target)}
	}
	if *harFile == "" {
		*harFile = filepath.Join(*out, "traffic.har")
	}
	var mu sync.Mutex
	var xs []traffic.Exchange
	j := checks.NewJudgement()
	done := func(x traffic.Exchange) {
		var found []checks.Finding
		if x.Response != nil {
			found = j.Add(&x)
		}
		if *redactBodies {
			x = traffic.StripBodies(x)
		}
		mu.Lock()
		defer mu.Unlock()
		xs = append(xs, x)
		for _, f := range found {
			fmt.Fprintln(stdout, f)
		}
		if x.Error != "" {
			fmt.Fprintf(stdout, "exchange #%d: %s %s: %s\n", x.ID, x.Request.Method, x.Request.URL, x.Error)
		}
	}
	p := proxy.New(proxy.Config{Target: u, Recorder: traffic.NewRecorder(*maxRecord, nil), Done: done})
	l, err := httpserve.Start(p, *listen)
	if err != nil {
		return runner.ExitUsage, usageError{err}
	}
	fmt.Fprintf(stdout, "invokeconf proxy: %s -> %s (Ctrl-C writes %s and %s)\n", l.URL, u,
		*harFile, filepath.Join(*out, passiveSummaryFile))
	if *duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *duration)
		defer cancel()
	}
	select {
	case <-ctx.Done():
	case <-l.Done():
		return runner.ExitHarness, fmt.Errorf("the listener stopped: %v", l.Err())
	}
	// Open streams get a moment to end, then are cut (and recorded as such).
	_ = l.Stop(2 * time.Second)
	mu.Lock()
	defer mu.Unlock()
	if err := writeHAR(*harFile, xs); err != nil {
		return runner.ExitHarness, err
	}
	s := j.Summary()
	printSummary(stdout, s)
	if err := writeSummary(*out, s); err != nil {
		return runner.ExitHarness, err
	}
	fmt.Fprintf(stdout, "wrote %s and %s\n", *harFile, filepath.Join(*out, passiveSummaryFile))
	if s.Failed() {
		return runner.ExitFail, nil
	}
	return runner.ExitPass, nil
}

func writeHAR(file string, xs []traffic.Exchange) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if err := har.Write(f, "invokeconf", xs); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
