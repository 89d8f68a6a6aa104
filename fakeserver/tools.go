package fakeserver

import (
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/invokeconf/invokeconf/profile"
)

// Spec: Endpoints, X-SVC-Scoped-Tools and X-SVC-Run-Mode; Authentication 5
// (credential scopes); What the service does 5 (a project's tasks and
// credentials). runTools decides the tools of a run; the agent script's @tools
// directive lists them, which is how all of this is observed from outside.

// Request headers of this area.
const (
	HeaderScopedTools = "X-SVC-Scoped-Tools"
	HeaderRunMode     = "X-SVC-Run-Mode"
)

// ResearchTool is the tool the run mode research adds (MODE-06). Its name is
// the server's choice: the spec does not name it.
const ResearchTool = "deep-research"

// ServiceTool is the always-on platform tool of the variant service-tool.
const ServiceTool = "platform-help"

// runMode is a mode X-SVC-Run-Mode can switch on (spec: the X-SVC-Run-Mode
// table). The server decides which tools a mode brings (MODE-02).
type runMode struct {
	// entitled reports whether the key owner's workspace holds the mode's
	// entitlement.
	entitled func(*user) bool
	// tools maps each tool the mode adds to the credential it uses.
	tools map[string]string
}

// runModes are the modes the server knows.
var runModes = map[string]runMode{
	// MODE-06: research needs the workspace entitlement 'Research mode' and
	// uses the credential search.
	"research": {entitled: func(u *user) bool { return !u.noResearch }, tools: map[string]string{ResearchTool: "search"}},
}

// candidate is a tool a run may get, before the credential gate.
type candidate struct {
	name, cred string // cred is "" for a tool that uses no credential
	fromMode   bool
}

// headerList reads a comma-separated header (every line of it): entries are
// trimmed of whitespace and empty entries dropped (TOOLS-01, MODE-01). ok is
// false when the header is absent or holds no entry at all: a header that
// names nothing restricts nothing (the spec is silent on that case).
func headerList(h http.Header, name string, trim bool) (entries []string, ok bool) {
	for _, line := range h.Values(name) {
		for _, e := range strings.Split(line, ",") {
			if trim {
				e = strings.TrimSpace(e)
			}
			if strings.TrimSpace(e) != "" {
				entries = append(entries, e)
			}
		}
	}
	return entries, len(entries) > 0
}

// hasEmptyEntry serves the scoped-tools-empty-400 defect.
func hasEmptyEntry(h http.Header, name string) bool {
	for _, line := range h.Values(name) {
		for _, e := range strings.Split(line, ",") {
			if strings.TrimSpace(e) == "" {
				return true
			}
		}
	}
	return false
}

// runTools decides which tools a run has:
//
//  1. the agent's configured tools and, inside a project, the project's
//     tasks (PROJ-04);
//  2. narrowed by X-SVC-Scoped-Tools, which can only narrow and changes
//     nothing beyond this run (TOOLS-01..03);
//  3. plus the tools of every run mode in X-SVC-Run-Mode that the server
//     knows and the workspace is entitled to; other names are ignored
//     (MODE-01..04, MODE-06). Mode tools are added after the narrowing: the
//     spec has X-SVC-Scoped-Tools restrict the agent's configured tools;
//  4. minus every tool whose credential the run may not use: a
//     project-scoped credential outside its project (PROJ-05), or one the key
//     has no credential:use scope for (CRED-01, CRED-02, MODE-05). The removal
//     is silent.
//
// The clean server never refuses a run here; the error serves defects that
// refuse where the spec says to ignore or remove.
//
// removed lists the agent's tools the credential gate took away.
func (s *Server) runTools(r *http.Request, k *apiKey, t *thread) (tools, removed []string, err error) {
	proj := t.project
	if s.defect(defProjectContextDropped) {
		proj = nil
	}

	// 1. The agent's tools and the project's tasks.
	var base []candidate
	for _, tool := range t.agent.tools {
		base = append(base, candidate{name: tool, cred: t.agent.credTools[tool]})
	}
	for _, task := range s.tasksFor(t.agent, proj) {
		base = append(base, candidate{name: task})
	}
	if s.defect(defProjectRouteWorkspaceAgent) && t.project != nil {
		base = append(base, s.otherAgentsTools(t.agent)...)
	}

	// 2. X-SVC-Scoped-Tools.
	scoped, narrow := headerList(r.Header, HeaderScopedTools, !s.defect(defScopedToolsUntrimmed))
	if s.defect(defScopedToolsEmpty400) && hasEmptyEntry(r.Header, HeaderScopedTools) {
		return nil, nil, &authError{http.StatusBadRequest, HeaderScopedTools + " has an empty entry"}
	}
	if s.defect(defScopedToolsIgnored) {
		narrow = false
	}
	if s.defect(defScopedToolsSticky) {
		scoped, narrow = s.stickyScope(t.agent, scoped, narrow)
	}
	named := map[string]bool{}
	for _, n := range scoped {
		named[n] = true
	}
	if narrow && s.variant(varScopedToolsUnknown400) {
		if n := unknownCandidate(scoped, base); n != "" {
			return nil, nil, &authError{http.StatusBadRequest, fmt.Sprintf("%s names %q, which this run cannot have", HeaderScopedTools, n)}
		}
	}
	if narrow {
		var kept []candidate
		have := map[string]bool{}
		for _, c := range base {
			if named[c.name] {
				kept = append(kept, c)
				have[c.name] = true
			}
		}
		if s.defect(defScopedToolsWiden) {
			for _, n := range scoped {
				if !have[n] {
					kept = append(kept, candidate{name: n})
					have[n] = true
				}
			}
		}
		base = kept
	}

	// 3. X-SVC-Run-Mode.
	modes, _ := headerList(r.Header, HeaderRunMode, !s.defect(defModeHeaderUntrimmed))
	if s.defect(defModeListFirstOnly) && len(modes) > 1 {
		modes = modes[:1]
	}
	var added []candidate
	for _, name := range modes {
		mode, known := runModes[name]
		if s.defect(defResearchModeMissing) && name == "research" {
			known = false
		}
		if !known {
			if s.defect(defUnknownMode400) {
				return nil, nil, &authError{http.StatusBadRequest, fmt.Sprintf("unknown run mode %q", name)}
			}
			continue // MODE-04: ignored, not refused
		}
		if !mode.entitled(k.user) && !s.defect(defModeEntitlementIgnored) {
			if s.defect(defModeUnentitled403) {
				return nil, nil, forbidden(fmt.Sprintf("the workspace is not entitled to run mode %q", name))
			}
			continue // MODE-03: ignored, not refused
		}
		if s.defect(defModeReplacesTools) {
			base = nil
		}
		for _, tool := range sortedKeys(mode.tools) {
			added = append(added, candidate{name: tool, cred: mode.tools[tool], fromMode: true})
		}
	}

	// 4. The credential gate.
	seen := map[string]bool{}
	for _, c := range append(base, added...) {
		if c.cred != "" && !s.credentialUsable(k, c, proj, named[c.name]) {
			switch {
			case s.defect(defCredentialRemoval403) && !c.fromMode:
				return nil, nil, forbidden(fmt.Sprintf("the key may not use credential %s (tool %s)", c.cred, c.name))
			case s.defect(defModeCredential403) && c.fromMode:
				return nil, nil, forbidden(fmt.Sprintf("the key may not use credential %s (run-mode tool %s)", c.cred, c.name))
			}
			if !c.fromMode {
				removed = append(removed, c.name)
			}
			continue // CRED-01, MODE-05: removed, silently
		}
		if !seen[c.name] {
			seen[c.name] = true
			tools = append(tools, c.name)
		}
	}
	if s.variant(varServiceTool) && !seen[ServiceTool] {
		tools = append(tools, ServiceTool) // offered by the service, never narrowed
	}
	return tools, removed, nil
}

