package fakeserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
)

// Spec: Endpoints, Invoke routes; Thread selection rules; Authentication 2-4.
//
// A route handler reads as the spec's steps: every decision a switch can
// bend is a policy function named for it (authenticate, agentFor,
// threadFor, answerThread, responseForm, runTools, ...), which consults the
// switches in one place, and every deviation that only changes what is
// read or written is a row of a rewrite table (rewrite.go).
// TestHandlersConsultNoSwitch holds the handlers to it.

// handleInvoke serves POST /api/invoke/{id}, /api/invoke/{id}/thread/{thread}
// and /api/invoke/{id}/threads/{thread}.
func (s *view) handleInvoke(w http.ResponseWriter, r *http.Request) {
	k, err := s.authenticate(r)
	if err != nil {
		s.problemErr(w, err)
		return
	}
	if s.routeMissing(r) {
		s.noRoute(w, r)
		return
	}
	if err := s.hiddenThread(k, r.PathValue("id"), r.PathValue("thread"), headerValue(r, hdrThreadID)); err != nil {
		s.problemErr(w, err)
		return
	}
	a, pathThread, err := s.agentFor(k, r)
	if err != nil {
		s.problemErr(w, err)
		return
	}
	t, named, err := s.threadFor(r, k, a, nil, pathThread)
	if err != nil {
		s.problemErr(w, err)
		return
	}
	w, t = s.answerThread(w, r, t, named)
	s.invoke(w, r, k, t)
}

// routeMissing reports whether the request came by a route the server
// lacks: the defects threads-route-missing (the /threads/{thread} spelling)
// and project-route-missing. It answers as the catch-all route would.
func (s *view) routeMissing(r *http.Request) bool {
	if r.PathValue("project_id") != "" {
		return s.defect(defProjectRouteMissing)
	}
	return s.defect(defThreadsRouteMissing) && threadsRoute(r)
}

// noRoute answers a request no route takes.
func (s *view) noRoute(w http.ResponseWriter, r *http.Request) {
	s.problem(w, http.StatusNotFound, "no route %s %s", r.Method, r.URL.Path)
}

// agentFor resolves {id} under the key's scopes (authorizeAgentPath), or,
// under the scope-from-header defects, under a scope a header lends it.
func (s *view) agentFor(k *apiKey, r *http.Request) (*agent, *thread, error) {
	value := r.PathValue("id")
	a, pathThread, err := s.authorizeAgentPath(k, value, r)
	if err != nil && (s.scopeFromHeader(k, r) || s.cellUnauthorized(r)) {
		a, pathThread, err = s.resolve(value) // Defect: a header widened the scope, or no scope is read.
	}
	if err == nil && pathThread == nil && (s.inCell(defAsyncAgentIdRunsMain, r) && a.id == value ||
		s.inCell(defEnvelopeAliasRunsMain, r) && a.alias == value && a.id != value) {
		s.st.mu.Lock()
		a = s.st.defaultAgentLocked() // Defect: the agent {id} names does not run.
		s.st.mu.Unlock()
	}
	if err != nil && s.inCell(defThreadRouteNonAgentIgnored, r) && s.nonAgent(value) {
		if t := s.st.thread(r.PathValue("thread")); t != nil {
			return t.agent, nil, nil // Defect: the thread's agent runs, whatever {id} names.
		}
	}
	return a, pathThread, err
}

// answerThread decides the thread the answer names (X-SVC-Thread-Id) and
// the thread the run goes on: t for both, but under the defects that
// answer under another ID than the thread that runs. named says whether
// the request named a thread (threadFor).
func (s *view) answerThread(w http.ResponseWriter, r *http.Request, t *thread, named bool) (http.ResponseWriter, *thread) {
	project := t.project != nil
	if s.defect(defThreadResumeEchoed) && named || s.inCell(defStreamThreadRouteResumeEchoed, r) || s.inCell(defStreamThreadsResumeEchoed, r) {
		// Defect: a fresh conversation, under the ID the caller asked for.
		w = &headerWriter{ResponseWriter: w, name: "X-SVC-Thread-Id", value: t.id}
		t = s.newThread(t.agent, t.project)
	}
	if s.defect(defNewThreadIdInvented) && !project && !named && s.responseForm(r) != formJSON && r.URL.Query().Get("async") != "true" {
		// Defect: the streaming forms name a provisional thread that is never stored.
		w = &headerWriter{ResponseWriter: w, name: "X-SVC-Thread-Id", value: newID("thr")}
	}
	if s.defect(defProjectNoThreadHeader) && project || s.cellHeaderless(r) {
		w = &headerWriter{ResponseWriter: w, name: "X-SVC-Thread-Id"}
	}
	return w, t
}

