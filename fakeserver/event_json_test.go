package fakeserver

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// TestEventJSONIsMarshal: appendEventJSON writes every kind of event
// exactly as json.Marshal does.
func TestEventJSONIsMarshal(t *testing.T) {
	at := stamp(time.Date(2026, 1, 2, 3, 4, 5, 600, time.UTC))
	tests := []struct {
		name string
		ev   Event
	}{
		{"empty", Event{}},
		{"content", Event{Content: "Hello, agent", ContentID: "cnt_1", RunID: "run_1", ThreadID: "thr_1", Time: at}},
		{"escapes", Event{Content: "a\"b\\c\n\t<tag>&\u2028\x00\x7f é 😀 \xff", RunID: "run_1", Time: at}},
		{"final", Event{RunComplete: true, RunID: "run_1", ThreadID: "thr_1", Time: at}},
		{"error", Event{Error: "run cancelled", Time: at}},
		{"whole second", Event{Time: stamp(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))}},
		{"waiting", Event{WaitingOnModel: true, Time: at}},
		{"step", Event{Step: &Step{Description: "Searching <web>"}, Time: at}},
		{"prompt", Event{Prompt: &Prompt{Fields: []string{"user", "pass\"word"}, Message: "Log in", Sensitive: true}}},
		{"prompt without fields", Event{Prompt: &Prompt{Message: "m"}}},
		{"prompt with no fields", Event{Prompt: &Prompt{Fields: []string{}}}},
		{"input and username", Event{Input: "{\"prompt\": 1}", Username: "alice", Time: at}},
		{"replay", Event{ReplayComplete: true, RunID: "r", ThreadID: "t"}},
		{"notice", Event{Notice: "tool x removed"}},
		{"tool input", Event{ToolInput: &ToolInput{Name: "t", Input: json.RawMessage(`{ "a" : "<b>" }`)}}},
		{"tool call", Event{ToolCall: &ToolCall{Name: "t", Arguments: json.RawMessage(`[1, 2]`)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want, err := json.Marshal(tt.ev)
			if err != nil {
				t.Fatal(err)
			}
			if got := appendEventJSON([]byte("x"), &tt.ev); !bytes.Equal(got, append([]byte("x"), want...)) {
				t.Errorf("got  %s\nwant x%s", got, want)
			}
		})
	}
}

// FuzzEventJSON: for any text in any string member, appendEventJSON is
// json.Marshal.
func FuzzEventJSON(f *testing.F) {
	f.Add("Hello", "run_1", "\u2028<&>", "\xff\xfe", false, int64(1764234307123456789))
	f.Add("", "", "", "", true, int64(0))
	f.Fuzz(func(t *testing.T, content, id, text, other string, flag bool, nanos int64) {
		evs := []Event{
			{Content: content, ContentID: id, RunID: id, ThreadID: other, RunComplete: flag, Error: text, Time: stamp(time.Unix(0, nanos).UTC()),
				Input: other, Username: text, Notice: content, WaitingOnModel: flag, ReplayComplete: !flag},
			{Step: &Step{Description: text}},
			{Prompt: &Prompt{Fields: []string{content, other}, Message: text, Sensitive: flag}},
		}
		for _, ev := range evs {
			want, _ := json.Marshal(ev)
			if got := appendEventJSON(nil, &ev); !bytes.Equal(got, want) {
				t.Fatalf("got  %s\nwant %s", got, want)
			}
		}
	})
}
