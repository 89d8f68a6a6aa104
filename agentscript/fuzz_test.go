package agentscript

import (
	"testing"
	"time"
)

// FuzzParse: any prompt parses or is refused with an error, never a panic; an
// echo script says the prompt byte for byte; a script holds known directives
// only and pauses within the bounds.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{"hello", "@say hi\n@pause 800ms\n@say \" x\\n\"", "@tool search-web {\"q\":\"go\"}\r\n@tools\n@model",
		"@ask sensitive fields=user, Log in", "@pause 10m\n@pause 1ns", "@fail boom", "@say \"unterminated"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, prompt string) {
		s, err := Parse(prompt)
		if err != nil {
			return
		}
		if s.Echo != !IsScript(prompt) {
			t.Fatalf("Echo = %v, IsScript = %v", s.Echo, IsScript(prompt))
		}
		if s.Echo {
			if len(s.Directives) != 1 || s.Directives[0].Text != prompt {
				t.Fatalf("echo script %+v does not say the prompt", s.Directives)
			}
			return
		}
		var paused time.Duration
		for _, d := range s.Directives {
			if !kinds[d.Kind] {
				t.Fatalf("unknown directive %q", d.Kind)
			}
			if d.Duration < 0 || d.Duration > MaxPause {
				t.Fatalf("pause %s outside 0..%s", d.Duration, MaxPause)
			}
			paused += d.Duration
		}
		if paused > MaxScriptPause {
			t.Fatalf("pauses add up to %s, more than %s", paused, MaxScriptPause)
		}
	})
}