// authorizeAgentPath applies the scope rules of /api/invoke/{id} and resolves
// {id} (ROUTE-01..03): an agent ID, an alias, or a thread ID (whose agent runs
// and whose thread continues).
func (s *view) authorizeAgentPath(k *apiKey, value string, r *http.Request) (*agent, *thread, error) {
	// AUTH-01, AUTH-02: the required scope is agent:chat:<value in path>, the
	// literal value, checked before anything is resolved.
	covered := k.canChat(value) || s.defect(defScopeUnchecked)
	a, t, err := s.resolve(value)
	if s.defect(defThreadScopeIgnored) && t != nil {
		covered = k.hasWildcard()
	}
	if (s.defect(defScopeResolved) || s.inCell(defThreadRouteScopeResolved, r)) && a != nil {
		// Defect: the scope is checked against the resolved agent, so an
		// ID-scoped key reaches the alias and an agent key reaches its threads.
		covered = k.canChat(a.id) || (a.alias != "" && k.canChat(a.alias))
	}
	if !covered {
		return nil, nil, forbidden(fmt.Sprintf("the key's scopes do not cover agent:chat:%s", value))
	}
	if err != nil {
		return nil, nil, err
	}
	// AUTH-04: a key is re-checked against its owner's access; for a wildcard
	// key that is the only check there is.
	if !k.user.canOpen(a) && !(s.defect(defWildcardUnchecked) && k.hasWildcard()) {
		return nil, nil, forbidden(fmt.Sprintf("the key's owner cannot open agent %s", a.id))
	}
	return a, t, nil
}

// scopeFromHeader serves the defects scope-from-thread-header and
// scope-from-agent-header: a header's value covers the request.
func (s *view) scopeFromHeader(k *apiKey, r *http.Request) bool {
	if h := headerValue(r, hdrThreadID); h != "" && s.defect(defScopeFromThreadHeader) && k.has("agent:chat:"+h) {
		return true
	}
	h := headerValue(r, hdrAgent)
	return h != "" && s.defect(defScopeFromAgentHeader) && k.has("agent:chat:"+h)
}

// hiddenThread serves the variant hidden-thread-404: a thread whose agent
// the key's owner cannot open does not exist for that owner. The spec gives
// no precedence between its 403 (no access) and its 404 (no such thread).
func (s *view) hiddenThread(k *apiKey, ids ...string) error {
	if !s.variant(varHiddenThread404) {
		return nil
	}
	for _, id := range ids {
		if t := s.st.thread(id); t != nil && !k.user.canOpen(t.agent) {
			return &authError{http.StatusNotFound, fmt.Sprintf("no thread %s", id)}
		}
	}
	return nil
}

// nonAgent reports whether value is an ID that exists but names no agent.
func (s *view) nonAgent(value string) bool {
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	return s.st.nonAgents[value]
}

// resolve maps a path value to its agent, and to its thread when it is a
// thread ID. ERR-01: an ID that exists but names no agent is 400. ERR-08: an
// ID that does not exist is 404.
func (s *view) resolve(value string) (*agent, *thread, error) {
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	if a := s.st.agents[value]; a != nil && !s.defect(defAgentIdUnresolved) {
		if s.defect(defAgentIdDefaultAgent) {
			return s.st.defaultAgentLocked(), nil, nil
		}
		return a, nil, nil
	}
	if a := s.st.aliases[value]; a != nil && !s.defect(defAliasUnresolved) {
		if s.defect(defAliasDefaultAgent) {
			return s.st.defaultAgentLocked(), nil, nil
		}
		return a, nil, nil
	}
	if t := s.st.threads[value]; t != nil {
		if s.defect(defThreadIdDefaultAgent) {
			t.agent = s.st.defaultAgentLocked() // Defect: the thread moves to another agent.
		}
		return t.agent, t, nil
	}
	if s.st.nonAgents[value] && !s.defect(defNonAgent404) {
		return nil, nil, &authError{http.StatusBadRequest, fmt.Sprintf("%s resolves to no agent", value)}
	}
	if s.defect(defUnknown400) {
		return nil, nil, &authError{http.StatusBadRequest, fmt.Sprintf("%s resolves to no agent", value)}
	}
	return nil, nil, &authError{http.StatusNotFound, fmt.Sprintf("no agent, alias or thread %s", value)}
}

