package profile

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestEnvName(t *testing.T) {
	for _, tc := range []struct{ path, want string }{
		{"baseURL", "INVOKECONF_BASE_URL"},
		{"keys.agent", "INVOKECONF_KEYS_AGENT"},
		{"keys.wildcardLimited", "INVOKECONF_KEYS_WILDCARD_LIMITED"},
		{"keys.apiDisabled", "INVOKECONF_KEYS_API_DISABLED"},
		{"agents.main.id", "INVOKECONF_AGENTS_MAIN_ID"},
		{"agents.main.credentialTools", "INVOKECONF_AGENTS_MAIN_CREDENTIAL_TOOLS"},
		{"nonAgentID", "INVOKECONF_NON_AGENT_ID"},
		{"capabilities.researchMode", "INVOKECONF_CAPABILITIES_RESEARCH_MODE"},
		{"routes.bundleInstall", "INVOKECONF_ROUTES_BUNDLE_INSTALL"},
		{"a.oauth2Token", "INVOKECONF_A_OAUTH2_TOKEN"},
	} {
		if got := EnvName(tc.path); got != tc.want {
			t.Errorf("EnvName(%q) = %q, want %q", tc.path, got, tc.want)
		}
	}
}

// TestEveryFieldHasOneVariable: the reflection walk reaches every leaf of
// Profile, each variable name is unique, and every kind can be set.
func TestEveryFieldHasOneVariable(t *testing.T) {
	fields := (&Profile{}).Fields()
	if len(fields) < 20 {
		t.Fatalf("only %d fields found", len(fields))
	}
	seen := map[string]string{}
	for _, f := range fields {
		if other, dup := seen[f.Env]; dup {
			t.Errorf("%s and %s share the variable %s", f.Path, other, f.Env)
		}
		seen[f.Env] = f.Path
		switch f.Kind {
		case "string", "bool", "int", "list", "map":
		default:
			t.Errorf("%s: kind %s cannot be set from the environment", f.Path, f.Kind)
		}
		if f.Secret != strings.HasPrefix(f.Path, "keys.") {
			t.Errorf("%s: secret is %v", f.Path, f.Secret)
		}
	}
	for _, path := range []string{"baseURL", "keys.agent", "agents.main.tools", "agents.main.credentialTools", "projects.main.id", "nonAgentID", "capabilities.researchMode", "routes"} {
		if _, ok := seen[EnvName(path)]; !ok {
			t.Errorf("no variable for %s", path)
		}
	}
}

func TestApplyEnv(t *testing.T) {
	p, err := Parse([]byte("baseURL: http://file\nkeys:\n  agent: sk-svc-a-b-file\n  alias: sk-svc-a-c-keep\n"))
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{
		"INVOKECONF_BASE_URL":                     "http://env:8080",
		"INVOKECONF_KEYS_AGENT":                   "sk-svc-a-b-env",
		"INVOKECONF_AGENTS_MAIN_TOOLS":            " calculator, search-web ,,notes",
		"INVOKECONF_AGENTS_MAIN_CREDENTIAL_TOOLS": "search-web=search, mail=smtp",
		"INVOKECONF_CAPABILITIES_RESEARCH_MODE":   "true",
		"INVOKECONF_ROUTES":                       "install=/x/install",
		"INVOKECONF_NON_AGENT_ID":                 "",
	}
	used, err := p.ApplyEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	if len(used) != len(env) {
		t.Errorf("used %v, want all %d variables", used, len(env))
	}
	want := &Profile{
		BaseURL: "http://env:8080",
		Keys:    Keys{Agent: "sk-svc-a-b-env", Alias: "sk-svc-a-c-keep"},
		Agents: Agents{Main: Agent{Tools: []string{"calculator", "search-web", "notes"},
			CredentialTools: map[string]string{"search-web": "search", "mail": "smtp"}}},
		Capabilities: Capabilities{ResearchMode: true},
		Routes:       map[string]string{"install": "/x/install"},
	}
	want.DeclareCapability("researchMode")
	if !reflect.DeepEqual(p, want) {
		t.Errorf("after ApplyEnv:\n got %+v\nwant %+v", p, want)
	}

	for name, bad := range map[string]string{
		"INVOKECONF_CAPABILITIES_RESEARCH_MODE": "maybe",
		"INVOKECONF_ROUTES":                     "install",
	} {
		_, err := (&Profile{}).ApplyEnv(func(k string) (string, bool) { return bad, k == name })
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s=%q: error %v, want one naming the variable", name, bad, err)
		}
	}
}

