// Package profile reads a target profile: the YAML file that tells the harness
// where the service under test is and which keys, agents and projects a vendor
// provisioned for it. The spec does not show how those are created, so the
// profile names them by role ("a key scoped to exactly the main agent") and the
// scenarios ask for roles, never for literal strings.
//
// The reference server seeds itself from the same format, so the fixtures file
// fixtures/reference.yaml is a complete worked example.
package profile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/invokeconf/invokeconf/agentscript"
)

// Profile describes one target.
type Profile struct {
	// BaseURL is the service's {base_url}, e.g. http://127.0.0.1:8080.
	BaseURL string `yaml:"baseURL"`
	// Product and ProductVersion name the implementation under test
	// ("Acme Agents", "2.3.1"), for the reports; both are optional.
	Product        string `yaml:"product,omitempty"`
	ProductVersion string `yaml:"productVersion,omitempty"`
	// Keys are Bearer tokens by role.
	Keys Keys `yaml:"keys"`
	// Agents are the provisioned agents by role.
	Agents Agents `yaml:"agents"`
	// Projects are the provisioned projects by role.
	Projects Projects `yaml:"projects"`
	// Threads are provisioned threads by role: a key scoped to a thread ID
	// needs a thread that exists before the key is issued.
	Threads Threads `yaml:"threads,omitempty"`
	// NonAgentID is an ID that exists on the target but resolves to no agent
	// (the spec's 400 case), for example a project or knowledge-set ID.
	NonAgentID string `yaml:"nonAgentID"`
	// Capabilities say what the target can be made to show.
	Capabilities Capabilities `yaml:"capabilities"`
	// Routes are extension routes for what the spec leaves out, by name
	// (see the Route* constants), each "METHOD /path" with {id} where an
	// installation ID goes.
	Routes map[string]string `yaml:"routes,omitempty"`
	// Bundles describes what the bundle scenarios need beyond routes.
	Bundles Bundles `yaml:"bundles,omitempty"`

	// declared holds the capabilities the file or the environment set,
	// true or false: a capability declared false and one left out mean
	// different things (see CapabilityDeclared).
	declared map[string]bool
}

// CapabilityDeclared reports whether the profile's file or environment
// declares a capability (by its YAML name under capabilities), true or false.
// A capability declared false makes its scenarios not applicable; one left
// out leaves them untested.
func (p *Profile) CapabilityDeclared(name string) bool { return p.declared[name] }

// DeclareCapability records that a capability is declared, as a profile
// file that names it does.
func (p *Profile) DeclareCapability(name string) {
	if p.declared == nil {
		p.declared = map[string]bool{}
	}
	p.declared[name] = true
}

// Keys holds a Bearer token per role. The comment on each field is the scope
// set the role stands for; a vendor provisions keys to match.
type Keys struct {
	Agent           string `yaml:"agent"`           // agent:chat:<agents.main.id>, thread:read
	Alias           string `yaml:"alias"`           // agent:chat:<agents.main.alias> only
	Wildcard        string `yaml:"wildcard"`        // agent:chat:*, thread:read; the owner can open every agent
	WildcardLimited string `yaml:"wildcardLimited"` // agent:chat:*; the owner cannot open agents.restricted
	OtherAgent      string `yaml:"otherAgent"`      // agent:chat:<agents.other.id> only
	Expired         string `yaml:"expired"`         // a well-formed key that has expired
	Project         string `yaml:"project"`         // project:chat:<projects.main.id>, project:threads
	APIDisabled     string `yaml:"apiDisabled"`     // optional: agent:chat:* on an instance with API access disabled
	// Credential scopes and run modes. The workspace of the keys
	// agent, credentialSearch and credentialAll holds the 'Research mode'
	// entitlement when capabilities.researchMode is true.
	CredentialSearch string `yaml:"credentialSearch"` // agent:chat:<agents.main.id>, credential:use:search
	CredentialAll    string `yaml:"credentialAll"`    // agent:chat:<agents.main.id>, project:chat:<projects.main.id>, credential:use:*
	NotEntitled      string `yaml:"notEntitled"`      // agent:chat:<agents.main.id>, credential:use:*; its workspace lacks the 'Research mode' entitlement
	// Project bundles.
	Bundles string `yaml:"bundles"` // may export, install, update and uninstall bundles and delete tasks
	// Scopes told apart: each holds exactly one scope, so a service that
	// demands a second one for a route is caught.
	ThreadRead   string `yaml:"threadRead"`   // thread:read only (no chat scope); same owner as keys.agent
	ThreadChat   string `yaml:"threadChat"`   // agent:chat:<threads.main.id> only
	OtherProject string `yaml:"otherProject"` // project:chat:<projects.other.id> only
}

