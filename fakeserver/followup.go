package fakeserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// Spec: Endpoints, Follow-up routes for async runs.

// threadForFollowUp authenticates a follow-up request and finds its thread.
// allowed says whether the key may use the route on that thread.
func (s *view) threadForFollowUp(w http.ResponseWriter, r *http.Request, allowed func(*apiKey, *thread) bool) (*apiKey, *thread, bool) {
	k, err := s.authenticate(r)
	if err != nil {
		s.problemErr(w, err)
		return nil, nil, false
	}
	t := s.st.thread(r.PathValue("id"))
	if t == nil || s.hiddenThread(k, t.id) != nil {
		s.problem(w, http.StatusNotFound, "no thread %s", r.PathValue("id"))
		return nil, nil, false
	}
	if !allowed(k, t) || !k.user.canOpen(t.agent) {
		s.problem(w, http.StatusForbidden, "the key's scopes do not cover thread %s", t.id)
		return nil, nil, false
	}
	return k, t, true
}

// canRead: AUTH-06, GET /api/threads/{id}/events needs thread:read (agent)
// or project:threads (project of the conversation).
func (s *view) canRead(k *apiKey, t *thread) bool {
	if s.defect(defEventsUnscoped) {
		return true
	}
	if t.project != nil && !s.defect(defEventsProjectNeedsThreadRead) {
		return k.has("project:threads")
	}
	if s.defect(defProjectThreadsAnyThread) && k.has("project:threads") {
		return true
	}
	if s.defect(defEventsNeedChatScope) && !s.canChatOn(k, t) {
		return false
	}
	return k.has("thread:read")
}

// canChatOn: AUTH-07, abort is covered by agent:chat: any chat scope that
// would let the key invoke the thread.
func (s *view) canChatOn(k *apiKey, t *thread) bool {
	if s.defect(defAbortNeedsWildcard) {
		return k.hasWildcard()
	}
	if s.defect(defAbortUnscoped) {
		return true
	}
	if s.defect(defAbortNeedsThreadRead) && !k.has("thread:read") {
		return false
	}
	if s.defect(defAbortAnyChatScope) && k.hasChatScope() {
		return true
	}
	if t.project != nil && k.has("project:chat:"+t.project.id) {
		return true
	}
	return k.canChat(t.agent.id) || (t.agent.alias != "" && k.canChat(t.agent.alias)) || k.canChat(t.id)
}

// handleEvents serves GET /api/threads/{id}/events. With runID: that run's
// events (ASYNC-02); without: the thread's last completed run (ASYNC-03).
// Accept: application/json waits for the run to finish (ASYNC-04);
// text/event-stream replays the events so far, marks the end of the replay
// with replayComplete, then follows the run live; anything else answers at
// once with the events so far.
func (s *view) handleEvents(w http.ResponseWriter, r *http.Request) {
	_, t, ok := s.threadForFollowUp(w, r, s.canRead)
	if !ok {
		return
	}
	if s.waitsForNewest(r) && !s.waitNewest(r, t) {
		return
	}
	run, err := s.runForEvents(t, r.URL.Query().Get("runID"))
	if err != nil {
		s.problemErr(w, err)
		return
	}
	w.Header().Set(hdrThreadID, t.id)
	switch s.responseForm(r) {
	case formSSE:
		s.replaySSE(w, r, run)
	case formJSON:
		s.writeEventsEnvelope(w, r, t, run)
	default:
		writeJSON(w, http.StatusOK, s.eventsDefects(t, s.envelope(run)))
	}
}

// waitsForNewest reports whether the events route waits for the thread's
// running run before it picks the run to answer with: under the variant
// events-latest-waits, without runID and with Accept: application/json.
func (s *view) waitsForNewest(r *http.Request) bool {
	return s.variant(varEventsLatestWaits) && r.URL.Query().Get("runID") == "" && s.responseForm(r) == formJSON
}

