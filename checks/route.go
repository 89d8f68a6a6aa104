package checks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/url"
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

// RouteKind is which of the spec's routes a request addresses.
type RouteKind int

// The routes, in the spec's order.
const (
	RouteOther         RouteKind = iota
	RouteInvoke                  // POST /api/invoke/{id}, with /thread/{thread} or /threads/{thread}
	RouteProjectInvoke           // POST /api/projects/{project_id}/invoke, with /thread/{thread_id}
	RouteEvents                  // GET /api/threads/{id}/events
	RouteAbort                   // POST /api/threads/{id}/abort
	RouteThread                  // GET /api/threads/{id}
	RouteExport                  // GET /api/assistants/{assistant_id}/projects/{project_id}/bundle
	RouteUninstall               // DELETE /api/bundles/installations/{id}
	RouteTaskDelete              // DELETE /api/tasks/{id}
)

// Route is what a request addresses, read from its method and URL once:
// the one grammar of the spec's routes, which the checks and the active
// steps both read (the reference server keeps a parser of its own, so the
// implementation stays independent of the oracle).
type Route struct {
	Kind RouteKind
	// ID is the route's {id}: the agent's (or an alias, or a thread's) of
	// an agent invoke, {project_id} of a project invoke and of the export,
	// the thread's of a thread route, the installation's or task's.
	ID string
	// Thread is an invoke's thread segment ("" when none); Threads is true
	// for the /threads/{thread} form.
	Thread  string
	Threads bool
	// Assistant is the export's {assistant_id}.
	Assistant string
	// Query is the URL's query.
	Query url.Values
}

// collections are the first segments after "api" of the spec's routes:
// where a path's "/api/" is, when the base URL has a path of its own.
var collections = map[string]bool{"invoke": true, "projects": true, "threads": true, "assistants": true, "bundles": true, "tasks": true}

// ParseRoute reads a request's method and URL as one of the spec's routes.
func ParseRoute(method, rawURL string) Route {
	u, err := url.Parse(rawURL)
	if err != nil {
		return Route{Query: url.Values{}}
	}
	rt := Route{Query: u.Query()}
	segs := strings.Split(strings.Trim(u.Path, "/"), "/")
	for i := 0; i+1 < len(segs); i++ {
		if segs[i] == "api" && collections[segs[i+1]] {
			segs = segs[i+1:]
			break
		}
	}
	id := func(s string) bool { return s != "" }
	switch n := len(segs); {
	case method == "POST" && n >= 2 && segs[0] == "invoke" && id(segs[1]):
		switch rest := segs[2:]; {
		case len(rest) == 0:
		case len(rest) == 2 && (rest[0] == "thread" || rest[0] == "threads") && id(rest[1]):
			rt.Thread, rt.Threads = rest[1], rest[0] == "threads"
		default:
			return Route{Query: rt.Query}
		}
		rt.Kind, rt.ID = RouteInvoke, segs[1]
	case method == "POST" && n >= 3 && segs[0] == "projects" && segs[2] == "invoke" && id(segs[1]):
		switch rest := segs[3:]; {
		case len(rest) == 0:
		case len(rest) == 2 && rest[0] == "thread" && id(rest[1]):
			rt.Thread = rest[1]
		default:
			return Route{Query: rt.Query}
		}
		rt.Kind, rt.ID = RouteProjectInvoke, segs[1]
	case n == 3 && segs[0] == "threads" && id(segs[1]) && method == "GET" && segs[2] == "events":
		rt.Kind, rt.ID = RouteEvents, segs[1]
	case n == 3 && segs[0] == "threads" && id(segs[1]) && method == "POST" && segs[2] == "abort":
		rt.Kind, rt.ID = RouteAbort, segs[1]
	case n == 2 && segs[0] == "threads" && id(segs[1]) && method == "GET":
		rt.Kind, rt.ID = RouteThread, segs[1]
	case n == 5 && segs[0] == "assistants" && segs[2] == "projects" && segs[4] == "bundle" && id(segs[1]) && id(segs[3]) && method == "GET":
		rt.Kind, rt.Assistant, rt.ID = RouteExport, segs[1], segs[3]
	case n == 3 && segs[0] == "bundles" && segs[1] == "installations" && id(segs[2]) && method == "DELETE":
		rt.Kind, rt.ID = RouteUninstall, segs[2]
	case n == 2 && segs[0] == "tasks" && id(segs[1]) && method == "DELETE":
		rt.Kind, rt.ID = RouteTaskDelete, segs[1]
	}
	return rt
}

// Route returns what the request addresses.
func (v *View) Route() Route {
	return v.route.get(v, "route", func() Route { return ParseRoute(v.Request.Method, v.Request.URL) })
}

// InvokeOf reads x's request as an invoke call. The second result is false
// for any other request, and for an async value the spec does not name
// (only true and false are: "async | boolean").
func InvokeOf(x *View) (Invoke, bool) {
	p := x.invoke.get(x, "invoke", func() invokeParse {
		inv, ok := invokeOf(x.Route())
		return invokeParse{inv, ok}
	})
	return p.inv, p.ok
}

