package evidence

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/invokeconf/invokeconf/checks"
	"github.com/invokeconf/invokeconf/fixtures"
	"github.com/invokeconf/invokeconf/reports"
	"github.com/invokeconf/invokeconf/steps"
	"github.com/invokeconf/invokeconf/testrun"
	"github.com/invokeconf/invokeconf/traffic"
)

// stream is an SSE answer to a script that pauses a second before its
// content, whose start frame came only 100 ms before the content: SSE-01
// broken, unless the recorder's own lateness explains it (stalls).
func stream(id int, start time.Time, key string, stalls []traffic.Stall) *traffic.Exchange {
	body := func(at time.Duration, s string) traffic.Chunk {
		return traffic.Chunk{At: at, Size: len(s), Data: []byte(s)}
	}
	prompt := "@pause 1s\n@say hello"
	resp := []traffic.Chunk{
		body(900*time.Millisecond, "event: start\ndata: {}\n\n"),
		body(1000*time.Millisecond+123, "id: run_1\ndata: {\"content\":\"hello\",\"runID\":\"run_1\",\"threadID\":\"thr_1\"}\n\n"),
		body(1001*time.Millisecond, "id: run_1:after\ndata: {\"runComplete\":true,\"runID\":\"run_1\",\"threadID\":\"thr_1\"}\n\nevent: close\ndata: {}\n\n"),
	}
	size := 0
	for _, c := range resp {
		size += c.Size
	}
	return &traffic.Exchange{ID: id, Start: start, Stalls: stalls, Probed: true,
		Request: traffic.Request{Method: "POST", URL: "http://127.0.0.1:1/api/invoke/agt_main01",
			Header: http.Header{"Accept": {"text/event-stream"}, "Authorization": {"Bearer " + key}, "Content-Type": {"text/plain"}},
			Body:   traffic.Body{Timed: true, Size: int64(len(prompt)), Chunks: []traffic.Chunk{body(0, prompt)}}},
		Response: &traffic.Response{Status: 200, HeaderAt: 800 * time.Millisecond, End: traffic.EndComplete,
			Header: http.Header{"Content-Type": {"text/event-stream"}, "X-Svc-Thread-Id": {"thr_1"}},
			Body:   traffic.Body{Timed: true, Size: int64(size), Chunks: resp}}}
}

// TestEvidenceJudgesAsTheRun: the exchanges a run judged, kept as evidence
// (keys hidden) and judged again, give the run's judgement rule by rule;
// an exchange whose delay the recorder's own lateness explains stays
// untested, not failed, because the evidence keeps the stalls.
func TestEvidenceJudgesAsTheRun(t *testing.T) {
	p, err := fixtures.Reference()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	rec, err := Create(dir, p, "test")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	late := []traffic.Stall{{From: 100 * time.Millisecond, To: 950 * time.Millisecond}}
	xs := []*traffic.Exchange{
		stream(1, start, p.Keys.Agent, nil),                   // SSE-01 broken
		stream(2, start.Add(time.Second), p.Keys.Agent, late), // the harness was late: untested
	}
	j := checks.NewJudgement().LeaveUnsettled()
	for _, x := range xs {
		v := checks.NewView(x)
		rec.Add("pickle-1", "features/sse.feature: a stream", v)
		j.AddView(v)
	}
	sum := j.Summary()
	res := &testrun.Result{Judgement: &sum}
	rep := &reports.Report{ProfileYAML: "baseURL: x\n"}
	if err := rec.Finish(res, rep); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, HARFile))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), p.Keys.Agent) || !strings.Contains(string(b), "[key alice-kagent]") {
		t.Errorf("the evidence does not hide the key as a recording does:\n%s", b)
	}
	if len(rep.Evidence.KeysHidden) != 0 {
		t.Errorf("hiding the Authorization header changed the exchanges %v", rep.Evidence.KeysHidden)
	}
	again, err := Rejudge(filepath.Join(dir, HARFile))
	if err != nil {
		t.Fatal(err)
	}
	got := judgedRules(again.Summary)
	for i, want := range rep.Evidence.Judgement {
		if !sameJudgement(got[i], want) {
			t.Errorf("%s: judged again %+v, the run %+v", want.Rule, got[i], want)
		}
	}
	var sse01 checks.RuleVerdict
	for _, v := range again.Summary.Verdicts {
		if v.Rule == "SSE-01" {
			sse01 = v
		}
	}
	if sse01.Verdict != checks.Fail || sse01.Broken != 1 || sse01.Failures[0].Exchange != 1 {
		t.Errorf("SSE-01 judged again: %+v, want broken by exchange 1 only (exchange 2's delay is the harness's)", sse01)
	}
}

// TestHiddenKeysAreNamed: an exchange whose body holds a piece of a key's
// secret is kept with the piece hidden and named in KeysHidden.
func TestHiddenKeysAreNamed(t *testing.T) {
	p, err := fixtures.Reference()
	if err != nil {
		t.Fatal(err)
	}
	rc := &traffic.Recorder{Redactor: traffic.NewRedactor(p.Secrets()...)}
	x := stream(1, time.Now(), p.Keys.Agent, nil)
	if _, changed := hide(rc, x); changed {
		t.Errorf("hiding the Authorization header counts as a change")
	}
	sec := p.Keys.Agent[strings.LastIndex(p.Keys.Agent, "-")+1:]
	x.Response.Body.Chunks[1].Data = []byte(strings.Replace(string(x.Response.Body.Chunks[1].Data), "hello", "he"+sec[2:10], 1))
	hidden, changed := hide(rc, x)
	if !changed || strings.Contains(string(hidden.Response.Body.Bytes()), sec[2:10]) {
		t.Errorf("a piece of a secret in a body: changed %v, kept %q", changed, hidden.Response.Body.Bytes())
	}
	if string(x.Response.Body.Chunks[1].Data) == string(hidden.Response.Body.Chunks[1].Data) {
		t.Errorf("hide changed the exchange the run judged")
	}
}

// TestMaxBodyIsTheRuns: the evidence is read back as the run records it.
func TestMaxBodyIsTheRuns(t *testing.T) {
	if MaxBody != steps.MaxBody {
		t.Errorf("evidence.MaxBody is %d, steps.MaxBody %d", MaxBody, steps.MaxBody)
	}
}
