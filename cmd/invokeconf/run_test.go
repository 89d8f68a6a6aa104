package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/invokeconf/invokeconf/checks"
	"github.com/invokeconf/invokeconf/invokeconftest"
	"github.com/invokeconf/invokeconf/profile"
	"github.com/invokeconf/invokeconf/reports"
	"github.com/invokeconf/invokeconf/runner"
)

// invoke runs the CLI in-process and returns its exit code and output.
func invoke(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// serveProfile starts a reference server with defects and writes the
// profile a vendor would write for it.
func serveProfile(t *testing.T, defects ...string) (*profile.Profile, string) {
	t.Helper()
	p := invokeconftest.NewServer(t, invokeconftest.WithDefects(defects...)).Profile
	b, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "target.yaml")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p, path
}

// TestRunWritesEveryReport: a run writes the HTML report, the JSON summary,
// JUnit whose test names carry rule IDs, and Cucumber JSON.
func TestRunWritesEveryReport(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	code, stdout, stderr := invoke(t, "run", "--areas", "sse,body", "--quick", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, f := range []string{reports.HTMLFile, reports.JSONFile, reports.JUnitFile, reports.CucumberFile} {
		path := filepath.Join(out, f)
		if st, err := os.Stat(path); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
		if !strings.Contains(stdout, path) {
			t.Errorf("the console does not name %s", path)
		}
	}
	for _, want := range []string{"[ 1/", "Rule verdicts per area", "sse", "Verdict: PARTIAL (exit 0): judged 8 of "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the console lacks %q:\n%s", want, stdout)
		}
	}

	var sum struct {
		Schema   string `json:"schema"`
		ExitCode int    `json:"exitCode"`
		Rules    []struct {
			ID, Area, Verdict string
		} `json:"rules"`
	}
	b, _ := os.ReadFile(filepath.Join(out, reports.JSONFile))
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Schema != reports.SchemaVersion || sum.ExitCode != 0 || len(sum.Rules) < 100 {
		t.Errorf("summary: schema %q, exit %d, %d rules", sum.Schema, sum.ExitCode, len(sum.Rules))
	}
	for _, r := range sum.Rules {
		if r.Area != "sse" && r.Area != "body" && r.Verdict != "not selected" && r.Verdict != "not observable" {
			t.Errorf("%s (%s) is %s, outside the selected areas", r.ID, r.Area, r.Verdict)
		}
		if r.ID == "SSE-04" && r.Verdict != "not selected" {
			t.Errorf("SSE-04 (@slow) is %s under --quick", r.Verdict)
		}
	}

	var junit struct {
		Cases []struct {
			Name string `xml:"name,attr"`
		} `xml:"testsuite>testcase"`
		Props []struct {
			Name  string `xml:"name,attr"`
			Value string `xml:"value,attr"`
		} `xml:"testsuite>properties>property"`
	}
	b, _ = os.ReadFile(filepath.Join(out, reports.JUnitFile))
	if err := xml.Unmarshal(b, &junit); err != nil {
		t.Fatal(err)
	}
	ruleInName := regexp.MustCompile(`^\[[A-Z]+-\d\d( [A-Z]+-\d\d)*\] `)
	if len(junit.Cases) == 0 {
		t.Fatal("no JUnit test cases")
	}
	lineInName := regexp.MustCompile(`\.feature:\d+`)
	for _, c := range junit.Cases {
		if !ruleInName.MatchString(c.Name) || lineInName.MatchString(c.Name) {
			t.Errorf("JUnit test name %q does not start with its rule IDs, or names a line", c.Name)
		}
	}
	props := map[string]string{}
	for _, p := range junit.Props {
		props[p.Name] = p.Value
	}
	if props["invokeconf.outcome"] != "partial" || !strings.HasPrefix(props["invokeconf.spec.digest"], "sha256:") ||
		!strings.HasPrefix(props["invokeconf.catalog.digest"], "sha256:") || props["invokeconf.harness.version"] == "" {
		t.Errorf("JUnit properties: %v", props)
	}
}

