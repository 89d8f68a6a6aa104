package sseframe

import (
	"bytes"
	"reflect"
	"testing"

	sse "github.com/tmaxmax/go-sse"
)

// ev is what a conforming client dispatches, without the frame.
type ev struct{ Type, Data, ID string }

func dispatched(stream string) []ev {
	frames, _ := ReadAll([]byte(stream))
	var out []ev
	for _, e := range Events(frames) {
		out = append(out, ev{e.Type, e.Data, e.LastEventID})
	}
	return out
}

// grammarTests are the event-stream grammar of the HTML Living Standard
// ("Interpreting an event stream"), each with what a conforming client
// dispatches.
var grammarTests = []struct {
	name, stream string
	want         []ev
}{
	{"byte order mark at the start", "\xEF\xBB\xBFevent: start\ndata: {}\n\n", []ev{{"start", "{}", ""}}},
	{"byte order mark only once", "\xEF\xBB\xBF\xEF\xBB\xBFdata: x\n\ndata: y\n\n", []ev{{"message", "y", ""}}},
	{"no space after the colon", "id:r1\ndata:{}\n\n", []ev{{"message", "{}", "r1"}}},
	{"only one space dropped", "data:  x\n\n", []ev{{"message", " x", ""}}},
	{"data lines joined with LF", "data: {\ndata: \"a\": 1\ndata: }\n\n", []ev{{"message", "{\n\"a\": 1\n}", ""}}},
	{"empty data lines", "data\ndata:\ndata: x\n\n", []ev{{"message", "\n\nx", ""}}},
	{"a lone empty data line dispatches empty data", "data\n\n", []ev{{"message", "", ""}}},
	{"no data: nothing dispatched", "id: r1\nevent: start\n\ndata: x\n\n", []ev{{"message", "x", "r1"}}},
	{"empty event type is message", "event:\ndata: x\n\n", []ev{{"message", "x", ""}}},
	{"the last event line wins", "event: a\nevent: b\ndata: x\n\n", []ev{{"b", "x", ""}}},
	{"the last id line wins", "id: a\nid: b\ndata: x\n\n", []ev{{"message", "x", "b"}}},
	{"an id with U+0000 is ignored", "id: r1\nid: r\x002\ndata: x\n\n", []ev{{"message", "x", "r1"}}},
	{"the last event id carries over", "id: r1\ndata: a\n\ndata: b\n\n", []ev{{"message", "a", "r1"}, {"message", "b", "r1"}}},
	{"an empty id resets it", "id: r1\ndata: a\n\nid\ndata: b\n\n", []ev{{"message", "a", "r1"}, {"message", "b", ""}}},
	{"unknown fields ignored", "x-seq: 3\nflag\nid: r1\nretry: soon\ndata: x\n\n", []ev{{"message", "x", "r1"}}},
	{"comments anywhere", ": a\nid: r1\n: b\ndata: x\n:c\n\n:\n\n", []ev{{"message", "x", "r1"}}},
	{"mixed line endings", "event: start\r\ndata: {}\r\rid: r\ndata: x\r\n\n", []ev{{"start", "{}", ""}, {"message", "x", "r"}}},
	{"an unterminated frame is not dispatched", "data: a\n\ndata: b\n", []ev{{"message", "a", ""}}},
	{"stray blank lines", "\r\n\r\n\ndata: x\n\n\n\n", []ev{{"message", "x", ""}}},
}

func TestGrammar(t *testing.T) {
	for _, tt := range grammarTests {
		t.Run(tt.name, func(t *testing.T) {
			if got := dispatched(tt.stream); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestGrammarByteByByte: the same events when the stream arrives a byte at a
// time (a byte order mark and a CRLF split included).
func TestGrammarByteByByte(t *testing.T) {
	for _, tt := range grammarTests {
		t.Run(tt.name, func(t *testing.T) {
			var frames []Frame
			emit := func(f Frame) { frames = append(frames, f) }
			var p Parser
			for i := 0; i < len(tt.stream); i++ {
				p.Feed([]byte{tt.stream[i]}, emit)
			}
			p.Close(emit)
			var got []ev
			for _, e := range Events(frames) {
				got = append(got, ev{e.Type, e.Data, e.LastEventID})
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestAgreesWithGoSSE compares Events with go-sse, a conforming client, on
// the grammar's cases where go-sse follows the standard: it also yields a
// frame that sets only an id or an event type, and a frame cut by the end of
// the stream, which the standard does not dispatch; those cases are left out.
func TestAgreesWithGoSSE(t *testing.T) {
	goSSEDiffers := map[string]bool{
		"no data: nothing dispatched":             true,
		"an unterminated frame is not dispatched": true,
	}
	for _, tt := range grammarTests {
		if goSSEDiffers[tt.name] {
			continue
		}
		t.Run(tt.name, func(t *testing.T) {
			var theirs []ev
			for e, err := range sse.Read(bytes.NewReader([]byte(tt.stream)), nil) {
				if err != nil {
					t.Fatal(err)
				}
				typ := e.Type
				if typ == "" {
					typ = DefaultType
				}
				theirs = append(theirs, ev{typ, e.Data, e.LastEventID})
			}
			if got := dispatched(tt.stream); !reflect.DeepEqual(got, theirs) {
				t.Fatalf("sseframe %q, go-sse %q", got, theirs)
			}
		})
	}
}

// TestOffsetsAfterAByteOrderMark: frame ends count the mark's bytes, so
// they still index the stream as it arrived.
func TestOffsetsAfterAByteOrderMark(t *testing.T) {
	frames, _ := ReadAll([]byte("\xEF\xBB\xBFdata: x\n\n"))
	if len(frames) != 1 || frames[0].End != 12 {
		t.Fatalf("frames %+v", frames)
	}
	var p Parser
	p.Feed([]byte("\xEF\xBB"), func(Frame) {})
	if p.Offset() != 2 {
		t.Fatalf("offset %d while the mark is incomplete", p.Offset())
	}
	var got []Frame
	p.Feed([]byte("x"), func(f Frame) { got = append(got, f) })
	p.Close(func(f Frame) { got = append(got, f) })
	if len(got) != 1 || got[0].Lines[0].Raw != "\xEF\xBBx" {
		t.Fatalf("a broken mark is data: %+v", got)
	}
}
