package fakeserver

import (
	"fmt"
	"net/http"
	"strings"
)

// The defects of one cell break one rule only on one cell of the spec's
// quantifiers: one route, what {id} names, one response form, one way a run
// ends, one request header. Each is what a lazy implementation gets wrong
// where a suite that tries each rule on one representative exchange does
// not look (cells.feature looks). The reference server reads the request
// with its own routing (r.PathValue), never the harness's grammar.

// aliasPath reports whether {id} of an agent route is an agent's alias.
func (s *view) aliasPath(r *http.Request) bool {
	value := r.PathValue("id")
	if value == "" {
		return false
	}
	a, t, err := s.resolve(value)
	return err == nil && t == nil && a != nil && a.alias == value && a.id != value
}

// threadInID reports whether {id} of an agent route is a thread.
func (s *view) threadInID(r *http.Request) bool {
	value := r.PathValue("id")
	if value == "" {
		return false
	}
	_, t, err := s.resolve(value)
	return err == nil && t != nil
}

// threadsRoute reports whether r came by /api/invoke/{id}/threads/{thread}
// (the second spelling of the thread route).
func threadsRoute(r *http.Request) bool {
	return r.PathValue("thread") != "" && strings.Contains(r.URL.Path, "/threads/")
}

// threadRoute reports whether r came by /api/invoke/{id}/thread/{thread};
// threadSegment, by either spelling of that route.
func threadRoute(r *http.Request) bool   { return threadSegment(r) && !threadsRoute(r) }
func threadSegment(r *http.Request) bool { return r.PathValue("thread") != "" }

// projectRoute reports whether r came by a project route; projectThread,
// by the project thread route.
func projectRoute(r *http.Request) bool  { return r.PathValue("project_id") != "" }
func projectThread(r *http.Request) bool { return r.PathValue("thread_id") != "" }

// cellHeaderless reports whether an answer drops X-SVC-Thread-Id on one
// cell: the alias route, a request with X-SVC-Scoped-Tools (answerThread).
func (s *view) cellHeaderless(r *http.Request) bool {
	return s.defect(defAliasNoThreadHeader) && s.aliasPath(r) ||
		s.defect(defScopedToolsNoThreadHeader) && len(r.Header.Values(hdrScopedTools)) > 0
}

// sseNoClose reports whether a stream ends without event: close: the
// defects no-close, no-close-after-error and those of one cell.
func (s *view) sseNoClose(r *http.Request, run *run) bool {
	return s.defect(defNoClose) ||
		s.defect(defNoCloseAfterError) && runFailed(run) ||
		s.defect(defProjectThreadNoClose) && projectThread(r) ||
		s.defect(defAbortedNoClose) && run.aborted.Load() ||
		s.defect(defRunModeNoClose) && len(r.Header.Values(hdrRunMode)) > 0
}

// cellUnscoped reports whether a run ignores X-SVC-Scoped-Tools on one
// cell: the alias route, an async run, the project thread route.
func (s *view) cellUnscoped(r *http.Request) bool {
	return s.defect(defAliasScopedToolsIgnored) && s.aliasPath(r) ||
		s.defect(defAsyncScopedToolsIgnored) && asyncCall(r) ||
		s.defect(defProjectThreadScopedToolsIgnored) && projectThread(r)
}

// oneCell says where each defect of one cell acts, by what the request
// asks: a defect listed here is consulted as s.inCell(d, r), beside the
// switch that breaks the same rule everywhere.
var oneCell = map[defectID]func(*http.Request) bool{
	defProjectScopedToolsUntrimmed:     projectRoute,  // X-SVC-Scoped-Tools read untrimmed
	defAsyncScopedToolsSticky:          asyncCall,     // X-SVC-Scoped-Tools sticks to the agent
	defAsyncModeListFirstOnly:          asyncCall,     // only the first X-SVC-Run-Mode entry read
	defThreadsModeEntitlementIgnored:   threadsRoute,  // a mode works without the entitlement
	defThreadsModeToolsUngated:         threadsRoute,  // a mode's tools skip the credential gate
	defThreadsAsyncFalseAsTrue:         threadsRoute,  // async=false starts an async run
	defProjectThreadTasksMissing:       projectThread, // the project's tasks left out
	defProjectThreadCredentialsMissing: projectThread, // the project's credentials left out
	defThreadRouteNonAgentIgnored:      threadRoute,   // {id} naming no agent ignored
	defThreadSegmentApiDisabledIgnored: threadSegment, // API access disabled ignored
	defThreadRouteScopeResolved:        threadRoute,   // the scope checked against the resolved agent
	defThreadsNeedThreadScope:          threadsRoute,  // an agent-scoped key refused a thread
	defProjectThreadScopeAnyProject:    projectThread, // any project:chat scope covers
	defAbortApiDisabledIgnored:         abortCall,     // API access disabled ignored
	defAsyncAgentIdRunsMain:            asyncCall,     // an agent ID runs agents.main
	defEnvelopeAliasRunsMain:           envelopeAsked, // an alias runs agents.main
	defAsyncThreadIdNewThread:          asyncCall,     // a thread ID's thread not continued
	defStreamThreadRouteResumeEchoed:   func(r *http.Request) bool { return streamAsked(r) && threadRoute(r) },
	defStreamThreadsResumeEchoed:       func(r *http.Request) bool { return streamAsked(r) && threadsRoute(r) },
}