// Roles maps each key role name, as scenarios spell it, to its token.
func (k *Keys) Roles() map[string]*string {
	return map[string]*string{
		"agent":           &k.Agent,
		"alias":           &k.Alias,
		"wildcard":        &k.Wildcard,
		"wildcardLimited": &k.WildcardLimited,
		"otherAgent":      &k.OtherAgent,
		"expired":         &k.Expired,
		"project":         &k.Project,
		"apiDisabled":     &k.APIDisabled,

		// Credential scopes and run modes.
		"credentialSearch": &k.CredentialSearch,
		"credentialAll":    &k.CredentialAll,
		"notEntitled":      &k.NotEntitled,

		// Project bundles.
		"bundles": &k.Bundles,

		// Scopes told apart.
		"threadRead":   &k.ThreadRead,
		"threadChat":   &k.ThreadChat,
		"otherProject": &k.OtherProject,
	}
}

// Agent is one provisioned agent.
type Agent struct {
	ID    string `yaml:"id"`
	Alias string `yaml:"alias,omitempty"`
	// Tools are the names of the tools configured on the agent.
	Tools []string `yaml:"tools,omitempty"`
	// CredentialTools maps a credential-backed tool to the credential it uses.
	CredentialTools map[string]string `yaml:"credentialTools,omitempty"`
	// ServiceTools are tools the service gives every run of the agent
	// without their being configured on it (always-on platform tools).
	// The tool checks leave them out of both sides; list them here, not
	// under Tools.
	ServiceTools []string `yaml:"serviceTools,omitempty"`
}

// Agents holds the agents by role.
type Agents struct {
	Main Agent `yaml:"main"` // the agent most scenarios run
	// Other is a second agent, for scope checks. Its alias and a tool that
	// agents.main lacks (Tools) show which agent a run ran on.
	Other      Agent `yaml:"other"`
	Restricted Agent `yaml:"restricted"` // an agent the wildcardLimited key's owner cannot open
}

// Roles maps each agent role name to its agent.
func (a *Agents) Roles() map[string]*Agent {
	return map[string]*Agent{"main": &a.Main, "other": &a.Other, "restricted": &a.Restricted}
}

// Project is one provisioned project. Its agent is agents.main.
type Project struct {
	ID string `yaml:"id"`
	// Tasks are the project's tasks, named as they appear among the tools of
	// a run inside the project.
	Tasks []string `yaml:"tasks,omitempty"`
	// Credentials are the credentials scoped to the project: a tool of
	// agents.main that uses one of them works only inside the project.
	Credentials []string `yaml:"credentials,omitempty"`
	// Model is the model the project's model settings select, as a run
	// inside the project reports it (agent script: @model). Bare-agent runs
	// of agents.main must not use it.
	Model string `yaml:"model,omitempty"`
}

// Projects holds the projects by role.
type Projects struct {
	Main Project `yaml:"main"`
	// Other is a second project (any agent); only its ID is read, for the
	// key otherProject, which must be refused on the main project's routes.
	Other Project `yaml:"other,omitempty"`
}

// Thread is one provisioned thread.
type Thread struct {
	ID string `yaml:"id"`
}

// Threads holds the provisioned threads by role.
type Threads struct {
	// Main is a thread of agents.main, started by the owner of keys.agent;
	// the key threadChat is scoped to its ID.
	Main Thread `yaml:"main,omitempty"`
}

