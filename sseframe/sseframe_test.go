package sseframe

import (
	"reflect"
	"strings"
	"testing"
)

// render shows frames as String does, "|" marking one not terminated.
func render(frames []Frame) []string {
	var got []string
	for _, f := range frames {
		s := f.String()
		if !f.Terminated {
			s = "|" + s
		}
		got = append(got, s)
	}
	return got
}

var readTests = []struct {
	name   string
	stream string
	want   []string // frames rendered by String, "|" marks an unterminated frame
}{
	{"lf", "event: start\ndata: {}\n\nid: r1\ndata: {\"a\":1}\n\n", []string{"event: start\ndata: {}\n", "id: r1\ndata: {\"a\":1}\n"}},
	{"crlf", "event: start\r\ndata: {}\r\n\r\n", []string{"event: start\ndata: {}\n"}},
	{"cr", "event: start\rdata: {}\r\r", []string{"event: start\ndata: {}\n"}},
	{"comment frame", ": ping\n\nevent: close\ndata: {}\n\n", []string{": ping\n", "event: close\ndata: {}\n"}},
	{"lone comment line", ": ping\nid: r1\ndata: {}\n\n", []string{": ping\n", "id: r1\ndata: {}\n"}},
	{"comment inside a frame", "id: r1\n: note\ndata: {}\n\n", []string{": note\n", "id: r1\ndata: {}\n"}},
	{"only comments", ":a\n:b\r\n: ping", []string{":a\n", ":b\n", "|: ping\n"}},
	{"unterminated", "event: start\ndata: {}", []string{"|event: start\ndata: {}\n"}},
	{"cut after a line", "id: r1\ndata: {}\n", []string{"|id: r1\ndata: {}\n"}},
	{"stray blank lines", "\n\nevent: close\n\n", []string{"event: close\n"}},
	{"empty", "", nil},
}

func TestReadAll(t *testing.T) {
	for _, tt := range readTests {
		t.Run(tt.name, func(t *testing.T) {
			frames, err := ReadAll([]byte(tt.stream))
			if err != nil {
				t.Fatal(err)
			}
			if got := render(frames); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestFeedByteByByte: a stream fed one byte at a time (a CR and its LF in
// separate reads included) gives the same frames as when fed whole.
func TestFeedByteByByte(t *testing.T) {
	for _, tt := range readTests {
		t.Run(tt.name, func(t *testing.T) {
			var frames []Frame
			emit := func(f Frame) { frames = append(frames, f) }
			var p Parser
			for i := 0; i < len(tt.stream); i++ {
				p.Feed([]byte{tt.stream[i]}, emit)
			}
			p.Close(emit)
			if got := render(frames); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestReader(t *testing.T) {
	r := NewReader(strings.NewReader("event: start\ndata: {}\n\n: ping\nid: r\ndata: x"))
	var frames []Frame
	for {
		f, err := r.Next()
		if err != nil {
			break
		}
		frames = append(frames, f)
	}
	want := []string{"event: start\ndata: {}\n", ": ping\n", "|id: r\ndata: x\n"}
	if got := render(frames); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestFieldsAndOffsets(t *testing.T) {
	frames, err := ReadAll([]byte("id: r1\ndata:x\nflag\n\n: ping\n\n: ping\nid: r2\n\n"))
	if err != nil {
		t.Fatal(err)
	}
	f := frames[0]
	if v, _ := f.Field("id"); v != "r1" {
		t.Errorf("id = %q", v)
	}
	if v, _ := f.Field("data"); v != "x" {
		t.Errorf("data = %q (no space after the colon)", v)
	}
	if !reflect.DeepEqual(f.Fields(), []string{"id", "data", "flag"}) {
		t.Errorf("fields = %v", f.Fields())
	}
	// A comment ends with its own line, not with the blank line or the
	// frame that follows it.
	var ends []int
	for _, f := range frames {
		ends = append(ends, f.End)
	}
	if want := []int{20, 27, 35, 43}; !reflect.DeepEqual(ends, want) {
		t.Errorf("ends = %v, want %v", ends, want)
	}
	if !frames[1].IsComment() || f.IsComment() {
		t.Error("comment detection")
	}
	if v := frames[1].Lines[0].Value; v != "ping" {
		t.Errorf("comment value = %q", v)
	}
}
