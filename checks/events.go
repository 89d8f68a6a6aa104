package checks

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/invokeconf/invokeconf/agentscript"
	"github.com/invokeconf/invokeconf/outcome"
	"github.com/invokeconf/invokeconf/traffic"
)

// The event-object checks judge the shape of each event a response shows,
// never what the run should have done: which tools it called, which steps
// and prompts it had (the active scenarios know that from their scripts).
var eventChecks = []Check{
	{Rule: "EVT-04", Spec: "Richer fields: at most one of them is set per event.", Judge: OneRicherField},
	{Rule: "EVT-05", Spec: "toolCall: A tool is being invoked; clients read its name", Judge: ToolCallName},
	{Rule: "EVT-06", Spec: "step: The current step changed; following events belong to it; clients read its description", Judge: StepDescription},
	{Rule: "EVT-07", Spec: "prompt: The agent needs something from the user, most often an OAuth login. Carries fields, message and a sensitive flag.", Judge: PromptCarries},
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
func recordedEvents(x *traffic.Exchange) ([]recordedEvent, error) {
	if _, err := eventsCall(x); err == nil {
		b, err := body(x, false)
		if err != nil {
			return nil, err
		}
		switch {
		case surelySSE(x, b):
			return sseEvents(Frames(&x.Response.Body)), nil
		case x.Response.Body.Truncated:
			return nil, untested(cutReason(&x.Response.Body))
		case surelyEnvelope(x, b):
			return envelopeEvents(b), nil
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
		b, err := body(x, true)
		if err != nil {
			return nil, err
		}
		if !surelyEnvelope(x, b) {
			return nil, skip("the answer is not surely the envelope (FMT-02)")
		}
		return envelopeEvents(b), nil
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
		if m, ok := object(data(f.Frame)); ok {
			out = append(out, recordedEvent{obj: m, where: fmt.Sprintf("event %d of the SSE stream", n), raw: data(f.Frame)})
		}
	}
	return out
}

func envelopeEvents(b []byte) []recordedEvent {
	items, _ := envelope(b)
	var out []recordedEvent
	for i, it := range items {
		if m, ok := object(string(it)); ok {
			out = append(out, recordedEvent{obj: m, where: fmt.Sprintf("item %d of the envelope", i+1), raw: string(it)})
		}
	}
	return out
}

// OneRicherField: EVT-04. "Richer fields: at most one of them is set per
// event." Every event object decides it, whatever the run did.
func OneRicherField(x *traffic.Exchange, _ *History) error {
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
func withSet(x *traffic.Exchange, field string) ([]recordedEvent, error) {
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
func carries(x *traffic.Exchange, field, inner string) error {
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
func ToolCallName(x *traffic.Exchange, _ *History) error { return carries(x, "toolCall", "name") }

// StepDescription: EVT-06, the shape: an event with step set carries the
// step's description in it.
func StepDescription(x *traffic.Exchange, _ *History) error {
	return carries(x, "step", "description")
}

// PromptCarries: EVT-07. An event with prompt set is an object carrying
// message; its sensitive flag, when there, is true or false (a false flag
// may be left out, as empty fields may: "missing content counts as
// empty"). Whether the request for input was sensitive or had fields is
// known only from an agent script: a prompt event whose message is that of
// the script's @ask lines (all of them alike) is that request, so it carries
// sensitive true when they say sensitive, else no true flag, and fields set
// (IsSet: not null or empty) when they name fields. A prompt whose request
// names no fields may leave fields out, as empty.
func PromptCarries(x *traffic.Exchange, _ *History) error {
	evs, err := withSet(x, "prompt")
	if err != nil {
		return err
	}
	asks := scriptAsks(x)
	for _, e := range evs {
		p, ok := object(string(e.obj["prompt"]))
		msg, hasMsg := p["message"]
		flag, hasFlag := p["sensitive"]
		if !hasFlag || string(flag) == "null" {
			flag = json.RawMessage("false")
		}
		var sensitive bool
		if !ok || !hasMsg || string(msg) == "null" || json.Unmarshal(flag, &sensitive) != nil {
			return outcome.Failf(e.where, "prompt, an object carrying message and a sensitive flag (true or false; false may be left out)", "%s", quote([]byte(e.raw)))
		}
		var text string
		a, scripted := ask{}, false
		if json.Unmarshal(msg, &text) == nil {
			a, scripted = asks[text]
		}
		if !scripted || a.mixed {
			continue
		}
		if sensitive != a.sensitive || (a.fields && !IsSet(p["fields"])) {
			want := "sensitive false or left out"
			if a.sensitive {
				want = "sensitive true"
			}
			if a.fields {
				want += " and fields"
			}
			return outcome.Failf(e.where+", the script's @ask "+quote([]byte(text)), "a prompt with "+want, "%s", quote([]byte(e.raw)))
		}
	}
	return nil
}

// ScriptAsk reports what x's agent-script prompt states of the request for
// input with that message: whether it is sensitive and names fields; ok is
// false when no @ask line (or @ask lines that differ) has the message.
func ScriptAsk(x *traffic.Exchange, message string) (sensitive, fields, ok bool) {
	a, found := scriptAsks(x)[message]
	if !found || a.mixed {
		return false, false, false
	}
	return a.sensitive, a.fields, true
}

// ask is what a script's @ask lines with one message state.
type ask struct {
	sensitive, fields bool
	// mixed is true when @ask lines with that message differ.
	mixed bool
}

// scriptAsks returns the @ask lines of x's prompt by message; none when the
// prompt is no agent script or the recording keeps no request body.
func scriptAsks(x *traffic.Exchange) map[string]ask {
	out := map[string]ask{}
	prompt, err := requestText(x)
	if err != nil {
		return out
	}
	if !agentscript.IsScript(prompt) {
		return out
	}
	s, err := agentscript.Parse(prompt)
	if err != nil {
		return out
	}
	for _, d := range s.Directives {
		if d.Kind != agentscript.Ask {
			continue
		}
		a := ask{sensitive: d.Sensitive, fields: len(d.Fields) > 0}
		if old, ok := out[d.Text]; ok && (old.sensitive != a.sensitive || old.fields != a.fields || old.mixed) {
			a.mixed = true
		}
		out[d.Text] = a
	}
	return out
}
