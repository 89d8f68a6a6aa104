package checks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/invokeconf/invokeconf/agentscript"
	"github.com/invokeconf/invokeconf/outcome"
)

// The event-object checks judge the shape of each event a response shows,
// never what the run should have done: which tools it called, which steps
// and prompts it had (the active scenarios know that from their scripts).
var eventChecks = []Check{
	OneRicherField,
	ToolCallName,
	StepDescription,
	StepAhead,
	PromptCarries,
}

// RicherFields are the event fields of which at most one is set per event.
var RicherFields = []string{"waitingOnModel", "toolInput", "toolCall", "step", "prompt", "input", "replayComplete", "username"}

// recordedEvent is one event object of a response, with where it stood.
type recordedEvent struct {
	obj   map[string]json.RawMessage
	where string // "event 3 of the SSE stream"
	raw   string
}

// IsSet reports whether an event member is set: present and not null,
// false, 0, "", {} or [] (the types of most members are not shown, so each
// empty form counts as unset, 0 too since 0/1 flags are a legal encoding;
// the active steps read "set" alike).
func IsSet(raw json.RawMessage) bool {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return false
	}
	switch t := v.(type) {
	case nil:
		return false
	case bool:
		return t
	case float64:
		return t != 0
	case string:
		return t != ""
	case map[string]any:
		return len(t) > 0
	case []any:
		return len(t) > 0
	}
	return true
}

// recordedEvents returns the event objects of x's answer: a synchronous
// invoke with Accept exactly text/event-stream answered with an SSE stream
// (its complete event frames, up to where the recording ends), one with
// Accept exactly application/json answered with the envelope, or the events
// route answered with either beyond doubt (its shape is not shown, so only
// the media type and the form together say it is events). A frame whose
// data is no JSON object is EVT-01's and is left out. Plain text has no
// event objects.
func recordedEvents(x *View) ([]recordedEvent, error) {
	p := x.recorded.get(x, "recorded events", func() recordedParse {
		evs, err := parseRecordedEvents(x)
		return recordedParse{evs, err}
	})
	return p.evs, p.err
}

func parseRecordedEvents(x *View) ([]recordedEvent, error) {
	if _, err := eventsCall(x); err == nil {
		_, err := body(x, false)
		if err != nil {
			return nil, err
		}
		switch {
		case surelySSE(x):
			return sseEvents(x.Frames()), nil
		case x.Response.Body.Truncated:
			return nil, untested(cutReason(&x.Response.Body))
		case surelyEnvelope(x):
			return envelopeEvents(x), nil
		}
		return nil, skip("the events route's answer is neither surely an SSE stream nor surely an envelope (its shape is not shown)")
	}
	v, _, err := acceptOf(x)
	if err != nil {
		return nil, err
	}
	switch v {
	case "text/event-stream":
		frames, err := sseStream(x)
		if err != nil {
			return nil, err
		}
		return sseEvents(frames), nil
	case "application/json":
		_, err := body(x, true)
		if err != nil {
			return nil, err
		}
		if !surelyEnvelope(x) {
			return nil, skip("the answer is not surely the envelope (FMT-02)")
		}
		return envelopeEvents(x), nil
	}
	return nil, skip("the plain-text form has no event objects")
}

func sseEvents(frames []Frame) []recordedEvent {
	var out []recordedEvent
	n := 0
	for _, f := range frames {
		if !f.Terminated || !isEventFrame(f.Frame) {
			continue
		}
		n++
		if m, ok := f.object(); ok {
			out = append(out, recordedEvent{obj: m, where: fmt.Sprintf("event %d of the SSE stream", n), raw: f.data})
		}
	}
	return out
}

func envelopeEvents(x *View) []recordedEvent {
	items, _ := x.envelopeItems()
	var out []recordedEvent
	for i, it := range items {
		if it.obj != nil {
			out = append(out, recordedEvent{obj: it.obj, where: fmt.Sprintf("item %d of the envelope", i+1), raw: it.raw})
		}
	}
	return out
}

// OneRicherField: EVT-04. "Richer fields: at most one of them is set per
// event." Every event object decides it, whatever the run did.
var OneRicherField = Check{Rule: "EVT-04", Spec: "Richer fields: at most one of them is set per event.", Judge: oneRicherField}

