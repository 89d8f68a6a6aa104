package fakeserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/invokeconf/invokeconf/internal/httpserve"
)

// Spec: Response format rules; Events (SSE framing); Limits.

// stream feeds a run's events to a writer as they are appended. write is
// called once per event; ping when the stream has been quiet for the
// keepalive interval (nil: never). It returns false when the client went away:
// the run is then cancelled (FMT-08: the server notices on its next write).
func (s *Server) stream(r *http.Request, run *run, from int, write func(Event) error, ping func() error) bool {
	keepalive := time.NewTimer(s.cfg.Keepalive)
	defer keepalive.Stop()
	next := from
	for {
		evs, done, changed := run.snapshot(next)
		for _, ev := range evs {
			if err := write(ev); err != nil {
				s.abandon(run)
				return false
			}
			next++
			keepalive.Reset(s.cfg.Keepalive)
		}
		if done && len(evs) == 0 {
			return true
		}
		if done {
			continue // pick up anything appended between snapshot and done
		}
		select {
		case <-changed:
		case <-keepalive.C:
			if ping != nil {
				if err := ping(); err != nil {
					s.abandon(run)
					return false
				}
			}
			keepalive.Reset(s.cfg.Keepalive)
		case <-r.Context().Done():
			s.abandon(run)
			return false
		}
	}
}

// abandon cancels a run whose client went away.
func (s *Server) abandon(run *run) {
	if !s.defect(defDisconnectIgnored) {
		run.cancel()
	}
}

// writeSSE writes the SSE form (FMT-01) framed as the Events section says.
func (s *Server) writeSSE(w http.ResponseWriter, r *http.Request, run *run) {
	if s.defect(defErrorAsStatus) {
		// Defect: the run is finished before the stream starts, so a failure
		// becomes an HTTP status instead of an error event.
		if !run.wait(r.Context()) {
			s.abandon(run)
			return
		}
		if runFailed(run) {
			s.problem(w, http.StatusInternalServerError, "the run failed")
			return
		}
	}
	if s.defect(defSseBuffered) && !run.wait(r.Context()) {
		s.abandon(run)
		return
	}
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)

	frame := func(b []byte) error {
		if _, err := w.Write(b); err != nil {
			return err
		}
		return rc.Flush()
	}
	// SSE-01: "event: start" with data {} at once, before the agent produces
	// anything.
	if s.defect(defStartLate) {
		// Defect: nothing is written until the agent's first output.
		waitForContent(r, run)
	}
	if err := frame([]byte("event: start\ndata: {}\n\n")); err != nil {
		s.abandon(run)
		return
	}
	write := func(ev Event) error { return frame(sseEventFrame(s, ev)) }
	ping := func() error { return frame([]byte(": ping\n\n")) } // SSE-04
	if s.defect(defNoPing) {
		ping = nil
	}
	if !s.stream(r, run, 0, write, ping) {
		return
	}
	// SSE-05: "event: close" with data {} at the end, also after an error.
	if s.defect(defEventsAfterComplete) {
		_ = frame(sseEventFrame(s, Event{RunID: run.id, ThreadID: run.thread.id}))
	}
	if s.defect(defNoClose) || (s.defect(defNoCloseAfterError) && runFailed(run)) {
		return
	}
	_ = frame([]byte("event: close\ndata: {}\n\n"))
}

// sseEventFrame renders one event: an id line with the run ID (":after" on
// the final event, SSE-03), then the data line (SSE-02).
func sseEventFrame(s *Server, ev Event) []byte {
	var b bytes.Buffer
	id := ev.RunID
	if ev.RunComplete {
		id += ":after"
		if s.defect(defFinalIdSuffix) {
			id = ev.RunID + ":end"
		}
		if s.defect(defFinalNotComplete) {
			ev.RunComplete = false
		}
	}
	if !s.defect(defNoEventId) {
		fmt.Fprintf(&b, "id: %s\n", id)
	}
	if s.defect(defContentDataRaw) && ev.Content != "" {
		fmt.Fprintf(&b, "data: %s\n\n", ev.Content)
		return b.Bytes()
	}
	fmt.Fprintf(&b, "data: %s\n\n", s.encodeEvent(ev))
	return b.Bytes()
}

