package profile

import (
	"errors"
	"strings"
	"testing"
)

func TestParseRejectsUnknownFields(t *testing.T) {
	_, err := Parse([]byte("baseURL: http://x\nkeys:\n  agnet: sk-svc-a-b-c\n"))
	if err == nil || !strings.Contains(err.Error(), "agnet") {
		t.Fatalf("a misspelt role should be named in the error, got %v", err)
	}
}

func TestValidate(t *testing.T) {
	for _, tt := range []struct {
		url string
		ok  bool
	}{
		{"http://127.0.0.1:8080", true},
		{"https://svc.example", true},
		{"", false},
		{"127.0.0.1:8080", false},
		{"ftp://host", false},
		{"http://", false},
	} {
		err := (&Profile{BaseURL: tt.url}).Validate()
		if (err == nil) != tt.ok {
			t.Errorf("Validate(%q) = %v, want ok=%v", tt.url, err, tt.ok)
		}
	}
}

func TestKeyAndAgentRoles(t *testing.T) {
	p := &Profile{Keys: Keys{Agent: "sk-svc-alice-k1-secret"}, Agents: Agents{Main: Agent{ID: "a1"}}}
	if k, err := p.Key("agent"); err != nil || k != "sk-svc-alice-k1-secret" {
		t.Fatalf("Key(agent) = %q, %v", k, err)
	}
	var missing *MissingError
	if _, err := p.Key("expired"); !errors.As(err, &missing) || missing.What != "keys.expired" {
		t.Fatalf("Key(expired) = %v, want a MissingError naming keys.expired", err)
	}
	if _, err := p.Key("nope"); err == nil || errors.As(err, &missing) {
		t.Fatalf("Key(nope) = %v, want an unknown-role error", err)
	}
	if _, err := p.Agent("other"); !errors.As(err, &missing) {
		t.Fatalf("Agent(other) = %v, want a MissingError", err)
	}
}

func TestRedact(t *testing.T) {
	p := &Profile{Keys: Keys{Agent: "sk-svc-alice-k1-topsecret", Alias: "sk-svc-alice-k2-othersecret"}}
	got := p.Redact("Authorization: Bearer sk-svc-alice-k1-topsecret and sk-svc-alice-k2-othersecret")
	if strings.Contains(got, "topsecret") || strings.Contains(got, "othersecret") {
		t.Fatalf("secret left in %q", got)
	}
	if !strings.Contains(got, "sk-svc-alice-k1-REDACTED") {
		t.Fatalf("the key's public part should stay readable: %q", got)
	}
	if RedactKey("plain") != "REDACTED" {
		t.Fatal("a token that is not an sk-svc key is redacted whole")
	}
}

func TestCloneIsDeep(t *testing.T) {
	p := &Profile{BaseURL: "http://a", Agents: Agents{Main: Agent{ID: "x", Tools: []string{"t"}}}}
	c := p.Clone()
	c.BaseURL = "http://b"
	c.Agents.Main.Tools[0] = "changed"
	if p.BaseURL != "http://a" || p.Agents.Main.Tools[0] != "t" {
		t.Fatal("Clone shares state with the original")
	}
}
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
	if len(ScriptCapabilities()) != 11 { // echo and the ten directives
		t.Fatalf("ScriptCapabilities() = %v", ScriptCapabilities())
	}
}