// writeEventsEnvelope answers the events route with Accept:
// application/json: it waits for the run to finish (ASYNC-04), but under
// the defects events-no-wait and abort-stream-only-empty-events (an empty
// envelope while the run goes on).
func (s *view) writeEventsEnvelope(w http.ResponseWriter, r *http.Request, t *thread, run *run) {
	if s.defect(defAbortStreamOnlyEmptyEvents) && !run.isDone() {
		writeJSON(w, http.StatusOK, map[string]any{"items": []any{}})
		return
	}
	if !s.defect(defEventsNoWait) && !run.wait(r.Context()) {
		return
	}
	writeJSON(w, http.StatusOK, s.eventsDefects(t, s.envelope(run)))
}

// eventsDefects applies the events route's rewrites (eventsRouteRewrites)
// to the envelope of thread t's run.
func (s *view) eventsDefects(t *thread, env map[string]any) map[string]any {
	items, _ := env["items"].([]json.RawMessage)
	e := eventsItems{s: s, t: t, items: items}
	env["items"] = rewritten(s.sw, eventsRouteRewrites, e).items
	return env
}

// eventsItems are the items of the events route's envelope for thread t,
// served by s.
type eventsItems struct {
	s     *view
	t     *thread
	items []json.RawMessage
}

// eventsRouteRewrites are the output-only deviations of the events route's
// envelope, in the order they apply, after those of every envelope
// (envelopeItemRewrites).
var eventsRouteRewrites = []rewrite[*eventsItems]{
	{defEventsNoFinal, dropFinal},
	{defEventsRunidRelabelled, relabelNewest},
}

// dropFinal serves events-no-final: the final event is left out.
func dropFinal(e *eventsItems) {
	kept := e.items[:0:0]
	for _, it := range e.items {
		var ev struct{ RunComplete bool }
		if json.Unmarshal(it, &ev) == nil && !ev.RunComplete {
			kept = append(kept, it)
		}
	}
	e.items = kept
}

// relabelNewest serves events-runid-relabelled: every item names the
// thread's newest run, whichever run it came from.
func relabelNewest(e *eventsItems) {
	e.s.st.mu.Lock()
	newest := e.t.runs[len(e.t.runs)-1].id
	e.s.st.mu.Unlock()
	for i, it := range e.items {
		e.items[i] = remarshal(it, func(m map[string]any) { m["runID"] = newest })
	}
}

// waitNewest waits for the thread's newest run to finish (variant
// events-latest-waits); false when the reader left first.
func (s *view) waitNewest(r *http.Request, t *thread) bool {
	s.st.mu.Lock()
	var newest *run
	if n := len(t.runs); n > 0 {
		newest = t.runs[n-1]
	}
	s.st.mu.Unlock()
	return newest == nil || newest.wait(r.Context())
}

func (s *view) runForEvents(t *thread, runID string) (*run, error) {
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	if runID != "" && !s.defect(defEventsRunidIgnored) {
		for _, r := range t.runs {
			if r.id == runID {
				return r, nil
			}
		}
		return nil, &authError{http.StatusNotFound, fmt.Sprintf("no run %s on thread %s", runID, t.id)}
	}
	if s.defect(defEventsLatestRun) && len(t.runs) > 0 {
		return t.runs[len(t.runs)-1], nil // Defect: the newest run, finished or not.
	}
	if s.defect(defEventsFirstRun) {
		for _, r := range t.runs {
			if r.isDone() {
				return r, nil // Defect: the oldest completed run.
			}
		}
	}
	if t.lastCompleted == nil {
		return nil, &authError{http.StatusNotFound, fmt.Sprintf("thread %s has no completed run", t.id)}
	}
	return t.lastCompleted, nil
}