// threadFor applies the thread selection rules to an invoke, the agent's
// (a) or the project's (p): the path's thread segment (THREAD-01), else the
// X-SVC-Thread-Id header (THREAD-02), else a new thread (THREAD-03).
// pathThread is the thread {id} itself names, if any. named says whether
// the request named a thread at all, by {id}, segment or header. Every
// switch on thread selection is consulted here, or in the rows of
// threadRefReading, which say what the server reads of the request.
func (s *view) threadFor(r *http.Request, k *apiKey, a *agent, p *project, pathThread *thread) (t *thread, named bool, err error) {
	if s.defect(defThreadIdNewThread) || s.inCell(defAsyncThreadIdNewThread, r) {
		pathThread = nil // Defect: {id}'s thread is not continued.
	}
	sent := threadRefs{segment: r.PathValue("thread"), header: headerValue(r, hdrThreadID)}
	if sent.segment == "" {
		sent.segment = r.PathValue("thread_id")
	}
	named = pathThread != nil || sent.segment != "" || sent.header != ""
	refs := rewritten(s.sw, threadRefReading, sent)
	s.cellThreadRefs(r, &refs)
	var id string
	switch {
	case refs.segment != "":
		id = refs.segment
	case pathThread != nil:
		return pathThread, named, nil
	case refs.header != "":
		id = refs.header
	default:
		return s.freshThread(k, a, p), named, nil
	}
	t = s.st.thread(id)
	if t == nil && (refs.segment == "" && s.defect(defUnknownThreadHeaderNewThread) || s.cellUnknownThreadNew(r, refs)) {
		return s.newThread(a, p), named, nil
	}
	if t == nil || t.agent != a || t.project != p {
		return nil, named, &authError{http.StatusNotFound, fmt.Sprintf("no thread %s for this agent", id)}
	}
	if (s.defect(defThreadNeedsThreadScope) || s.inCell(defThreadsNeedThreadScope, r)) && !k.canChat(t.id) {
		return nil, named, forbidden(fmt.Sprintf("the key's scopes do not cover agent:chat:%s", t.id))
	}
	return t, named, nil
}

// threadRefs are the threads a request names in its path's thread segment
// and in its X-SVC-Thread-Id header, "" for none.
type threadRefs struct{ segment, header string }

// threadRefReading are the deviations in how the server reads the threads
// a request names (threadFor), on the agent and the project routes, in the
// order they apply.
var threadRefReading = []rewrite[*threadRefs]{
	{defThreadSegmentIgnored, func(t *threadRefs) { t.segment = "" }},
	{defThreadHeaderIgnored, func(t *threadRefs) { t.header = "" }},
	{defThreadHeaderWins, func(t *threadRefs) {
		if t.header != "" {
			t.segment = t.header
		}
	}},
}

// freshThread starts a new thread (THREAD-03); the new-thread-reused
// defect hands back the key's last one instead.
func (s *view) freshThread(k *apiKey, a *agent, p *project) *thread {
	if s.defect(defNewThreadReused) {
		if t := s.st.lastThreadOf(k, a, p); t != nil {
			return t
		}
	}
	t := s.newThread(a, p)
	if s.defect(defNewThreadReused) {
		s.st.rememberThread(k, t)
	}
	return t
}

// invoke reads the prompt, starts the run and answers in the form the
// request asks for. Shared by the agent and project routes.
func (s *view) invoke(w http.ResponseWriter, r *http.Request, k *apiKey, t *thread) {
	async, err := s.readAsync(r)
	if err != nil {
		s.problem(w, http.StatusBadRequest, "%v", err)
		return
	}
	prompt, ok := s.readPrompt(w, r)
	if !ok {
		return
	}
	tools, removed, err := s.runTools(r, k, t) // tools.go
	if err != nil {
		s.problemErr(w, err)
		return
	}
	run, resumed := s.startRun(t, k, prompt, tools, s.runNotices(r, k, tools, removed)...)
	run.keepOnDisconnect = s.cellKeepsRun(r)

	// THREAD-04: every response carries X-SVC-Thread-Id (answerHeadRewrites
	// may drop it).
	w.Header().Set(hdrThreadID, t.id)
	if async {
		s.writeAck(w, r, t, run, resumed)
		return
	}
	switch run = s.runAnswered(run); s.responseForm(r) {
	case formSSE:
		s.writeSSE(w, r, run)
	case formJSON:
		s.writeEnvelope(w, r, run)
	default:
		s.writePlain(w, r, run)
	}
}