func TestUnknownFieldsAreAllReportedWithSuggestions(t *testing.T) {
	doc := "baseURL: http://x\nkeys:\n  agent: k\n  wildcardlimited: k2\n  agnet: k3\nagents:\n  main:\n    id: a\n    alais: h\nprojects: {main: {id: p}}\nroutes: {anything: /goes}\nfrobnicate: 1\n"
	_, err := Parse([]byte(doc))
	var ue *UnknownFieldsError
	if !errors.As(err, &ue) {
		t.Fatalf("Parse: %v, want an UnknownFieldsError", err)
	}
	want := []UnknownField{
		{Path: "keys.wildcardlimited", Line: 4, Suggest: "keys.wildcardLimited"},
		{Path: "keys.agnet", Line: 5, Suggest: "keys.agent"},
		{Path: "agents.main.alais", Line: 9, Suggest: "agents.main.alias"},
		{Path: "frobnicate", Line: 12},
	}
	if !reflect.DeepEqual(ue.Fields, want) {
		t.Errorf("unknown fields:\n got %+v\nwant %+v", ue.Fields, want)
	}
	if !strings.Contains(err.Error(), "did you mean keys.wildcardLimited?") {
		t.Errorf("message lacks the suggestion: %v", err)
	}
}

func TestRedactEnv(t *testing.T) {
	p := &Profile{Keys: Keys{Agent: "sk-svc-alice-k1-secret", Wildcard: "sk-svc-alice-k1-secretmore"}}
	got := p.RedactEnv("Bearer sk-svc-alice-k1-secretmore and sk-svc-alice-k1-secret.")
	want := "Bearer $INVOKECONF_KEYS_WILDCARD and $INVOKECONF_KEYS_AGENT."
	if got != want {
		t.Errorf("RedactEnv = %q, want %q", got, want)
	}
}

func TestCapability(t *testing.T) {
	p := &Profile{Capabilities: Capabilities{ResearchMode: true}}
	if on, known := p.Capability("researchMode"); !on || !known {
		t.Errorf("researchMode: on %v known %v", on, known)
	}
	if _, known := p.Capability("teleport"); known {
		t.Error("an unknown capability is known")
	}
	if names := CapabilityNames(); !strings.Contains(","+strings.Join(names, ",")+",", ",researchMode,") {
		t.Errorf("CapabilityNames = %v, want researchMode among them", names)
	}
}

// TestBlank: every field blanks to its zero value, through to the profile.
func TestBlank(t *testing.T) {
	p, err := Parse([]byte("baseURL: http://x\nkeys:\n  agent: sk-svc-a-b-c\nagents:\n  main:\n    tools: [a]\n    credentialTools: {a: b}\ncapabilities:\n  researchMode: true\n  script: [say]\nroutes:\n  x: GET /x\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range p.Fields() {
		f.Blank()
		if !f.IsZero() || f.Value() != "" && f.Value() != "false" && f.Value() != "0" {
			t.Errorf("%s: %q after Blank", f.Path, f.Value())
		}
	}
	p.declared = nil // which capabilities the file named is not a field
	if !reflect.DeepEqual(p, &Profile{}) {
		t.Errorf("after blanking every field: %+v", p)
	}
}
