package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/invokeconf/invokeconf/clientconf"
	"github.com/invokeconf/invokeconf/profile"
)

// cmdClients runs a client's own test command against the reference server
// once per legal variant (clientconf).
func cmdClients(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlags("clients", stderr)
	out := fs.String("out", "reports/out/clients", "directory for report.html, junit.xml and summary.json")
	timeout := fs.Duration("timeout", clientconf.DefaultTimeout, "bound on each run of the command; its whole process group is killed then")
	keepalive := fs.Duration("keepalive", clientconf.DefaultKeepalive, "the servers' keepalive interval (the spec's is 20s; shorter, the client's tests meet ': ping' comments)")
	parallel := fs.Int("parallel", 1, "runs at once (each has its own server; only if the client's tests bear running side by side)")
	tailBytes := fs.Int("tail", clientconf.DefaultTailBytes, "bytes of each run's output kept in the reports")
	seedPath := fs.String("fixtures", "", "seed file in the target-profile format (default: the embedded fixtures/reference.yaml)")
	noWire := fs.Bool("no-wire", false, "leave out the example of what each variant changes on the wire")
	var variants, defects, secretEnv multiFlag
	fs.Var(&secretEnv, "secret-env", "also hide the values of these environment variables in the reports (comma-separated or repeated), beside those whose names or values look like secrets")
	fs.Var(&variants, "variants", "run only these variants (comma-separated or repeated; default: every variant and the compatible groups)")
	fs.Var(&defects, "defects", "also run against these defects (comma-separated or repeated), reported apart, never failing the run")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0, &helpError{"clients", fs}
		}
		return 0, usageError{fmt.Errorf("%w (see 'invokeconf help clients')", err)}
	}
	command := fs.Args()
	if len(command) == 0 {
		return 0, usageError{errors.New("no command: give the client's test command after --, e.g. invokeconf clients -- go test ./client/...")}
	}
	cfg := clientconf.Config{Command: command, Timeout: *timeout, Keepalive: *keepalive, Parallel: *parallel,
		TailBytes: *tailBytes, Defects: splitValues(defects), NoWire: *noWire, Progress: stdout, SecretEnv: splitValues(secretEnv)}
	if len(variants) > 0 {
		cfg.Variants = splitValues(variants)
	}
	if *seedPath != "" {
		seed, err := profile.Load(*seedPath)
		if err != nil {
			return 0, usageError{err}
		}
		cfg.Seed = seed
	}
	if _, err := clientconf.Plan(cfg); err != nil {
		return 0, usageError{err}
	}
	if err := clientconf.CheckCommand(cfg); err != nil {
		return 0, usageError{err}
	}
	fmt.Fprintf(stdout, "invokeconf clients: running %s once per run below, each against a fresh reference server\n", strings.Join(command, " "))
	res, err := clientconf.Execute(ctx, cfg)
	var ue *clientconf.UsageError
	if errors.As(err, &ue) {
		return 0, usageError{err}
	}
	if err != nil {
		return 0, err
	}
	paths, err := clientconf.WriteReports(*out, res)
	clientconf.WriteConsole(stdout, res, paths)
	if err != nil {
		return 0, err
	}
	return res.ExitCode(), nil
}

// splitValues splits comma-separated values of a repeated flag.
func splitValues(values []string) []string {
	var out []string
	for _, v := range values {
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}