// runNotices are the events a run opens with before its agent acts: none,
// but under the defects that announce what the spec has removed or ignored
// silently (a tool the credential gate removed, a mode's tool, a mode).
func (s *view) runNotices(r *http.Request, k *apiKey, tools, removed []string) []Event {
	var notices []Event
	if s.defect(defCredentialRemovalNotice) {
		for _, tool := range removed {
			notices = append(notices, Event{Step: &Step{Description: "tool " + tool + " removed: the key may not use its credential"}})
		}
	}
	if s.defect(defModeRemovalNotice) {
		modes, _ := s.activeModes(r, k.user)
		for _, c := range modeTools(modes) {
			if !slices.Contains(tools, c.name) {
				notices = append(notices, Event{Notice: "tool " + c.name + " of the run mode removed: the key may not use credential " + c.cred})
			}
		}
	}
	if s.defect(defModeIgnoredErrorEvent) {
		for _, mode := range s.ignoredModes(r.Header, k.user) {
			notices = append(notices, Event{Error: "run mode " + mode + " ignored: unknown, or the workspace is not entitled to it"})
		}
	}
	return notices
}

// readAsync reads the async query parameter: whether the call answers at
// once (ASYNC-01).
func (s *view) readAsync(r *http.Request) (bool, error) {
	if r.URL.RawQuery == "" {
		return false, nil // no query to parse
	}
	async, err := parseAsync(r.URL.Query())
	if (s.defect(defAsyncFalseAsTrue) || s.inCell(defThreadsAsyncFalseAsTrue, r)) && r.URL.Query().Has("async") {
		async = true
	}
	return async && !s.defect(defAsyncIgnored), err
}

// readPrompt reads the body, which is the prompt, verbatim; it is never
// parsed (BODY-01, BODY-02). ok is false when it answered with a problem.
func (s *view) readPrompt(w http.ResponseWriter, r *http.Request) (prompt string, ok bool) {
	// net/http reads no more than a declared length, so only a body longer
	// than the bound, or of no declared length, needs a reader that stops
	// it (and closes the connection once it has).
	rd := r.Body
	if r.ContentLength < 0 || r.ContentLength > s.cfg.MaxBody {
		rd = http.MaxBytesReader(w, r.Body, s.cfg.MaxBody)
	}
	body, err := readBody(rd, r.ContentLength, s.cfg.MaxBody)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			s.problem(w, http.StatusRequestEntityTooLarge, "request body is larger than %d bytes", tooBig.Limit)
			return "", false
		}
		s.problem(w, http.StatusBadRequest, "read request body: %v", err)
		return "", false
	}
	prompt = string(body)
	if s.defect(defJsonPromptParsed) || s.cellJSONParsed(r) {
		prompt = extractJSONPrompt(prompt)
	}
	return prompt, true
}

// readBody is io.ReadAll sized by the request's Content-Length (up to
// limit), so that a body is read into one buffer of its size.
func readBody(rd io.Reader, length, limit int64) ([]byte, error) {
	if length < 0 {
		return io.ReadAll(rd)
	}
	b := make([]byte, 0, min(length, limit)+1) // +1: the read that sees EOF
	for {
		n, err := rd.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
		if int64(len(b)) > limit {
			return b, &http.MaxBytesError{Limit: limit} // longer than it said, and than the bound
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // a body longer than it said: grow
		}
	}
}

// writeAck answers an async invoke with the thread and run IDs (ASYNC-01).
func (s *view) writeAck(w http.ResponseWriter, r *http.Request, t *thread, run *run, resumed bool) {
	status := s.answerStatus(w, formJSON, true)
	ack := asyncAck{m: map[string]any{"threadID": t.id, "runID": run.id}, t: t, run: run, resumed: resumed}
	if anyOn(s.sw, ackRewrites) {
		ack.threadInID = s.threadInID(r)
	}
	rewriteIn(s.sw, ackRewrites, ack)
	writeJSON(w, status, ack.m)
}

