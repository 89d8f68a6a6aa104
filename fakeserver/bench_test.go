package fakeserver

import (
	"io"
	"strings"
	"testing"
)

// BenchmarkInvokeSSE measures one SSE invoke of a 100-event script end to end
// over loopback HTTP.
func BenchmarkInvokeSSE(b *testing.B) {
	ts, p := newTestServer(b, Config{})
	prompt := strings.Repeat("@say chunk\n", 100)
	url := ts.URL + "/api/invoke/" + p.Agents.Main.ID
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		resp := post(b, url, p.Keys.Agent, "text/event-stream", prompt)
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
	}
}
