package checks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/invokeconf/invokeconf/sseframe"
	"github.com/invokeconf/invokeconf/traffic"
)

const threadHeader = "X-SVC-Thread-Id"

// maxQuote bounds the target bytes a failure quotes.
const maxQuote = 300

// Invoke is an invoke request, read from its method and path.
type Invoke struct {
	// Project is true for the project routes.
	Project bool
	// ID is {id} of an agent route, {project_id} of a project route.
	ID string
	// ThreadSegment is the thread in the path ("" when none).
	ThreadSegment string
	// Async is true with async=true.
	Async bool
}

// InvokeOf reads x's request as an invoke call. The second result is false
// for any other request, and for an async value the spec does not name
// (only true and false are: "async | boolean").
func InvokeOf(x *traffic.Exchange) (Invoke, bool) {
	if x.Request.Method != "POST" {
		return Invoke{}, false
	}
	segs := apiSegments(x.Request.Path())
	var inv Invoke
	switch {
	case len(segs) >= 3 && segs[0] == "api" && segs[1] == "invoke":
		inv.ID = segs[2]
		switch rest := segs[3:]; {
		case len(rest) == 0:
		case len(rest) == 2 && (rest[0] == "thread" || rest[0] == "threads") && rest[1] != "":
			inv.ThreadSegment = rest[1]
		default:
			return Invoke{}, false
		}
	case len(segs) >= 4 && segs[0] == "api" && segs[1] == "projects" && segs[3] == "invoke":
		inv.Project, inv.ID = true, segs[2]
		switch rest := segs[4:]; {
		case len(rest) == 0:
		case len(rest) == 2 && rest[0] == "thread" && rest[1] != "":
			inv.ThreadSegment = rest[1]
		default:
			return Invoke{}, false
		}
	default:
		return Invoke{}, false
	}
	if inv.ID == "" {
		return Invoke{}, false
	}
	q := x.Request.Query()
	if vs, ok := q["async"]; ok {
		if len(vs) != 1 || (vs[0] != "true" && vs[0] != "false") {
			return Invoke{}, false
		}
		inv.Async = vs[0] == "true"
	}
	return inv, true
}

// apiSegments returns the path's segments from its "/api/" on, so a service
// whose base URL has a path of its own (https://host/svc) is read alike.
func apiSegments(path string) []string {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	for i := 0; i+1 < len(segs); i++ {
		if segs[i] == "api" {
			switch segs[i+1] {
			case "invoke", "projects", "threads":
				return segs[i:]
			}
		}
	}
	return segs
}

// syncInvoke returns x's invoke call when it is synchronous and answered
// 2xx, or a Skip.
func syncInvoke(x *traffic.Exchange) (Invoke, error) {
	inv, ok := InvokeOf(x)
	switch {
	case !ok:
		return inv, skip("not an invoke call")
	case inv.Async:
		return inv, skip("an async call")
	case x.Response == nil:
		return inv, skip("no response")
	case x.Response.Status < 200 || x.Response.Status > 299:
		return inv, skip("answered %d", x.Response.Status)
	}
	return inv, nil
}

// accept returns the request's Accept value, or a Skip: when it sent more
// than one Accept line (the spec's "compared literally, as a whole" does not
// say which one counts), or when the recording cannot tell what it sent.
func accept(x *traffic.Exchange) (v string, present bool, err error) {
	if err := requestGap(x, "Accept"); err != nil {
		return "", false, err
	}
	vs := x.Request.Header.Values("Accept")
	switch len(vs) {
	case 0:
		return "", false, nil
	case 1:
		return vs[0], true, nil
	}
	return "", true, skip("more than one Accept line")
}

// requestGap returns an untested Skip when the recording cannot tell what
// the request's header name held (traffic.HeaderGaps).
func requestGap(x *traffic.Exchange, name string) error {
	if g := x.Request.Gaps.Of(name); g != "" {
		return untested(g)
	}
	return nil
}

// responseGap returns an untested Skip when the recording cannot tell what
// the response's header name held.
func responseGap(x *traffic.Exchange, name string) error {
	if x.Response == nil {
		return nil
	}
	if g := x.Response.Gaps.Of(name); g != "" {
		return untested(g)
	}
	return nil
}

