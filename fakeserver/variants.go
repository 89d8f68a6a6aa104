package fakeserver

import (
	"fmt"
	"strings"
)

// Variant is one variant switch: a behaviour the spec allows that the
// reference server does not use by default. Defects prove that a check can
// fail; variants prove that it fails only when the spec is broken: the
// variant test (runner/variant_test.go) runs the whole suite against each and
// expects every scenario to pass.
type Variant struct {
	Name string
	// Spec holds the spec's words that allow the behaviour.
	Spec        string
	Description string
	// Group names variants that exclude each other (two line endings, say);
	// "" excludes nothing. "All compatible variants at once" takes the first
	// of each group.
	Group string
}

// variantID names a variant switch in code; like defectID it is not a
// string, so the compiler checks every use.
type variantID int

// The variant switches, grouped by spec area.
const (
	// Async.
	varAsync202 variantID = iota
	// Response forms.
	varExtraMembers
	varPlainFlushTimer
	varCharsetUTF8
	varHeaderCase
	varSync2xx
	// SSE framing.
	varPingLoneLine
	varSseComments
	varSseCRLF
	varSseCR
	varSseNoSpace
	varSseEventMessage
	varSseBOM
	varSseMixedEndings
	varSseDataLines
	varSseIgnoredFields
	// Event objects.
	varOmitEmptyFields
	varRicherNulls
	varRicherNumericFlags
	varOtherFieldTypes
	varNoInputUsername
	varSignalsWhenSlow
	varPromptWaits
	varPausesOverrun
	// Invoke routes, thread selection, follow-up routes, authentication and
	// errors.
	varUUIDIDs
	varUUIDSeedIDs
	varHiddenThread404
	varProblemExtraMembers
	varAsyncAckExtraMembers
	varAbort204
	varScopedToolsUnknown400
	varServiceTool
	varEventsLatestWaits
	varProblemErrorMessage
	varNumericRunIDs
	varNumericThreadIDs
	varContentResplit
	// Bundles (docs/bundles.md, the contract).
	varBundleIntegerIDs
	varRemovedInstallation410
	varFailedInstallProblem
	varInterruptDropsConnection
	varInstallLogThread
	varExport2xx
	varChildTypeAssistant
	varExportPayloadList
	varUpdateRewritesProject

	numVariants
)

