package reports

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/invokeconf/invokeconf/checks"
	"github.com/invokeconf/invokeconf/features"
	"github.com/invokeconf/invokeconf/internal/junitxml"
	"github.com/invokeconf/invokeconf/outcome"
	"github.com/invokeconf/invokeconf/traffic"
)

// hostile is what a target may send back: an escape code, markup and a
// key-shaped string.
const (
	hostileKey = "sk-svc-alice-kagent-0123456789abcdef"
	hostile    = "\x1b[31m<script>alert(1)</script> " + hostileKey
)

// passiveExchanges are two recorded invokes: one SSE stream without the
// close frame (SSE-05 breaks), whose last frame carries hostile bytes, and
// one refusal of a call without a key (ERR-02 holds).
func passiveExchanges() []*traffic.Exchange {
	body := func(parts ...string) traffic.Body {
		b := traffic.Body{Timed: true}
		for i, p := range parts {
			b.Chunks = append(b.Chunks, traffic.Chunk{At: time.Duration(i+1) * time.Millisecond, Size: len(p), Data: []byte(p)})
			b.Size += int64(len(p))
		}
		return b
	}
	final := `{"content":"","runID":"r1","threadID":"t1","runComplete":true,"note":` + mustJSON(hostile) + "}"
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	sse := &traffic.Exchange{ID: 1, Start: start,
		Request: traffic.Request{Method: "POST", URL: "http://svc.test/api/invoke/agt",
			Header: http.Header{"Authorization": {"[key alice-kagent]"}, "Accept": {"text/event-stream"}}},
		Response: &traffic.Response{Status: 200, HeaderAt: time.Millisecond, End: traffic.EndComplete,
			Header: http.Header{"Content-Type": {"text/event-stream"}, "X-Svc-Thread-Id": {"t1"}},
			Body: body("event: start\ndata: {}\n\n", `id: r1`+"\n"+`data: {"content":"hi","runID":"r1","threadID":"t1","runComplete":false}`+"\n\n",
				"id: r1:after\ndata: "+final+"\n\n")}}
	refused := &traffic.Exchange{ID: 2, Start: start.Add(time.Second),
		Request: traffic.Request{Method: "POST", URL: "http://svc.test/api/invoke/agt", Header: http.Header{}},
		Response: &traffic.Response{Status: 401, HeaderAt: time.Millisecond, End: traffic.EndComplete,
			Header: http.Header{"Content-Type": {"application/problem+json"}},
			Body:   body(`{"title":"Unauthorized","status":401}`)}}
	return []*traffic.Exchange{sse, refused}
}

func mustJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func passiveReport(t *testing.T) (*Report, checks.Summary) {
	t.Helper()
	xs := passiveExchanges()
	j := checks.NewJudgement()
	for _, x := range xs {
		j.Add(x)
	}
	s := j.Summary()
	// Only the exchange that broke a rule is kept.
	ev := NewEvidence(1, false)
	ev.Add(xs[0])
	ev.Add(xs[1])
	rep, err := BuildPassive(PassiveInput{Summary: s, Source: "har", Target: "HAR file " + hostile, Started: xs[0].Start, Duration: time.Second,
		Exchange: ev.Lookup})
	if err != nil {
		t.Fatal(err)
	}
	return rep, s
}

