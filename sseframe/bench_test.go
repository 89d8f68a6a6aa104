package sseframe

import (
	"strings"
	"testing"
)

// BenchmarkReadAll measures frame splitting on a stream of 1000 events.
func BenchmarkReadAll(b *testing.B) {
	var s strings.Builder
	s.WriteString("event: start\ndata: {}\n\n")
	for i := 0; i < 1000; i++ {
		s.WriteString("id: run_0123456789abcdef\ndata: {\"content\":\"hello\",\"runID\":\"run_0123456789abcdef\"}\n\n")
	}
	s.WriteString("event: close\ndata: {}\n\n")
	stream := []byte(s.String())
	b.SetBytes(int64(len(stream)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := ReadAll(stream); err != nil {
			b.Fatal(err)
		}
	}
}