// TestDefectRunFails: a run against a defect exits 1 and its report's
// failure section names the rule, its spec sentence and a curl command.
func TestDefectRunFails(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	code, stdout, _ := invoke(t, "run", "--defect", "no-close", "--rules", "SSE-05,SSE-01", "--out", out)
	if code != 1 {
		t.Fatalf("exit %d, want 1:\n%s", code, stdout)
	}
	html, _ := os.ReadFile(filepath.Join(out, reports.HTMLFile))
	i := bytes.Index(html, []byte(`<section id="failures">`))
	if i < 0 {
		t.Fatal("no failure section")
	}
	failures := string(html[i:])
	for _, want := range []string{"SSE-05", "A missing event: close is an abnormal end", "curl -sS", "${INVOKECONF_KEYS_AGENT:?export it first}"} {
		if !strings.Contains(failures, want) {
			t.Errorf("the failure section lacks %q", want)
		}
	}
	if strings.Contains(failures, "SSE-01 ·") {
		t.Error("the passing rule SSE-01 is listed as a failure")
	}
	if !strings.Contains(stdout, "FAIL  SSE-05 MUST") || !strings.Contains(stdout, "seen in:  ") || !strings.Contains(stdout, "spec:     At the end") {
		t.Errorf("the console does not show the failure with its spec sentence:\n%s", stdout)
	}
}

// TestBaseline: --write-baseline records the failures; with it the same
// defect passes; once the defect is gone the entry is stale and fails the
// run; a baseline entry without a reason or with an unknown rule is bad
// usage.
func TestBaseline(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bl := filepath.Join(dir, "known.yaml")
	code, stdout, _ := invoke(t, "run", "--defect", "expired-403", "--areas", "errors", "--tags", "~@cells", "--out", "", "--write-baseline", bl)
	if code != 1 {
		t.Fatalf("exit %d, want 1:\n%s", code, stdout)
	}
	written, err := reports.LoadBaseline(bl)
	if err != nil {
		t.Fatalf("the written baseline does not load: %v", err)
	}
	if len(written.Expected) != 1 || written.Expected[0].Rule != "ERR-05" || written.Expected[0].Reason == "" {
		t.Fatalf("written baseline: %+v", written.Expected)
	}

	code, stdout, _ = invoke(t, "run", "--defect", "expired-403", "--areas", "errors", "--tags", "~@cells", "--out", "", "--baseline", bl)
	if code != 0 || !strings.Contains(stdout, "1 expected failure") {
		t.Errorf("with the baseline: exit %d, want 0:\n%s", code, stdout)
	}

	out := filepath.Join(dir, "out")
	code, stdout, _ = invoke(t, "run", "--areas", "errors", "--tags", "~@cells", "--out", out, "--baseline", bl)
	if code != 1 || !strings.Contains(stdout, "STALE rule ERR-05") || !strings.Contains(stdout, "stale") {
		t.Errorf("stale baseline: exit %d, want 1:\n%s", code, stdout)
	}
	// JUnit agrees with the exit code: the stale entry is a failing test case.
	junit, _ := os.ReadFile(filepath.Join(out, reports.JUnitFile))
	if !regexp.MustCompile(`(?s)<testcase name="stale baseline entry: rule ERR-05"[^>]*>\s*<failure`).Match(junit) {
		t.Errorf("junit.xml shows no failing test case for the stale entry:\n%s", junit)
	}

	for name, doc := range map[string]string{
		"no reason":    "version: 1\nexpected:\n  - rule: ERR-05\n",
		"unknown rule": "version: 1\nexpected:\n  - rule: ERR-99\n    reason: x\n",
		"no version":   "expected:\n  - rule: ERR-05\n    reason: x\n",
		"bad scenario": "version: 1\nexpected:\n  - scenario: no such scenario\n    reason: x\n",
		"misspelt":     "version: 1\nexpected:\n  - rule: ERR-50\n    reason: x\n  - rul: ERR-05\n    reason: x\n  - scenario: An expired key is 410\n    reason: x\n",
	} {
		path := filepath.Join(dir, "bad.yaml")
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, stderr := invoke(t, "run", "--baseline", path, "--out", "")
		if code != 2 || strings.Contains(stderr, "reports.") {
			t.Errorf("%s: exit %d, want 2 without Go type names: %s", name, code, stderr)
		}
		if name == "misspelt" {
			for _, want := range []string{`unknown field "rul" (did you mean rule?)`} {
				if !strings.Contains(stderr, want) {
					t.Errorf("%s: the error lacks %q: %s", name, want, stderr)
				}
			}
		}
	}
	for doc, want := range map[string]string{
		"version: 1\nexpected:\n  - rule: ERR-50\n    reason: x\n":                    "unknown rule ERR-50 (did you mean ERR-05?)",
		"version: 1\nexpected:\n  - scenario: An expired key is 410\n    reason: x\n": `(did you mean "An expired key is 401"?)`,
	} {
		path := filepath.Join(dir, "typo.yaml")
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		if code, _, stderr := invoke(t, "run", "--baseline", path, "--out", ""); code != 2 || !strings.Contains(stderr, want) {
			t.Errorf("exit %d, want 2 with %q: %s", code, want, stderr)
		}
	}

	// A scenario entry, by name (the cells of every route, which state
	// ERR-05 again, left out: the entry names one scenario).
	path := filepath.Join(dir, "scenario.yaml")
	doc := "version: 1\nexpected:\n  - scenario: An expired key is 401\n    reason: our gateway answers 403\n"
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, stdout, _ := invoke(t, "run", "--defect", "expired-403", "--rules", "ERR-05", "--tags", "~@cells", "--out", "", "--baseline", path); code != 0 {
		t.Errorf("scenario entry: exit %d, want 0:\n%s", code, stdout)
	}
}

