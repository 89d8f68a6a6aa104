package fakeserver

import (
	"fmt"
	"net/http"
	"strings"
)

// Spec: What the service does 4-5; Endpoints, Invoke routes (the project
// variant); Authentication 2 (project:chat:<project_id>).

// AgentModel is the model a bare-agent run uses. A project's model setting
// replaces it inside the project (PROJ-06).
const AgentModel = "scripted-agent-model"

// handleProjectInvoke serves POST /api/projects/{project_id}/invoke and
// .../invoke/thread/{thread_id}: the project's agent runs inside the project
// (PROJ-01, PROJ-02), exactly like the agent routes otherwise (PROJ-03).
func (s *view) handleProjectInvoke(w http.ResponseWriter, r *http.Request) {
	if s.routeMissing(r) {
		s.noRoute(w, r)
		return
	}
	k, err := s.authenticate(r)
	if err != nil {
		s.problemErr(w, err)
		return
	}
	p, err := s.authorizeProject(k, r.PathValue("project_id"), r)
	if err != nil {
		s.problemErr(w, err)
		return
	}
	r = s.asProjectReadsIt(r)
	// PROJ-01: the agent is the project's; the caller never names it.
	t, named, err := s.threadFor(r, k, p.agent, p, nil)
	if err != nil {
		s.problemErr(w, err)
		return
	}
	w, t = s.answerThread(w, r, t, named)
	s.invoke(w, r, k, t)
}

// asProjectReadsIt returns the request as the project routes read it: the
// request itself, or, when a row of projectReading is on, a copy of it the
// rows change (the request log keeps the request as it was sent).
func (s *view) asProjectReadsIt(r *http.Request) *http.Request {
	if !anyOn(s.sw, projectReading) {
		return r
	}
	r = r.Clone(r.Context())
	rewriteIn(s.sw, projectReading, r)
	return r
}

// projectReading are the deviations that make the project routes read a
// request otherwise than the agent routes do (PROJ-03), in the order they
// apply.
var projectReading = []rewrite[*http.Request]{
	{defProjectThreadSegmentIgnored, func(r *http.Request) { r.SetPathValue("thread_id", "") }},
	{defProjectThreadHeaderWins, func(r *http.Request) {
		if h := headerValue(r, hdrThreadID); h != "" {
			r.SetPathValue("thread_id", h)
		}
	}},
	{defProjectAcceptCaseFolded, func(r *http.Request) { r.Header.Set("Accept", strings.ToLower(acceptOf(r))) }},
	{defProjectThreadHeaderIgnored, func(r *http.Request) { r.Header.Del(hdrThreadID) }},
	{defProjectEnvelopeOnly, func(r *http.Request) { r.Header.Set("Accept", "application/json") }},
	{defProjectAsyncIgnored, func(r *http.Request) {
		q := r.URL.Query()
		q.Del("async")
		r.URL.RawQuery = q.Encode()
	}},
}

// authorizeProject applies AUTH-05: the project routes need
// project:chat:<project_id>, the literal path value, checked before the
// project is looked up; an agent scope does not cover them.
func (s *view) authorizeProject(k *apiKey, id string, r *http.Request) (*project, error) {
	s.st.mu.Lock()
	p := s.st.projects[id]
	s.st.mu.Unlock()
	covered := k.has("project:chat:" + id)
	switch {
	case s.defect(defProjectScopeAnyProject) || s.inCell(defProjectThreadScopeAnyProject, r):
		for _, sc := range k.scopes {
			covered = covered || strings.HasPrefix(sc, "project:chat:")
		}
	case s.defect(defProjectNeedsAgentScope):
		covered = p != nil && k.canChat(p.agent.id)
	case s.defect(defProjectAgentScopeAccepted) && p != nil:
		covered = covered || k.canChat(p.agent.id)
	}
	if !covered {
		return nil, forbidden(fmt.Sprintf("the key's scopes do not cover project:chat:%s", id))
	}
	if p == nil {
		return nil, &authError{http.StatusNotFound, fmt.Sprintf("no project %s", id)}
	}
	if !k.user.canOpen(p.agent) {
		return nil, forbidden(fmt.Sprintf("the key's owner cannot open the agent of project %s", id))
	}
	return p, nil
}

// projectModel is the model setting that applies to the run: the
// project's inside a project, "" (the agent's own model) otherwise
// (PROJ-06).
func (s *view) projectModel(r *run) string {
	t := r.thread
	p := t.project
	if s.defect(defProjectContextDropped) || s.defect(defResumedProjectModelUnset) && r.resumes {
		p = nil
	}
	if p == nil && s.defect(defProjectModelEverywhere) {
		p = s.st.projectOf(t.agent)
	}
	if p != nil {
		return p.model
	}
	return ""
}

// headerWriter serves defects that get a response header wrong: it sets
// the header to value ("" removes it) just before the status is written.
type headerWriter struct {
	http.ResponseWriter
	name, value string
}

func (d *headerWriter) fix() {
	if d.value == "" {
		d.ResponseWriter.Header().Del(d.name)
		return
	}
	d.ResponseWriter.Header().Set(d.name, d.value)
}

func (d *headerWriter) WriteHeader(code int) {
	d.fix()
	d.ResponseWriter.WriteHeader(code)
}

func (d *headerWriter) Write(b []byte) (int, error) {
	d.fix()
	return d.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach Flush.
func (d *headerWriter) Unwrap() http.ResponseWriter { return d.ResponseWriter }
