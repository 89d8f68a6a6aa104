package main

import (
	"encoding/json"
	"encoding/xml"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/invokeconf/invokeconf/reports"
)

// TestHelp: every command's help goes to stdout with its description, its
// flags spelt with --, examples and the exit codes, through -h, --help and
// 'help COMMAND' alike.
func TestHelp(t *testing.T) {
	t.Parallel()
	// Every command has help; these flags, at least, must be in it.
	flagsOf := map[string][]string{
		"run": {"--profile", "--spec-only", "--junit-warnings", "--concurrency", "--evidence", "--sign"}, "serve": {"--defect", "--variant", "--admin-key"},
		"model": {"--addr"}, "rules": {"--format", "--uncovered"}, "version": {"--profile"}, "verify": {"--key"},
		"profile check": {"--profile", "--require-complete"}, "profile vars": {"--profile"},
		"proxy": {"--target", "--quiet"}, "judge": {"--max-record"}, "clients": {"--defects", "--variants", "--timeout"},
	}
	for name := range commandDocs {
		flags := flagsOf[name]
		args := strings.Fields(name)
		for _, form := range [][]string{append(args, "-h"), append(args, "--help"), append([]string{"help"}, args...)} {
			code, stdout, stderr := invoke(t, form...)
			if code != 0 || stderr != "" {
				t.Errorf("%v: exit %d, stderr %q", form, code, stderr)
			}
			for _, want := range append([]string{"Usage: invokeconf " + args[0], "Examples:", "Exit codes:", commandDocs[name].description[:20]}, flags...) {
				if !strings.Contains(stdout, want) {
					t.Errorf("%v: the help lacks %q:\n%s", form, want, stdout)
				}
			}
		}
	}
	// Each command's help gives its own exit codes: run's are run's alone.
	for name, doc := range commandDocs {
		_, stdout, _ := invoke(t, append(strings.Fields(name), "-h")...)
		if !strings.HasSuffix(stdout, doc.exits) || !strings.HasPrefix(doc.exits, "Exit codes:") {
			t.Errorf("%s: the help does not end with its exit codes:\n%s", name, stdout)
		}
		if run := strings.Contains(stdout, "a MUST rule failed"); run != (name == "run") {
			t.Errorf("%s: the help gives the run's exit codes: %v", name, run)
		}
	}
	if code, stdout, _ := invoke(t, "help", "profile"); code != 0 || !strings.Contains(stdout, "Exit codes:") || !strings.Contains(stdout, "4  check --require-complete") {
		t.Errorf("help profile: exit %d:\n%s", code, stdout)
	}
	if _, stdout, _ := invoke(t, "help", "run"); !strings.Contains(stdout, "4  with --require-complete") || !strings.Contains(stdout, "--require-complete") {
		t.Errorf("help run lacks exit 4 or --require-complete:\n%s", stdout)
	}
	if code, _, stderr := invoke(t, "serv"); code != 2 || !strings.Contains(stderr, "did you mean serve?") {
		t.Errorf("a misspelt command: exit %d: %s", code, stderr)
	}
}

