package fakeserver

import (
	"fmt"
	"net/http"
	"slices"
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

// Canonical forms of the X-SVC- headers: a header looked up by its canonical
// key is found without net/http making that key again on every call.
var (
	hdrThreadID    = http.CanonicalHeaderKey("X-SVC-Thread-Id")
	hdrAgent       = http.CanonicalHeaderKey("X-SVC-Agent")
	hdrScopedTools = http.CanonicalHeaderKey(HeaderScopedTools)
	hdrRunMode     = http.CanonicalHeaderKey(HeaderRunMode)
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

// headerList reads a comma-separated header (every line of it; name is its
// canonical key): entries are trimmed of whitespace and empty entries
// dropped (TOOLS-01, MODE-01). ok is false when the header is absent or
// holds no entry at all: a header that names nothing restricts nothing (the
// spec is silent on that case).
func headerList(h http.Header, name string, trim bool) (entries []string, ok bool) {
	for _, line := range h[name] {
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
func (s *view) runTools(r *http.Request, k *apiKey, t *thread) (tools, removed []string, err error) {
	proj := t.project
	if s.defect(defProjectContextDropped) {
		proj = nil
	}
	base := s.offeredTools(make([]candidate, 0, 8), t, proj) // room for an agent's few tools, off the heap
	if s.inCell(defProjectThreadTasksMissing, r) {
		tasks := s.tasksFor(t.agent, proj)
		base = slices.DeleteFunc(base, func(c candidate) bool { return slices.Contains(tasks, c.name) })
	}
	sc, err := s.readScope(r, t.agent, base)
	if err != nil {
		return nil, nil, err
	}
	if s.cellUnscoped(r) {
		sc.narrow = false
	}
	if sc.narrow {
		base = s.narrowTools(base, sc)
	} else if s.defect(defUnscopedRunExtraTool) || s.defect(defThreadIDUnscopedExtraTool) && s.threadInID(r) {
		base = append(base, candidate{name: "browser"})
	}
	if err := s.cellModeRefusal(r); err != nil {
		return nil, nil, err
	}
	modes, err := s.activeModes(r, k.user)
	if err != nil {
		return nil, nil, err
	}
	if s.cellModeless(r) {
		modes = nil
	}
	if s.defect(defModeReplacesTools) && len(modes) > 0 {
		base = nil
	}
	if s.cellUngated(r) {
		for i := range base {
			base[i].cred = "" // the defect: gated nowhere
		}
	}
	added := modeTools(modes)
	if s.inCell(defThreadsModeToolsUngated, r) {
		for i := range added {
			added[i].cred = "" // the defect: gated nowhere
		}
	}
	credProj := proj
	if s.inCell(defProjectThreadCredentialsMissing, r) {
		credProj = nil
	}
	tools, removed, err = s.credentialGate(k, credProj, append(base, added...), sc.named)
	if err == nil && s.cellCredentialScopesIgnored(r) {
		tools = slices.DeleteFunc(tools, func(n string) bool { return t.agent.credTools[n] != "" })
	}
	if err == nil && s.variant(varServiceTool) && !slices.Contains(tools, ServiceTool) {
		tools = append(tools, ServiceTool) // offered by the service, never narrowed
	}
	return tools, removed, err
}

// offeredTools is step 1 of runTools: the agent's tools and the project's
// tasks, appended to base.
func (s *view) offeredTools(base []candidate, t *thread, proj *project) []candidate {
	tasks := s.tasksFor(t.agent, proj)
	for _, tool := range t.agent.tools {
		base = append(base, candidate{name: tool, cred: t.agent.credTools[tool]})
	}
	for _, task := range tasks {
		base = append(base, candidate{name: task})
	}
	if s.defect(defProjectRouteWorkspaceAgent) && t.project != nil {
		base = append(base, s.otherAgentsTools(t.agent)...)
	}
	return base
}

// toolScope is what X-SVC-Scoped-Tools asks of a run.
type toolScope struct {
	names  []string        // the header's entries, in order
	named  map[string]bool // the same, as a set (nil for none)
	narrow bool            // whether the run is narrowed at all
}

// readScope reads X-SVC-Scoped-Tools (step 2 of runTools). base is the run's
// tools before narrowing, which only the variant scoped-tools-unknown-400
// looks at.
func (s *view) readScope(r *http.Request, a *agent, base []candidate) (toolScope, error) {
	var sc toolScope
	h := r.Header
	sc.names, sc.narrow = headerList(h, hdrScopedTools, !s.defect(defScopedToolsUntrimmed) && !s.inCell(defProjectScopedToolsUntrimmed, r))
	if s.defect(defScopedToolsEmpty400) && hasEmptyEntry(h, hdrScopedTools) {
		return sc, &authError{http.StatusBadRequest, HeaderScopedTools + " has an empty entry"}
	}
	if s.defect(defScopedToolsIgnored) {
		sc.narrow = false
	}
	if s.defect(defScopedToolsSticky) || s.inCell(defAsyncScopedToolsSticky, r) {
		sc.names, sc.narrow = s.stickyScope(a, sc.names, sc.narrow)
	}
	if len(sc.names) > 0 {
		sc.named = make(map[string]bool, len(sc.names))
	}
	for _, n := range sc.names {
		sc.named[n] = true
	}
	if sc.narrow && s.variant(varScopedToolsUnknown400) {
		if n := unknownCandidate(sc.names, base); n != "" {
			return sc, &authError{http.StatusBadRequest, fmt.Sprintf("%s names %q, which this run cannot have", HeaderScopedTools, n)}
		}
	}
	return sc, nil
}

// narrowTools keeps the tools of base that the scope names (TOOLS-01):
// the header can only narrow.
func (s *view) narrowTools(base []candidate, sc toolScope) []candidate {
	var kept []candidate
	for _, c := range base {
		if sc.named[c.name] {
			kept = append(kept, c)
		}
	}
	if s.defect(defScopedToolsWiden) {
		kept = widen(kept, sc.names)
	}
	if s.defect(defScopedToolsWorkspaceWiden) {
		for _, n := range sc.names {
			if c, ok := s.workspaceTool(n); ok && !slices.ContainsFunc(kept, func(k candidate) bool { return k.name == n }) {
				kept = append(kept, c)
			}
		}
	}
	if s.defect(defScopedToolsDropCredentialTools) {
		kept = slices.DeleteFunc(kept, func(c candidate) bool { return c.cred != "" })
	}
	return kept
}

// widen serves the scoped-tools-widen defect: every named tool the run
// lacks is added.
func widen(kept []candidate, names []string) []candidate {
	have := map[string]bool{}
	for _, c := range kept {
		have[c.name] = true
	}
	for _, n := range names {
		if !have[n] {
			kept = append(kept, candidate{name: n})
			have[n] = true
		}
	}
	return kept
}

// activeModes returns the modes of X-SVC-Run-Mode that the server knows and
// the workspace is entitled to, in header order (step 3 of runTools). Other
// names are ignored, not refused (MODE-03, MODE-04).
func (s *view) activeModes(r *http.Request, u *user) ([]runMode, error) {
	names, _ := headerList(r.Header, hdrRunMode, !s.defect(defModeHeaderUntrimmed))
	if (s.defect(defModeListFirstOnly) || s.inCell(defAsyncModeListFirstOnly, r)) && len(names) > 1 {
		names = names[:1]
	}
	if s.defect(defModeListLastOnly) && len(names) > 1 {
		names = names[len(names)-1:]
	}
	var on []runMode
	for _, name := range names {
		mode, known := runModes[name]
		if s.defect(defResearchModeMissing) && name == "research" {
			known = false
		}
		switch {
		case !known && s.defect(defUnknownMode400):
			return nil, &authError{http.StatusBadRequest, fmt.Sprintf("unknown run mode %q", name)}
		case !known && s.defect(defModeToolReference):
			// Defect: a tool's name read as a tool reference.
			if c, ok := s.workspaceTool(name); ok {
				on = append(on, runMode{entitled: func(*user) bool { return true }, tools: map[string]string{c.name: c.cred}})
			}
		case !known:
			// MODE-04: ignored
		case mode.entitled(u) || s.defect(defModeEntitlementIgnored) || s.inCell(defThreadsModeEntitlementIgnored, r):
			on = append(on, mode)
		case s.defect(defModeUnentitled403):
			return nil, forbidden(fmt.Sprintf("the workspace is not entitled to run mode %q", name))
		}
	}
	return on, nil
}

// ignoredModes lists the names of X-SVC-Run-Mode that a run ignores: not
// known, or not entitled (the mode-ignored-error-event defect reports them).
func (s *view) ignoredModes(h http.Header, u *user) []string {
	names, _ := headerList(h, hdrRunMode, true)
	var out []string
	for _, name := range names {
		if mode, known := runModes[name]; !known || !mode.entitled(u) {
			out = append(out, name)
		}
	}
	return out
}

// workspaceTool finds a tool of any agent of the workspace by name (the
// defects that resolve references against the workspace).
func (s *view) workspaceTool(name string) (candidate, bool) {
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	for _, a := range s.st.agents {
		for _, tool := range a.tools {
			if tool == name {
				return candidate{name: tool, cred: a.credTools[tool]}, true
			}
		}
	}
	return candidate{}, false
}

// modeTools lists the tools the modes add, each mode's in name order.
func modeTools(modes []runMode) []candidate {
	var added []candidate
	for _, mode := range modes {
		for _, tool := range sortedKeys(mode.tools) {
			added = append(added, candidate{name: tool, cred: mode.tools[tool], fromMode: true})
		}
	}
	return added
}

// credentialGate is step 4 of runTools: it drops, silently, every candidate
// whose credential the run may not use (CRED-01, MODE-05) and every
// duplicate. removed lists the dropped tools that no mode brought.
func (s *view) credentialGate(k *apiKey, proj *project, cands []candidate, named map[string]bool) (tools, removed []string, err error) {
	tools = make([]string, 0, len(cands))
	for _, c := range cands {
		if c.cred != "" && !s.credentialUsable(k, c, proj, named[c.name]) {
			if err := s.refuseCredential(c); err != nil {
				return nil, nil, err
			}
			if !c.fromMode {
				removed = append(removed, c.name)
			}
			continue
		}
		if !slices.Contains(tools, c.name) { // a run has a few tools: a search beats a set
			tools = append(tools, c.name)
		}
	}
	return tools, removed, nil
}

// refuseCredential serves the defects that refuse a run for a credential
// the spec has removed silently.
func (s *view) refuseCredential(c candidate) error {
	switch {
	case s.defect(defCredentialRemoval403) && !c.fromMode:
		return forbidden(fmt.Sprintf("the key may not use credential %s (tool %s)", c.cred, c.name))
	case s.defect(defModeCredential403) && c.fromMode:
		return forbidden(fmt.Sprintf("the key may not use credential %s (run-mode tool %s)", c.cred, c.name))
	}
	return nil
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
func (s *view) credentialUsable(k *apiKey, c candidate, proj *project, namedInHeader bool) bool {
	if s.st.scopedCreds[c.cred] && (proj == nil || !proj.credentials[c.cred]) {
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
func (s *view) otherAgentsTools(a *agent) []candidate {
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

// tasksFor returns the project tasks a run has as tools: its project's, and
// none outside a project (PROJ-04).
func (s *view) tasksFor(a *agent, proj *project) []string {
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
func (s *view) stickyScope(a *agent, scoped []string, narrow bool) ([]string, bool) {
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