// encodeEvent renders an event object as JSON. The shape defects bend it
// here so that every delivery form shows them.
func (s *Server) encodeEvent(ev Event) []byte {
	if s.defect(defEventThreadMissing) {
		ev.ThreadID = ""
	}
	data, _ := json.Marshal(ev)
	bend := map[defectID]func(map[string]any){
		defToolcallNoName: func(m map[string]any) { renameInner(m, "toolCall", "name", "tool") },
		defStepTitle:      func(m map[string]any) { renameInner(m, "step", "description", "title") },
		defPromptNoSensitive: func(m map[string]any) {
			if p, ok := m["prompt"].(map[string]any); ok {
				delete(p, "sensitive")
			}
		},
	}
	for name, f := range bend {
		if !s.defect(name) {
			continue
		}
		var m map[string]any
		_ = json.Unmarshal(data, &m)
		f(m)
		data, _ = json.Marshal(m)
	}
	return data
}

func renameInner(m map[string]any, field, from, to string) {
	if inner, ok := m[field].(map[string]any); ok {
		inner[to] = inner[from]
		delete(inner, from)
	}
}

// waitForContent blocks until the run has produced content or ended.
func waitForContent(r *http.Request, run *run) {
	for {
		evs, done, changed := run.snapshot(0)
		for _, ev := range evs {
			if ev.Content != "" {
				return
			}
		}
		if done {
			return
		}
		select {
		case <-changed:
		case <-r.Context().Done():
			return
		}
	}
}

func runFailed(run *run) bool {
	evs, _, _ := run.snapshot(0)
	for _, ev := range evs {
		if ev.Error != "" {
			return true
		}
	}
	return false
}

// writeEnvelope writes the JSON envelope {"items":[...]} after the run ends
// (FMT-02).
func (s *Server) writeEnvelope(w http.ResponseWriter, r *http.Request, run *run) {
	if s.defect(defEnvelopeEarly) {
		// Defect: answer with what exists now instead of waiting.
		writeJSON(w, http.StatusOK, s.envelope(run))
		return
	}
	if !run.wait(r.Context()) {
		s.abandon(run)
		return
	}
	writeJSON(w, http.StatusOK, s.envelope(run))
}

// envelope is the JSON envelope of a run's events so far.
func (s *Server) envelope(run *run) map[string][]json.RawMessage {
	evs, _, _ := run.snapshot(0)
	items := make([]json.RawMessage, 0, len(evs))
	for _, ev := range evs {
		items = append(items, s.encodeEvent(ev))
	}
	return map[string][]json.RawMessage{"items": items}
}

// writePlain streams the content of each event as plain text, flushed as it
// is written: well inside the spec's "at most every 500 ms" (FMT-06).
func (s *Server) writePlain(w http.ResponseWriter, r *http.Request, run *run) {
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	// The headers go out with the first text, or alone once the run has
	// been quiet for plainHeaderWait: a quick answer then costs one write.
	if !waitForOutput(r, run, plainHeaderWait) {
		_ = rc.Flush()
	}
	if s.defect(defPlainBuffered) {
		// Defect: hold the whole answer until the run ends.
		if !run.wait(r.Context()) {
			s.abandon(run)
			return
		}
		evs, _, _ := run.snapshot(0)
		for _, ev := range evs {
			_, _ = w.Write([]byte(ev.Content))
		}
		return
	}
	s.stream(r, run, 0, func(ev Event) error {
		if ev.Content == "" {
			return nil
		}
		if _, err := w.Write([]byte(ev.Content)); err != nil {
			return err
		}
		if run.isDone() {
			return nil // the end of the response, just after, flushes it
		}
		return rc.Flush()
	}, nil)
}

// plainHeaderWait bounds how long the plain form holds its headers back for
// the run's first text: far inside the spec's 500 ms flush interval.
const plainHeaderWait = 50 * time.Millisecond

// waitForOutput waits up to d for the run to have content or to end, and
// reports whether it ended.
func waitForOutput(r *http.Request, run *run, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		content, done, changed := run.progress()
		if done || content {
			return done
		}
		select {
		case <-changed:
		case <-timer.C:
			return false
		case <-r.Context().Done():
			return false
		}
	}
}

// progress reports, without copying the events, whether the run has content
// and whether it is done, and returns a channel closed at the next change.
func (r *run) progress() (content, done bool, changed <-chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, ev := range r.events {
		if ev.Content != "" {
			return true, r.done, r.changed
		}
	}
	return false, r.done, r.changed
}

// writeJSON writes v as a JSON response.
var writeJSON = httpserve.WriteJSON
