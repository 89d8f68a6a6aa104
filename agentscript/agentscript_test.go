package agentscript

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name   string
		prompt string
		want   []Directive
		echo   bool
	}{
		{"plain text echoes", "hello", []Directive{{Kind: Say, Line: 1, Text: "hello"}}, true},
		{"json echoes verbatim", `{"messages":[]}`, []Directive{{Kind: Say, Line: 1, Text: `{"messages":[]}`}}, true},
		{"unknown at-word echoes", "@alice hi", []Directive{{Kind: Say, Line: 1, Text: "@alice hi"}}, true},
		{"whitespace kept on echo", "  a\n b \n", []Directive{{Kind: Say, Line: 1, Text: "  a\n b \n"}}, true},
		{"say and pause", "@say hi there\n\n# comment\n@pause 800ms\n@say \" x\\n\"", []Directive{
			{Kind: Say, Line: 1, Text: "hi there"},
			{Kind: Pause, Line: 4, Duration: 800 * time.Millisecond},
			{Kind: Say, Line: 5, Text: " x\n"},
		}, false},
		{"tool with args", "@tool search-web {\"q\":\"go\"}\r\n@tools\n@model", []Directive{
			{Kind: Tool, Line: 1, Name: "search-web", Args: json.RawMessage(`{"q":"go"}`)},
			{Kind: Tools, Line: 2},
			{Kind: Model, Line: 3},
		}, false},
		{"ask", "@ask sensitive fields=user, Log in to GitHub", []Directive{
			{Kind: Ask, Line: 1, Sensitive: true, Fields: []string{"user"}, Text: "Log in to GitHub"},
		}, false},
		{"ask fields", "@ask fields=user,token Log in", []Directive{
			{Kind: Ask, Line: 1, Fields: []string{"user", "token"}, Text: "Log in"},
		}, false},
		{"others", "@waiting\n@toolinput calc\n@step Planning\n@fail boom", []Directive{
			{Kind: Waiting, Line: 1},
			{Kind: ToolInput, Line: 2, Name: "calc", Args: json.RawMessage("{}")},
			{Kind: Step, Line: 3, Text: "Planning"},
			{Kind: Fail, Line: 4, Text: "boom"},
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse(tt.prompt)
			if err != nil {
				t.Fatal(err)
			}
			if s.Echo != tt.echo || !reflect.DeepEqual(s.Directives, tt.want) {
				t.Fatalf("Parse(%q) = %+v, want echo=%v %+v", tt.prompt, s, tt.echo, tt.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	for _, prompt := range []string{
		"@say hi\n@dance",
		"@pause soon",
		"@pause 11m",
		"@tool",
		"@tool x {bad",
		"@tools now",
		"@model gpt",
		"@ask sensitive",
		"@say \"unterminated",
	} {
		if _, err := Parse(prompt); err == nil {
			t.Errorf("Parse(%q) succeeded, want an error", prompt)
		}
	}
}

func TestToolsRoundTrip(t *testing.T) {
	got, ok := ParseTools("before\n" + FormatTools([]string{"b", "a"}) + "\nafter")
	if !ok || !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Fatalf("ParseTools = %v %v", got, ok)
	}
	got, ok = ParseTools(FormatTools(nil))
	if !ok || len(got) != 0 {
		t.Fatalf("empty list: %v %v", got, ok)
	}
	if _, ok := ParseTools("no list here"); ok {
		t.Fatal("found a list in plain text")
	}
}

func TestModelRoundTrip(t *testing.T) {
	tests := []struct {
		answer string
		want   string
		ok     bool
	}{
		{FormatModel("scripted-project-model"), "scripted-project-model", true},
		{"tools:a\n" + FormatModel("m1") + "\nbye", "m1", true},
		{"no model here", "", false},
	}
	for _, tt := range tests {
		got, ok := ParseModel(tt.answer)
		if got != tt.want || ok != tt.ok {
			t.Errorf("ParseModel(%q) = %q %v, want %q %v", tt.answer, got, ok, tt.want, tt.ok)
		}
	}
}

func TestKindsAreKnown(t *testing.T) {
	if len(Kinds()) != len(kinds) {
		t.Fatalf("Kinds() lists %d directives, the parser knows %d", len(Kinds()), len(kinds))
	}
	for _, k := range Kinds() {
		if !kinds[k] {
			t.Errorf("Kinds() lists %q, which the parser does not know", k)
		}
	}
}

// TestScriptPauseBound: the pauses of a script add up to at most
// MaxScriptPause, however they are split.
func TestScriptPauseBound(t *testing.T) {
	tests := []struct {
		name   string
		prompt string
		ok     bool
	}{
		{"sixty 10 s pauses: exactly the bound", strings.Repeat("@pause 10s\n", 60), true},
		{"sixty-one 10 s pauses", strings.Repeat("@pause 10s\n", 61), false},
		{"two pauses at the per-line bound", "@pause 10m\n@say hi\n@pause 10m", false},
		{"a thousand short pauses past the bound", strings.Repeat("@pause 601ms\n", 1000), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(tt.prompt)
			if (err == nil) != tt.ok {
				t.Fatalf("Parse error = %v, want ok=%v", err, tt.ok)
			}
			if err != nil && !strings.Contains(err.Error(), "add up to more than 10m0s") {
				t.Fatalf("error %q does not name the bound", err)
			}
		})
	}
}

// TestPauses: a script's pauses add up to the least a run of it lasts.
func TestPauses(t *testing.T) {
	for _, tc := range []struct {
		prompt string
		want   time.Duration
	}{
		{"@say hi", 0},
		{"@pause 1500ms\n@say done", 1500 * time.Millisecond},
		{"@say a\n@pause 1s\n@say b\n@pause 250ms", 1250 * time.Millisecond},
		{"no directive at all", 0},
	} {
		s, err := Parse(tc.prompt)
		if err != nil {
			t.Fatalf("%q: %v", tc.prompt, err)
		}
		if got := s.Pauses(); got != tc.want {
			t.Errorf("%q: Pauses() = %s, want %s", tc.prompt, got, tc.want)
		}
	}
}
