package profile

import (
	"strings"
	"testing"
)

func TestValidateCapabilities(t *testing.T) {
	tests := []struct {
		yaml string
		err  string
	}{
		{"baseURL: http://127.0.0.1:8080\ncapabilities: {script: [echo, say, tool]}", ""},
		{"baseURL: http://127.0.0.1:8080\ncapabilities: {script: []}", ""},
		{"baseURL: http://127.0.0.1:8080\ncapabilities: {script: [echo, steps]}", `unknown "steps"`},
		{"baseURL: http://127.0.0.1:8080\ncapabilities: {scriptedAgent: true}", "scriptedAgent"},
	}
	for _, tt := range tests {
		p, err := Parse([]byte(tt.yaml))
		if err == nil {
			err = p.Validate()
		}
		switch {
		case tt.err == "" && err != nil:
			t.Errorf("%q: %v", tt.yaml, err)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("%q: error %v, want one mentioning %s", tt.yaml, err, tt.err)
		}
	}
}

func TestCanScript(t *testing.T) {
	c := Capabilities{Script: []string{"echo", "say"}}
	if !c.CanScript("say") || c.CanScript("step") {
		t.Fatalf("CanScript on %v", c.Script)
	}
	if len(ScriptCapabilities()) != 10 {
		t.Fatalf("ScriptCapabilities() = %v", ScriptCapabilities())
	}
}