func oneRicherField(x *View, _ *History) error {
	evs, err := recordedEvents(x)
	if err != nil {
		return err
	}
	if len(evs) == 0 {
		return skip("no event object")
	}
	for _, e := range evs {
		var set []string
		for _, f := range RicherFields {
			if IsSet(e.obj[f]) {
				set = append(set, f)
			}
		}
		if len(set) > 1 {
			return outcome.Failf(e.where, "at most one richer field set", "%s set: %s", strings.Join(set, " and "), quote([]byte(e.raw)))
		}
	}
	return nil
}

// withSet returns the events whose member field is set, or a Skip when
// none is.
func withSet(x *View, field string) ([]recordedEvent, error) {
	evs, err := recordedEvents(x)
	if err != nil {
		return nil, err
	}
	var out []recordedEvent
	for _, e := range evs {
		if IsSet(e.obj[field]) {
			out = append(out, e)
		}
	}
	if len(out) == 0 {
		return nil, skip("no event with %s set", field)
	}
	return out, nil
}

// carries checks that the richer field of each event is an object holding
// its inner member set (IsSet: a name or description that is null, false,
// 0 or "" reads as none): its inner structure "beyond" that member is not
// shown, so the member is all a client can count on.
func carries(x *View, field, inner string) error {
	evs, err := withSet(x, field)
	if err != nil {
		return err
	}
	for _, e := range evs {
		m, ok := object(string(e.obj[field]))
		if !ok || !IsSet(m[inner]) {
			return outcome.Failf(e.where, fmt.Sprintf("%s, an object carrying %s", field, inner), "%s", quote([]byte(e.raw)))
		}
	}
	return nil
}

// ToolCallName: EVT-05, the shape: an event with toolCall set carries the
// tool's name in it. Which tools the run invoked, and so whether each shows
// as an event with the right name, traffic does not show.
var ToolCallName = Check{Rule: "EVT-05", Spec: "toolCall: A tool is being invoked; clients read its name", Judge: toolCallName}

func toolCallName(x *View, _ *History) error { return carries(x, "toolCall", "name") }

// StepDescription: EVT-06, the shape: an event with step set carries the
// step's description in it.
var StepDescription = Check{Rule: "EVT-06", Spec: "step: The current step changed; following events belong to it; clients read its description", Judge: stepDescription}

func stepDescription(x *View, _ *History) error {
	return carries(x, "step", "description")
}

// PromptCarries: EVT-07. An event with prompt set is an object carrying
// message; its sensitive flag, when there, is true or false, or 1 or 0 (a
// false flag may be left out, as empty fields may: "missing content counts
// as empty"). Whether the request for input was sensitive or had fields is
// known only from an agent script: a prompt event whose message is that of
// the script's @ask lines (all of them alike) is that request, so it carries
// sensitive true when they say sensitive, else no true flag, and fields set
// (IsSet: not null or empty) when they name fields. A prompt whose request
// names no fields may leave fields out, as empty.
var PromptCarries = Check{Rule: "EVT-07", Spec: "prompt: The agent needs something from the user, most often an OAuth login. Carries fields, message and a sensitive flag.", Judge: promptCarries}

func promptCarries(x *View, _ *History) error {
	evs, err := withSet(x, "prompt")
	if err != nil {
		return err
	}
	asks := scriptAsks(x)
	for _, e := range evs {
		p, ok := object(string(e.obj["prompt"]))
		msg, hasMsg := p["message"]
		sensitive, isFlag := flagOf(p["sensitive"])
		if !ok || !hasMsg || string(msg) == "null" || !isFlag {
			return outcome.Failf(e.where, "prompt, an object carrying message and a sensitive flag (true or false, or 1 or 0; false may be left out)", "%s", quote([]byte(e.raw)))
		}
		var text string
		a, scripted := ask{}, false
		if json.Unmarshal(msg, &text) == nil {
			a, scripted = asks[text]
		}
		if !scripted || a.mixed {
			continue
		}
		if sensitive != a.sensitive || (a.fields && !namesFields(p["fields"], a.names)) {
			want := "sensitive false or left out"
			if a.sensitive {
				want = "sensitive true"
			}
			if a.fields {
				want += " and fields naming " + strings.Join(a.names, ", ")
			}
			return outcome.Failf(e.where+", the script's @ask "+quote([]byte(text)), "a prompt with "+want, "%s", quote([]byte(e.raw)))
		}
	}
	return nil
}