// variantTable is every variant switch, by ID.
var variantTable = [numVariants]Variant{
	// Async.
	varAsync202: {"async-202", `"When true, the call returns at once with threadID and runID (JSON)": no status is named`,
		"?async=true is answered 202 Accepted", ""},
	// Response forms.
	varExtraMembers: {"extra-members", `"Every SSE data: frame is one JSON object with these fields"; "items: array of event objects": the fields are named, others are not forbidden`,
		"every event object and the JSON envelope carry members of their own beside the spec's", ""},
	varPlainFlushTimer: {"plain-flush-timer", `"output is flushed at most every 500 ms"`,
		"plain text is buffered and flushed on a 500 ms timer instead of on every fragment", ""},
	varCharsetUTF8: {"charset-utf8", `"text/event-stream (exactly)" and "application/json (exactly)" are Accept values; the response's media type parameters are not shown`,
		"every Content-Type the server writes carries ; charset=utf-8", ""},
	varHeaderCase: {"header-case", `"Every response carries the header X-SVC-Thread-Id": HTTP header names are case-insensitive (RFC 9110, 5.1)`,
		"response header names are written in lower case (Content-Type aside, which net/http would add again)", ""},
	varSync2xx: {"sync-2xx", `"The response depends on Accept and async"; the forms are described ("SSE stream", "One JSON envelope", "Plain text") but no success status is named`,
		"every successful synchronous invoke (SSE, JSON envelope and plain text) is answered 203 instead of 200", ""},
	// SSE framing.
	varPingLoneLine: {"ping-lone-line", `"a comment line : ping is written"`,
		"the keepalive is the lone line : ping, with no blank line after it", ""},
	varSseComments: {"sse-comments", `"Comment lines are dropped by conformant SSE parsers": comments other than the keepalive are not forbidden`,
		"comment lines other than : ping stand between the frames after the start frame", ""},
	varSseCRLF: {"sse-crlf", `"a frame with event: start", "an id: line", "a data: line": the line ending is the SSE grammar's, which allows CRLF, LF and CR`,
		"SSE lines end in CRLF", "line-endings"},
	varSseCR: {"sse-cr", `"a frame with event: start", "an id: line", "a data: line": the line ending is the SSE grammar's, which allows CRLF, LF and CR`,
		"SSE lines end in CR", "line-endings"},
	varSseNoSpace: {"sse-no-space", `"an id: line holding the run ID, then a data: line": the SSE grammar drops one space after the colon, and allows none`,
		"SSE fields are written without the space after the colon (id:run, data:{...})", ""},
	varSseEventMessage: {"sse-event-message", `"Each event: an id: line holding the run ID, then a data: line": in the SSE grammar event: message is the default type and retry: is a field of its own, neither forbidden`,
		"each event frame also carries event: message and retry: 3000 lines between its id and data lines", ""},
	varSseBOM: {"sse-bom", `"a frame with event: start": the stream is in the SSE grammar, whose parser ignores "one leading U+FEFF BYTE ORDER MARK character"`,
		"every SSE stream (the events route's too) opens with a UTF-8 byte order mark", ""},
	varSseMixedEndings: {"sse-mixed-endings", `"a frame with event: start", "an id: line", "a data: line": the line ending is the SSE grammar's, which allows CRLF, LF and CR, line by line`,
		"SSE lines end in CRLF, LF and CR in turn, within frames too", "line-endings"},
	varSseDataLines: {"sse-data-lines", `"a data: line holding the event object as JSON": the SSE grammar joins a frame's data lines with LF ("append the field value to the data buffer, then append a single U+000A LINE FEED"), so a conforming client reads one object from several; a data line without a colon is a data field with an empty value`,
		"every frame's data is written over several data lines: a nameless data line, an empty one, then the JSON indented one line per member", ""},
	varSseIgnoredFields: {"sse-ignored-fields", `"Comment lines are dropped by conformant SSE parsers"; the SSE grammar's parser also ignores fields it does not know ("The field is ignored"), an id holding U+0000, a retry that is not digits, and a frame without data ("If the data buffer is an empty string ... return"); an empty event line is the default type, message`,
		"every frame carries an unknown field, a nameless unknown field and a comment; every event frame an id holding U+0000 before its real id and an empty event line; a frame without data (event, empty id, retry) comes before the start frame and before every event frame", ""},
	// Event objects.
	varContentResplit: {"content-resplit", `"content: Output text. Concatenating content across events gives the answer"; "The full answer is the concatenation of content of all items": how the text is split into events is not shown`,
		"the agent's text is split into events at random points (seeded), inside words and between the characters of multi-byte text, one character to a whole line per event", ""},
	varOmitEmptyFields: {"omit-empty-fields", `"The full answer is the concatenation of content of all items (missing content counts as empty)"`,
		"event objects leave out the fields that are empty or false (content, runComplete false, contentID, a prompt's sensitive false)", "empty-fields"},
	varRicherNulls: {"richer-nulls", `"Richer fields: at most one of them is set per event": a field that is null or false is not set`,
		"every event object writes every richer field, the unset ones as null, false or {} (the object fields); the final event's content is null", "empty-fields"},
	varRicherNumericFlags: {"richer-numeric-flags", `"Types and inner structure of ... replayComplete ...: not shown"; waitingOnModel's type is not shown either, nor a prompt's beyond "a sensitive flag": a 0/1 flag is a legal encoding, 0 unset`,
		"every event object writes waitingOnModel and replayComplete as numbers: 1 when set, else 0; a prompt's sensitive flag is 1 or 0", ""},
	varOtherFieldTypes: {"other-field-types", `"Types and inner structure of error, time, contentID, toolInput, toolCall (beyond name), step (beyond description), prompt (beyond fields, message, sensitive), input, replayComplete and username: not shown."`,
		"time is epoch milliseconds, contentID a number, error, input and username objects, toolCall arguments a string, step and toolCall carry ids, prompt fields are objects, toolInput the arguments as a JSON string, replayComplete an object", ""},
	varNoInputUsername: {"no-input-username", `"input: Input that was supplied to the run"; "username: Who triggered the run": neither is said to be sent on every run`,
		"runs carry no input and no username event", ""},
	varPausesOverrun: {"pauses-overrun", `"output is flushed at most every 500 ms" bounds how long the service holds text it has, not how fast its agent is: an agent script's @pause (README) is a wait whose length is the agent's`,
		"every @pause of up to 2 s lasts half as long again (an agent slower than its script, as one behind a remote model)", ""},
	varSignalsWhenSlow: {"signals-when-slow", `"waitingOnModel: The model has not started responding yet (suits a loading indicator)"; "toolInput: The model is composing tool arguments (can be slow)": they describe a wait, not a duty to announce every one`,
		"waitingOnModel and toolInput are sent only when the model then stays silent for 100 ms", ""},
	varPromptWaits: {"prompt-waits", `"prompt: The agent needs something from the user, most often an OAuth login": nothing says the run goes on, or ends, without that input`,
		"after a prompt event the run emits nothing more until it is cancelled (its client goes away or it is aborted)", ""},
	// Invoke routes, thread selection, follow-up routes, authentication and
	// errors.
	varUUIDIDs: {"uuid-ids", `"threadID | string", "runID | string": no shape is shown`,
		"threads and runs get UUIDs instead of prefixed hex IDs", ""},
	varUUIDSeedIDs: {"uuid-seed-ids", `"Fields of the thread, agent, task and project resources: not shown"`,
		"agents, projects and the provisioned thread are re-seeded with UUIDs (the served profile carries them)", ""},
	varHiddenThread404: {"hidden-thread-404", `403 "the key's owner has no access to the agent"; 404 "The agent, alias or thread does not exist": no precedence is given`,
		"a thread whose agent the key's owner cannot open does not exist for that owner: 404 instead of 403", ""},
	varProblemExtraMembers: {"problem-extra-members", `"Body shape of the problem format ... not shown"`,
		"error bodies carry extra members (instance, traceId, errors)", ""},
	varProblemErrorMessage: {"problem-error-message", `"Errors before streaming use the platform's problem format (not the OpenAI error envelope)"; "Body shape of the problem format ... not shown"`,
		`error bodies are the platform's own {"error":{"message":...,"status":...}}, which shares error.message with the OpenAI envelope but not its type, param and code`, ""},
	varNumericRunIDs: {"numeric-run-ids", `event fields "runID: Run the event belongs to" and "lastRunID" have no type given (only the async answer types runID: string)`,
		"run IDs are decimal numbers, written as JSON numbers in event objects, lastRunID and the abort answer (the async answer keeps strings)", ""},
	varNumericThreadIDs: {"numeric-thread-ids", `event field "threadID: Thread the event belongs to" has no type given (only the async answer types threadID: string); "Fields of the thread ... resources: not shown"`,
		"new threads get decimal IDs, written as JSON numbers in event objects (every form, the events route's too), GET /api/threads/{id} and the abort answer; the X-SVC-Thread-Id header carries the digits, the async answer a string", ""},
	varAsyncAckExtraMembers: {"async-ack-extra-members", `"the call returns at once with threadID and runID (JSON)": nothing excludes other members`,
		"the async acknowledgement carries extra members (status, links)", ""},
	varAbort204: {"abort-204", `abort: "Request and response payload: not shown"; no status is named`,
		"abort answers 204 No Content with no body", ""},
	varScopedToolsUnknown400: {"scoped-tools-unknown-400", `X-SVC-Scoped-Tools: "It restricts one run to a subset of the agent's configured tools ... It can only narrow": nothing says a reference to a tool the agent lacks is ignored rather than refused`,
		"X-SVC-Scoped-Tools naming a tool the run could never have is refused with 400", ""},
	varServiceTool: {"service-tool", `X-SVC-Scoped-Tools: "restricts one run to a subset of the agent's configured tools": tools the service offers every run without their being configured on the agent are not addressed`,
		"every run also has the always-on platform tool " + ServiceTool + ", which X-SVC-Scoped-Tools does not narrow; the served profile lists it under agents.*.serviceTools", ""},
	varEventsLatestWaits: {"events-latest-waits", `events route: "Without it, returns the thread's last completed run" and "With Accept: application/json the call stays open until the run finishes": nothing limits the wait to the form with runID`,
		"the events route without runID and with Accept: application/json waits for the thread's running run to finish, then answers with the last completed run (that one)", ""},
	// Bundles.
	varBundleIntegerIDs: {"bundle-integer-ids", `"Fields of the thread, agent, task and project resources: not shown"; docs/bundles.md: "IDs ... MAY be any JSON scalar: a string, or a number for a database-backed service"`,
		"installation records carry their IDs (installations, resources, projects, tasks) as JSON integers", ""},
	varRemovedInstallation410: {"removed-installation-410", `"Request and response payload: not shown"; docs/bundles.md: bundleInstallation "once removed, 404 or 410"`,
		"the record of a removed installation answers 410 Gone", ""},
	varFailedInstallProblem: {"failed-install-problem", `"Status codes for the bundle errors: not shown"; docs/bundles.md: "or any other status with a Location header giving the path of the record"`,
		"an install whose child failed answers 422 with a problem naming the installation and a Location header to its record", ""},
	varInterruptDropsConnection: {"interrupt-drops-connection", `docs/bundles.md: "The contract names no answer for the stopped update: any status, or a dropped connection as a crashed server's, will do"`,
		"the update stopped by interruptOnce drops the connection without an answer", ""},
	varInstallLogThread: {"install-log-thread", `"the project itself (the lead thread, flagged as a project)"; docs/bundles.md: log entries' type "for the project project or thread (its lead thread); both are accepted"`,
		"the installation log calls the project by its lead thread: entries of type thread", ""},
	varExport2xx: {"export-2xx", `export route: "Response body shape: not shown"; no status is named`,
		"the export answers 203 Non-Authoritative Information with the project bundle", ""},
	varChildTypeAssistant: {"child-type-assistant", `"Child types in spec.includes": only knowledge, connector and project are spelled; Agent and App are prose, and the route says /api/assistants/`,
		"the export types its agent child assistant instead of agent", ""},
	varExportPayloadList: {"export-payload-list", `"spec.payload: The project itself (the lead thread, flagged as a project) together with its tasks"; "Full schema of the bundle document beyond the elements above: not shown"`,
		"the export writes spec.payload as a list of one-member mappings (the lead thread, then the tasks, ...) instead of one mapping", ""},
	varUpdateRewritesProject: {"update-rewrites-project", `"Updating is idempotent"; "a composite update skips children that are already at the target version": only children are skipped; rewriting the project with the same content leaves the same result`,
		"every composite update rewrites the project and its tasks (logged as update entries), even when nothing changed", ""},
}