// replaySSE writes the run's events as an SSE stream: what exists, then an
// event with replayComplete, then live events.
func (s *view) replaySSE(w http.ResponseWriter, r *http.Request, run *run) {
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	frame := func(b []byte) error {
		if _, err := w.Write(b); err != nil {
			return err
		}
		return rc.Flush()
	}
	wire := s.sseWire()
	if frame(wire.open()) != nil {
		return
	}
	existing, done, _ := run.snapshot(0)
	for _, ev := range existing {
		if frame(sseEventFrame(s, wire, ev)) != nil {
			return
		}
	}
	if !done {
		marker := Event{ReplayComplete: true, RunID: run.id, ThreadID: run.thread.id}
		if frame(sseEventFrame(s, wire, marker)) != nil {
			return
		}
		// Follow the run without cancelling it when this reader leaves.
		if !s.follow(r, run, len(existing), func(ev Event) error { return frame(sseEventFrame(s, wire, ev)) }) {
			return
		}
	}
	_ = frame(wire.control("close"))
}

// follow writes a run's events from index from on until the run is done or
// the reader leaves; unlike stream it never cancels the run.
func (s *view) follow(r *http.Request, run *run, from int, write func(Event) error) bool {
	next := from
	for {
		evs, done, changed := run.snapshot(next)
		for _, ev := range evs {
			if write(ev) != nil {
				return false
			}
			next++
		}
		if done {
			return true
		}
		select {
		case <-changed:
		case <-r.Context().Done():
			return false
		}
	}
}

// handleAbort serves POST /api/threads/{id}/abort: it cancels the thread's
// runs that are still going (ASYNC-06).
func (s *view) handleAbort(w http.ResponseWriter, r *http.Request) {
	_, t, ok := s.threadForFollowUp(w, r, s.canChatOn)
	if !ok {
		return
	}
	s.st.mu.Lock()
	runs := append([]*run(nil), t.runs...)
	s.st.mu.Unlock()
	a := &followUpAnswer{status: http.StatusOK, body: map[string]any{"threadID": t.id}}
	aborted := []any{}
	for _, run := range runs {
		if run.isDone() {
			continue
		}
		s.abort(run)
		aborted = append(aborted, run.id)
	}
	a.body["aborted"] = aborted
	rewriteIn(s.sw, abortAnswerRewrites, a)
	a.write(w)
}

// abort cancels a run (ASYNC-06), but under the defects abort-ignored and
// abort-stream-only (only the answers reading the run end; it goes on).
func (s *view) abort(run *run) {
	switch {
	case s.abortsStreamOnly():
		endMirrors(run)
	case !s.defect(defAbortIgnored):
		run.aborted.Store(true) // the aborted-stream-no-close defect reads it
		run.cancel()
	}
}

// followUpAnswer is the answer of a follow-up route: its status and its
// JSON body (none when nil).
type followUpAnswer struct {
	status int
	body   map[string]any
}

func (a *followUpAnswer) write(w http.ResponseWriter) {
	if a.body == nil {
		w.WriteHeader(a.status)
		return
	}
	writeJSON(w, a.status, a.body)
}

// abortAnswerRewrites are the output-only deviations of the abort answer
// ({"threadID": ..., "aborted": [run IDs]}), in the order they apply.
var abortAnswerRewrites = []rewrite[*followUpAnswer]{
	{varNumericRunIDs, func(a *followUpAnswer) {
		for i, id := range a.body["aborted"].([]any) {
			a.body["aborted"].([]any)[i] = idValue(id.(string), true)
		}
	}},
	{varNumericThreadIDs, func(a *followUpAnswer) { numericMember(a.body, "threadID") }},
	{varAbort204, func(a *followUpAnswer) { a.status, a.body = http.StatusNoContent, nil }},
}

// threadAnswerRewrites are the output-only deviations of the answer of GET
// /api/threads/{id}, in the order they apply.
var threadAnswerRewrites = []rewrite[*followUpAnswer]{
	{varNumericThreadIDs, func(a *followUpAnswer) { numericMember(a.body, "id") }},
	{varNumericRunIDs, func(a *followUpAnswer) { numericMember(a.body, "lastRunID") }},
}