// flagOf reads a flag: "a sensitive flag" is all the spec says of its type,
// so true and false, and 1 and 0 (the 0/1 encoding IsSet reads for the
// richer fields), are flags; missing or null is false, as empty fields may
// be left out.
func flagOf(raw json.RawMessage) (set, ok bool) {
	switch strings.TrimSpace(string(raw)) {
	case "", "null", "false", "0":
		return false, true
	case "true", "1":
		return true, true
	}
	return false, false
}

// SetBefore returns the check that an event sets field strictly before
// the first event that sets later, where the spec's words give an order:
//
//   - EVT-08, "waitingOnModel: The model has not started responding yet":
//     before the model's first content;
//   - EVT-09, "toolInput: The model is composing tool arguments": before
//     the toolCall that invokes the tool.
//
// An event that sets both is not before: waitingOnModel on the event that
// carries the model's first content, or toolInput on the toolCall event,
// signals nothing ahead of it. The events
// are a synchronous answer's (SSE or the envelope), as recordedEvents reads
// them; which script the run played is the scenario's to know.
func SetBefore(field, later string) func(*View, *History) error {
	return func(x *View, _ *History) error {
		evs, err := recordedEvents(x)
		if err != nil {
			return err
		}
		want := fmt.Sprintf("an event with %s set before the first event with %s", field, later)
		for _, e := range evs {
			switch set, then := IsSet(e.obj[field]), IsSet(e.obj[later]); {
			case set && !then:
				return nil
			case then:
				return outcome.Failf("the events of the run", want, "%s sets %s first: %s", e.where, later, quote([]byte(e.raw)))
			}
		}
		return outcome.Failf("the events of the run", want, "%d events, none with %s set", len(evs), field)
	}
}

// StepOrder is EVT-06's "following events belong to it".
const StepOrder = "ahead of the events that belong to the step (needs an agent-script prompt with one @step, then @say)"

// StepAhead: EVT-06, "step: The current step changed; following events
// belong to it". On an agent-script prompt with one @step and content said
// after it, the event with step set comes before that content (or carries
// it): when it arrives, the events before it carry no more content than the
// script says before the step. A step announced after the content that belongs to it
// (its end reported, say) leaves that content in no step. Decided only when
// the events' content is the script's text.
var StepAhead = Check{Rule: "EVT-06", Spec: "step: The current step changed; following events belong to it; clients read its description", Aspect: StepOrder, Judge: stepAhead}

func stepAhead(x *View, _ *History) error {
	evs, err := recordedEvents(x)
	if err != nil {
		return err
	}
	if x.Request.Body.Redacted || x.Request.Body.Truncated {
		return untested(NoBody)
	}
	before, after, ok := aroundStep(x)
	if !ok {
		return skip("the prompt is not an agent script with one @step and content after it")
	}
	if !slices.ContainsFunc(evs, func(e recordedEvent) bool { return IsSet(e.obj["step"]) }) {
		return skip("no event with step set (EVT-06's shape check)")
	}
	said, step := "", -1
	for _, e := range evs {
		if step < 0 && IsSet(e.obj["step"]) {
			step = len(said)
		}
		var c string
		if json.Unmarshal(e.obj["content"], &c) == nil {
			said += c
		}
		if step < 0 && len(said) > len(before) {
			// Content of the step arrived while no step was announced.
			if said == (before + after)[:min(len(said), len(before+after))] {
				return outcome.Failf(e.where, "the step's event before the content said in the step ("+quote([]byte(after))+")",
					"%s arrived first, with no step set before it", quote([]byte(said[len(before):])))
			}
			return skip("the events' content is not the script's text")
		}
	}
	if said != before+after {
		return skip("the events' content is not the script's text")
	}
	return nil
}

