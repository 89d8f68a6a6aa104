package checks

import (
	"encoding/json"
	"testing"
)

// TestJoinContent: the answer is the events' content joined, whatever the
// split: inside a word, inside a UTF-8 sequence, between the halves of an
// escaped surrogate pair; null and missing content count as empty.
func TestJoinContent(t *testing.T) {
	raw := func(ss ...string) []json.RawMessage {
		out := make([]json.RawMessage, len(ss))
		for i, s := range ss {
			out[i] = json.RawMessage(s)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		raws []json.RawMessage
		want string
	}{
		{"one event", raw(`"Hello, world"`), "Hello, world"},
		{"inside a word", raw(`"Hel"`, `"lo, w"`, `"orld"`), "Hello, world"},
		{"a UTF-8 sequence split", raw("\"gr\xc3\"", "\"\xbc\xc3\x9fe\""), "grüße"},
		{"a four-byte sequence split thrice", raw("\"\xf0\"", "\"\x9f\"", "\"\x98\x80!\""), "😀!"},
		{"an escaped surrogate pair split", raw(`"smile \ud83d"`, `"\ude00"`), "smile 😀"},
		{"escapes kept whole", raw(`"a\"b\\"`, `"\nc"`), "a\"b\\\nc"},
		{"null and missing", raw(`"a"`, `null`, ``, `"b"`), "ab"},
		{"a lone high surrogate at the end", raw(`"x\ud83d"`), "x\ufffd"},
		{"an escaped backslash before u", raw(`"\\ud83d"`, `"y"`), `\ud83dy`},
	} {
		if got := joinContent(tc.raws); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestAnswerPieces: each event's piece of the answer ends where its text
// does, a character split across events in the piece that completed it.
func TestAnswerPieces(t *testing.T) {
	ev := func(content string) string { return "id: r\ndata: {\"content\":" + content + "}\n\n" }
	v := ex{req: hdr("Accept", "text/event-stream"), resp: hdr("Content-Type", "text/event-stream"),
		chunks: []at{{1, "event: start\ndata: {}\n\n"}, {10, ev(`"ab\ud83d"`)}, {20, ev(`"\ude00c"`)}, {30, "event: close\ndata: {}\n\n"}}}.build()
	text, pieces, ok := v.Answer()
	if !ok || text != "ab😀c" {
		t.Fatalf("answer %q %v", text, ok)
	}
	if at, ok := ArrivalOf(pieces, len("ab")); !ok || at.Milliseconds() != 10 {
		t.Errorf("ab arrived at %v", at)
	}
	if at, ok := ArrivalOf(pieces, len("ab😀")); !ok || at.Milliseconds() != 20 {
		t.Errorf("the emoji arrived at %v, want 20ms: the event that completed it", at)
	}
}