func invokeOf(rt Route) (Invoke, bool) {
	if rt.Kind != RouteInvoke && rt.Kind != RouteProjectInvoke {
		return Invoke{}, false
	}
	inv := Invoke{Project: rt.Kind == RouteProjectInvoke, ID: rt.ID, ThreadSegment: rt.Thread}
	if vs, ok := rt.Query["async"]; ok {
		if len(vs) != 1 || (vs[0] != "true" && vs[0] != "false") {
			return Invoke{}, false
		}
		inv.Async = vs[0] == "true"
	}
	return inv, true
}

// syncInvoke returns x's invoke call when it is synchronous and answered
// 2xx, or a Skip.
func syncInvoke(x *View) (Invoke, error) {
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
func accept(x *View) (v string, present bool, err error) {
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
func requestGap(x *View, name string) error {
	if g := x.Request.Gaps.Of(name); g != "" {
		return untested(g)
	}
	return nil
}

// responseGap returns an untested Skip when the recording cannot tell what
// the response's header name held.
func responseGap(x *View, name string) error {
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
func body(x *View, whole bool) ([]byte, error) {
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
	return x.Body(), nil
}

// quote returns at most maxQuote bytes of b, quoted.
func quote(b []byte) string {
	if len(b) > maxQuote {
		return fmt.Sprintf("%q... (%d bytes)", b[:maxQuote], len(b))
	}
	return fmt.Sprintf("%q", b)
}

// Frame is an SSE frame of a recorded body with its arrival time and its
// data, decoded once.
type Frame struct {
	sseframe.Frame
	// At is when its last byte arrived; -1 when the body is not timed.
	At time.Duration
	// data is the frame's data lines joined as the SSE grammar joins them.
	data string
	// obj is data as a JSON object, nil when it is none; ev the event
	// object read from it, evOK false when it is none.
	obj  map[string]json.RawMessage
	ev   eventObject
	evOK bool
	// split is true when the frame's several data lines join into no JSON
	// at all (an object cut inside a string, say): "a data: line holding the event object as
	// JSON" (SSE-02) is what it breaks, not "one JSON object" (EVT-01),
	// which a client cannot even read from it.
	split bool
}

// decoded returns f with its data decoded.
func decoded(f Frame) Frame {
	f.data = data(f.Frame)
	if m, ok := object(f.data); ok {
		f.obj = m
		f.ev, f.evOK = eventFrom(m)
	} else if SplitData(f.Frame, f.data) {
		f.split = true
	}
	return f
}

// jsonValues reports whether s is one or more JSON values (two objects in
// one frame are EVT-01's, not a split object).
func jsonValues(s string) bool {
	dec := json.NewDecoder(strings.NewReader(s))
	n := 0
	for {
		var v json.RawMessage
		err := dec.Decode(&v)
		if err == io.EOF {
			return n > 0
		}
		if err != nil {
			return false
		}
		n++
	}
}

// SplitData reports whether a frame's data (its lines joined) is a JSON
// object split over several data lines that join into no JSON: the frame
// breaks SSE-02 ("a data: line holding the event object as JSON"), not
// EVT-01. Data that does not even begin as an object (raw text over
// several lines) is EVT-01's: "Every SSE data: frame is one JSON object".
func SplitData(f sseframe.Frame, data string) bool {
	return dataLines(f) > 1 && strings.HasPrefix(strings.TrimLeft(data, " \t\r\n"), "{") && !jsonValues(data)
}

// Unreadable returns the rule an SSE answer breaks when a client cannot
// read all its events: SSE-02 for data split over lines that join into no
// JSON, EVT-01 for data that is no JSON object; "" when every event frame
// holds one. A step that waited for text a stream never showed rests on
// it.
func (v *View) Unreadable() string {
	rule := ""
	for _, f := range v.Frames() {
		switch {
		case !f.Terminated || !isEventFrame(f.Frame):
		case f.split:
			return "SSE-02"
		case f.obj == nil:
			rule = "EVT-01"
		}
	}
	return rule
}

// dataLines counts a frame's data lines.
func dataLines(f sseframe.Frame) int {
	n := 0
	for _, l := range f.Lines {
		if !l.IsComment() && l.Name == "data" {
			n++
		}
	}
	return n
}

// splitData returns a Skip for a frame whose data is split over lines that
// join into no JSON object (SSE-02's failure), nil otherwise.
func splitData(f Frame) error {
	if f.split {
		return skip("an event's data is split over lines that join into no JSON object (SSE-02)")
	}
	return nil
}

// event returns the frame's data as an event object.
func (f Frame) event() (eventObject, bool) { return f.ev, f.evOK }

// object returns the frame's data as a JSON object.
func (f Frame) object() (map[string]json.RawMessage, bool) { return f.obj, f.obj != nil }

// Frames splits a recorded SSE body into frames.
func Frames(b *traffic.Body) []Frame { return framesOf(b, b.Bytes()) }

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
	// ContentRaw is the content member as written, for joining with the
	// next events' (joinContent).
	ContentRaw json.RawMessage `json:"-"`
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

// eventOf reads s as an event object: exactly one JSON object whose named
// fields have their types.
func eventOf(s string) (eventObject, bool) {
	m, ok := object(s)
	if !ok {
		return eventObject{}, false
	}
	return eventFrom(m)
}

// eventFrom reads the fields the checks read from a decoded event object:
// ok is false when one of them has a type the spec's words rule out. A
// member's name matches as encoding/json matches a struct field's: exactly,
// else ignoring case.
func eventFrom(m map[string]json.RawMessage) (eventObject, bool) {
	member := func(name string) (json.RawMessage, bool) {
		if raw, ok := m[name]; ok {
			return raw, true
		}
		for k, raw := range m {
			if strings.EqualFold(k, name) {
				return raw, true
			}
		}
		return nil, false
	}
	var e eventObject
	if raw, ok := member("runID"); ok {
		e.RunID = idText(raw)
	}
	if raw, ok := member("threadID"); ok {
		e.ThreadID = idText(raw)
	}
	if raw, ok := member("error"); ok {
		e.Error = raw
	}
	if raw, ok := member("runComplete"); ok && json.Unmarshal(raw, &e.RunComplete) != nil {
		return eventObject{}, false
	}
	if raw, ok := member("content"); ok {
		if json.Unmarshal(raw, &e.Content) != nil {
			return eventObject{}, false
		}
		e.ContentRaw = raw
	}
	return e, true
}

// looksSSE reports whether a response is an SSE stream: its media type is
// text/event-stream, or it opens with the start frame.
func looksSSE(x *View) bool {
	return traffic.MediaType(x.Response.Header.Get("Content-Type")) == "text/event-stream" || x.opensWithStart()
}

// surelySSE reports whether a response is beyond doubt an SSE stream: its
// media type says so and it opens with the start frame (a plain-text answer
// could hold the words "event: start").
func surelySSE(x *View) bool {
	return traffic.MediaType(x.Response.Header.Get("Content-Type")) == "text/event-stream" && x.opensWithStart()
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

// envelopeItems returns the items of the response body read as a JSON
// envelope {items:[...]}, each decoded once; ok is false when it is none.
func (v *View) envelopeItems() ([]item, bool) {
	p := v.envelope.get(v, "envelope", func() envelopeParse {
		raw, ok := envelope(v.Body())
		if !ok {
			return envelopeParse{}
		}
		items := make([]item, len(raw))
		for i, r := range raw {
			items[i].raw = string(r)
			if m, ok := object(items[i].raw); ok {
				items[i].obj = m
				items[i].ev, items[i].evOK = eventFrom(m)
			}
		}
		return envelopeParse{items, true}
	})
	return p.items, p.ok
}

// item is one item of an envelope: its JSON text, the object it holds (nil
// when none) and the event object read from it (evOK false when none).
type item struct {
	raw  string
	obj  map[string]json.RawMessage
	ev   eventObject
	evOK bool
}

// surelyEnvelope reports whether a response is beyond doubt the JSON
// envelope: its media type is application/json and its body the envelope
// (a plain-text answer could be JSON text).
func surelyEnvelope(x *View) bool {
	_, ok := x.envelopeItems()
	return ok && traffic.MediaType(x.Response.Header.Get("Content-Type")) == "application/json"
}

// eventsOf returns the event objects of a synchronous response: the SSE
// stream's or the envelope's; ok is false for other forms or bodies that do
// not parse.
func eventsOf(x *View) ([]eventObject, bool) {
	p := x.events.get(x, "events", func() eventsParse {
		evs, ok := parseEvents(x)
		return eventsParse{evs, ok}
	})
	return p.evs, p.ok
}

func parseEvents(x *View) ([]eventObject, bool) {
	var out []eventObject
	if looksSSE(x) {
		for _, f := range x.Frames() {
			if !f.Terminated || !isEventFrame(f.Frame) {
				continue
			}
			e, ok := f.event()
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
	items, ok := x.envelopeItems()
	if !ok {
		return nil, false
	}
	for _, it := range items {
		if !it.evOK {
			return nil, false
		}
		out = append(out, it.ev)
	}
	return out, true
}

// ack is an async acknowledgement.
type ack struct {
	ThreadID string `json:"threadID"`
	RunID    string `json:"runID"`
}

// asyncAck parses x's response as an async acknowledgement.
func asyncAck(x *View) (ack, bool) {
	inv, ok := InvokeOf(x)
	if !ok || !inv.Async || x.Response == nil || x.Response.Status/100 != 2 || !x.Response.Body.Complete() {
		return ack{}, false
	}
	var a ack
	if json.Unmarshal(x.Body(), &a) != nil || a.ThreadID == "" || a.RunID == "" {
		return ack{}, false
	}
	return a, true
}
