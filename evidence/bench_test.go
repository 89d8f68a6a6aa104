package evidence

import (
	"fmt"
	"testing"
	"time"

	"github.com/invokeconf/invokeconf/checks"
	"github.com/invokeconf/invokeconf/fixtures"
	"github.com/invokeconf/invokeconf/traffic"
)

// BenchmarkEvidenceAdd is what keeping one exchange as evidence costs the
// run (keys hidden, the entry encoded and written), against what judging
// it with every check costs: the evidence must stay a small part of a
// run (the guide states the whole suite's cost, at most 10% by the issue).
func BenchmarkEvidenceAdd(b *testing.B) {
	p, err := fixtures.Reference()
	if err != nil {
		b.Fatal(err)
	}
	x := stream(1, time.Now(), p.Keys.Agent, nil)
	// A longer answer: 40 content events.
	var chunks []traffic.Chunk
	for i := 0; i < 40; i++ {
		d := fmt.Sprintf("id: run_1\ndata: {\"content\":\"word %d of a longer answer \",\"runID\":\"run_1\",\"threadID\":\"thr_1\"}\n\n", i)
		chunks = append(chunks, traffic.Chunk{At: time.Duration(i) * time.Millisecond, Size: len(d), Data: []byte(d)})
	}
	x.Response.Body.Chunks = append(x.Response.Body.Chunks[:1], append(chunks, x.Response.Body.Chunks[2])...)
	b.Run("keep", func(b *testing.B) {
		rec, err := Create(b.TempDir(), p, "bench")
		if err != nil {
			b.Fatal(err)
		}
		v := checks.NewView(x)
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			rec.Add("p", "features/sse.feature: s", v)
		}
		rec.Abandon()
	})
	b.Run("judge", func(b *testing.B) {
		j := checks.NewJudgement().LeaveUnsettled()
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			c := *x
			c.ID = i + 1
			j.AddView(checks.NewView(&c))
		}
	})
}