// Capabilities say what the target can be made to show.
type Capabilities struct {
	// ResearchMode is true when the target offers the run mode research and
	// the workspace of the keys agent, credentialSearch and credentialAll
	// holds the 'Research mode' entitlement.
	ResearchMode bool `yaml:"researchMode"`
	// Bundles is true when the target exports and installs project bundles
	// through the spec's bundle routes and the extension routes of Routes.
	Bundles bool `yaml:"bundles"`
	// BundleTestHooks is true when the target honours the test hooks of a
	// bundle document's children (docs/bundles.md: failInstall,
	// interruptOnce, tripEvalGate).
	BundleTestHooks bool `yaml:"bundleTestHooks"`
	// Script lists what the target's agent can be made to show through the
	// agent script language (docs/vendor-guide.md): "echo" (a prompt without
	// directives is answered verbatim) and each directive it follows (say,
	// pause, waiting, toolinput, tool, tools, model, step, ask, fail). The reference
	// server shows all; a service whose agent runs on `invokeconf model`
	// shows what its model can (steps and prompts only if the service
	// produces them on cue). A scenario that needs one the list lacks is
	// reported untested.
	Script []string `yaml:"script,flow"`
}

// CanScript reports whether the target's agent can be made to show a script
// capability (see Capabilities.Script).
func (c Capabilities) CanScript(name string) bool {
	for _, s := range c.Script {
		if s == name {
			return true
		}
	}
	return false
}

// ScriptCapabilities lists every name Capabilities.Script may hold.
func ScriptCapabilities() []string {
	names := []string{"echo"}
	for _, k := range agentscript.Kinds() {
		names = append(names, string(k))
	}
	return names
}

// Load reads and validates a profile file.
func Load(path string) (*Profile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read profile: %w", err)
	}
	p, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("profile %s: %w", path, err)
	}
	return p, nil
}

// Parse decodes a profile. Unknown fields are an error (an
// *UnknownFieldsError naming every one, with a suggestion): a misspelt role
// would otherwise silently turn scenarios into "untested".
func Parse(b []byte) (*Profile, error) {
	unknown, err := FindUnknownFields(b)
	if err != nil {
		return nil, err
	}
	if len(unknown) > 0 {
		return nil, &UnknownFieldsError{Fields: unknown}
	}
	var p Profile
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&p); err != nil && !errors.Is(err, io.EOF) {
		if strings.Contains(err.Error(), "field scriptedAgent not found") {
			return nil, fmt.Errorf("decode YAML: %w (capabilities.scriptedAgent was replaced by capabilities.script, a list: see docs/vendor-guide.md)", err)
		}
		return nil, fmt.Errorf("decode YAML: %w", nameFields(b, err))
	}
	var doc struct {
		Capabilities map[string]yaml.Node `yaml:"capabilities"`
	}
	if err := yaml.Unmarshal(b, &doc); err == nil {
		for name := range doc.Capabilities {
			p.DeclareCapability(name)
		}
	}
	return &p, nil
}

var typeErrorLine = regexp.MustCompile(`^line (\d+): (cannot unmarshal .*)$`)

// nameFields rewrites the decoder's type errors ("line 3: cannot unmarshal
// !!str `maybe` into bool") to name the field and what it takes.
func nameFields(b []byte, err error) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return err
	}
	var root yaml.Node
	if yaml.Unmarshal(b, &root) != nil {
		return err
	}
	var msgs []string
	for _, e := range te.Errors {
		m := typeErrorLine.FindStringSubmatch(e)
		if m == nil {
			msgs = append(msgs, e)
			continue
		}
		line, _ := strconv.Atoi(m[1])
		field := fieldAtLine(&root, line, "")
		want := m[2][strings.LastIndex(m[2], " into ")+len(" into "):]
		if field == "" {
			msgs = append(msgs, e)
			continue
		}
		msgs = append(msgs, fmt.Sprintf("line %d: %s takes %s (%s)", line, field, kindWord(want), m[2]))
	}
	return errors.New(strings.Join(msgs, "; "))
}

func kindWord(goType string) string {
	switch {
	case goType == "bool":
		return "true or false"
	case strings.HasPrefix(goType, "[]"):
		return "a list, e.g. [a, b]"
	case strings.HasPrefix(goType, "map["):
		return "a mapping of name: value"
	case goType == "string":
		return "a string"
	}
	return "a " + goType
}