// Variants lists every variant switch, in the table's order.
func Variants() []Variant { return append([]Variant(nil), variantTable[:]...) }

// CompatibleVariants lists the names of the largest set of variants that may
// be switched on together: the first variant of each group and every
// ungrouped one.
func CompatibleVariants() []string {
	seen := map[string]bool{}
	var out []string
	for _, v := range variantTable {
		if v.Group != "" {
			if seen[v.Group] {
				continue
			}
			seen[v.Group] = true
		}
		out = append(out, v.Name)
	}
	return out
}

// variantSet says which variant switches are on.
type variantSet [numVariants]bool

func resolveVariants(names []string) (variantSet, error) {
	var on variantSet
	group := map[string]string{}
	for _, n := range names {
		id := variantID(-1)
		for i, v := range variantTable {
			if v.Name == n {
				id = variantID(i)
			}
		}
		if id < 0 {
			var known []string
			for _, v := range variantTable {
				known = append(known, v.Name)
			}
			return on, fmt.Errorf("fakeserver: unknown variant %q (known: %s)", n, strings.Join(known, ", "))
		}
		if g := variantTable[id].Group; g != "" {
			if other, dup := group[g]; dup && other != n {
				return on, fmt.Errorf("fakeserver: variants %q and %q exclude each other", other, n)
			}
			group[g] = n
		}
		on[id] = true
	}
	return on, nil
}
