package sseframe

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
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

// FuzzReadAll: any byte stream splits into frames without a panic; lines
// hold no line ending; frame ends grow and stay within the stream; reading
// the stream one byte at a time gives the same frames.
func FuzzReadAll(f *testing.F) {
	for _, seed := range []string{"event: start\ndata: {}\n\n", "id: r1\ndata: {\"content\":\"a\"}\n\n: ping\n\n",
		"data: x\r\n\r\ndata: y\r\rdata: z", ": only a comment", "\n\n\n", "data"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		frames, err := ReadAll(b)
		if err != nil {
			t.Fatalf("ReadAll of an in-memory stream: %v", err)
		}
		end := 0
		for _, fr := range frames {
			if fr.End < end || fr.End > len(b) {
				t.Fatalf("frame end %d after %d, stream of %d bytes", fr.End, end, len(b))
			}
			end = fr.End
			if len(fr.Lines) == 0 {
				t.Fatal("a frame without lines")
			}
			for _, l := range fr.Lines {
				if strings.ContainsAny(l.Raw, "\r\n") || l.Raw == "" {
					t.Fatalf("line %q", l.Raw)
				}
			}
		}
		var slow []Frame
		r := NewReader(iotest.OneByteReader(bytes.NewReader(b)))
		for {
			fr, err := r.Next()
			if err != nil {
				break
			}
			slow = append(slow, fr)
		}
		if !reflect.DeepEqual(slow, frames) {
			t.Fatalf("byte by byte %+v, at once %+v", slow, frames)
		}
	})
}