// fieldAtLine returns the dotted path of the mapping key whose value sits
// on a line.
func fieldAtLine(n *yaml.Node, line int, prefix string) string {
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		return fieldAtLine(n.Content[0], line, prefix)
	}
	if n.Kind != yaml.MappingNode {
		return ""
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		path := k.Value
		if prefix != "" {
			path = prefix + "." + k.Value
		}
		if v.Line == line && v.Kind != yaml.MappingNode {
			return path
		}
		if f := fieldAtLine(v, line, path); f != "" {
			return f
		}
	}
	return ""
}

// Validate checks what every run needs: a usable base URL, and known
// capability names.
func (p *Profile) Validate() error {
	if p.BaseURL == "" {
		return errors.New("baseURL is empty")
	}
	if !strings.Contains(p.BaseURL, "://") {
		return fmt.Errorf("baseURL %q has no scheme: write http://%s (or https://...), in the profile or in %s",
			p.BaseURL, p.BaseURL, EnvName("baseURL"))
	}
	u, err := url.Parse(p.BaseURL)
	if err != nil {
		return fmt.Errorf("baseURL %q: %w", p.BaseURL, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("baseURL %q: want an absolute http or https URL", p.BaseURL)
	}
	known := ScriptCapabilities()
	for _, c := range p.Capabilities.Script {
		if !slices.Contains(known, c) {
			return fmt.Errorf("capabilities.script: unknown %q (known: %s)", c, strings.Join(known, ", "))
		}
	}
	return nil
}

// Key returns the token for a role, or an error naming the missing role.
func (p *Profile) Key(role string) (string, error) {
	ptr, ok := p.Keys.Roles()[role]
	if !ok {
		return "", fmt.Errorf("unknown key role %q", role)
	}
	if *ptr == "" {
		return "", &MissingError{What: "keys." + role}
	}
	return *ptr, nil
}

// Agent returns the agent for a role.
func (p *Profile) Agent(role string) (Agent, error) {
	ptr, ok := p.Agents.Roles()[role]
	if !ok {
		return Agent{}, fmt.Errorf("unknown agent role %q", role)
	}
	if ptr.ID == "" {
		return Agent{}, &MissingError{What: "agents." + role + ".id"}
	}
	return *ptr, nil
}

// MissingError says that a profile lacks something a scenario needs. Scenarios
// that meet it are reported as untested, never as passed. What is a field's
// path ("keys.threadChat") or says what is missing in words.
type MissingError struct{ What string }

// Error names what is missing, and for a field the variable that sets it:
// the words 'invokeconf profile check' forecasts (runner.Predict).
func (e *MissingError) Error() string {
	s := "the profile does not provide " + e.What
	if env, ok := fieldEnvs()[e.What]; ok {
		s += " (" + env + ")"
	}
	return s
}

// fieldEnvs maps every profile field's path to its variable.
var fieldEnvs = sync.OnceValue(func() map[string]string {
	m := map[string]string{}
	for _, f := range (&Profile{}).Fields() {
		m[f.Path] = f.Env
	}
	return m
})

// Secrets returns every key in the profile (every secret field, see
// Field.Secret), for redaction.
func (p *Profile) Secrets() []string {
	var out []string
	for _, f := range p.Fields() {
		if f.Secret && f.Kind == "string" && f.Value() != "" {
			out = append(out, f.Value())
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// Marshal renders the profile as YAML.
func (p *Profile) Marshal() ([]byte, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(p); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Clone returns a deep copy, so a caller can change the base URL of a shared
// fixture without touching it.
func (p *Profile) Clone() *Profile {
	b, err := p.Marshal()
	if err != nil {
		panic(fmt.Sprintf("profile: marshal for clone: %v", err))
	}
	c, err := Parse(b)
	if err != nil {
		panic(fmt.Sprintf("profile: parse for clone: %v", err))
	}
	return c
}

// RedactKey hides the secret part of a key.
func RedactKey(k string) string {
	if i := strings.LastIndex(k, "-"); i > 0 && strings.HasPrefix(k, "sk-svc-") {
		return k[:i+1] + "REDACTED"
	}
	return "REDACTED"
}
