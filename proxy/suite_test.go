package proxy_test

import (
	"context"
	"testing"

	"github.com/invokeconf/invokeconf/checks"
	"github.com/invokeconf/invokeconf/fakeserver"
	"github.com/invokeconf/invokeconf/runner"
	"github.com/invokeconf/invokeconf/traffic"
)

// TestSuiteThroughProxy: the proxy is transparent (every scenario of the
// suite, @slow aside, has the same verdict with and without it in the
// path), and the suite's own traffic, judged passively, breaks no rule.
func TestSuiteThroughProxy(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the suite twice")
	}
	r := startRecording(t, fakeserver.Config{})
	statuses := func(base string) map[string]runner.Status {
		p := r.p.Clone()
		p.BaseURL = base
		res, err := runner.Run(context.Background(), runner.Config{Profile: p, Tags: "~@slow", Concurrency: 8})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]runner.Status{}
		for _, s := range res.Scenarios {
			out[s.ID] = s.Status
		}
		if res.Count(runner.Passed) < len(res.Scenarios)/2 {
			t.Errorf("%s: only %d of %d scenarios passed", base, res.Count(runner.Passed), len(res.Scenarios))
		}
		return out
	}
	direct := statuses(r.target)
	via := statuses(r.base)
	if len(direct) == 0 || len(direct) != len(via) {
		t.Fatalf("%d scenarios direct, %d through the proxy", len(direct), len(via))
	}
	for id, st := range direct {
		if via[id] != st {
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
