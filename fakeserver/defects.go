package fakeserver

import (
	"fmt"
	"sort"
	"strings"
)

// Defect is one defect switch: a realistic deviation from the rules it names.
// The mutation test runs the scenarios of those rules against a server with
// the switch on and expects at least one of them to fail.
type Defect struct {
	Name        string
	Rules       []string // rule IDs the deviation breaks
	Description string
}

var defectRegistry = map[string]Defect{}

// registerDefects adds defects to the registry; each area's file registers
// its own from an init function.
func registerDefects(ds ...Defect) {
	for _, d := range ds {
		if _, dup := defectRegistry[d.Name]; dup {
			panic("fakeserver: defect registered twice: " + d.Name)
		}
		defectRegistry[d.Name] = d
	}
}

// Defects lists every defect switch, sorted by name.
func Defects() []Defect {
	out := make([]Defect, 0, len(defectRegistry))
	for _, d := range defectRegistry {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func resolveDefects(names []string) (map[string]bool, error) {
	on := map[string]bool{}
	for _, n := range names {
		if _, ok := defectRegistry[n]; !ok {
			var known []string
			for _, d := range Defects() {
				known = append(known, d.Name)
			}
			return nil, fmt.Errorf("fakeserver: unknown defect %q (known: %s)", n, strings.Join(known, ", "))
		}
		on[n] = true
	}
	return on, nil
}

func init() {
	registerDefects(
		// Request body.
		Defect{"prompt-trimmed", []string{"BODY-01"}, "the prompt is trimmed of surrounding whitespace"},
		Defect{"json-prompt-parsed", []string{"BODY-02"}, "a JSON body is parsed and its prompt or last message content used"},
		// Invoke routes.
		Defect{"agent-id-unresolved", []string{"ROUTE-01"}, "{id} is looked up as an alias only, so agent IDs are 404"},
		Defect{"alias-unresolved", []string{"ROUTE-02"}, "{id} is never resolved as an alias"},
		Defect{"thread-id-new-thread", []string{"ROUTE-03"}, "a thread ID in {id} runs its agent on a new thread"},
		Defect{"thread-segment-ignored", []string{"ROUTE-04", "THREAD-01"}, "the thread path segment is ignored"},
		Defect{"threads-route-missing", []string{"ROUTE-05"}, "the /threads/{thread} spelling of the route is missing"},
		// Thread selection.
		Defect{"thread-header-wins", []string{"THREAD-01"}, "X-SVC-Thread-Id beats the thread path segment"},
		Defect{"thread-header-ignored", []string{"THREAD-02"}, "X-SVC-Thread-Id is ignored"},
		Defect{"new-thread-reused", []string{"THREAD-03"}, "a call without thread reuses the key's last thread"},
		Defect{"no-thread-header", []string{"THREAD-04"}, "responses lack X-SVC-Thread-Id"},
		// Response forms.
		Defect{"sse-buffered", []string{"FMT-01"}, "the SSE stream is written only after the run ends"},
		Defect{"envelope-early", []string{"FMT-02"}, "the JSON envelope is sent before the run ends"},
		Defect{"plain-default-json", []string{"FMT-03"}, "a request without Accept gets the JSON envelope"},
		Defect{"accept-prefix", []string{"FMT-04"}, "Accept is matched by prefix, so text/event-stream, */* gets SSE"},
		Defect{"accept-json-contains", []string{"FMT-05"}, "Accept is searched for application/json"},
		Defect{"plain-buffered", []string{"FMT-06"}, "plain text is held until the run ends"},
		Defect{"content-cumulative", []string{"FMT-07", "EVT-03"}, "each event's content repeats all content so far"},
		Defect{"disconnect-ignored", []string{"FMT-08"}, "a run goes on after its client disconnected"},
		// SSE framing.
		Defect{"start-late", []string{"SSE-01"}, "event: start is sent with the first event instead of at once"},
		Defect{"no-event-id", []string{"SSE-02"}, "event frames carry no id line"},
		Defect{"final-id-suffix", []string{"SSE-03"}, "the final event's id ends in :end instead of :after"},
		Defect{"final-not-complete", []string{"SSE-03"}, "the final event lacks runComplete true"},
		Defect{"no-ping", []string{"SSE-04"}, "no keepalive comment is ever written"},
		Defect{"no-close", []string{"SSE-05"}, "the stream ends without event: close"},
		Defect{"no-close-after-error", []string{"SSE-05"}, "a failed run's stream ends without event: close"},
		Defect{"events-after-complete", []string{"SSE-06"}, "an event follows the runComplete event"},
		Defect{"error-as-status", []string{"SSE-07"}, "a failing run answers 500 instead of an error event"},
		// Event objects.
		Defect{"content-data-raw", []string{"EVT-01"}, "content events are sent as raw text instead of JSON"},
		Defect{"event-thread-missing", []string{"EVT-02"}, "event objects lack threadID"},
		Defect{"richer-merged", []string{"EVT-04"}, "a tool call event also carries a step"},
		Defect{"toolcall-no-name", []string{"EVT-05"}, "toolCall carries the tool as tool instead of name"},
		Defect{"step-title", []string{"EVT-06"}, "step carries title instead of description"},
		Defect{"prompt-no-sensitive", []string{"EVT-07"}, "prompt events lack the sensitive flag"},
		Defect{"waiting-dropped", []string{"EVT-08"}, "waitingOnModel is never signalled"},
		Defect{"toolinput-dropped", []string{"EVT-09"}, "toolInput is never signalled"},
		// Async and follow-up routes.
		Defect{"async-ignored", []string{"ASYNC-01"}, "async=true is ignored and the call runs synchronously"},
		Defect{"events-runid-ignored", []string{"ASYNC-02"}, "the events route ignores runID"},
		Defect{"events-latest-run", []string{"ASYNC-03"}, "the events route without runID returns the newest run, finished or not"},
		Defect{"events-no-wait", []string{"ASYNC-04"}, "the events route answers at once even with Accept: application/json"},
		Defect{"lastrun-at-start", []string{"ASYNC-05"}, "lastRunID names a run as soon as it starts"},
		Defect{"thread-get-waits", []string{"ASYNC-05"}, "GET /api/threads/{id} waits for the run to finish"},
		Defect{"abort-ignored", []string{"ASYNC-06"}, "abort answers but cancels nothing"},
		Defect{"async-false-as-true", []string{"ASYNC-07"}, "any async parameter, false included, starts an async run"},
		// Authentication and errors.
		Defect{"scope-resolved", []string{"AUTH-01", "AUTH-02"}, "the scope is checked against the resolved agent, not the literal path value"},
		Defect{"thread-needs-thread-scope", []string{"AUTH-03"}, "continuing a thread needs agent:chat:<thread>"},
		Defect{"wildcard-unchecked", []string{"AUTH-04"}, "a wildcard key is not re-checked against its owner's access"},
		Defect{"events-unscoped", []string{"AUTH-06"}, "the events route needs no thread:read"},
		Defect{"abort-needs-wildcard", []string{"AUTH-07"}, "abort needs agent:chat:*"},
		Defect{"non-agent-404", []string{"ERR-01"}, "an ID that names no agent is 404 instead of 400"},
		Defect{"missing-key-403", []string{"ERR-02"}, "a request without Authorization is 403"},
		Defect{"malformed-key-400", []string{"ERR-03"}, "a malformed key is 400"},
		Defect{"unknown-key-403", []string{"ERR-04"}, "an unknown key is 403"},
		Defect{"expired-403", []string{"ERR-05"}, "an expired key is 403 instead of 401"},
		Defect{"scope-unchecked", []string{"ERR-06"}, "any valid key may invoke any agent its owner can open"},
		Defect{"api-disabled-ignored", []string{"ERR-07"}, "keys work on an instance with API access disabled"},
		Defect{"unknown-400", []string{"ERR-08"}, "an unknown agent is 400 instead of 404"},
		Defect{"openai-errors", []string{"ERR-10"}, "errors use the OpenAI error envelope"},
	)
}
