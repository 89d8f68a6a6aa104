package checks

import (
	"fmt"
	"testing"
)

// BenchmarkJudgement judges a mix of small exchanges as invokeconf judge
// and the run's judgement of every exchange do (Judgement.AddView): an SSE
// stream, an envelope, plain text, an async acknowledgement and a thread's
// events. ns/exchange is the figure of issue 29 (2.2 ms before the view
// parsed each exchange once).
//
//	go test -run '^$' -bench Judgement ./checks
func BenchmarkJudgement(b *testing.B) {
	script := "@say a\n@pause 600ms\n@say b\n"
	final := "id: r1:after\ndata: " + evt(`"content":"","runComplete":true`) + "\n\n"
	mix := func(i int) []ex {
		t := fmt.Sprintf("t%d", i)
		return []ex{
			{req: hdr("Accept", "text/event-stream"), prompt: script, resp: hdr("Content-Type", "text/event-stream", "X-SVC-Thread-Id", t),
				chunks: []at{{1, "event: start\ndata: {}\n\n"}, {5, "id: r1\ndata: " + evt(`"content":"a"`) + "\n\n"},
					{610, "id: r1\ndata: " + evt(`"content":"b"`) + "\n\n" + final + "event: close\ndata: {}\n\n"}}},
			env(evt(`"content":"a"`), evt(`"content":"","runComplete":true`)),
			{prompt: script, resp: hdr("Content-Type", "text/plain", "X-SVC-Thread-Id", t), chunks: []at{{1, "a"}, {610, "b"}}},
			{url: "http://svc.test/api/invoke/agt?async=true", resp: hdr("Content-Type", "application/json", "X-SVC-Thread-Id", t),
				chunks: whole(`{"threadID":"` + t + `","runID":"r1"}`)},
			{method: "GET", url: "http://svc.test/api/threads/" + t + "/events?runID=r1", req: hdr("Accept", "application/json"),
				resp: hdr("Content-Type", "application/json"), chunks: whole(`{"items":[` + evt(`"content":"","runComplete":true`) + `]}`)},
		}
	}
	j := NewJudgement()
	b.ReportAllocs()
	b.ResetTimer()
	n := 0
	for i := 0; b.Loop(); i++ {
		for _, e := range mix(i) {
			j.AddView(e.build())
			n++
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/exchange")
}