// TestPassiveVerdicts: every rule of the catalog gets a passive verdict:
// pass with the exchanges that decided it, fail with the exchange, not
// seen, or not decidable with the catalog's reason; the outcome is never
// pass.
func TestPassiveVerdicts(t *testing.T) {
	rep, s := passiveReport(t)
	catalog, err := features.Rules()
	if err != nil {
		t.Fatal(err)
	}
	if rep.Mode != ModePassive || rep.Outcome != PassiveFail || rep.ExitCode != outcome.ExitFail {
		t.Errorf("mode %q, outcome %q, exit %d", rep.Mode, rep.Outcome, rep.ExitCode)
	}
	if want := "observed 2 exchanges; judged "; !strings.HasPrefix(rep.Headline, want) || !strings.Contains(rep.Headline, fmt.Sprintf(" of %d rules", len(catalog))) {
		t.Errorf("headline %q", rep.Headline)
	}
	if rep.Passive.Observed != 2 || rep.Passive.Rules != len(catalog) || rep.Passive.Decidable != len(checks.Rules()) {
		t.Errorf("passive %+v", rep.Passive)
	}
	if len(rep.Rules) != len(catalog) {
		t.Fatalf("%d rules, the catalog has %d", len(rep.Rules), len(catalog))
	}
	decidable := map[string]bool{}
	for _, id := range checks.Rules() {
		decidable[id] = true
	}
	got := map[string]RuleResult{}
	judged := 0
	for _, r := range rep.Rules {
		got[r.ID] = r
		if r.Verdict == Pass || r.Verdict == Fail {
			judged++
		}
		switch {
		case !decidable[r.ID]:
			if r.Verdict != NotDecidable || r.Reason != "not decidable from traffic: "+r.PassiveWhy || r.Traffic != nil {
				t.Errorf("%s (passive %s): %s: %s", r.ID, r.Passive, r.Verdict, r.Reason)
			}
		case r.Traffic == nil:
			t.Errorf("%s: no traffic counts", r.ID)
		}
	}
	if judged != s.Judged || judged != rep.Passive.Judged {
		t.Errorf("judged %d, the judgement says %d, the report %d", judged, s.Judged, rep.Passive.Judged)
	}
	for id, want := range map[string]struct {
		v      Verdict
		reason string
	}{
		"SSE-05":   {Fail, "1 exchange of 1 broke it"},
		"SSE-02":   {Pass, "decided by 1 exchange"},
		"ERR-02":   {Pass, "decided by 1 exchange"},
		"ERR-03":   {NotSeen, "no recorded exchange could decide it"},
		"SSE-04":   {NotSeen, "no recorded exchange could decide it (traffic decides it partly: "},
		"ERR-06":   {NotDecidable, "not decidable from traffic: needs a key that lacks the scope"},
		"TOOLS-02": {NotDecidable, "not decidable from traffic: needs to know which tools the agent has"},
	} {
		if r := got[id]; r.Verdict != want.v || !strings.HasPrefix(r.Reason, want.reason) {
			t.Errorf("%s: %s: %q, want %s: %q...", id, r.Verdict, r.Reason, want.v, want.reason)
		}
	}
	if tr := got["SSE-05"].Traffic; tr == nil || tr.Decided != 1 || tr.Broken != 1 {
		t.Errorf("SSE-05 traffic %+v", tr)
	}
	if len(rep.FailedRules) == 0 || rep.FailedRules[0].ID != "SSE-05" || rep.FailedRules[0].Anchor == "" {
		t.Errorf("failed rules %+v", rep.FailedRules)
	}
	var f *Finding
	for i := range rep.Findings {
		if rep.Findings[i].RuleID == "SSE-05" {
			f = &rep.Findings[i]
		}
	}
	if f == nil {
		t.Fatalf("no failure for SSE-05: %+v", rep.Findings)
	}
	if f.Expected == "" || f.Actual == "" || f.Spec == "" || !strings.HasPrefix(f.Title(), "exchange #1: POST http://svc.test/api/invoke/agt") ||
		f.Scenario != nil || len(f.Transcript) != 1 || f.Transcript[0].Status != 200 || !strings.Contains(f.Transcript[0].RespBody, "event: start") {
		t.Errorf("SSE-05 failure %+v", f)
	}
	if rep.Spec.Outcome == "pass" || rep.Spec.Outcome == "partial" || rep.Contract.Outcome == "pass" {
		t.Errorf("a passive report certifies nothing: spec %q, contract %q", rep.Spec.Outcome, rep.Contract.Outcome)
	}
}