// aroundStep returns the content an agent script says before and after its
// one @step; ok is false for a prompt that is no such script or says nothing
// after the step.
func aroundStep(x *View) (before, after string, ok bool) {
	s, ok := x.program()
	if !ok {
		return "", "", false
	}
	steps := 0
	for _, d := range s.Directives {
		switch {
		case d.Kind == agentscript.Step:
			steps++
		case d.Kind == agentscript.Say && steps == 0:
			before += d.Text
		case d.Kind == agentscript.Say:
			after += d.Text
		case d.Kind == agentscript.Fail || d.Kind == agentscript.Ask:
			return "", "", false // the run may end, or wait, before its content
		}
	}
	return before, after, steps == 1 && after != ""
}

// MentionsNone returns the check that no event of x's answer (SSE or the
// envelope), of any kind, names one of the tools in any member: a tool is
// "removed from the run, silently" (Authentication 5, CRED-01), "This
// removal is silent: no error and no event" (X-SVC-Run-Mode 4, MODE-05). A
// name counts as a whole word: web in web-lite is not mentioned. spec is the
// words a failure cites.
func MentionsNone(spec string, names []string) func(*View, *History) error {
	words := make([]*regexp.Regexp, len(names))
	for i, n := range names {
		words[i] = regexp.MustCompile(`(^|[^A-Za-z0-9_.-])` + regexp.QuoteMeta(n) + `($|[^A-Za-z0-9_.-])`)
	}
	return func(x *View, _ *History) error {
		evs, err := recordedEvents(x)
		if err != nil {
			return err
		}
		for _, e := range evs {
			b := canonical(e.raw) // one escaping for every member
			for i, w := range words {
				if w.Match(b) {
					return outcome.Failf(e.where, fmt.Sprintf("no event that mentions %q (removed silently)", names[i]), "%s", quote(b)).WithSpec(spec)
				}
			}
		}
		return nil
	}
}

// canonical re-encodes JSON text with one escaping (no \u escapes but the
// ones JSON needs), so text is found however the service escaped it.
func canonical(raw string) []byte {
	var v any
	if json.Unmarshal([]byte(raw), &v) != nil {
		return []byte(raw)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return bytes.TrimSpace(b.Bytes())
}

// ScriptAsk reports what x's agent-script prompt states of the request for
// input with that message: whether it is sensitive and names fields; ok is
// false when no @ask line (or @ask lines that differ) has the message.
func ScriptAsk(x *View, message string) (sensitive, fields, ok bool) {
	a, found := scriptAsks(x)[message]
	if !found || a.mixed {
		return false, false, false
	}
	return a.sensitive, a.fields, true
}

// ask is what a script's @ask lines with one message state.
type ask struct {
	sensitive, fields bool
	names             []string // the fields it asks for
	// mixed is true when @ask lines with that message differ.
	mixed bool
}

// namesFields reports whether a prompt's fields are set and name every
// field the request asks for. Their inner structure is not shown, so a name
// counts wherever it stands in them: a string (["username"]), a member's
// value ([{"name":"username"}]) or a key ({"username":{...}}), in any case.
func namesFields(raw json.RawMessage, names []string) bool {
	if !IsSet(raw) {
		return false
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return false
	}
	seen := map[string]bool{}
	var walk func(any)
	walk = func(v any) {
		switch t := v.(type) {
		case string:
			seen[strings.ToLower(t)] = true
		case []any:
			for _, e := range t {
				walk(e)
			}
		case map[string]any:
			for k, e := range t {
				seen[strings.ToLower(k)] = true
				walk(e)
			}
		}
	}
	walk(v)
	for _, n := range names {
		if !seen[strings.ToLower(n)] {
			return false
		}
	}
	return true
}

// scriptAsks returns the @ask lines of x's prompt by message; none when the
// prompt is no agent script or the recording keeps no request body.
func scriptAsks(x *View) map[string]ask {
	out := map[string]ask{}
	s, ok := x.program()
	if !ok {
		return out
	}
	for _, d := range s.Directives {
		if d.Kind != agentscript.Ask {
			continue
		}
		a := ask{sensitive: d.Sensitive, fields: len(d.Fields) > 0, names: d.Fields}
		if old, ok := out[d.Text]; ok && (old.sensitive != a.sensitive || !slices.Equal(old.names, a.names) || old.mixed) {
			a.mixed = true
		}
		out[d.Text] = a
	}
	return out
}