// body returns the response's recorded bytes, or a Skip when the recording
// lacks them (a body it holds none of is never an empty one); whole asks
// for the complete body.
func body(x *traffic.Exchange, whole bool) ([]byte, error) {
	if err := responseGap(x, "Content-Type"); err != nil {
		return nil, err // what form the body has is not known
	}
	b := &x.Response.Body
	switch {
	case b.Redacted:
		return nil, untested(NoBody)
	case b.Missing:
		return nil, untested(missingReason(b))
	case whole && b.Truncated:
		return nil, untested(cutReason(b))
	}
	return b.Bytes(), nil
}

// quote returns at most maxQuote bytes of b, quoted.
func quote(b []byte) string {
	if len(b) > maxQuote {
		return fmt.Sprintf("%q... (%d bytes)", b[:maxQuote], len(b))
	}
	return fmt.Sprintf("%q", b)
}

// Frame is an SSE frame of a recorded body with its arrival time.
type Frame struct {
	sseframe.Frame
	// At is when its last byte arrived; -1 when the body is not timed.
	At time.Duration
}

// Frames splits a recorded SSE body into frames.
func Frames(b *traffic.Body) []Frame {
	raw, _ := sseframe.ReadAll(b.Bytes())
	out := make([]Frame, len(raw))
	for i, f := range raw {
		out[i] = Frame{Frame: f, At: -1}
		if at, ok := b.TimeAt(max(f.End-1, 0)); ok {
			out[i].At = at
		}
	}
	return out
}

// event returns the type of the event a frame dispatches ("" for a frame
// that dispatches none: comments, or fields without a data line), as a
// conforming client reads it: the last event line, "message" when the frame
// names none or an empty one.
func event(f sseframe.Frame) string {
	if f.IsComment() || !f.Dispatches() {
		return ""
	}
	return f.Type()
}

// isEventFrame reports whether a frame carries an event object: it
// dispatches an event of the SSE grammar's default type, message (the start
// and close frames, and any other named frame, are no event).
func isEventFrame(f sseframe.Frame) bool { return !f.IsComment() && f.IsMessage() }

// dispatches reports whether a conforming client dispatches an event for a
// frame: comments and frames without a data line (an id, event, retry or
// unknown field alone) are read past like comments.
func dispatches(f sseframe.Frame) bool { return !f.IsComment() && f.Dispatches() }

// data joins a frame's data lines as the SSE grammar does.
func data(f sseframe.Frame) string { d, _ := f.Data(); return d }

// eventObject is the fields of an event object the checks read. runID and
// threadID may be JSON numbers: the spec types them ("string") only in the
// async answer, not in the event object ("runID: Run the event belongs to";
// "threadID: Thread the event belongs to").
type eventObject struct {
	RunID       *string
	ThreadID    *string
	RunComplete *bool           `json:"runComplete"`
	Content     *string         `json:"content"`
	Error       json.RawMessage `json:"error"`
}

