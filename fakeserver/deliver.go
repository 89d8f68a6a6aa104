package fakeserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/invokeconf/invokeconf/internal/httpserve"
)

// Spec: Response format rules; Events (SSE framing); Limits.

// stream feeds a run's events to a writer as they are appended. write is
// called once per event; idle, when not nil, each time the events so far are
// written and the run goes on (to flush them); ping when the stream has been
// quiet for the keepalive interval (nil: never). It returns false when the
// client went away: the run is then cancelled (FMT-08: the server notices on
// its next write).
func (s *Server) stream(r *http.Request, run *run, from int, write func(Event) error, idle, ping func() error) bool {
	// The keepalive timer is armed at the first wait, and only when there
	// is a ping to send: a quick run never needs one.
	var keepalive *time.Timer
	var tick <-chan time.Time
	next := from
	for {
		evs, done, changed := run.snapshot(next)
		for _, ev := range evs {
			if err := write(ev); err != nil {
				s.abandon(run)
				return false
			}
			next++
			if keepalive != nil {
				keepalive.Reset(s.cfg.Keepalive)
			}
		}
		if done && len(evs) == 0 {
			return true
		}
		if done {
			continue // pick up anything appended between snapshot and done
		}
		if idle != nil && len(evs) > 0 {
			if err := idle(); err != nil {
				s.abandon(run)
				return false
			}
		}
		if ping != nil && keepalive == nil {
			keepalive = time.NewTimer(s.cfg.Keepalive)
			defer keepalive.Stop()
			tick = keepalive.C
		}
		select {
		case <-changed:
		case <-tick:
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
	if !s.defect(defDisconnectIgnored) && !run.keepOnDisconnect {
		run.cancel()
	}
}

// answerStatus sets the head of an invoke answer just before it goes out,
// the deviations of answerHeadRewrites applied, and returns its status. ack
// is the async acknowledgement, else it is a synchronous answer in form.
func (s *Server) answerStatus(w http.ResponseWriter, form responseForm, ack bool) int {
	a := answerHead{h: w.Header(), status: http.StatusOK, form: form, ack: ack}
	for _, rw := range answerHeadRewrites {
		if rw.on(s) {
			rw.f(&a)
		}
	}
	return a.status
}

// answerHead is the status and header of an invoke answer.
type answerHead struct {
	h      http.Header
	status int
	form   responseForm
	ack    bool // the async acknowledgement (form is then formJSON)
}

// answerHeadRewrite reshapes an invoke answer's head when its defect or
// variant is on.
type answerHeadRewrite struct {
	on func(*Server) bool
	f  func(*answerHead)
}

// answerHeadRewrites are the output-only deviations of an invoke answer's
// status and header, in the order they apply. The spec names no status for
// a successful answer, so the 2xx variants pick others.
var answerHeadRewrites = []answerHeadRewrite{
	{defectOn(defNoThreadHeader), func(a *answerHead) { a.h.Del(hdrThreadID) }},
	// The header half of no-thread-header-wrong-thread; eventRewrites has the event half.
	{defectOn(defNoThreadHeaderWrongThread), func(a *answerHead) {
		if !a.ack {
			a.h.Del(hdrThreadID)
		}
	}},
	{defectOn(defSseAsTextPlain), func(a *answerHead) {
		if a.form == formSSE && !a.ack {
			a.h.Set("Content-Type", "text/plain; charset=utf-8")
		}
	}},
	{variantOn(varSync2xx), func(a *answerHead) {
		if !a.ack {
			a.status = http.StatusNonAuthoritativeInfo
		}
	}},
	{variantOn(varAsync202), func(a *answerHead) {
		if a.ack {
			a.status = http.StatusAccepted
		}
	}},
}

// writeSSE writes the SSE form (FMT-01) framed as the Events section says.
func (s *Server) writeSSE(w http.ResponseWriter, r *http.Request, run *run) {
	if !s.sseHoldBack(w, r, run) {
		return
	}
	setSSEHeader(w)
	status := s.answerStatus(w, formSSE, false)
	wire := s.sseWire()
	// SSE-01: "event: start" with data {} at once, before the agent produces
	// anything.
	if s.defect(defStartLate) || s.defect(defAliasStartLate) && s.aliasPath(r) {
		// Defect: nothing is written until the agent's first output.
		waitForContent(r, run)
	}
	if c, ok := s.hijackSSE(w, r, run, status, wire.open()); ok {
		if c != nil { // sse_conn.go: the run's callbacks write the rest
			c.serve(s.sseEvents(wire, c.frame), s.ssePing(wire, c.frame), func() { s.sseEnd(wire, c.frame, run, s.sseNoClose(r, run)) })
		}
		return
	}
	frame := startSSE(w, status)
	if err := frame(wire.open()); err != nil {
		s.abandon(run)
		return
	}
	if !s.stream(r, run, 0, s.sseEvents(wire, frame), nil, s.ssePing(wire, frame)) {
		return
	}
	s.sseEnd(wire, frame, run, s.sseNoClose(r, run))
}

// sseHoldBack serves the defects that hold the stream back until the run
// ends. It reports false when the request is answered already.
func (s *Server) sseHoldBack(w http.ResponseWriter, r *http.Request, run *run) bool {
	if s.defect(defErrorAsStatus) {
		// Defect: the run is finished before the stream starts, so a failure
		// becomes an HTTP status instead of an error event.
		if !run.wait(r.Context()) {
			s.abandon(run)
			return false
		}
		if runFailed(run) {
			s.problem(w, http.StatusInternalServerError, "the run failed")
			return false
		}
	}
	if s.defect(defSseBuffered) && !run.wait(r.Context()) {
		s.abandon(run)
		return false
	}
	return true
}

// setSSEHeader sets the SSE response's header fields.
func setSSEHeader(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
}

// startSSE sends the SSE header through w and returns the writer of one
// frame, which flushes it.
func startSSE(w http.ResponseWriter, status int) func([]byte) error {
	rc := http.NewResponseController(w)
	w.WriteHeader(status)
	return func(b []byte) error {
		if _, err := w.Write(b); err != nil {
			return err
		}
		return rc.Flush()
	}
}

// ssePing returns the keepalive writer (SSE-04), nil for none.
func (s *Server) ssePing(wire *sseWire, frame func([]byte) error) func() error {
	if s.defect(defNoPing) || s.defect(defPingAfterEvents) {
		return nil
	}
	return func() error { return frame(wire.ping(s.variant(varPingLoneLine))) }
}

// sseEnd writes "event: close" with data {} at the end, also after an error
// (SSE-05).
func (s *Server) sseEnd(wire *sseWire, frame func([]byte) error, run *run, noClose bool) {
	if s.defect(defEventsAfterComplete) {
		_ = frame(sseEventFrame(s, wire, Event{RunID: run.id, ThreadID: run.thread.id}))
	}
	if noClose { // defects: sseNoClose
		return
	}
	if s.variant(varSseComments) {
		_ = frame(wire.comment("", true))
	}
	_ = frame(wire.control("close"))
}

// sseEvents returns the writer of a stream's event frames (SSE-02), with
// the comments variant and the cut-frame defect.
func (s *Server) sseEvents(wire *sseWire, frame func([]byte) error) func(Event) error {
	failed := false
	return func(ev Event) error {
		failed = failed || ev.Error != ""
		if failed && ev.RunComplete && s.defect(defFailedRunNoFinal) {
			return nil // Defect: a failed run ends on its error event.
		}
		b := sseEventFrame(s, wire, ev)
		if s.defect(defStreamCutMidFrame) && ev.RunComplete {
			// Defect: the stream ends before the final frame's blank line.
			_ = frame(cutBlankLine(b))
			return errCut
		}
		if s.variant(varSseComments) {
			b = append(wire.comment("progress", false), b...)
		}
		if s.defect(defPingAfterEvents) {
			b = append(b, wire.ping(false)...)
		}
		return frame(b)
	}
}

var errCut = errors.New("the stream was cut")

// sseEventFrame renders one event: an id line with the run ID (":after" on
// the final event, SSE-03), then the data line (SSE-02), then the
// deviations of a frame (sseFrameRewrites).
func sseEventFrame(s *Server, wire *sseWire, ev Event) []byte {
	f := eventFrame{ev: ev, id: ev.RunID}
	if ev.RunComplete {
		f.id += ":after"
	}
	f.data = string(s.encodeEvent(ev))
	for _, rw := range sseFrameRewrites {
		if rw.on(s) {
			rw.f(s, &f)
		}
	}
	return wire.event(f.id, f.noID, f.data)
}

// eventFrame is one event frame before it is written: the event, the id
// line's value (no id line when noID) and the data line.
type eventFrame struct {
	ev   Event
	id   string
	noID bool
	data string
}

// sseFrameRewrite reshapes an event frame when its defect or variant is on.
type sseFrameRewrite struct {
	on func(*Server) bool
	f  func(*Server, *eventFrame)
}

// sseFrameRewrites are the output-only deviations of an SSE event frame, in
// the order they apply. Each sees the event as the rows before it left it.
var sseFrameRewrites = []sseFrameRewrite{
	{defectOn(defAfterOnEveryId), func(_ *Server, f *eventFrame) {
		if !f.ev.RunComplete {
			f.id += ":after" // the final suffix on every event
		}
	}},
	{defectOn(defFinalIdSuffix), func(_ *Server, f *eventFrame) {
		if f.ev.RunComplete {
			f.id = f.ev.RunID + ":end"
		}
	}},
	{defectOn(defFinalNotComplete), func(s *Server, f *eventFrame) {
		if f.ev.RunComplete {
			f.ev.RunComplete = false
			f.data = string(s.encodeEvent(f.ev))
		}
	}},
	{defectOn(defContentDataRaw), func(_ *Server, f *eventFrame) {
		if f.ev.Content != "" {
			f.data = f.ev.Content
		}
	}},
	{defectOn(defNoEventId), func(_ *Server, f *eventFrame) { f.noID = true }},
	{defectOn(defDataSplitInString), func(_ *Server, f *eventFrame) {
		// The content's data line is cut after its first character, inside
		// the JSON string: the joined lines hold a raw line break there.
		if i := strings.Index(f.data, `"content":"`); i >= 0 && f.ev.Content != "" {
			cut := i + len(`"content":"`) + 1
			f.data = f.data[:cut] + "\n" + f.data[cut:]
		}
	}},
}

// encodeEvent renders an event object as JSON: the spec's shape, then the
// defects and variants that reshape it (eventRewrites), so that every
// delivery form shows them.
func (s *Server) encodeEvent(ev Event) []byte {
	var on []func(map[string]any)
	for _, rw := range eventRewrites {
		if !rw.on(s) {
			continue
		}
		if rw.ev != nil {
			rw.ev(&ev)
		} else {
			on = append(on, rw.f)
		}
	}
	data, _ := json.Marshal(ev)
	if len(on) == 0 {
		return data
	}
	// One pass through a map for all of them: a number one rewrite sets
	// stays exact for the next.
	return remarshal(data, func(m map[string]any) {
		for _, f := range on {
			f(m)
		}
	})
}

// eventRewrite reshapes an event object when its defect or variant is on:
// ev changes the event before it is encoded (its JSON keeps the struct's
// member order), f the decoded object after.
type eventRewrite struct {
	on func(*Server) bool
	f  func(map[string]any)
	ev func(*Event)
}

func defectOn(d defectID) func(*Server) bool   { return func(s *Server) bool { return s.defect(d) } }
func variantOn(v variantID) func(*Server) bool { return func(s *Server) bool { return s.variant(v) } }

// eventRewrites are the output-only deviations of an event object, in the
// order they apply: the rows on the event (ev) before the encoding, then the
// defects, then the variants, richer-nulls last so that no other variant
// fills its empty objects.
var eventRewrites = []eventRewrite{
	{on: defectOn(defEventThreadMissing), ev: func(ev *Event) { ev.ThreadID = "" }},
	// The event half of no-thread-header-wrong-thread; answerHeadRewrites has the header half.
	{on: defectOn(defNoThreadHeaderWrongThread), ev: func(ev *Event) { ev.ThreadID += "-other" }},
	{on: defectOn(defToolcallNoName), f: func(m map[string]any) { renameInner(m, "toolCall", "name", "tool") }},
	{on: defectOn(defToolcallNameEmpty), f: func(m map[string]any) {
		if tc, ok := m["toolCall"].(map[string]any); ok {
			tc["tool"], tc["name"] = tc["name"], ""
		}
	}},
	{on: defectOn(defStepTitle), f: func(m map[string]any) { renameInner(m, "step", "description", "title") }},
	{on: defectOn(defPromptNoSensitive), f: dropSensitive},
	{on: defectOn(defPromptFieldsEmpty), f: func(m map[string]any) {
		if p, ok := m["prompt"].(map[string]any); ok {
			p["fields"] = []any{}
		}
	}},
	{on: variantOn(varExtraMembers), f: addExtraMembers},
	{on: variantOn(varNumericRunIDs), f: numericRunID},       // ids.go
	{on: variantOn(varNumericThreadIDs), f: numericThreadID}, // ids.go
	{on: variantOn(varOmitEmptyFields), f: omitEmptyFields},
	{on: variantOn(varOtherFieldTypes), f: otherFieldTypes},
	{on: variantOn(varRicherNumericFlags), f: richerNumericFlags},
	{on: variantOn(varRicherNulls), f: richerNulls},
}

// remarshal rewrites a JSON object through a map.
func remarshal(data []byte, f func(map[string]any)) []byte {
	var m map[string]any
	_ = json.Unmarshal(data, &m)
	f(m)
	out, _ := json.Marshal(m)
	return out
}

// richerZero holds each richer field's unset form (richer-nulls): null,
// false, or an empty object for the fields whose value is an object.
var richerZero = map[string]func() any{
	"waitingOnModel": func() any { return false }, "toolInput": emptyObject, "toolCall": emptyObject,
	"step": emptyObject, "prompt": emptyObject, "input": func() any { return nil },
	"replayComplete": func() any { return false }, "username": func() any { return nil },
}

func emptyObject() any { return map[string]any{} }

func dropSensitive(m map[string]any) {
	if p, ok := m["prompt"].(map[string]any); ok {
		delete(p, "sensitive")
	}
}

// addExtraMembers serves extra-members: members the spec does not name.
func addExtraMembers(m map[string]any) {
	m["x_vendor"] = map[string]any{"region": "local", "seq": 1}
	m["object"] = "event"
}

// omitEmptyFields serves omit-empty-fields: empty, false and null members
// are left out.
func omitEmptyFields(m map[string]any) {
	for k, v := range m {
		if v == "" || v == false || v == nil {
			delete(m, k)
		}
	}
	if p, ok := m["prompt"].(map[string]any); ok && p["sensitive"] == false {
		delete(p, "sensitive")
	}
}

// otherFieldTypes serves other-field-types: the members whose type the spec
// leaves open take other types.
func otherFieldTypes(m map[string]any) {
	if t, err := time.Parse(time.RFC3339Nano, fmt.Sprint(m["time"])); err == nil {
		m["time"] = t.UnixMilli()
	}
	if c, ok := m["contentID"].(string); ok && c != "" {
		m["contentID"] = len(c)*1000 + int(c[len(c)-1])
	}
	if e, ok := m["error"].(string); ok && e != "" {
		m["error"] = map[string]any{"message": e, "code": "run_failed"}
	}
	for _, k := range []string{"input", "username"} {
		if v, ok := m[k].(string); ok && v != "" {
			m[k] = map[string]any{"value": v}
		}
	}
	if tc, ok := m["toolCall"].(map[string]any); ok {
		args, _ := json.Marshal(tc["arguments"])
		tc["arguments"], tc["id"] = string(args), "call_1"
	}
	if st, ok := m["step"].(map[string]any); ok {
		st["id"], st["index"] = "stp_1", 1
	}
	if ti, ok := m["toolInput"].(map[string]any); ok && len(ti) > 0 {
		// The arguments as the model streams them: text, not an object.
		b, _ := json.Marshal(ti)
		m["toolInput"] = string(b)
	}
	if m["replayComplete"] == true {
		m["replayComplete"] = map[string]any{"replayed": true}
	}
	if p, ok := m["prompt"].(map[string]any); ok {
		fields := []any{}
		names, _ := p["fields"].([]any)
		for _, f := range names {
			fields = append(fields, map[string]any{"name": f, "type": "text"})
		}
		p["fields"] = fields
	}
}

// richerNumericFlags serves richer-numeric-flags: the boolean richer
// fields as 0/1 numbers on every event, and a prompt's sensitive flag
// likewise. A field another variant gave another type stays as it is.
func richerNumericFlags(m map[string]any) {
	for _, k := range []string{"waitingOnModel", "replayComplete"} {
		switch m[k] {
		case true:
			m[k] = 1
		case false, nil:
			m[k] = 0
		}
	}
	if p, ok := m["prompt"].(map[string]any); ok {
		switch p["sensitive"] {
		case true:
			p["sensitive"] = 1
		case false:
			p["sensitive"] = 0
		}
	}
}

// richerNulls serves richer-nulls: every richer field is present, unset
// ones in their zero form, and the final event's content is null.
func richerNulls(m map[string]any) {
	for k, zero := range richerZero {
		if _, ok := m[k]; !ok {
			m[k] = zero()
		}
	}
	if m["runComplete"] == true && m["content"] == "" {
		m["content"] = nil
	}
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
		writeJSON(w, s.answerStatus(w, formJSON, false), s.envelope(run))
		return
	}
	if !run.wait(r.Context()) {
		s.abandon(run)
		return
	}
	status := s.answerStatus(w, formJSON, false)
	if s.defect(defFailedEnvelopeNoThread) && runFailed(run) {
		// Defect: a failed run's items lack threadID.
		env := s.envelope(run)
		items, _ := env["items"].([]json.RawMessage)
		for i, it := range items {
			items[i] = remarshal(it, func(m map[string]any) { delete(m, "threadID") })
		}
		writeJSON(w, status, env)
		return
	}
	if s.defect(defEnvelopeRepeatedTail) {
		// Defect: a second envelope with the final event follows the first.
		evs, _, _ := run.snapshot(0)
		tail := map[string]any{"items": []json.RawMessage{s.encodeEvent(evs[len(evs)-1])}}
		first, _ := json.Marshal(s.envelope(run))
		second, _ := json.Marshal(tail)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write(append(append(first, '\n'), second...))
		return
	}
	writeJSON(w, status, s.envelope(run))
}

// envelope is the JSON envelope of a run's events so far.
func (s *Server) envelope(run *run) map[string]any {
	evs, _, _ := run.snapshot(0)
	items := make([]json.RawMessage, 0, len(evs))
	for _, ev := range evs {
		if item := s.envelopeItem(ev); item != nil {
			items = append(items, item)
		}
	}
	env := map[string]any{"items": items}
	for _, rw := range envelopeRewrites {
		if rw.on(s) {
			rw.f(env, items)
		}
	}
	return env
}

// envelopeItem is an event as an envelope item, after the rewrites of an
// item (envelopeItemRewrites); nil when one leaves it out.
func (s *Server) envelopeItem(ev Event) json.RawMessage {
	item := json.RawMessage(s.encodeEvent(ev))
	for _, rw := range envelopeItemRewrites {
		if item == nil {
			break
		}
		if rw.on(s) {
			item = rw.f(ev, item)
		}
	}
	return item
}

// envelopeItemRewrite reshapes, or leaves out (nil), the envelope item of
// an event when its defect or variant is on.
type envelopeItemRewrite struct {
	on func(*Server) bool
	f  func(ev Event, item json.RawMessage) json.RawMessage
}

// envelopeItemRewrites are the output-only deviations of the envelope's
// items (on the invoke and the events routes), in the order they apply.
var envelopeItemRewrites = []envelopeItemRewrite{
	{defectOn(defEnvelopeContentOnly), func(ev Event, item json.RawMessage) json.RawMessage {
		return keepItem(item, ev.Content != "" || ev.RunComplete)
	}},
	{defectOn(defEnvelopeDropsError), func(ev Event, item json.RawMessage) json.RawMessage {
		return keepItem(item, ev.Error == "")
	}},
	{defectOn(defEnvelopeItemIdsMissing), func(_ Event, item json.RawMessage) json.RawMessage {
		return remarshal(item, func(m map[string]any) { delete(m, "runID"); delete(m, "threadID") })
	}},
}

// keepItem is item when keep holds, else nil: the item is left out.
func keepItem(item json.RawMessage, keep bool) json.RawMessage {
	if !keep {
		return nil
	}
	return item
}

// envelopeRewrite reshapes the envelope object (env, whose items are
// items) when its defect or variant is on.
type envelopeRewrite struct {
	on func(*Server) bool
	f  func(env map[string]any, items []json.RawMessage)
}

// envelopeRewrites are the output-only deviations of the envelope object
// around the items.
var envelopeRewrites = []envelopeRewrite{
	{variantOn(varExtraMembers), func(env map[string]any, items []json.RawMessage) {
		env["object"] = "list"
		env["x_vendor"] = map[string]any{"count": len(items)}
	}},
}

// writePlain streams the content of each event as plain text, flushed as it
// is written: well inside the spec's "at most every 500 ms" (FMT-06).
func (s *Server) writePlain(w http.ResponseWriter, r *http.Request, run *run) {
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(s.answerStatus(w, formPlain, false))
	// The headers go out with the first text, or alone once the run has
	// been quiet for plainHeaderWait: a quick answer then costs one write.
	if !waitForOutput(r, run, plainHeaderWait) {
		_ = rc.Flush()
	}
	if s.defect(defPlainBuffered) || (s.defect(defPlainBufferedDefault) && len(r.Header.Values("Accept")) == 0) ||
		s.defect(defProjectPlainBuffered) && projectRoute(r) {
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
	if s.defect(defDisconnectIgnoredPlain) {
		run.keepOnDisconnect = true
	}
	if s.defect(defPlainFlush750ms) {
		s.plainOnTimer(w, r, run, plainFlushSlow)
		return
	}
	if s.variant(varPlainFlushTimer) {
		s.plainOnTimer(w, r, run, plainFlushEvery)
		return
	}
	if s.defect(defPlainDebounced) {
		s.plainDebounced(w, r, run)
		return
	}
	var last time.Time
	s.stream(r, run, 0, func(ev Event) error {
		if ev.Content == "" {
			return nil
		}
		if s.defect(defPlainPaced) {
			// Defect: one fragment per plainPace, however fast they come.
			if wait := time.Until(last.Add(plainPace)); wait > 0 {
				if !sleepCtx(r.Context(), wait) {
					return r.Context().Err()
				}
			}
			last = time.Now()
		}
		if _, err := io.WriteString(w, ev.Content); err != nil {
			return err
		}
		if s.defect(defPlainPaced) {
			return rc.Flush() // each fragment on its own
		}
		return nil
	}, rc.Flush, nil) // the text so far goes out whenever the run pauses; at its end, with the end of the response
}

// plainPace is the steady pace of the plain-paced defect.
const plainPace = 1200 * time.Millisecond

// plainFlushEvery is the flush timer of the plain-flush-timer variant: the
// spec's limit itself.
const plainFlushEvery = 500 * time.Millisecond

// plainFlushSlow is the flush timer of the plain-flush-750ms defect.
const plainFlushSlow = 750 * time.Millisecond

// plainOnTimer streams plain text buffered, flushed every period (the
// plain-flush-timer variant, the plain-flush-750ms defect).
func (s *Server) plainOnTimer(w http.ResponseWriter, r *http.Request, run *run, period time.Duration) {
	rc := http.NewResponseController(w)
	tick := time.NewTicker(period)
	defer tick.Stop()
	var pending []byte
	flush := func() bool {
		if len(pending) == 0 {
			return true
		}
		_, err := w.Write(pending)
		pending = pending[:0]
		return err == nil && rc.Flush() == nil
	}
	next := 0
	for {
		evs, done, changed := run.snapshot(next)
		pending, next = appendContent(pending, evs), next+len(evs)
		if done {
			flush()
			return
		}
		select {
		case <-changed:
		case <-tick.C:
			if !flush() {
				s.abandon(run)
				return
			}
		case <-r.Context().Done():
			s.abandon(run)
			return
		}
	}
}

// appendContent appends the events' content to pending (the buffered
// plain-text deviations).
func appendContent(pending []byte, evs []Event) []byte {
	for _, ev := range evs {
		pending = append(pending, ev.Content...)
	}
	return pending
}

// plainDebounce is the pause the plain-debounced defect waits for.
const plainDebounce = 200 * time.Millisecond

// plainDebounced streams plain text buffered, flushed only once the run has
// produced nothing for plainDebounce (the plain-debounced defect).
func (s *Server) plainDebounced(w http.ResponseWriter, r *http.Request, run *run) {
	rc := http.NewResponseController(w)
	quiet := time.NewTimer(plainDebounce)
	defer quiet.Stop()
	var pending []byte
	next := 0
	for {
		evs, done, changed := run.snapshot(next)
		pending, next = appendContent(pending, evs), next+len(evs)
		if done {
			_, _ = w.Write(pending)
			return
		}
		if len(evs) > 0 {
			quiet.Reset(plainDebounce)
		}
		select {
		case <-changed:
		case <-quiet.C:
			if len(pending) > 0 {
				if _, err := w.Write(pending); err != nil || rc.Flush() != nil {
					s.abandon(run)
					return
				}
				pending = pending[:0]
			}
		case <-r.Context().Done():
			s.abandon(run)
			return
		}
	}
}

// sleepCtx waits d or until ctx ends; false when ctx ended.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// plainHeaderWait bounds how long the plain form holds its headers back for
// the run's first text: far inside the spec's 500 ms flush interval.
const plainHeaderWait = 50 * time.Millisecond

// waitForOutput waits up to d for the run to have content or to end, and
// reports whether it ended.
func waitForOutput(r *http.Request, run *run, d time.Duration) bool {
	var timer *time.Timer // made only when there is something to wait for
	for {
		content, done, changed := run.progress()
		if done || content {
			return done
		}
		if timer == nil {
			timer = time.NewTimer(d)
			defer timer.Stop()
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
			return true, r.done, r.changedLocked()
		}
	}
	return false, r.done, r.changedLocked()
}

// writeJSON writes v as a JSON response.
var writeJSON = httpserve.WriteJSON