// handleThread serves GET /api/threads/{id}: it answers at once and reports
// completion through lastRunID (ASYNC-05).
func (s *view) handleThread(w http.ResponseWriter, r *http.Request) {
	_, t, ok := s.threadForFollowUp(w, r, func(k *apiKey, t *thread) bool { return s.canRead(k, t) || s.canChatOn(k, t) })
	if !ok {
		return
	}
	s.waitBeforeThreadAnswer(r, t)
	s.st.mu.Lock()
	body := map[string]any{"id": t.id, "agentID": t.agent.id, "lastRunID": nil}
	if t.lastCompleted != nil {
		body["lastRunID"] = t.lastCompleted.id
	}
	if t.project != nil {
		body["projectID"] = t.project.id
	}
	s.st.mu.Unlock()
	a := &followUpAnswer{status: http.StatusOK, body: body}
	rewriteIn(s.sw, threadAnswerRewrites, a)
	a.write(w)
}

// waitBeforeThreadAnswer serves the thread-get-waits defect: GET
// /api/threads/{id} waits for the thread's runs to end, though the spec has
// it answer at once (ASYNC-05).
func (s *view) waitBeforeThreadAnswer(r *http.Request, t *thread) {
	if !s.defect(defThreadGetWaits) {
		return
	}
	s.st.mu.Lock()
	runs := append([]*run(nil), t.runs...)
	s.st.mu.Unlock()
	for _, run := range runs {
		run.wait(r.Context())
	}
}

// abortsStreamOnly: the defects abort-stream-only and
// abort-stream-only-empty-events.
func (s *view) abortsStreamOnly() bool {
	return s.defect(defAbortStreamOnly) || s.defect(defAbortStreamOnlyEmptyEvents)
}

// runAnswered is the run a synchronous answer reads: the run itself, or,
// under the abort-stream-only defects, a mirror of it that abort ends while
// the run goes on.
func (s *view) runAnswered(run *run) *run {
	if s.abortsStreamOnly() {
		return s.mirror(run)
	}
	return run
}

// mirrors serve the abort-stream-only defects: a synchronous response reads a
// mirror of its run, which abort ends while the run itself goes on.
var mirrors sync.Map // *run -> *mirrorRun

type mirrorRun struct {
	r       *run
	stopped chan struct{}
	once    sync.Once
}

// mirror returns a run that copies the events of real until real is done or
// abort ends the mirror.
func (s *view) mirror(real *run) *run {
	m := &mirrorRun{r: &run{id: real.id, thread: real.thread, cancel: func() {}},
		stopped: make(chan struct{})}
	mirrors.Store(real, m)
	go func() {
		next := 0
		for {
			evs, done, changed := real.snapshot(next)
			for _, ev := range evs {
				m.push(ev)
				next++
			}
			if done {
				m.end(nil)
				mirrors.Delete(real)
				return
			}
			select {
			case <-changed:
			case <-m.stopped:
				return
			}
		}
	}()
	return m.r
}

// push appends an event as it is, unless the mirror has ended.
func (m *mirrorRun) push(ev Event) {
	m.r.mu.Lock()
	defer m.r.mu.Unlock()
	if m.r.done {
		return
	}
	m.r.events = append(m.r.events, ev)
	m.r.notifyLocked()
}

// end ends the mirror, with a final event when one is given.
func (m *mirrorRun) end(final *Event) {
	m.once.Do(func() {
		m.r.mu.Lock()
		if final != nil && !m.r.done {
			m.r.events = append(m.r.events, *final)
		}
		m.r.done = true
		m.r.notifyLocked()
		m.r.mu.Unlock()
		close(m.stopped)
	})
}

// endMirrors ends the mirrors of a run as if it had been cancelled.
func endMirrors(real *run) {
	if m, ok := mirrors.LoadAndDelete(real); ok {
		mr := m.(*mirrorRun)
		mr.end(&Event{RunComplete: true, RunID: real.id, ThreadID: real.thread.id, Time: stamp(time.Now().UTC())})
	}
}
