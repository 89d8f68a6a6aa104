package runner_test

import (
	"context"
	"testing"

	"github.com/invokeconf/invokeconf/fakeserver"
	"github.com/invokeconf/invokeconf/invokeconftest"
	"github.com/invokeconf/invokeconf/runner"
	"github.com/invokeconf/invokeconf/testrun"
)

// BenchmarkQuickSuite runs the quick suite (--quick) against the embedded
// reference server, as `invokeconf run --quick` does: s/run is the figure
// of issue 29 (2.3 s quiet before the features with the longest scripts
// started first).
//
//	go test -run '^$' -bench Suite -benchtime 3x ./runner
func BenchmarkQuickSuite(b *testing.B) { benchmarkSuite(b, testrun.Selection{Quick: true}) }

// BenchmarkFullSuite runs the whole suite, as `invokeconf run` does: its
// floor is the 20 s of quiet the keepalive scenario waits out (SSE-04), and
// s/run is the other figure of issue 29 (20.8 s before).
func BenchmarkFullSuite(b *testing.B) { benchmarkSuite(b, testrun.Selection{}) }

func benchmarkSuite(b *testing.B, sel testrun.Selection) {
	for b.Loop() {
		b.StopTimer()
		p := invokeconftest.NewServer(b, invokeconftest.WithConfig(fakeserver.Config{})).Profile
		plan, err := runner.NewPlan(p, sel)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		res, err := runner.Run(context.Background(), runner.Config{Profile: p, Plan: plan})
		if err != nil {
			b.Fatal(err)
		}
		if res.Count(testrun.Passed) == 0 {
			b.Fatal("no scenario passed")
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/run")
}
