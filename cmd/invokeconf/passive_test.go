package main

import (
	"bufio"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/invokeconf/invokeconf/checks"
	"github.com/invokeconf/invokeconf/features"
	"github.com/invokeconf/invokeconf/invokeconftest"
	"github.com/invokeconf/invokeconf/reports"
)

func TestJudgeForeignHAR(t *testing.T) {
	dir := t.TempDir()
	code, out := runCLI(t, "judge", "--out", dir, "../../har/testdata/devtools.har")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	for _, want := range []string{"  SSE-04\n    the recording has no chunk timings", "SSE-05", "Passed:   ",
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

// TestJudgeOddFiles: a file with no exchange (none with a response) is
// nothing observed, exit 2, with a clear message; entries a recorder left without headers or bodies, or with
// bodies it could not fetch or cut, leave rules untested, never failed.
func TestJudgeOddFiles(t *testing.T) {
	const (
		sse    = `"text/event-stream"`
		stream = `event: start\ndata: {}\n\nid: r1\ndata: {\"content\":\"hi\",\"runID\":\"r1\",\"threadID\":\"t1\"}\n\n`
	)
	invoke := func(reqHeaders, respHeaders, content string) string {
		return `{"startedDateTime":"2026-11-20T09:00:00.000Z","time":900,"timings":{"wait":10,"receive":890},` +
			`"request":{"method":"POST","url":"http://svc.test/api/invoke/agt_main01",` + reqHeaders + `"bodySize":2,"postData":{"text":"hi"}},` +
			`"response":{"status":200,` + respHeaders + content + `}}`
	}
	withHeaders := `"headers":[{"name":"Accept","value":` + sse + `},{"name":"accept","value":` + sse + `},{"name":"Authorization","value":"Bearer sk-svc-u-k-OddSecret12"}],`
	respHeaders := `"headers":[{"name":"Content-Type","value":"text/event-stream"},{"name":"X-SVC-Thread-Id","value":"t1"}],`
	file := func(entries ...string) string {
		return `{"log":{"version":"1.2","creator":{"name":"chrome-har","version":"1"},"entries":[` + strings.Join(entries, ",") + `]}}`
	}
	ownFile := func(entries ...string) string {
		return `{"log":{"version":"1.2","creator":{"name":"invokeconf","version":"dev"},"entries":[` + strings.Join(entries, ",") + `]}}`
	}
	own := func(reqHeaders, respHeaders, text string) string {
		return `{"startedDateTime":"2026-11-20T09:00:00.000Z","time":900,"_id":1,` +
			`"request":{"method":"POST","url":"http://svc.test/api/invoke/agt_main01",` + reqHeaders + `"bodySize":2,` +
			`"postData":{"mimeType":"","text":"hi","_chunks":[{"time":0,"size":2}]}},` +
			`"response":{"status":200,` + respHeaders + `"_end":"complete","content":{"size":` + fmt.Sprint(len(strings.ReplaceAll(text, `\n`, "\n"))-strings.Count(text, `\"`)) +
			`,"mimeType":"text/event-stream","text":"` + text + `"}}}`
	}
	for _, tc := range []struct {
		name     string
		file     string
		exit     int
		want     []string // in the output
		untested []string // rules untested, never failed
	}{
		{"no entries", file(), 2, []string{"Verdict: NOTHING OBSERVED (exit 2): observed 0 exchanges: the recording holds none"}, nil},
		{"no responses", file(`{"request":{"method":"GET","url":"http://svc.test/"},"response":{"status":0}}`), 2,
			[]string{"Verdict: NOTHING OBSERVED (exit 2): observed 1 exchange, none with a response"}, nil},
		{"HAR 1.1-style entry", file(`{"startedDateTime":"2026-11-20T09:00:00Z","request":{"method":"POST","url":"http://svc.test/api/invoke/agt_main01"},"response":{"status":200}}`), 0,
			nil, []string{"ERR-02", "THREAD-04"}},
		// The harness's own format (_id, _end): a header list missing, null
		// or not a list is not recorded, never "no headers".
		{"own entry without request headers", ownFile(own(``, respHeaders, stream)), 0, nil, []string{"ERR-02"}},
		{"own entry with null request headers", ownFile(own(`"headers":null,`, respHeaders, stream)), 0, nil, []string{"ERR-02"}},
		{"own entry without response headers", ownFile(own(withHeaders, ``, stream)), 0, nil, []string{"THREAD-04"}},
		{"own entry with null response headers", ownFile(own(withHeaders, `"headers":null,`, stream)), 0, nil, []string{"THREAD-04"}},
		{"own entry with response headers not a list", ownFile(own(withHeaders, `"headers":{"Content-Type":"text/event-stream"},`, stream)), 0, nil, []string{"THREAD-04"}},
		{"a body the recorder could not fetch", file(invoke(withHeaders, respHeaders, `"content":{"size":786,"mimeType":"text/event-stream"}`)), 0,
			[]string{"none of the 786 bytes Chrome received"}, []string{"SSE-05", "SSE-03"}},
		{"a body the recorder cut", file(invoke(withHeaders, respHeaders, `"content":{"size":786,"text":"`+stream+`"}`)), 0,
			[]string{"holds 83 of the 703 bytes Chrome received (chrome-har's text is shorter)"}, []string{"SSE-05", "SSE-03"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			har := filepath.Join(dir, "odd.har")
			if err := os.WriteFile(har, []byte(tc.file), 0o644); err != nil {
				t.Fatal(err)
			}
			code, out := runCLI(t, "judge", "--out", filepath.Join(dir, "out"), har)
			if code != tc.exit {
				t.Fatalf("exit %d, want %d:\n%s", code, tc.exit, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			if strings.Contains(out, "OddSecret") {
				t.Error("the output holds the file's key")
			}
			if len(tc.untested) == 0 {
				return
			}
			var s checks.Summary
			b, err := os.ReadFile(filepath.Join(dir, "out", passiveSummaryFile))
			if err != nil || json.Unmarshal(b, &s) != nil {
				t.Fatalf("%s: %v", passiveSummaryFile, err)
			}
			for _, v := range s.Verdicts {
				if v.Verdict == checks.Fail {
					t.Errorf("%s failed: %+v", v.Rule, v.Failures)
				}
				for _, id := range tc.untested {
					if v.Rule == id && v.Verdict != checks.Untested {
						t.Errorf("%s: %s (%s), want untested", id, v.Verdict, v.Reason)
					}
				}
			}
		})
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
	srv, err := invokeconftest.Start(invokeconftest.WithDefects("no-close"))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	dir := t.TempDir()
	p := srv.Profile
	code, out := runProxy(t, srv.URL, dir, redact, func(base string) {
		b := invokeThrough(t, base+"/api/invoke/"+p.Agents.Main.ID, p.Keys.Agent, "hi")
		if !strings.Contains(b, "event: start") {
			t.Fatalf("answer %q", b)
		}
	})
	if code != 1 || !strings.Contains(out, "SSE-05 MUST: the end of the SSE stream") ||
		!strings.Contains(out, "observed 1 exchange; judged ") {
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
	checkPassiveReports(t, dir, "observed 1 exchange; judged ", 1)
	// A line per exchange, the finding under it; the summary leads with
	// the failures.
	if !strings.Contains(out, "#1 POST /api/invoke/"+p.Agents.Main.ID+" -> 200 text/event-stream") ||
		!strings.Contains(out, ": broke SSE-05") || !strings.Contains(out, "\n    SSE-05 MUST: ") ||
		strings.Index(out, "rule failed:") > strings.Index(out, "Passed:") || !strings.Contains(out, "(1 exchange)") {
		t.Errorf("progress and summary:\n%s", out)
	}
	// The recording's temporary files (OUT/.spool-*) are gone.
	if left, _ := filepath.Glob(filepath.Join(dir, ".spool-*")); len(left) > 0 {
		t.Errorf("temporary files left behind: %v", left)
	}
	// The failure shows the exchange's body unless --redact-bodies.
	if b, _ := os.ReadFile(filepath.Join(dir, reports.HTMLFile)); strings.Contains(string(b), p.Keys.Agent) || strings.Contains(string(b), "data: {}\n\nid: ") == redact {
		t.Errorf("--redact-bodies %v: report.html shows the body: %v", redact, strings.Contains(string(b), "data: {}\n\nid: "))
	}
	var s struct {
		Headline string
		Verdicts []struct{ Rule, Verdict string }
	}
	sb, _ := os.ReadFile(filepath.Join(dir, passiveSummaryFile))
	if err := json.Unmarshal(sb, &s); err != nil || !strings.HasPrefix(s.Headline, "observed 1 exchange;") {
		t.Errorf("summary %s (%v)", sb, err)
	}
}

// TestNothingObservedIsNoPass: a proxy no client went through and judge on
// the HAR file it wrote agree: NOTHING OBSERVED, exit 2, in the console and
// every report (junit.xml: an error), never NO FAILURE or exit 0.
func TestNothingObservedIsNoPass(t *testing.T) {
	srv := invokeconftest.NewServer(t)
	dir := t.TempDir()
	code, out := runProxy(t, srv.URL, dir, false, func(string) {})
	if code != 2 || !strings.Contains(out, "Verdict: NOTHING OBSERVED (exit 2): observed 0 exchanges: no client sent a request through the proxy") ||
		strings.Contains(out, "NO FAILURE") {
		t.Errorf("proxy: exit %d:\n%s", code, out)
	}
	checkPassiveReports(t, dir, "observed 0 exchanges: ", 2)
	judged := t.TempDir()
	code, out = runCLI(t, "judge", "--out", judged, filepath.Join(dir, "traffic.har"))
	if code != 2 || !strings.Contains(out, "Verdict: NOTHING OBSERVED (exit 2): observed 0 exchanges: the recording holds none") {
		t.Errorf("judge of the proxy's HAR file: exit %d:\n%s", code, out)
	}
	checkPassiveReports(t, judged, "observed 0 exchanges: ", 2)
}

// TestProxyQuiet: --quiet prints no line per exchange, and the findings
// and the summary still.
func TestProxyQuiet(t *testing.T) {
	srv := invokeconftest.NewServer(t, invokeconftest.WithDefects("no-close"))
	p := srv.Profile
	code, out := runProxy(t, srv.URL, t.TempDir(), false, func(base string) {
		invokeThrough(t, base+"/api/invoke/"+p.Agents.Main.ID, p.Keys.Agent, "hi")
	}, "--quiet")
	if code != 1 || strings.Contains(out, "#1 POST") || !strings.Contains(out, "SSE-05 MUST: ") || !strings.Contains(out, "observed 1 exchange;") {
		t.Errorf("exit %d, output:\n%s", code, out)
	}
}

// runProxy runs the proxy command to target, writing into dir, calls
// send with the proxy's base URL, then stops the proxy; it returns the exit
// code and everything printed after the first line.
func runProxy(t *testing.T, target, dir string, redact bool, send func(base string), extra ...string) (int, string) {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	pr, pw := io.Pipe()
	codec := make(chan int, 1)
	go func() {
		args := []string{"proxy", "--target", target, "--listen", "127.0.0.1:0", "--out", dir}
		if redact {
			args = append(args, "--redact-bodies")
		}
		args = append(args, extra...)
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
	send(base)
	stop()
	var code int
	select {
	case code = <-codec:
	case <-time.After(15 * time.Second):
		t.Fatal("the proxy did not stop within 15 s")
	}
	<-restDone
	return code, rest.String()
}

// invokeThrough sends a prompt to an invoke URL for an SSE answer and
// returns the answer's body.
func invokeThrough(t *testing.T, url, key, prompt string) string {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(prompt))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Accept", "text/event-stream")
	c := &http.Client{Timeout: 15 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestProxyRedactsBodiesEverywhere: a target's answer breaks a rule with a
// failure that quotes its body (ERR-10, the OpenAI error envelope). With
// --redact-bodies no output (console, HAR file, report.html, summary.json,
// junit.xml, passive-summary.json) holds the prompt's or the answer's text,
// while the thread ID from a header stays; without it, the reports quote
// the answer.
func TestProxyRedactsBodiesEverywhere(t *testing.T) {
	const (
		answer = "the purple elephant sings at dawn"
		prompt = "tell me about the green giraffe"
		thread = "thr_from_the_header_42"
	)
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, 1<<20))
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-SVC-Thread-Id", thread)
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprintf(w, `{"error":{"message":"%s; %s","type":"server_error","param":null,"code":null}}`, answer, thread)
	}))
	defer target.Close()
	for _, redact := range []bool{false, true} {
		dir := t.TempDir()
		code, out := runProxy(t, target.URL, dir, redact, func(base string) {
			invokeThrough(t, base+"/api/invoke/agt_main01", "sk-svc-u-k-secret", prompt)
		})
		if code != 1 || !strings.Contains(out, "ERR-10 ") {
			t.Fatalf("redact %v: exit %d, output:\n%s", redact, code, out)
		}
		outputs := map[string]string{"console": out}
		for _, f := range []string{"traffic.har", reports.HTMLFile, reports.JSONFile, reports.JUnitFile, passiveSummaryFile} {
			b, err := os.ReadFile(filepath.Join(dir, f))
			if err != nil {
				t.Fatal(err)
			}
			outputs[f] = string(b)
		}
		for name, text := range outputs {
			for _, phrase := range []string{"purple elephant", "green giraffe"} {
				if redact && strings.Contains(text, phrase) {
					t.Errorf("--redact-bodies: %s holds %q", name, phrase)
				}
			}
			if name == "traffic.har" {
				continue
			}
			if quotes := strings.Contains(text, "purple elephant"); !redact && !quotes {
				t.Errorf("without --redact-bodies, %s does not quote the answer", name)
			}
		}
		if !redact {
			// judge --redact-bodies keeps the recorded bodies out of its reports.
			jdir := t.TempDir()
			code, jout := runCLI(t, "judge", filepath.Join(dir, "traffic.har"), "--redact-bodies", "--out", jdir)
			if code != 1 {
				t.Fatalf("judge --redact-bodies: exit %d, output:\n%s", code, jout)
			}
			judged := map[string]string{"judge console": jout}
			for _, f := range []string{reports.HTMLFile, reports.JSONFile, reports.JUnitFile, passiveSummaryFile} {
				b, err := os.ReadFile(filepath.Join(jdir, f))
				if err != nil {
					t.Fatal(err)
				}
				judged["judge "+f] = string(b)
			}
			for name, text := range judged {
				for _, phrase := range []string{"purple elephant", "green giraffe"} {
					if strings.Contains(text, phrase) {
						t.Errorf("judge --redact-bodies: %s holds %q", name, phrase)
					}
				}
			}
		}
		if redact {
			for _, name := range []string{"console", passiveSummaryFile, reports.JSONFile} {
				if !strings.Contains(outputs[name], checks.BodyTextRedacted) || !strings.Contains(outputs[name], thread) {
					t.Errorf("--redact-bodies: %s does not say the body text was redacted, or lost the header's thread ID:\n%s", name, outputs[name])
				}
			}
		}
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
		Errors   int `xml:"errors,attr"`
	}
	// Nothing observed (exit 2) is an error of the recording beside the
	// rules, none of which was judged.
	errs := 0
	if exit == 2 {
		errs = 1
	}
	if err := xml.Unmarshal(junit, &suites); err != nil || suites.Tests != len(rules)+errs || suites.Errors != errs || (suites.Failures > 0) != (exit == 1) {
		t.Errorf("junit.xml: %+v (%v)", suites, err)
	}
}

// TestJudgeHidesCredentials: the credentials hidden by default (a header,
// a query parameter, a JSON member) reach no output of judge, and --hide
// adds a name: without it, that header's value is shown as the file has it.
func TestJudgeHidesCredentials(t *testing.T) {
	entry := `{"startedDateTime":"2026-11-20T09:00:00.000Z","time":9,"timings":{"wait":8,"receive":1},` +
		`"request":{"method":"POST","url":"http://svc.test/api/invoke/agt_main01?api_key=QueryHiddenValue3",` +
		`"headers":[{"name":"X-Api-Key","value":"DefaultHiddenValue2"},{"name":"X-Session-Secret","value":"SessionSecretValue1"}],` +
		`"bodySize":35,"postData":{"text":"{\"password\":\"BodyHiddenValue4\"}"}},` +
		`"response":{"status":500,"headers":[{"name":"Content-Type","value":"application/json"},{"name":"X-SVC-Thread-Id","value":"t1"}],` +
		`"content":{"size":70,"text":"{\"error\":{\"message\":\"no\",\"type\":\"server_error\",\"param\":null,\"code\":null}}"}}}`
	file := filepath.Join(t.TempDir(), "creds.har")
	if err := os.WriteFile(file, []byte(`{"log":{"version":"1.2","creator":{"name":"a recorder","version":"1"},"entries":[`+entry+`]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, hide := range []bool{false, true} {
		dir := t.TempDir()
		args := []string{"judge", "--out", dir, file}
		if hide {
			args = append(args, "--hide", "x-session-secret")
		}
		code, out := runCLI(t, args...)
		if code != 1 || !strings.Contains(out, "ERR-10") {
			t.Fatalf("hide %v: exit %d:\n%s", hide, code, out)
		}
		all := out
		for _, f := range []string{reports.HTMLFile, reports.JSONFile, reports.JUnitFile, passiveSummaryFile} {
			b, err := os.ReadFile(filepath.Join(dir, f))
			if err != nil {
				t.Fatal(err)
			}
			all += string(b)
		}
		for _, v := range []string{"QueryHiddenValue3", "DefaultHiddenValue2", "BodyHiddenValue4"} {
			if strings.Contains(all, v) {
				t.Errorf("hide %v: an output holds %s", hide, v)
			}
		}
		if shown := strings.Contains(all, "SessionSecretValue1"); shown == hide {
			t.Errorf("--hide %v: X-Session-Secret's value shown: %v", hide, shown)
		}
	}
}

// TestJudgeStopsOnSignal: Ctrl-C or SIGTERM (the context ends) stops judge
// while it reads, even on a pipe that sends nothing more: it writes the
// reports of what it judged, says it was interrupted, and exits 1 (a rule
// failed in what it judged) or 3.
func TestJudgeStopsOnSignal(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "traffic.har")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFO:", err)
	}
	// An answer that breaks ERR-10 (the OpenAI error envelope), printed as
	// soon as it is judged.
	entry := `{"startedDateTime":"2026-11-20T09:00:00.000Z","time":9,"request":{"method":"POST","url":"http://svc.test/api/invoke/agt_main01",` +
		`"headers":[],"bodySize":0},"response":{"status":500,"headers":[{"name":"Content-Type","value":"application/json"}],` +
		`"content":{"size":70,"text":"{\"error\":{\"message\":\"no\",\"type\":\"server_error\",\"param\":null,\"code\":null}}"}}}`
	go func() {
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer w.Close()
		// Two entries, then nothing more: the file never ends.
		_, _ = io.WriteString(w, `{"log":{"version":"1.2","creator":{"name":"a recorder","version":"1"},"entries":[`+entry+","+entry+",")
		<-t.Context().Done()
	}()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	var stderr strings.Builder
	done := make(chan int, 1)
	go func() {
		code, err := cmdJudge(ctx, []string{"--out", filepath.Join(dir, "out"), fifo}, pw, &stderr)
		if err != nil {
			stderr.WriteString(err.Error())
		}
		pw.Close()
		done <- code
	}()
	var console strings.Builder
	read := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(pr)
		seen := 0
		for sc.Scan() {
			console.WriteString(sc.Text() + "\n")
			if strings.Contains(sc.Text(), "ERR-10 MUST") {
				if seen++; seen == 2 {
					cancel() // both entries judged: the reader now waits for more
				}
			}
		}
	}()
	var code int
	select {
	case code = <-done:
	case <-time.After(time.Minute):
		t.Fatal("judge did not stop within a minute of the interrupt")
	}
	<-read
	if code != 1 || !strings.Contains(stderr.String(), "interrupted (Ctrl-C or SIGTERM) after 2 entries") {
		t.Fatalf("exit %d, stderr %q, console:\n%s", code, stderr.String(), console.String())
	}
	b, err := os.ReadFile(filepath.Join(dir, "out", reports.JSONFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "interrupted: Ctrl-C or SIGTERM after 2 entries") {
		t.Errorf("summary.json does not say the judgement was interrupted")
	}
}