// inCell reports whether the one-cell defect d is on and r is in its cell.
func (s *view) inCell(d defectID, r *http.Request) bool {
	where, ok := oneCell[d]
	return ok && s.defect(d) && where(r)
}

// cellModeless reports whether a run ignores X-SVC-Run-Mode on one cell:
// an SSE stream, the /threads/ route.
func (s *view) cellModeless(r *http.Request) bool {
	return s.defect(defSSERunModeIgnored) && s.responseForm(r) == formSSE ||
		s.defect(defThreadsRunModeIgnored) && threadsRoute(r)
}

// envelopeAsked and streamAsked report whether a synchronous call asked for
// a JSON envelope, or for an SSE stream, by the literal Accept the spec
// compares.
func envelopeAsked(r *http.Request) bool { return !asyncCall(r) && acceptOf(r) == valueJSON[0] }
func streamAsked(r *http.Request) bool   { return !asyncCall(r) && acceptOf(r) == "text/event-stream" }

// abortCall reports whether r is POST /api/threads/{id}/abort.
func abortCall(r *http.Request) bool { return strings.HasSuffix(r.URL.Path, "/abort") }

// asyncCall reports whether a call asked for an async run.
func asyncCall(r *http.Request) bool {
	async, err := parseAsync(r.URL.Query())
	return async && err == nil
}

// cellUngated reports whether a run skips the credential gate for the
// agent's own tools on one cell: the alias route, an async run.
func (s *view) cellUngated(r *http.Request) bool {
	return s.defect(defAliasCredentialGateIgnored) && s.aliasPath(r) ||
		s.defect(defAsyncCredentialGateIgnored) && asyncCall(r)
}

// cellModeRefusal serves project-unknown-mode-400: on the project routes
// an X-SVC-Run-Mode entry the server does not know is refused.
func (s *view) cellModeRefusal(r *http.Request) error {
	if !s.defect(defProjectUnknownMode400) || !projectRoute(r) {
		return nil
	}
	names, _ := headerList(r.Header, hdrRunMode, true)
	for _, n := range names {
		if _, known := runModes[n]; !known {
			return &authError{http.StatusBadRequest, fmt.Sprintf("unknown run mode %q", n)}
		}
	}
	return nil
}

// cellJSONParsed reports whether a JSON body is parsed on one cell: the
// alias route, a call asking for the envelope.
func (s *view) cellJSONParsed(r *http.Request) bool {
	return s.defect(defAliasJSONPromptParsed) && s.aliasPath(r) ||
		s.defect(defEnvelopeJSONPromptParsed) && s.responseForm(r) == formJSON
}

// cellUnauthorized reports whether an agent route checks no chat scope on
// one cell: the /threads/ route.
func (s *view) cellUnauthorized(r *http.Request) bool {
	return s.defect(defThreadsRouteUnscoped) && threadsRoute(r)
}

// cellCredentialScopesIgnored reports whether a run honours no
// credential:use scope on one cell: the /threads/ route.
func (s *view) cellCredentialScopesIgnored(r *http.Request) bool {
	return s.defect(defThreadsCredentialScopesIgnored) && threadsRoute(r)
}

// cellThreadRefs applies the deviations in how the server reads the
// threads a request names (threadRefs) on one cell: the header beats the
// segment in an SSE stream; the header is ignored on the alias route's
// envelope and the project route's stream.
func (s *view) cellThreadRefs(r *http.Request, t *threadRefs) {
	switch {
	case s.defect(defSSEThreadHeaderWins) && s.responseForm(r) == formSSE && !asyncCall(r) && !projectRoute(r) && t.header != "":
		t.segment = t.header
	case s.defect(defAliasEnvelopeThreadHeaderIgnored) && s.aliasPath(r) && s.responseForm(r) == formJSON && !asyncCall(r),
		s.defect(defProjectStreamThreadHeaderIgnored) && projectRoute(r) && !projectThread(r) && s.responseForm(r) == formSSE && !asyncCall(r):
		t.header = ""
	}
}

// cellUnknownThreadNew reports whether a thread the request names that does
// not exist starts a new thread on one cell: a /threads/ segment, an
// X-SVC-Thread-Id on the project route.
func (s *view) cellUnknownThreadNew(r *http.Request, refs threadRefs) bool {
	return s.defect(defThreadsUnknownThreadNew) && threadsRoute(r) && refs.segment != "" ||
		s.defect(defProjectUnknownThreadHeaderNew) && projectRoute(r) && !projectThread(r) && refs.segment == "" && refs.header != ""
}

// contentDrop serves the threads-sse-content-dropped defect for one
// stream: the second event with content is sent with its content empty.
type contentDrop struct{ seen int }

// cellContentDropped returns the stream's contentDrop on its cell (an SSE
// stream on the /threads/ route), nil elsewhere.
func (s *view) cellContentDropped(r *http.Request) *contentDrop {
	if s.defect(defThreadsSSEContentDropped) && threadsRoute(r) {
		return &contentDrop{}
	}
	return nil
}

// apply returns ev as the stream sends it.
func (d *contentDrop) apply(ev Event) Event {
	if d == nil || ev.Content == "" {
		return ev
	}
	if d.seen++; d.seen == 2 {
		ev.Content = ""
	}
	return ev
}

// cellKeepsRun reports whether a run goes on when its client leaves on one
// cell: the project routes.
func (s *view) cellKeepsRun(r *http.Request) bool {
	return s.defect(defProjectDisconnectIgnored) && projectRoute(r)
}