// TestUnreachableTarget: a profile whose target does not answer gets a clear
// message and exit 2 at once, not a wall of failures.
func TestUnreachableTarget(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	path := filepath.Join(t.TempDir(), "p.yaml")
	if err := os.WriteFile(path, []byte("baseURL: http://"+addr+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	code, stdout, stderr := invoke(t, "run", "--profile", path, "--out", "")
	if code != 2 || !regexp.MustCompile(`(?m)^Verdict: NOT RUN \(exit 2\): the target http://\S+ is not reachable`).MatchString(stdout) || strings.Contains(stdout, "FAIL") {
		t.Errorf("exit %d, want 2 with a clear message:\n%s\n%s", code, stdout, stderr)
	}
	// Each error once: the reason in the verdict line, no table of rules
	// it left untested, nothing again on stderr.
	if n := strings.Count(stdout+stderr, "is not reachable"); n != 1 || strings.Contains(stdout, "Rule verdicts per area") || strings.Contains(stdout, "Not judged") {
		t.Errorf("the reason is printed %d times, want once, in the verdict line:\n%s\n%s", n, stdout, stderr)
	}
	// "At once": no scenario ran, none waited on its deadline (counted by
	// the console's progress lines, not by a clock a loaded machine slows).
	if ran := regexp.MustCompile(`(?m)^\[\d+/\d+\] `).FindAllString(stdout, -1); len(ran) > 0 {
		t.Errorf("%d scenarios ran against a target that does not answer:\n%s", len(ran), stdout)
	}
	t.Logf("took %s", time.Since(start))
	if code, _, stderr := invoke(t, "profile", "check", "--profile", path); code != 2 || !strings.Contains(stderr, "not reachable") {
		t.Errorf("profile check: exit %d: %s", code, stderr)
	}
}

// TestProfileCheck: a profile for a live target passes the check; a wrong
// key is named; gaps are reported with the rules they leave untested.
func TestProfileCheck(t *testing.T) {
	p, path := serveProfile(t)
	code, stdout, stderr := invoke(t, "profile", "check", "--profile", path)
	if code != 0 || !strings.Contains(stdout, "reachable") || !strings.Contains(stdout, "profile check passed") {
		t.Errorf("exit %d:\n%s\n%s", code, stdout, stderr)
	}

	// A wrong key from the environment, and an empty role.
	t.Setenv("INVOKECONF_KEYS_ALIAS", "sk-svc-alice-kalias-notthesecret")
	t.Setenv("INVOKECONF_KEYS_API_DISABLED", "")
	code, stdout, stderr = invoke(t, "profile", "check", "--profile", path)
	if code != 2 || !strings.Contains(stderr, "keys.alias") {
		t.Errorf("wrong alias key: exit %d:\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "keys.apiDisabled") || !strings.Contains(stdout, "ERR-07") || !strings.Contains(stdout, "INVOKECONF_KEYS_API_DISABLED") {
		t.Errorf("the gap of keys.apiDisabled is not reported with ERR-07:\n%s", stdout)
	}
	if strings.Contains(stdout+stderr, p.Keys.Agent) || strings.Contains(stdout+stderr, "notthesecret") {
		t.Error("profile check printed a key")
	}
}

func TestUnknownProfileField(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "p.yaml")
	doc := "baseURL: http://127.0.0.1:1\nkeys:\n  agnet: sk-svc-a-b-c\n  wildcardlimited: sk-svc-a-b-d\n"
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := invoke(t, "run", "--profile", path)
	if code != 2 || !strings.Contains(stderr, "keys.agnet (did you mean keys.agent?)") || !strings.Contains(stderr, "keys.wildcardLimited?") {
		t.Errorf("exit %d: %s", code, stderr)
	}
}

// TestEnvironmentOverridesProfile: the base URL and a key from the
// environment win over the file.
func TestEnvironmentOverridesProfile(t *testing.T) {
	p, path := serveProfile(t)
	b, _ := os.ReadFile(path)
	broken := strings.Replace(string(b), p.BaseURL, "http://127.0.0.1:1", 1)
	broken = strings.Replace(broken, p.Keys.Agent, "sk-svc-alice-kagent-wrong", 1)
	if err := os.WriteFile(path, []byte(broken), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("INVOKECONF_BASE_URL", p.BaseURL)
	t.Setenv("INVOKECONF_KEYS_AGENT", p.Keys.Agent)
	code, stdout, stderr := invoke(t, "run", "--profile", path, "--rules", "ROUTE-01", "--out", "")
	if code != 0 || !strings.Contains(stdout, "INVOKECONF_BASE_URL, INVOKECONF_KEYS_AGENT from the environment") {
		t.Errorf("exit %d:\n%s\n%s", code, stdout, stderr)
	}
}

func TestSelectionUsage(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"run", "--rules", "SSE-99"},
		{"run", "--areas", "nowhere"},
		{"run", "--tags", "@sse,,@x"},
		{"run", "--profile", "/no/such/file.yaml"},
	} {
		if code, _, stderr := invoke(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2: %s", args, code, stderr)
		}
	}
	// A selection that runs nothing is bad usage, said once, never a pass.
	for _, args := range [][]string{{"run", "--tags", "@no-such-tag", "--out", ""}, {"run", "--rules", "SSE-04", "--quick", "--out", ""}} {
		code, stdout, stderr := invoke(t, args...)
		if code != 2 || strings.Count(stderr, "leaves no scenario to run") != 1 || stdout != "" {
			t.Errorf("%v: exit %d, want 2:\n%s\n%s", args, code, stdout, stderr)
		}
	}
	// A mistyped flag: one message, with the flag as typed and the
	// nearest one, both spelt as the help spells them.
	for _, typed := range []string{"--rule", "-rule"} {
		code, stdout, stderr := invoke(t, "run", typed, "SSE-01")
		if code != 2 || strings.Count(stderr, "unknown flag --rule ") != 1 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "did you mean --rules?") || stdout != "" {
			t.Errorf("%s: exit %d:\n%s\n%s", typed, code, stdout, stderr)
		}
	}
	// A mistyped command: the suggestion and where the commands are
	// listed, in one line, not the whole usage after it.
	code, stdout, stderr := invoke(t, "rnu")
	if code != 2 || stderr != "invokeconf: unknown command \"rnu\" (did you mean run?) (see 'invokeconf help')\n" || stdout != "" {
		t.Errorf("rnu: exit %d:\n%s\n%s", code, stdout, stderr)
	}
}

