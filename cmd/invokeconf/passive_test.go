package main

import (
	"bufio"
	"context"
	"encoding/json"
	"encoding/xml"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/invokeconf/invokeconf/fakeserver"
	"github.com/invokeconf/invokeconf/features"
	"github.com/invokeconf/invokeconf/fixtures"
	"github.com/invokeconf/invokeconf/reports"
)

func TestJudgeForeignHAR(t *testing.T) {
	dir := t.TempDir()
	code, out := runCLI(t, "judge", "--out", dir, "../../har/testdata/devtools.har")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	for _, want := range []string{"untested  SSE-04    MUST   the recording has no chunk timings", "pass      SSE-05",
		"observed 2 exchanges; judged ", "not a certification"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "DevtoolsSecret") {
		t.Error("the output holds the file's key")
	}
	for _, f := range []string{passiveSummaryFile, reports.HTMLFile, reports.JSONFile, reports.JUnitFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	checkPassiveReports(t, dir, "observed 2 exchanges; judged ", 0)
	// Flags may follow the file.
	dir2 := t.TempDir()
	if code, out := runCLI(t, "judge", "../../har/testdata/mitmproxy.har", "--out", dir2); code != 0 {
		t.Fatalf("judge FILE --out DIR: exit %d:\n%s", code, out)
	}
	checkPassiveReports(t, dir2, "observed ", 0)
	for _, args := range [][]string{{"judge"}, {"judge", "a.har", "b.har"}, {"judge", filepath.Join(dir, "absent.har")},
		{"judge", "a.har", "--out"}, {"judge", "--junit-warnings", "maybe", "a.har"}} {
		if code, out := runCLI(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2:\n%s", args, code, out)
		}
	}
}

func TestPassiveHelp(t *testing.T) {
	for _, cmd := range []string{"proxy", "judge"} {
		code, out := runCLI(t, cmd, "-h")
		if code != 0 || !strings.Contains(out, "Examples:") || !strings.Contains(out, "never a certification") {
			t.Errorf("%s -h: exit %d:\n%s", cmd, code, out)
		}
	}
	if code, out := runCLI(t, "proxy"); code != 2 || !strings.Contains(out, "--target") {
		t.Errorf("proxy without --target: exit %d:\n%s", code, out)
	}
}

// TestProxyCommand: the proxy forwards, and at the end of its run writes
// the HAR file and the summary; --redact-bodies keeps no body.
func TestProxyCommand(t *testing.T) {
	for _, redact := range []bool{false, true} {
		proxyCommand(t, redact)
	}
}

func proxyCommand(t *testing.T, redact bool) {
	seed, err := fixtures.Reference()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := fakeserver.Listen(fakeserver.Config{Profile: seed, Defects: []string{"no-close"}}, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	dir := t.TempDir()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	pr, pw := io.Pipe()
	codec := make(chan int, 1)
	go func() {
		args := []string{"proxy", "--target", srv.URL, "--listen", "127.0.0.1:0", "--out", dir}
		if redact {
			args = append(args, "--redact-bodies")
		}
		code := run(ctx, args, pw, pw)
		pw.Close()
		codec <- code
	}()
	lines := bufio.NewScanner(pr)
	if !lines.Scan() {
		t.Fatal("no output")
	}
	first := lines.Text()
	base, _, ok := strings.Cut(strings.TrimPrefix(first, "invokeconf proxy: "), " -> ")
	if !ok {
		t.Fatalf("first line %q", first)
	}
	var rest strings.Builder
	restDone := make(chan struct{})
	go func() {
		for lines.Scan() {
			rest.WriteString(lines.Text() + "\n")
		}
		close(restDone)
	}()
	p := srv.Profile()
	req, _ := http.NewRequest("POST", base+"/api/invoke/"+p.Agents.Main.ID, strings.NewReader("hi"))
	req.Header.Set("Authorization", "Bearer "+p.Keys.Agent)
	req.Header.Set("Accept", "text/event-stream")
	c := &http.Client{Timeout: 15 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), "event: start") {
		t.Fatalf("answer %q", b)
	}
	stop()
	var code int
	select {
	case code = <-codec:
	case <-time.After(15 * time.Second):
		t.Fatal("the proxy did not stop within 15 s")
	}
	<-restDone
	out := rest.String()
	if code != 1 || !strings.Contains(out, "SSE-05 MUST: the end of the SSE stream") ||
		!strings.Contains(out, "observed 1 exchanges; judged ") {
		t.Errorf("exit %d, output:\n%s", code, out)
	}
	hb, err := os.ReadFile(filepath.Join(dir, "traffic.har"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(hb), p.Keys.Agent) || !strings.Contains(string(hb), `"_chunks"`) {
		t.Errorf("HAR file:\n%s", hb)
	}
	if hasBody := strings.Contains(string(hb), "event: start"); hasBody == redact {
		t.Errorf("--redact-bodies %v, the HAR file holds the body: %v", redact, hasBody)
	}
	checkPassiveReports(t, dir, "observed 1 exchanges; judged ", 1)
	// The failure shows the exchange's body unless --redact-bodies.
	if b, _ := os.ReadFile(filepath.Join(dir, reports.HTMLFile)); strings.Contains(string(b), p.Keys.Agent) || strings.Contains(string(b), "data: {}\n\nid: ") == redact {
		t.Errorf("--redact-bodies %v: report.html shows the body: %v", redact, strings.Contains(string(b), "data: {}\n\nid: "))
	}
	var s struct {
		Headline string
		Verdicts []struct{ Rule, Verdict string }
	}
	sb, _ := os.ReadFile(filepath.Join(dir, passiveSummaryFile))
	if err := json.Unmarshal(sb, &s); err != nil || !strings.HasPrefix(s.Headline, "observed 1 exchanges") {
		t.Errorf("summary %s (%v)", sb, err)
	}
}

// checkPassiveReports: the passive reports in dir say what they are, never
// a certification, and agree with the exit code.
func checkPassiveReports(t *testing.T, dir, headline string, exit int) {
	t.Helper()
	var doc struct {
		Mode, Outcome, Headline string
		ExitCode                int
		Rules                   []struct{ ID, Verdict, Reason string }
	}
	b, err := os.ReadFile(filepath.Join(dir, reports.JSONFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	rules, err := features.Rules()
	if err != nil {
		t.Fatal(err)
	}
	if doc.Mode != reports.ModePassive || doc.ExitCode != exit || !strings.HasPrefix(doc.Headline, headline) || len(doc.Rules) != len(rules) || doc.Outcome == "pass" {
		t.Errorf("summary.json: mode %q, outcome %q, exit %d, headline %q, %d rules", doc.Mode, doc.Outcome, doc.ExitCode, doc.Headline, len(doc.Rules))
	}
	for _, r := range doc.Rules {
		if r.ID == "AUTH-01" && (r.Verdict != string(reports.NotDecidable) || !strings.HasPrefix(r.Reason, "not decidable from traffic: ")) {
			t.Errorf("AUTH-01: %s: %s", r.Verdict, r.Reason)
		}
	}
	html, err := os.ReadFile(filepath.Join(dir, reports.HTMLFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(html), "passive judgement: not a certification") || strings.Contains(string(html), "certification report") {
		t.Error("report.html does not say it is a passive judgement")
	}
	junit, err := os.ReadFile(filepath.Join(dir, reports.JUnitFile))
	if err != nil {
		t.Fatal(err)
	}
	var suites struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
	}
	if err := xml.Unmarshal(junit, &suites); err != nil || suites.Tests != len(rules) || (suites.Failures > 0) != (exit == 1) {
		t.Errorf("junit.xml: %+v (%v)", suites, err)
	}
}