// UnmarshalJSON reads runID and threadID as a string or a number's text.
func (e *eventObject) UnmarshalJSON(b []byte) error {
	var raw struct {
		RunID       json.RawMessage `json:"runID"`
		ThreadID    json.RawMessage `json:"threadID"`
		RunComplete *bool           `json:"runComplete"`
		Content     *string         `json:"content"`
		Error       json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*e = eventObject{RunID: idText(raw.RunID), ThreadID: idText(raw.ThreadID), RunComplete: raw.RunComplete,
		Content: raw.Content, Error: raw.Error}
	return nil
}

// idText returns an ID written as a JSON string or number; nil otherwise.
func idText(raw json.RawMessage) *string {
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if len(raw) == 0 || dec.Decode(&v) != nil {
		return nil
	}
	switch t := v.(type) {
	case string:
		return &t
	case json.Number:
		s := numberText(t)
		return &s
	}
	return nil
}

// numberText writes a JSON number that is an integer in decimal digits, so
// an ID written 1e15 or 1000000000000000.0 reads as the digits a header or
// an id line carries; other numbers as written.
func numberText(n json.Number) string {
	f, _, err := big.ParseFloat(n.String(), 10, 256, big.ToNearestEven)
	if err != nil || !f.IsInt() {
		return n.String()
	}
	i, _ := f.Int(nil)
	return i.String()
}

func (e eventObject) complete() bool { return e.RunComplete != nil && *e.RunComplete }

// failed reports whether the event's error is set: present and not null,
// false, "", {} or [] (the active steps' "set").
func (e eventObject) failed() bool { return IsSet(e.Error) }

// object parses s as exactly one JSON object.
func object(s string) (map[string]json.RawMessage, bool) {
	var m map[string]json.RawMessage
	dec := json.NewDecoder(strings.NewReader(s))
	if dec.Decode(&m) != nil || m == nil {
		return nil, false
	}
	if _, err := dec.Token(); err == nil {
		return nil, false // more after the object
	}
	return m, true
}

func eventOf(s string) (eventObject, bool) {
	if _, ok := object(s); !ok {
		return eventObject{}, false
	}
	var e eventObject
	if json.Unmarshal([]byte(s), &e) != nil {
		return eventObject{}, false
	}
	return e, true
}

// looksSSE reports whether a response is an SSE stream: its media type is
// text/event-stream, or it opens with the start frame.
func looksSSE(x *traffic.Exchange, b []byte) bool {
	return traffic.MediaType(x.Response.Header.Get("Content-Type")) == "text/event-stream" || opensWithStart(b)
}

// surelySSE reports whether a response is beyond doubt an SSE stream: its
// media type says so and it opens with the start frame (a plain-text answer
// could hold the words "event: start").
func surelySSE(x *traffic.Exchange, b []byte) bool {
	return traffic.MediaType(x.Response.Header.Get("Content-Type")) == "text/event-stream" && opensWithStart(b)
}

func opensWithStart(b []byte) bool {
	frames, _ := sseframe.ReadAll(b)
	for _, f := range frames {
		if dispatches(f) {
			return event(f) == "start"
		}
	}
	return false
}

// envelope parses a JSON envelope {items:[...]}.
func envelope(b []byte) ([]json.RawMessage, bool) {
	m, ok := object(string(b))
	if !ok {
		return nil, false
	}
	var items []json.RawMessage
	if raw, ok := m["items"]; !ok || json.Unmarshal(raw, &items) != nil || items == nil {
		return nil, false
	}
	return items, true
}

// surelyEnvelope reports whether a response is beyond doubt the JSON
// envelope: its media type is application/json and its body the envelope
// (a plain-text answer could be JSON text).
func surelyEnvelope(x *traffic.Exchange, b []byte) bool {
	_, ok := envelope(b)
	return ok && traffic.MediaType(x.Response.Header.Get("Content-Type")) == "application/json"
}

// events returns the event objects of a synchronous response: the SSE
// stream's or the envelope's; ok is false for other forms or bodies that do
// not parse.
func events(x *traffic.Exchange) ([]eventObject, bool) {
	b := x.Response.Body.Bytes()
	var out []eventObject
	if looksSSE(x, b) {
		for _, f := range Frames(&x.Response.Body) {
			if !f.Terminated || !isEventFrame(f.Frame) {
				continue
			}
			e, ok := eventOf(data(f.Frame))
			if !ok {
				return nil, false
			}
			out = append(out, e)
		}
		return out, true
	}
	if !x.Response.Body.Complete() {
		return nil, false
	}
	items, ok := envelope(b)
	if !ok {
		return nil, false
	}
	for _, it := range items {
		e, ok := eventOf(string(it))
		if !ok {
			return nil, false
		}
		out = append(out, e)
	}
	return out, true
}

// ack is an async acknowledgement.
type ack struct {
	ThreadID string `json:"threadID"`
	RunID    string `json:"runID"`
}

// asyncAck parses x's response as an async acknowledgement.
func asyncAck(x *traffic.Exchange) (ack, bool) {
	inv, ok := InvokeOf(x)
	if !ok || !inv.Async || x.Response == nil || x.Response.Status/100 != 2 || !x.Response.Body.Complete() {
		return ack{}, false
	}
	var a ack
	if json.Unmarshal(x.Response.Body.Bytes(), &a) != nil || a.ThreadID == "" || a.RunID == "" {
		return ack{}, false
	}
	return a, true
}