// TestSecretsNeverLeak runs the quick suite through the CLI against a target
// with defects (so failures carry transcripts and curl commands) and looks
// for every key of the profile, and for each key's secret part alone, in the
// console, in every report and in the written baseline.
func TestSecretsNeverLeak(t *testing.T) {
	t.Parallel()
	p, path := serveProfile(t, "no-close", "expired-403", "openai-errors", "thread-id-new-thread", "waiting-dropped")
	out := t.TempDir()
	bl := filepath.Join(out, "baseline.yaml")
	code, stdout, stderr := invoke(t, "run", "--profile", path, "--quick", "--out", out, "--write-baseline", bl)
	if code != 1 {
		t.Fatalf("exit %d, want 1:\n%s\n%s", code, stdout, stderr)
	}
	texts := map[string]string{"console": stdout + stderr}
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(out, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		texts[e.Name()] = string(b)
	}
	for _, f := range []string{reports.HTMLFile, reports.JSONFile, reports.JUnitFile, reports.CucumberFile, "baseline.yaml"} {
		if _, ok := texts[f]; !ok {
			t.Errorf("%s was not written", f)
		}
	}
	secrets := p.Secrets()
	for _, k := range p.Secrets() {
		secrets = append(secrets, k[strings.LastIndex(k, "-")+1:])
	}
	for name, text := range texts {
		for _, s := range secrets {
			if strings.Contains(text, s) {
				t.Errorf("%s contains the secret %s...", name, s[:4])
			}
		}
	}
	// The keys were used, so their references must be there instead.
	if !strings.Contains(texts[reports.HTMLFile], "$INVOKECONF_KEYS_AGENT") || !strings.Contains(texts[reports.JSONFile], "$INVOKECONF_KEYS_EXPIRED") {
		t.Error("the reports show no key references: were the keys sent at all?")
	}
}

