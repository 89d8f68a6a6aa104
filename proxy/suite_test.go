package proxy_test

import (
	"context"
	"testing"

	"github.com/invokeconf/invokeconf/checks"
	"github.com/invokeconf/invokeconf/fakeserver"
	"github.com/invokeconf/invokeconf/internal/sweep"
	"github.com/invokeconf/invokeconf/runner"
	"github.com/invokeconf/invokeconf/testrun"
	"github.com/invokeconf/invokeconf/traffic"
)

// harnessLate stands for a scenario a timing check left untested because
// the harness itself ran late (checks.HarnessWasLate): on a loaded machine
// that may happen on either side, and says nothing of the proxy.
const harnessLate testrun.Status = "untested: the harness ran late"

// transparencySample is the areas TestSuiteThroughProxy runs when the
// complete sweeps are off (internal/sweep): streams of every form, the
// abort and the events route, error answers, thread headers, and bundle
// installs (documents in, records out).
const transparencySample = "@formats,@sse,@async,@errors,@threads,@install"

// TestSuiteThroughProxy: the proxy is transparent (every scenario of the
// suite, @slow aside, has the same verdict with and without it in the
// path), and the suite's own traffic, judged passively, breaks no rule.
// With INVOKECONF_FULL=1 the whole suite; otherwise transparencySample.
func TestSuiteThroughProxy(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the suite twice")
	}
	t.Parallel()
	tags := "~@slow"
	if !sweep.Full() {
		tags += " && " + transparencySample
	}
	r := startRecording(t, fakeserver.Config{})
	statuses := func(base string) map[string]testrun.Status {
		p := r.p.Clone()
		p.BaseURL = base
		res, err := runner.Run(context.Background(), runner.Config{Profile: p, Tags: tags, Concurrency: 8})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]testrun.Status{}
		for _, s := range res.Scenarios {
			out[s.ID] = s.Status
			if s.Status == testrun.Untested && checks.HarnessWasLate(s.Error) {
				out[s.ID] = harnessLate // no verdict either way
			}
		}
		if res.Count(testrun.Passed) < len(res.Scenarios)/2 {
			t.Errorf("%s: only %d of %d scenarios passed", base, res.Count(testrun.Passed), len(res.Scenarios))
		}
		return out
	}
	direct := statuses(r.target)
	via := statuses(r.base)
	if len(direct) == 0 || len(direct) != len(via) {
		t.Fatalf("%d scenarios direct, %d through the proxy", len(direct), len(via))
	}
	for id, st := range direct {
		if via[id] != st && st != harnessLate && via[id] != harnessLate {
			t.Errorf("%s: %s direct, %s through the proxy", id, st, via[id])
		}
	}
	r.mu.Lock()
	xs := append([]traffic.Exchange(nil), r.xs...)
	r.mu.Unlock()
	s := judge(xs)
	for _, v := range s.Verdicts {
		if v.Verdict != checks.Pass {
			t.Logf("%s: %s %s", v.Rule, v.Verdict, v.Reason)
		}
		if v.Verdict == checks.Fail {
			for _, f := range v.Failures {
				t.Errorf("the suite's traffic fails %s: %v", v.Rule, f)
			}
		}
	}
	t.Logf("%d scenarios; %s", len(direct), s.Headline)
}