// TestPassiveReportFiles: the same writers as run's put a passive report
// down, never as a certification, with hostile bytes made harmless and no
// key; JUnit has one test case per rule.
func TestPassiveReportFiles(t *testing.T) {
	rep, _ := passiveReport(t)
	dir := t.TempDir()
	// A cucumber.json left in the folder by an active run stays as it was.
	if err := os.WriteFile(filepath.Join(dir, CucumberFile), []byte("[]"), 0o644); err != nil {
		t.Fatal(err)
	}
	paths, err := Write(dir, rep, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 3 {
		t.Errorf("paths %v", paths)
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if read(CucumberFile) != "[]" {
		t.Error("a passive report touched cucumber.json")
	}
	var console bytes.Buffer
	WriteConsole(&console, rep, paths)
	files := map[string]string{HTMLFile: read(HTMLFile), JSONFile: read(JSONFile), JUnitFile: read(JUnitFile), "console": console.String()}
	for name, text := range files {
		for _, bad := range []string{"\x1b", hostileKey, "0123456789abcdef"} {
			if strings.Contains(text, bad) {
				t.Errorf("%s holds %q", name, bad)
			}
		}
		if name == HTMLFile && strings.Contains(text, "<script>") {
			t.Errorf("%s holds the target's markup unescaped", name)
		}
		if name != JSONFile && !strings.Contains(text, "not a certification") {
			t.Errorf("%s does not say it is not a certification", name)
		}
		if name != JUnitFile && !strings.Contains(text, "observed 2 exchanges; judged ") {
			t.Errorf("%s lacks the headline", name)
		}
	}
	html := files[HTMLFile]
	for _, want := range []string{`id="passive-note"`, "invokeconf passive judgement: not a certification", "not decidable from traffic: needs a key that lacks the scope",
		`class="badge v-not-seen"`, "exchange #1: POST http://svc.test/api/invoke/agt", "Authorization: [key alice-kagent]"} {
		if !strings.Contains(html, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	for _, bad := range []string{"certification report", "INVOKECONF_KEYS", "curl "} {
		if strings.Contains(html, bad) {
			t.Errorf("report.html holds %q", bad)
		}
	}
	var doc struct {
		Schema, Mode, Outcome string
		ExitCode              int
		Passive               Passive
		Rules                 []RuleResult
	}
	if err := json.Unmarshal([]byte(files[JSONFile]), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Schema != SchemaVersion || doc.Mode != ModePassive || doc.Outcome != PassiveFail || doc.ExitCode != 1 || doc.Passive.Observed != 2 || len(doc.Rules) != len(rep.Rules) {
		t.Errorf("summary.json: %s %s %s %d %+v", doc.Schema, doc.Mode, doc.Outcome, doc.ExitCode, doc.Passive)
	}
	var suites junitxml.Suites
	if err := xml.Unmarshal([]byte(files[JUnitFile]), &suites); err != nil {
		t.Fatal(err)
	}
	cases := map[string]junitxml.Case{}
	for _, su := range suites.Suites {
		for _, c := range su.Cases {
			id := strings.TrimPrefix(strings.Fields(c.Name)[0], "[")
			cases[strings.TrimSuffix(id, "]")] = c
		}
	}
	if len(cases) != len(rep.Rules) || suites.Tests != len(rep.Rules) || suites.Failures != 1 {
		t.Errorf("junit: %d cases, tests %d, failures %d, for %d rules", len(cases), suites.Tests, suites.Failures, len(rep.Rules))
	}
	for id, want := range map[string]string{"SSE-05": "failure", "SSE-02": "pass", "ERR-03": "not seen: ", "ERR-06": "not decidable from traffic: "} {
		c := cases[id]
		switch {
		case want == "failure":
			if c.Failure == nil || c.Failure.Type != "MUST" || !strings.Contains(c.Failure.Text, "exchange #1: POST") || !strings.Contains(c.Failure.Text, "expected: ") {
				t.Errorf("%s: %+v", id, c)
			}
		case want == "pass":
			if c.Failure != nil || c.Skipped != nil || !strings.Contains(c.SystemOut, "decided by 1 exchange") {
				t.Errorf("%s: %+v", id, c)
			}
		case c.Skipped == nil || !strings.HasPrefix(c.Skipped.Message, want):
			t.Errorf("%s: %+v, want skipped %q", id, c, want)
		}
	}
	if !strings.Contains(files[JUnitFile], `name="invokeconf.mode" value="passive"`) {
		t.Error("junit.xml does not say it is passive")
	}
}