// asyncAck is the async acknowledgement (m) of run on thread t; resumed:
// the request named a thread.
type asyncAck struct {
	m       map[string]any
	t       *thread
	run     *run
	resumed bool
	// threadInID: {id} of the route was a thread (set only when a row is
	// on: it looks the value up).
	threadInID bool
}

// ackRewrites are the output-only deviations of an async acknowledgement,
// in the order they apply.
var ackRewrites = []rewrite[asyncAck]{
	{defAsyncAckNewThread, func(a asyncAck) {
		if a.resumed {
			a.m["threadID"] = newID("thr") // a thread that is never stored
		}
	}},
	{defThreadIDAsyncNoRun, func(a asyncAck) {
		if a.threadInID {
			delete(a.m, "runID") // on the thread-ID route only
		}
	}},
	{varAsyncAckExtraMembers, func(a asyncAck) {
		a.m["status"] = "running"
		a.m["links"] = map[string]string{"events": "/api/threads/" + a.t.id + "/events?runID=" + a.run.id}
	}},
}

// parseAsync reads the async query parameter (default false).
func parseAsync(q map[string][]string) (bool, error) {
	v := ""
	if vs := q["async"]; len(vs) > 0 {
		v = vs[len(vs)-1]
	}
	switch v {
	case "", "false":
		return false, nil
	case "true":
		return true, nil
	}
	return false, fmt.Errorf("async must be true or false, not %q", v)
}

type responseForm int

const (
	formPlain responseForm = iota
	formSSE
	formJSON
)

// responseForm applies the response format rules: the Accept header alone
// decides, compared literally and as a whole (FMT-01..FMT-05). Several Accept
// lines count as their comma-joined whole.
func (s *view) responseForm(r *http.Request) responseForm {
	accept := rewritten(s.sw, acceptReading, acceptOf(r))
	switch {
	case accept == "text/event-stream":
		return formSSE
	case accept == "application/json":
		return formJSON
	case s.defect(defAcceptPrefix) && strings.HasPrefix(accept, "text/event-stream"):
		return formSSE
	case s.defect(defAcceptJsonContains) && strings.Contains(accept, "application/json"):
		return formJSON
	case s.defect(defPlainDefaultJson) && accept == "":
		return formJSON
	}
	return formPlain
}

// acceptReading are the deviations in how the server reads Accept before
// it compares it (responseForm), in the order they apply.
var acceptReading = []rewrite[*string]{
	{defAcceptSpacesIgnored, func(a *string) { *a = strings.Join(strings.Fields(*a), "") }},
	{defAcceptCaseFolded, func(a *string) { *a = strings.ToLower(*a) }},
}

// acceptOf is the request's Accept header: its lines joined by ", ".
func acceptOf(r *http.Request) string {
	switch vals := r.Header["Accept"]; len(vals) {
	case 0:
		return ""
	case 1:
		return vals[0]
	default:
		return strings.Join(vals, ", ")
	}
}

// headerValue is the first value of a request header by its canonical key, as
// r.Header.Get gives it, without canonicalizing the key again.
func headerValue(r *http.Request, key string) string {
	if v := r.Header[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// extractJSONPrompt serves the json-prompt-parsed defect: it reads a prompt
// out of a JSON body the way a server that wrongly parses it would.
func extractJSONPrompt(body string) string {
	var v struct {
		Prompt   string `json:"prompt"`
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
	}
	var list []struct {
		Content string `json:"content"`
	}
	if json.Unmarshal([]byte(body), &list) == nil && len(list) > 0 {
		return list[len(list)-1].Content // a bare list of messages
	}
	if json.Unmarshal([]byte(body), &v) != nil {
		return body
	}
	if n := len(v.Messages); n > 0 {
		return v.Messages[n-1].Content
	}
	if v.Prompt != "" {
		return v.Prompt
	}
	return body
}

// defaultAgentLocked is the agent the *-default-agent and *-runs-main
// defects run in another's place: the profile's agents.main, else the agent
// with the smallest ID. Not the smallest ID always: a bundle's agents, with
// random IDs, would make the defect act on agents.main's own calls only
// sometimes. The caller holds st.mu.
func (st *store) defaultAgentLocked() *agent {
	if st.mainAgent != nil {
		return st.mainAgent
	}
	var first *agent
	for id, a := range st.agents {
		if first == nil || id < first.id {
			first = a
		}
	}
	return first
}
