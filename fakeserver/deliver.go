package fakeserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
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
func (s *view) stream(r *http.Request, run *run, from int, write func(Event) error, idle, ping func() error) bool {
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
func (s *view) abandon(run *run) {
	if !s.defect(defDisconnectIgnored) && !run.keepOnDisconnect {
		run.cancel()
	}
}

// answerStatus sets the head of an invoke answer just before it goes out,
// the deviations of answerHeadRewrites applied, and returns its status. ack
// is the async acknowledgement, else it is a synchronous answer in form.
func (s *view) answerStatus(w http.ResponseWriter, form responseForm, ack bool) int {
	a := answerHead{h: w.Header(), status: http.StatusOK, form: form, ack: ack}
	return rewritten(s.sw, answerHeadRewrites, a).status
}

// answerHead is the status and header of an invoke answer.
type answerHead struct {
	h      http.Header
	status int
	form   responseForm
	ack    bool // the async acknowledgement (form is then formJSON)
}

// answerHeadRewrites are the output-only deviations of an invoke answer's
// status and header, in the order they apply. The spec names no status for
// a successful answer, so the 2xx variants pick others.
var answerHeadRewrites = []rewrite[*answerHead]{
	{defNoThreadHeader, func(a *answerHead) { a.h.Del(hdrThreadID) }},
	// The header half of no-thread-header-wrong-thread; eventFieldRewrites has the event half.
	{defNoThreadHeaderWrongThread, func(a *answerHead) {
		if !a.ack {
			a.h.Del(hdrThreadID)
		}
	}},
	{defSseAsTextPlain, func(a *answerHead) {
		if a.form == formSSE && !a.ack {
			a.h.Set("Content-Type", "text/plain; charset=utf-8")
		}
	}},
	{varSync2xx, func(a *answerHead) {
		if !a.ack {
			a.status = http.StatusNonAuthoritativeInfo
		}
	}},
	{varAsync202, func(a *answerHead) {
		if a.ack {
			a.status = http.StatusAccepted
		}
	}},
}

// writeSSE writes the SSE form (FMT-01) framed as the Events section says.
func (s *view) writeSSE(w http.ResponseWriter, r *http.Request, run *run) {
	if !s.sseHoldBack(w, r, run) {
		return
	}
	setSSEHeader(w)
	status := s.answerStatus(w, formSSE, false)
	wire := s.sseWire()
	// Whether the stream ends without its close is decided at its end: an
	// abort may come while it streams (sseNoClose).
	noClose := func() bool { return s.sseNoClose(r, run) }
	drop := s.cellContentDropped(r)
	if run.isDone() {
		s.writeSSEWhole(w, run, status, wire, noClose, drop)
		return
	}
	if c, ok := s.hijackSSE(w, r, run, status, wire.open()); ok {
		if c != nil { // sse_conn.go: the run's callbacks write the rest
			c.serve(s.sseEvents(wire, c.frame, drop), s.ssePing(wire, c.frame), func() { s.sseEnd(wire, c.frame, run, noClose) })
		}
		return
	}
	frame := startSSE(w, status)
	if err := frame(wire.open()); err != nil {
		s.abandon(run)
		return
	}
	if !s.stream(r, run, 0, s.sseEvents(wire, frame, drop), nil, s.ssePing(wire, frame)) {
		return
	}
	s.sseEnd(wire, frame, run, noClose)
}

// writeSSEWhole writes the SSE stream of a run that is over already (a
// quick run, or one a defect held the stream back for) at once, through w:
// there is nothing to wait for, so the connection stays with net/http and
// is kept alive, unlike a stream's that is taken over (sse_conn.go).
func (s *view) writeSSEWhole(w http.ResponseWriter, run *run, status int, wire *sseWire, noClose func() bool, drop *contentDrop) {
	evs, _, _ := run.snapshot(0)
	buf := answerBuf()
	defer buf.free()
	buf.b = append(buf.b, wire.open()...)
	complete := true
	var failed failedStream
	for _, ev := range evs {
		if failed.skip(s, ev) {
			continue
		}
		ev = drop.apply(ev)
		var err error
		if buf.b, err = s.appendSSEEvent(buf.b, wire, ev); err != nil { // the stream-cut-mid-frame defect
			complete = false
			break
		}
	}
	if complete {
		s.sseEnd(wire, func(p []byte) error {
			buf.b = append(buf.b, p...)
			return nil
		}, run, noClose)
	}
	w.WriteHeader(status)
	_, _ = w.Write(buf.b)
}

// buffer is an answer being put together before it is written: a written
// answer leaves its bytes for the next (answerBuf).
type buffer struct{ b []byte }

var buffers = sync.Pool{New: func() any { return &buffer{b: make([]byte, 0, 2048)} }}

// answerBuf returns an empty buffer; free gives it back once its bytes are
// written.
func answerBuf() *buffer { return buffers.Get().(*buffer) }

func (b *buffer) free() {
	if cap(b.b) > 64<<10 {
		return // a large answer's buffer is not kept
	}
	b.b = b.b[:0]
	buffers.Put(b)
}

// sseHoldBack serves the defects that hold the stream back, until the run
// ends or, start-late, until its first content: SSE-01 has "event: start"
// with data {} go at once, before the agent produces anything. It reports
// false when the request is answered already.
func (s *view) sseHoldBack(w http.ResponseWriter, r *http.Request, run *run) bool {
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
	if s.defect(defStartLate) || s.defect(defAliasStartLate) && s.aliasPath(r) {
		// Defect: nothing is written until the agent's first output.
		waitForContent(r, run)
	}
	return true
}

// setSSEHeader sets the SSE response's header fields.
func setSSEHeader(w http.ResponseWriter) {
	h := w.Header()
	h["Content-Type"] = valueSSE
	h["Cache-Control"] = valueNoCache
	h["X-Accel-Buffering"] = valueNo
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
func (s *view) ssePing(wire *sseWire, frame func([]byte) error) func() error {
	if s.defect(defNoPing) || s.defect(defPingAfterEvents) {
		return nil
	}
	return func() error { return frame(wire.ping(s.variant(varPingLoneLine))) }
}

// sseEnd writes "event: close" with data {} at the end, also after an error
// (SSE-05).
func (s *view) sseEnd(wire *sseWire, frame func([]byte) error, run *run, noClose func() bool) {
	if s.defect(defEventsAfterComplete) {
		_ = frame(sseEventFrame(s, wire, Event{RunID: run.id, ThreadID: run.thread.id}))
	}
	if noClose() { // the defects of sseNoClose
		return
	}
	if s.variant(varSseComments) {
		_ = frame(wire.comment("", true))
	}
	_ = frame(wire.control("close"))
}

// sseEvents returns the writer of a stream's event frames (SSE-02), with
// the comments variant, the cut-frame defect and a cell's dropped content
// (drop, nil when off).
func (s *view) sseEvents(wire *sseWire, frame func([]byte) error, drop *contentDrop) func(Event) error {
	var failed failedStream
	return func(ev Event) error {
		if failed.skip(s, ev) {
			return nil
		}
		ev = drop.apply(ev)
		b, err := s.appendSSEEvent(nil, wire, ev)
		if ferr := frame(b); err == nil {
			err = ferr
		}
		return err
	}
}

// failedStream serves the failed-run-no-final defect for one stream: after
// an event with error set, the final event is left out.
type failedStream struct{ failed bool }

func (f *failedStream) skip(s *view, ev Event) bool {
	f.failed = f.failed || ev.Error != ""
	return f.failed && ev.RunComplete && s.defect(defFailedRunNoFinal)
}

// appendSSEEvent appends what a stream writes for an event to b: its frame,
// with the comments variant and the defects of a stream's event frames. An
// error says the stream ends there (the stream-cut-mid-frame defect).
func (s *view) appendSSEEvent(b []byte, wire *sseWire, ev Event) ([]byte, error) {
	if s.defect(defStreamCutMidFrame) && ev.RunComplete {
		// Defect: the stream ends before the final frame's blank line.
		return cutBlankLine(s.appendEventFrame(b, wire, ev)), errCut
	}
	if s.variant(varSseComments) {
		b = append(b, wire.comment("progress", false)...)
	}
	b = s.appendEventFrame(b, wire, ev)
	if s.defect(defPingAfterEvents) {
		b = append(b, wire.ping(false)...)
	}
	return b, nil
}

var errCut = errors.New("the stream was cut")

// sseEventFrame renders one event's frame (appendEventFrame).
func sseEventFrame(s *view, wire *sseWire, ev Event) []byte { return s.appendEventFrame(nil, wire, ev) }

// appendEventFrame appends one event's frame to b: an id line with the run
// ID (":after" on the final event, SSE-03), then the data line (SSE-02),
// then the deviations of a frame (sseFrameRewrites). The plain wire's frame
// with no deviation is appended in place.
func (s *view) appendEventFrame(b []byte, wire *sseWire, ev Event) []byte {
	if wire.plain && !anyOn(s.sw, sseFrameRewrites) {
		b = append(b, "id: "...)
		b = append(b, ev.RunID...)
		if ev.RunComplete {
			b = append(b, ":after"...)
		}
		b = append(b, "\ndata: "...)
		b = s.appendEvent(b, ev)
		return append(b, "\n\n"...)
	}
	f := eventFrame{s: s, ev: ev, id: ev.RunID}
	if ev.RunComplete {
		f.id += ":after"
	}
	f.data = string(s.encodeEvent(ev))
	f = rewritten(s.sw, sseFrameRewrites, f)
	return append(b, wire.event(f.id, f.noID, f.data)...)
}

// eventFrame is one event frame before it is written: the event, the id
// line's value (no id line when noID) and the data line.
type eventFrame struct {
	s    *view // that writes it
	ev   Event
	id   string
	noID bool
	data string
}

// sseFrameRewrites are the output-only deviations of an SSE event frame, in
// the order they apply. Each sees the event as the rows before it left it.
var sseFrameRewrites = []rewrite[*eventFrame]{
	{defAfterOnEveryId, func(f *eventFrame) {
		if !f.ev.RunComplete {
			f.id += ":after" // the final suffix on every event
		}
	}},
	{defFinalIdSuffix, func(f *eventFrame) {
		if f.ev.RunComplete {
			f.id = f.ev.RunID + ":end"
		}
	}},
	{defFinalNotComplete, func(f *eventFrame) {
		if f.ev.RunComplete {
			f.ev.RunComplete = false
			f.data = string(f.s.encodeEvent(f.ev))
		}
	}},
	{defContentDataRaw, func(f *eventFrame) {
		if f.ev.Content != "" {
			f.data = f.ev.Content
		}
	}},
	{defNoEventId, func(f *eventFrame) { f.noID = true }},
	{defDataSplitInString, func(f *eventFrame) {
		// The content's data line is cut after its first character, inside
		// the JSON string: the joined lines hold a raw line break there.
		if i := strings.Index(f.data, `"content":"`); i >= 0 && f.ev.Content != "" {
			cut := i + len(`"content":"`) + 1
			f.data = f.data[:cut] + "\n" + f.data[cut:]
		}
	}},
}

// encodeEvent renders an event object as JSON: the spec's shape, then the
// defects and variants that reshape it (eventFieldRewrites,
// eventObjectRewrites), so that every delivery form shows them.
func (s *view) encodeEvent(ev Event) []byte { return s.appendEvent(nil, ev) }

// appendEvent appends the event object encodeEvent renders to b.
func (s *view) appendEvent(b []byte, ev Event) []byte {
	set := s.sw
	ev = rewritten(set, eventFieldRewrites, ev)
	if !anyOn(set, eventObjectRewrites) {
		return appendEventJSON(b, &ev)
	}
	// One pass through a map for all of them: a number one rewrite sets
	// stays exact for the next.
	return append(b, remarshal(appendEventJSON(nil, &ev), func(m map[string]any) {
		rewriteIn(set, eventObjectRewrites, m)
	})...)
}

// eventFieldRewrites are the output-only deviations of an event that
// change its fields before it is encoded (its JSON keeps the struct's member
// order), in the order they apply.
var eventFieldRewrites = []rewrite[*Event]{
	{defEventThreadMissing, func(ev *Event) { ev.ThreadID = "" }},
	// The event half of no-thread-header-wrong-thread; answerHeadRewrites has the header half.
	{defNoThreadHeaderWrongThread, func(ev *Event) { ev.ThreadID += "-other" }},
}

// eventObjectRewrites are the output-only deviations of an encoded event
// object, decoded into a map, in the order they apply: the defects, then the
// variants, richer-nulls last so that no other variant fills its empty
// objects.
var eventObjectRewrites = []rewrite[map[string]any]{
	{defToolcallNoName, func(m map[string]any) { renameInner(m, "toolCall", "name", "tool") }},
	{defToolcallNameEmpty, func(m map[string]any) {
		if tc, ok := m["toolCall"].(map[string]any); ok {
			tc["tool"], tc["name"] = tc["name"], ""
		}
	}},
	{defStepTitle, func(m map[string]any) { renameInner(m, "step", "description", "title") }},
	{defPromptNoSensitive, dropSensitive},
	{defPromptFieldsEmpty, func(m map[string]any) {
		if p, ok := m["prompt"].(map[string]any); ok {
			p["fields"] = []any{}
		}
	}},
	{varExtraMembers, addExtraMembers},
	{varNumericRunIDs, numericRunID},       // ids.go
	{varNumericThreadIDs, numericThreadID}, // ids.go
	{varOmitEmptyFields, omitEmptyFields},
	{varOtherFieldTypes, otherFieldTypes},
	{varRicherNumericFlags, richerNumericFlags},
	{varRicherNulls, richerNulls},
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
func (s *view) writeEnvelope(w http.ResponseWriter, r *http.Request, run *run) {
	if !s.envelopeWaits() {
		// Defect: answer with what exists now instead of waiting.
		s.writeEnvelopeNow(w, s.answerStatus(w, formJSON, false), run, false)
		return
	}
	if !run.wait(r.Context()) {
		s.abandon(run)
		return
	}
	s.writeEnvelopeNow(w, s.answerStatus(w, formJSON, false), run, true)
}

// envelopeWaits reports whether the JSON envelope waits for the end of the
// run (FMT-02): it does, but under the envelope-early defect.
func (s *view) envelopeWaits() bool { return !s.defect(defEnvelopeEarly) }

// writeEnvelopeNow answers with the JSON envelope of the run's events so
// far; final: the run is over, and the rows of envelopeAnswerRewrites apply.
func (s *view) writeEnvelopeNow(w http.ResponseWriter, status int, run *run, final bool) {
	buf := answerBuf()
	defer buf.free()
	buf.b = s.appendEnvelope(buf.b, run)
	if final && anyOn(s.sw, envelopeAnswerRewrites) {
		rewriteIn(s.sw, envelopeAnswerRewrites, &envelopeAnswer{s: s, run: run, buf: buf})
	}
	writeJSONBytes(w, status, buf.b)
}

// envelopeAnswer is the answer of the JSON envelope form, its bytes in buf,
// with its run's envelope written by s.
type envelopeAnswer struct {
	s   *view
	run *run
	buf *buffer
}

// envelopeAnswerRewrites are the output-only deviations of the envelope
// form's answer once its run is over.
var envelopeAnswerRewrites = []rewrite[*envelopeAnswer]{
	// A failed run's items lack threadID.
	{defFailedEnvelopeNoThread, func(a *envelopeAnswer) {
		if !runFailed(a.run) {
			return
		}
		env := a.s.envelope(a.run)
		items, _ := env["items"].([]json.RawMessage)
		for i, it := range items {
			items[i] = remarshal(it, func(m map[string]any) { delete(m, "threadID") })
		}
		b, _ := json.Marshal(env)
		a.buf.b = append(append(a.buf.b[:0], b...), '\n')
	}},
	// A second envelope with the final event follows the first.
	{defEnvelopeRepeatedTail, func(a *envelopeAnswer) {
		evs, _, _ := a.run.snapshot(0)
		tail, _ := json.Marshal(map[string]any{"items": []json.RawMessage{a.s.encodeEvent(evs[len(evs)-1])}})
		a.buf.b = append(a.buf.b, tail...)
	}},
}

// appendEnvelope appends the JSON envelope of a run's events so far to b,
// as an answer writes it (ended by a line feed). With no envelope rewrite
// on, its items are appended in place: the map, the raw items and
// json.Marshal's pass over them (envelope) cost more than the rest of a
// quick run's answer.
func (s *view) appendEnvelope(b []byte, run *run) []byte {
	if s.rewritesEnvelope() {
		env, _ := json.Marshal(s.envelope(run))
		return append(append(b, env...), '\n')
	}
	evs, _, _ := run.snapshot(0)
	b = append(b, `{"items":[`...)
	for i, ev := range evs {
		if i > 0 {
			b = append(b, ',')
		}
		b = s.appendEvent(b, ev)
	}
	return append(b, "]}\n"...)
}

// rewritesEnvelope reports whether an envelope or envelope item rewrite is
// on.
func (s *view) rewritesEnvelope() bool {
	set := s.sw
	return anyOn(set, envelopeItemRewrites) || anyOn(set, envelopeRewrites)
}

// The header values of every answer of a form, made once and shared:
// nothing changes a value slice in place (Set and Del replace it, and Add
// appends to a copy, as these have no room left).
var (
	valueJSON    = []string{"application/json"}
	valueSSE     = []string{"text/event-stream"}
	valuePlain   = []string{"text/plain; charset=utf-8"}
	valueNoCache = []string{"no-cache"}
	valueNo      = []string{"no"}
)

// writeJSONBytes writes b, a JSON document ended by a line feed, as the
// answer (as writeJSON would write it).
func writeJSONBytes(w http.ResponseWriter, status int, b []byte) {
	w.Header()["Content-Type"] = valueJSON
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// envelope is the JSON envelope of a run's events so far.
func (s *view) envelope(run *run) map[string]any {
	evs, _, _ := run.snapshot(0)
	items := make([]json.RawMessage, 0, len(evs))
	for _, ev := range evs {
		if item := s.envelopeItem(ev); item != nil {
			items = append(items, item)
		}
	}
	env := map[string]any{"items": items}
	rewriteIn(s.sw, envelopeRewrites, env)
	return env
}

// envelopeItem is an event as an envelope item, after the rewrites of an
// item (envelopeItemRewrites); nil when one leaves it out.
func (s *view) envelopeItem(ev Event) json.RawMessage {
	it := envelopeItem{ev: ev, json: s.encodeEvent(ev)}
	return rewritten(s.sw, envelopeItemRewrites, it).json
}

// envelopeItem is an event and its item in an envelope; no item (nil json)
// leaves the event out.
type envelopeItem struct {
	ev   Event
	json json.RawMessage
}

// envelopeItemRewrites are the output-only deviations of the envelope's
// items (on the invoke and the events routes), in the order they apply.
var envelopeItemRewrites = []rewrite[*envelopeItem]{
	{defEnvelopeContentOnly, func(it *envelopeItem) { it.keepIf(it.ev.Content != "" || it.ev.RunComplete) }},
	{defEnvelopeDropsError, func(it *envelopeItem) { it.keepIf(it.ev.Error == "") }},
	{defEnvelopeItemIdsMissing, func(it *envelopeItem) {
		if it.json != nil {
			it.json = remarshal(it.json, func(m map[string]any) { delete(m, "runID"); delete(m, "threadID") })
		}
	}},
	{defEnvelopeToolcallUnnamed, func(it *envelopeItem) {
		if it.json != nil && it.ev.ToolCall != nil {
			it.json = remarshal(it.json, func(m map[string]any) { renameInner(m, "toolCall", "name", "tool") })
		}
	}},
	{defEnvelopeWaitingDropped, func(it *envelopeItem) {
		if it.json != nil && it.ev.WaitingOnModel {
			it.json = remarshal(it.json, func(m map[string]any) { delete(m, "waitingOnModel") })
		}
	}},
	{defEnvelopeStepUntitled, func(it *envelopeItem) {
		if it.json != nil && it.ev.Step != nil {
			it.json = remarshal(it.json, func(m map[string]any) { renameInner(m, "step", "description", "title") })
		}
	}},
}

// keepIf leaves the event out unless keep holds.
func (it *envelopeItem) keepIf(keep bool) {
	if !keep {
		it.json = nil
	}
}

// envelopeRewrites are the output-only deviations of the envelope object
// ({"items": [...]}) around the items.
var envelopeRewrites = []rewrite[map[string]any]{
	{varExtraMembers, func(env map[string]any) {
		items, _ := env["items"].([]json.RawMessage)
		env["object"] = "list"
		env["x_vendor"] = map[string]any{"count": len(items)}
	}},
}

// writePlain streams the content of each event as plain text, flushed as it
// is written: well inside the spec's "at most every 500 ms" (FMT-06).
func (s *view) writePlain(w http.ResponseWriter, r *http.Request, run *run) {
	rc := http.NewResponseController(w)
	w.Header()["Content-Type"] = valuePlain
	w.Header()["X-Accel-Buffering"] = valueNo
	w.WriteHeader(s.answerStatus(w, formPlain, false))
	// The headers go out with the first text, or alone once the run has
	// been quiet for plainHeaderWait: a quick answer then costs one write.
	if !waitForOutput(r, run, plainHeaderWait) {
		_ = rc.Flush()
	}
	d := s.plainDelivery(r)
	if d.held {
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
	run.keepOnDisconnect = run.keepOnDisconnect || d.keepRun
	switch {
	case d.flushEvery > 0:
		s.plainOnTimer(w, r, run, d.flushEvery)
		return
	case d.debounced:
		s.plainDebounced(w, r, run)
		return
	}
	var last time.Time
	s.stream(r, run, 0, func(ev Event) error {
		if ev.Content == "" {
			return nil
		}
		if d.paced {
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
		if d.paced {
			return rc.Flush() // each fragment on its own
		}
		return nil
	}, rc.Flush, nil) // the text so far goes out whenever the run pauses; at its end, with the end of the response
}

// plainDelivery is how the plain-text form goes out (FMT-06): written as
// the run appends it and flushed whenever the run pauses, or, under a
// deviation, otherwise.
type plainDelivery struct {
	held       bool          // the whole text once the run ends
	keepRun    bool          // the run goes on when its client leaves
	flushEvery time.Duration // buffered and flushed on a timer
	debounced  bool          // buffered and flushed once the run pauses plainDebounce
	paced      bool          // one fragment per plainPace
}

// plainDelivery decides how the plain-text answer to r goes out.
func (s *view) plainDelivery(r *http.Request) plainDelivery {
	d := plainDelivery{
		held: s.defect(defPlainBuffered) || s.defect(defPlainBufferedDefault) && len(r.Header["Accept"]) == 0 ||
			s.defect(defProjectPlainBuffered) && projectRoute(r),
		keepRun:   s.defect(defDisconnectIgnoredPlain),
		debounced: s.defect(defPlainDebounced),
		paced:     s.defect(defPlainPaced),
	}
	switch {
	case s.defect(defPlainFlush750ms):
		d.flushEvery = plainFlushSlow
	case s.variant(varPlainFlushTimer):
		d.flushEvery = plainFlushEvery
	}
	return d
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
func (s *view) plainOnTimer(w http.ResponseWriter, r *http.Request, run *run, period time.Duration) {
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
func (s *view) plainDebounced(w http.ResponseWriter, r *http.Request, run *run) {
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