// TestProfileCheckCapabilities: profile check tells a capability declared
// false (its scenarios not applicable) from one left out (untested), and
// warns about a variable that overrides no field, as run does.
func TestProfileCheckCapabilities(t *testing.T) {
	_, path := serveProfile(t)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, line := range strings.Split(string(b), "\n") {
		switch strings.TrimSpace(line) {
		case "researchMode: true":
			line = strings.Replace(line, "true", "false", 1)
		case "bundleTestHooks: true":
			continue
		}
		kept = append(kept, line)
	}
	if err := os.WriteFile(path, []byte(strings.Join(kept, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("INVOKECONF_KEYS_AGNET", "x")
	_, stdout, stderr := invoke(t, "profile", "check", "--profile", path)
	for _, c := range []struct{ out, want string }{
		{stdout, `capabilities declared false \(the target lacks them\): researchMode \(\d+ scenarios not applicable\)\n`},
		{stdout, `capabilities left out \(their scenarios are untested until each is declared true or false\): bundleTestHooks \(\d+ scenarios untested\)\n`},
		{stderr, `INVOKECONF_KEYS_AGNET is set but overrides no profile field \(did you mean INVOKECONF_KEYS_AGENT\?\)`},
	} {
		if !regexp.MustCompile(c.want).MatchString(c.out) {
			t.Errorf("profile check does not say %s:\n%s\n%s", c.want, stdout, stderr)
		}
	}
}

func TestScenarioCounts(t *testing.T) {
	for _, c := range []struct {
		st   capabilityStatus
		want string
	}{
		{capabilityStatus{NotApplicable: 4}, "4 scenarios not applicable"},
		{capabilityStatus{NotApplicable: 2, Untested: 1}, "2 scenarios not applicable, 1 scenario untested"},
		{capabilityStatus{Untested: 3}, "3 scenarios untested"},
		{capabilityStatus{}, "no selected scenario needs it"},
	} {
		if got := scenarioCounts(c.st); got != c.want {
			t.Errorf("scenarioCounts(%+v) = %q, want %q", c.st, got, c.want)
		}
	}
}

// TestProfileCheckForecastsThePartialRun: for a profile without the keys
// threadRead, threadChat and otherProject, profile check names every rule
// the run will leave untested, with the missing key, and says the run will
// be PARTIAL (exit 0, or 4 with --require-complete); the run then leaves
// exactly those rules untested and, with --require-complete, exits 4 with
// reports that say so. Both --quick: the 20 s keepalive has nothing to do
// with keys. A rule a timing check left untested because the harness itself
// ran late (a loaded machine) is left out of the comparison.
func TestProfileCheckForecastsThePartialRun(t *testing.T) {
	t.Parallel()
	_, path := serveProfile(t)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 0 && (f[0] == "threadRead:" || f[0] == "threadChat:" || f[0] == "otherProject:") {
			continue
		}
		kept = append(kept, line)
	}
	if err := os.WriteFile(path, []byte(strings.Join(kept, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := invoke(t, "profile", "check", "--profile", path, "--quick")
	if code != 0 || !strings.Contains(stdout, "the run will be PARTIAL") || !strings.Contains(stdout, "profile check passed; the run will be PARTIAL") {
		t.Fatalf("exit %d:\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "  not selected: outside the selection (--quick)\n    SSE-04\n") {
		t.Errorf("profile check does not name SSE-04, the rule --quick leaves out:\n%s", stdout)
	}
	predicted := regexp.MustCompile(`(?m)^  untested: the profile does not provide keys\.(?:threadRead|threadChat|otherProject) \(INVOKECONF_KEYS_\w+\)\n    (.*)$`).FindAllStringSubmatch(stdout, -1)
	var forecast []string
	for _, m := range predicted {
		forecast = append(forecast, strings.Fields(m[1])...)
	}
	if len(predicted) != 3 || len(forecast) < 5 {
		t.Fatalf("profile check does not name the untested rules by key:\n%s", stdout)
	}
	if code, _, stderr := invoke(t, "profile", "check", "--profile", path, "--quick", "--require-complete"); code != 4 || !strings.Contains(stderr, "PARTIAL") {
		t.Errorf("--require-complete: exit %d: %s", code, stderr)
	}

	out := t.TempDir()
	code, stdout, stderr = invoke(t, "run", "--profile", path, "--quick", "--require-complete", "--out", out)
	if code != 4 || !strings.Contains(stdout, "Verdict: PARTIAL (exit 4)") || !strings.Contains(stdout, "this run will be PARTIAL") {
		t.Fatalf("run --require-complete: exit %d:\n%s\n%s", code, stdout, stderr)
	}
	// The rules it leaves out are named: SSE-04, which --quick leaves out,
	// in the forecast before the run, in the verdict line and in the
	// report's banner.
	verdict := regexp.MustCompile(`(?m)^Verdict: .*$`).FindString(stdout)
	if !strings.Contains(verdict, "SSE-04 (not selected)") || !strings.Contains(stdout, "1 spec rule not selected: SSE-04") {
		t.Errorf("run --quick does not name SSE-04:\n%s", stdout)
	}
	if html, err := os.ReadFile(filepath.Join(out, "report.html")); err != nil || !strings.Contains(string(html), "SSE-04 (not selected)") {
		t.Errorf("report.html's banner does not name SSE-04 (%v)", err)
	}
	var sum struct {
		ExitCode int `json:"exitCode"`
		Rules    []struct {
			ID      string `json:"id"`
			Verdict string `json:"verdict"`
			Reason  string `json:"reason"`
		} `json:"rules"`
	}
	b, err = os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	var untested []string
	for _, r := range sum.Rules {
		switch {
		case r.Verdict != "untested":
		case checks.HarnessWasLate(r.Reason) && !slices.Contains(forecast, r.ID):
			t.Logf("%s was not judged, the harness ran late: %s", r.ID, r.Reason)
		default:
			untested = append(untested, r.ID)
		}
	}
	slices.Sort(untested)
	slices.Sort(forecast)
	if sum.ExitCode != 4 || !slices.Equal(untested, forecast) {
		t.Errorf("summary.json: exit %d, untested %v; profile check forecast %v", sum.ExitCode, untested, forecast)
	}
}

// TestProfileCheckSpecOnly: with --spec-only and no contract routes, profile
// check names the spec rules that are not applicable without the bundle
// contract, and the run is complete without them.
func TestProfileCheckSpecOnly(t *testing.T) {
	_, path := serveProfile(t)
	t.Setenv("INVOKECONF_ROUTES", "")
	code, stdout, stderr := invoke(t, "profile", "check", "--profile", path, "--spec-only", "--require-complete")
	m := regexp.MustCompile(`(?m)^  not applicable: ` + regexp.QuoteMeta(runner.ContractReason) + `\n    (.*)$`).FindStringSubmatch(stdout)
	if code != 0 || m == nil || !strings.Contains(stdout, "the run can judge all") {
		t.Fatalf("exit %d:\n%s\n%s", code, stdout, stderr)
	}
	for _, id := range []string{"INSTALL-01", "UPDATE-01", "UNINSTALL-05", "DROP-07", "BUNDLE-06"} {
		if !slices.Contains(strings.Fields(m[1]), id) {
			t.Errorf("%s is not named not applicable without the contract: %s", id, m[1])
		}
	}
	if slices.Contains(strings.Fields(m[1]), "BUNDLE-01") {
		t.Error("BUNDLE-01 is decided through the export route, not left to the contract")
	}
}

// TestRunStopsOnSignal: Ctrl-C or SIGTERM (the context ends) during a run
// (here the 20 s keepalive scenario) stops it at once: the reports are
// written, the cut scenario is a harness error "the run was interrupted",
// never an untested rule, and the run says so and exits 3.
func TestRunStopsOnSignal(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	var stderr strings.Builder
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"run", "--tags", "@SSE-04", "--out", dir}, pw, &stderr)
		pw.Close()
	}()
	var console strings.Builder
	read := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			console.WriteString(sc.Text() + "\n")
			if strings.HasPrefix(sc.Text(), "invokeconf: selection:") {
				cancel() // the run is about to start
			}
		}
	}()
	var code int
	select {
	case code = <-done:
	case <-time.After(15 * time.Second):
		t.Fatal("run did not stop within 15 s of the interrupt (the keepalive scenario takes 20 s)")
	}
	<-read
	if code != 3 || !strings.Contains(stderr.String(), "interrupted (Ctrl-C or SIGTERM)") {
		t.Fatalf("exit %d, stderr %q, console:\n%s", code, stderr.String(), console.String())
	}
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "the run was interrupted") {
		t.Errorf("summary.json does not say the run was interrupted:\n%.2000s", b)
	}
}