// withServiceTool returns a copy of the profile whose agents list
// ServiceTool under serviceTools (variant service-tool).
func withServiceTool(p *profile.Profile) *profile.Profile {
	c := p.Clone()
	for _, a := range c.Agents.Roles() {
		if a.ID != "" {
			a.ServiceTools = append(a.ServiceTools, ServiceTool)
		}
	}
	return c
}

// credentialUsable applies the credential gate to one tool. The credential
// must exist for the run (a project-scoped credential only inside its
// project: PROJ-05) and the key must hold credential:use:<credential> or
// credential:use:* (CRED-01, CRED-02; MODE-05 for tools a mode attaches).
func (s *Server) credentialUsable(k *apiKey, c candidate, proj *project, namedInHeader bool) bool {
	if s.projectScoped(c.cred) && (proj == nil || !proj.credentials[c.cred]) {
		return false
	}
	switch {
	case s.defect(defCredentialGateIgnored) && !c.fromMode,
		s.defect(defModeToolsUngated) && c.fromMode,
		s.defect(defScopedToolsBypassCredentials) && namedInHeader:
		return true
	case s.defect(defResearchNeedsWildcardCredential) && c.name == ResearchTool:
		return k.has("credential:use:*")
	case s.defect(defCredentialWildcardIgnored):
		return k.has("credential:use:" + c.cred)
	}
	return k.has("credential:use:"+c.cred) || k.has("credential:use:*")
}

// otherAgentsTools serves the project-route-workspace-agent defect: the
// tools of every agent but a.
func (s *Server) otherAgentsTools(a *agent) []candidate {
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	var out []candidate
	for _, b := range s.st.agents {
		if b == a {
			continue
		}
		for _, tool := range b.tools {
			out = append(out, candidate{name: tool, cred: b.credTools[tool]})
		}
	}
	return out
}

// projectScoped reports whether some project scopes the credential.
func (s *Server) projectScoped(cred string) bool {
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	for _, p := range s.st.projects {
		if p.credentials[cred] {
			return true
		}
	}
	return false
}

// tasksFor returns the project tasks a run has as tools: its project's, and
// none outside a project (PROJ-04).
func (s *Server) tasksFor(a *agent, proj *project) []string {
	if proj != nil {
		return proj.tasks
	}
	if s.defect(defProjectTasksEverywhere) {
		if p := s.st.projectOf(a); p != nil {
			return p.tasks
		}
	}
	return nil
}

// stickyScope serves the scoped-tools-sticky defect: the restriction is
// saved on the agent and applies to later runs without the header.
func (s *Server) stickyScope(a *agent, scoped []string, narrow bool) ([]string, bool) {
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	if narrow {
		a.stickyScope = append([]string(nil), scoped...)
		return scoped, true
	}
	if a.stickyScope != nil {
		return a.stickyScope, true
	}
	return scoped, narrow
}

// unknownCandidate returns the first name that is no candidate's (the
// scoped-tools-unknown-400 variant), or "".
func unknownCandidate(names []string, cands []candidate) string {
	have := map[string]bool{}
	for _, c := range cands {
		have[c.name] = true
	}
	for _, n := range names {
		if !have[n] {
			return n
		}
	}
	return ""
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
