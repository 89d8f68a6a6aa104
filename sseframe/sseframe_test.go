package sseframe

import (
	"reflect"
	"testing"
)

func TestReadAll(t *testing.T) {
	tests := []struct {
		name   string
		stream string
		want   []string // frames rendered by String, "|" marks an unterminated frame
	}{
		{"lf", "event: start\ndata: {}\n\nid: r1\ndata: {\"a\":1}\n\n", []string{"event: start\ndata: {}\n", "id: r1\ndata: {\"a\":1}\n"}},
		{"crlf", "event: start\r\ndata: {}\r\n\r\n", []string{"event: start\ndata: {}\n"}},
		{"cr", "event: start\rdata: {}\r\r", []string{"event: start\ndata: {}\n"}},
		{"comment frame", ": ping\n\nevent: close\ndata: {}\n\n", []string{": ping\n", "event: close\ndata: {}\n"}},
		{"unterminated", "event: start\ndata: {}", []string{"|event: start\ndata: {}\n"}},
		{"stray blank lines", "\n\nevent: close\n\n", []string{"event: close\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			frames, err := ReadAll([]byte(tt.stream))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range frames {
				s := f.String()
				if !f.Terminated {
					s = "|" + s
				}
				got = append(got, s)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestFieldsAndOffsets(t *testing.T) {
	frames, err := ReadAll([]byte("id: r1\ndata:x\nflag\n\n: ping\n\n"))
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
	if f.End != 20 || frames[1].End != 28 {
		t.Errorf("ends = %d, %d", f.End, frames[1].End)
	}
	if !frames[1].IsComment() || f.IsComment() {
		t.Error("comment detection")
	}
	if v := frames[1].Lines[0].Value; v != "ping" {
		t.Errorf("comment value = %q", v)
	}
}
