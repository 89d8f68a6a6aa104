package sseframe

import (
	"reflect"
	"testing"
)

// FuzzParser: any bytes, fed whole or split anywhere, give the same frames,
// with end offsets in order and inside the stream, and never a panic.
func FuzzParser(f *testing.F) {
	for _, tt := range readTests {
		f.Add([]byte(tt.stream), uint(len(tt.stream)/2))
	}
	f.Add([]byte("id: r\r\n\r\n:\r"), uint(6))
	f.Fuzz(func(t *testing.T, stream []byte, split uint) {
		whole, _ := ReadAll(stream)
		cut := int(split % uint(len(stream)+1))
		var parts []Frame
		emit := func(fr Frame) { parts = append(parts, fr) }
		var p Parser
		p.Feed(stream[:cut], emit)
		p.Feed(stream[cut:], emit)
		p.Close(emit)
		if !reflect.DeepEqual(whole, parts) && !(len(whole) == 0 && len(parts) == 0) {
			t.Fatalf("split at %d: %q, whole: %q", cut, render(parts), render(whole))
		}
		last := 0
		for _, fr := range whole {
			if fr.End < last || fr.End > len(stream) {
				t.Fatalf("end %d after %d in a stream of %d bytes", fr.End, last, len(stream))
			}
			last = fr.End
		}
	})
}