// TestVersion: version names the harness, the spec and the catalog, and
// with a profile the target's product.
func TestVersion(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "p.yaml")
	if err := os.WriteFile(path, []byte("baseURL: http://127.0.0.1:1\nproduct: Acme Agents\nproductVersion: 2.3.1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, _ := invoke(t, "version", "--profile", path)
	id := reports.Identify(nil)
	for _, want := range []string{"invokeconf " + id.HarnessVersion, "commit:", "found:    " + id.HarnessSource + ": " + id.HarnessNote,
		"binary:   " + id.HarnessBinary, id.SpecDigest, id.CatalogDigest, "Acme Agents 2.3.1"} {
		if code != 0 || !strings.Contains(stdout, want) {
			t.Errorf("exit %d; version lacks %q:\n%s", code, want, stdout)
		}
	}
}

// TestUsageChecks: flags and profiles that cannot work are bad usage that
// names the fix, before anything runs.
func TestUsageChecks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	noScheme := filepath.Join(dir, "noscheme.yaml")
	badType := filepath.Join(dir, "badtype.yaml")
	_ = os.WriteFile(noScheme, []byte("baseURL: 127.0.0.1:8080\n"), 0o644)
	_ = os.WriteFile(badType, []byte("baseURL: http://127.0.0.1:1\ncapabilities:\n  researchMode: maybe\n"), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--concurrency", "0"}, "--concurrency must be a positive number"},
		{[]string{"run", "--out", filepath.Join(file, "sub")}, "cannot be created"},
		{[]string{"run", "--junit-warnings", "loud"}, "--junit-warnings must be"},
		{[]string{"run", "--rules", "SSE-50"}, "did you mean SSE-05?"},
		{[]string{"run", "--areas", "ssee"}, "did you mean sse?"},
		{[]string{"run", "--defect", "no-clos"}, "did you mean no-close?"},
		{[]string{"serve", "--defect", "no-clos"}, "did you mean no-close?"},
		{[]string{"serve", "--variant", "async-20"}, "did you mean async-202?"},
		{[]string{"run", "--profile", noScheme}, "http://127.0.0.1:8080"},
		{[]string{"run", "--profile", badType}, "capabilities.researchMode"},
	} {
		code, _, stderr := invoke(t, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, want 2 with %q: %s", tc.args, code, tc.want, stderr)
		}
	}
}

// TestUnknownVariableWarns: an INVOKECONF_ variable that overrides no field
// is named, with the nearest real one.
func TestUnknownVariableWarns(t *testing.T) {
	p, path := serveProfile(t)
	_ = p
	t.Setenv("INVOKECONF_KEYS_AGNET", "x")
	code, stdout, stderr := invoke(t, "run", "--profile", path, "--rules", "ROUTE-01", "--out", "")
	if code != 0 || !strings.Contains(stderr, "INVOKECONF_KEYS_AGNET is set but overrides no profile field (did you mean INVOKECONF_KEYS_AGENT?)") {
		t.Errorf("exit %d:\n%s\n%s", code, stdout, stderr)
	}
}

// TestSilentTargetStillReports: a target that never answers ends with exit
// 2, and every report is written, each scenario untested with the reason,
// and JUnit shows an error: CI has something to show.
func TestSilentTargetStillReports(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	dir := t.TempDir()
	path := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(path, []byte("baseURL: http://"+addr+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	code, stdout, stderr := invoke(t, "run", "--profile", path, "--out", out, "--areas", "sse")
	if code != 2 || !strings.Contains(stdout, "is not reachable") {
		t.Fatalf("exit %d:\n%s\n%s", code, stdout, stderr)
	}
	var sum struct {
		Outcome   string `json:"outcome"`
		ExitCode  int    `json:"exitCode"`
		Scenarios []struct {
			Status, Error string
		} `json:"scenarios"`
	}
	b, _ := os.ReadFile(filepath.Join(out, reports.JSONFile))
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Outcome != "not run" || sum.ExitCode != 2 || len(sum.Scenarios) == 0 {
		t.Fatalf("summary: %+v", sum)
	}
	for _, s := range sum.Scenarios {
		if s.Status != "untested" || !strings.Contains(s.Error, "not reachable") {
			t.Errorf("scenario %s: %s", s.Status, s.Error)
		}
	}
	var junit struct {
		Errors int `xml:"errors,attr"`
	}
	b, _ = os.ReadFile(filepath.Join(out, reports.JUnitFile))
	if err := xml.Unmarshal(b, &junit); err != nil || junit.Errors != 1 {
		t.Errorf("junit.xml: %v, %d errors, want 1:\n%s", err, junit.Errors, b)
	}
	if _, err := os.Stat(filepath.Join(out, reports.HTMLFile)); err != nil {
		t.Error(err)
	}
}

// TestSpecOnly: --spec-only selects no contract rule, and says so.
func TestSpecOnly(t *testing.T) {
	t.Parallel()
	code, stdout, _ := invoke(t, "run", "--spec-only", "--areas", "errors", "--out", "")
	if code != 0 || !strings.Contains(stdout, "--spec-only") || !strings.Contains(stdout, "Spec:") || !strings.Contains(stdout, "Contract:") {
		t.Errorf("exit %d:\n%s", code, stdout)
	}
}
