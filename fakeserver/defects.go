package fakeserver

import (
	"fmt"
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

// defectID names a defect switch in code. It is not a string, so the
// compiler refuses a misspelt switch; defectTable gives each its name.
type defectID int

// The defect switches, grouped by spec area.
const (
	// Request body.
	defPromptTrimmed defectID = iota
	defJsonPromptParsed
	// Invoke routes.
	defAgentIdUnresolved
	defAliasUnresolved
	defThreadIdNewThread
	defThreadSegmentIgnored
	defThreadsRouteMissing
	defAliasDefaultAgent
	defThreadIdDefaultAgent
	defAgentIdDefaultAgent
	// Thread selection.
	defThreadHeaderWins
	defThreadHeaderIgnored
	defNewThreadReused
	defNoThreadHeader
	defThreadResumeEchoed
	defNewThreadIdInvented
	// Response forms.
	defSseBuffered
	defEnvelopeEarly
	defPlainDefaultJson
	defAcceptPrefix
	defAcceptJsonContains
	defPlainBuffered
	defContentCumulative
	defDisconnectIgnored
	defAcceptCaseFolded
	defAcceptSpacesIgnored
	defEnvelopeContentOnly
	defEnvelopeItemIdsMissing
	defPlainPaced
	defPlainFlush750ms
	defEnvelopeRepeatedTail
	defDisconnectIgnoredPlain
	defEnvelopeDropsError
	defSseAsTextPlain
	defPlainDebounced
	defPlainBufferedDefault
	// SSE framing.
	defStartLate
	defNoEventId
	defFinalIdSuffix
	defFinalNotComplete
	defNoPing
	defNoClose
	defNoCloseAfterError
	defEventsAfterComplete
	defErrorAsStatus
	defStreamCutMidFrame
	defAfterOnEveryId
	defPingAfterEvents
	defDataSplitInString
	// Event objects.
	defContentDataRaw
	defEventThreadMissing
	defRicherMerged
	defToolcallNoName
	defToolcallNameEmpty
	defStepTitle
	defPromptNoSensitive
	defPromptFieldsEmpty
	defWaitingDropped
	defToolinputDropped
	defWaitingLate
	defToolinputLate
	defNoThreadHeaderWrongThread
	defWaitingWithContent
	defToolinputWithToolcall
	defPromptFieldsGeneric
	defStepAfterContent
	// Async and follow-up routes.
	defAsyncIgnored
	defEventsRunidIgnored
	defEventsLatestRun
	defEventsNoWait
	defLastrunAtStart
	defThreadGetWaits
	defAbortIgnored
	defAsyncFalseAsTrue
	defAbortStreamOnly
	defEventsFirstRun
	defAbortStreamOnlyEmptyEvents
	defAsyncAckNewThread
	defEventsRunidRelabelled
	defEventsNoFinal
	// Authentication and errors.
	defScopeResolved
	defThreadNeedsThreadScope
	defWildcardUnchecked
	defEventsUnscoped
	defAbortNeedsWildcard
	defNonAgent404
	defMissingKey403
	defMalformedKey400
	defUnknownKey403
	defExpired403
	defScopeUnchecked
	defApiDisabledIgnored
	defUnknown400
	defOpenaiErrors
	defThreadScopeIgnored
	defEventsNeedChatScope
	defAbortNeedsThreadRead
	defProjectScopeAnyProject
	defScopeFromThreadHeader
	defScopeFromAgentHeader
	defProjectThreadsAnyThread
	defUnknownThreadHeaderNewThread
	// Project variant.
	defProjectRouteMissing
	defProjectThreadSegmentIgnored
	defProjectEnvelopeOnly
	defProjectAsyncIgnored
	defProjectNoThreadHeader
	defProjectThreadHeaderIgnored
	defProjectContextDropped
	defProjectTasksEverywhere
	defProjectModelEverywhere
	defProjectRouteWorkspaceAgent
	defProjectThreadHeaderWins
	defProjectAcceptCaseFolded
	// One cell only (defects_cells.go): a rule broken where a suite that
	// tries it on one representative exchange does not look.
	defAliasNoThreadHeader
	defScopedToolsNoThreadHeader
	defProjectThreadNoClose
	defAbortedNoClose
	defRunModeNoClose
	defFailedRunNoFinal
	defThreadIDAsyncNoRun
	defFailedEnvelopeNoThread
	defProjectPlainBuffered
	defAliasStartLate
	defAliasScopedToolsIgnored
	defAsyncScopedToolsIgnored
	defProjectThreadScopedToolsIgnored
	defSSERunModeIgnored
	defThreadsRunModeIgnored
	defAliasCredentialGateIgnored
	defAsyncCredentialGateIgnored
	defProjectUnknownMode400
	defAliasJSONPromptParsed
	defEnvelopeJSONPromptParsed
	defThreadIDUnscopedExtraTool
	defProjectExpired403
	defThreadSegmentUnknownKey403
	defAliasMalformedKey400
	defThreadsRouteUnscoped
	defThreadsCredentialScopesIgnored
	defSSEThreadHeaderWins
	defAliasEnvelopeThreadHeaderIgnored
	defProjectStreamThreadHeaderIgnored
	defThreadsSSEContentDropped
	defProjectDisconnectIgnored
	defProjectScopedToolsUntrimmed
	defAsyncModeListFirstOnly
	defAsyncScopedToolsSticky
	defThreadsUnknownThreadNew
	defProjectUnknownThreadHeaderNew
	defThreadsModeEntitlementIgnored
	defThreadsModeToolsUngated
	defEnvelopeToolcallUnnamed
	defEnvelopeStepUntitled
	defThreadsAsyncFalseAsTrue
	defProjectPromptUnflagged
	defEnvelopeWaitingDropped
	defResumedToolinputDropped
	defProjectThreadTasksMissing
	defProjectThreadCredentialsMissing
	defResumedProjectModelUnset
	defThreadRouteNonAgentIgnored
	defThreadSegmentApiDisabledIgnored
	defAsyncAgentIdRunsMain
	defEnvelopeAliasRunsMain
	defAsyncThreadIdNewThread
	defStreamThreadRouteResumeEchoed
	defStreamThreadsResumeEchoed
	defAbortApiDisabledIgnored
	defThreadRouteScopeResolved
	defThreadsNeedThreadScope
	defProjectThreadScopeAnyProject
	// Scopes of the project routes and the follow-up routes.
	defProjectNeedsAgentScope
	defProjectAgentScopeAccepted
	defEventsProjectNeedsThreadRead
	defAbortUnscoped
	defAbortAnyChatScope
	// X-SVC-Scoped-Tools.
	defScopedToolsUntrimmed
	defScopedToolsEmpty400
	defScopedToolsIgnored
	defScopedToolsWiden
	defScopedToolsBypassCredentials
	defScopedToolsSticky
	defCredentialGateIgnored
	defScopedToolsWorkspaceWiden
	defScopedToolsDropCredentialTools
	defUnscopedRunExtraTool
	// X-SVC-Run-Mode.
	defModeHeaderUntrimmed
	defModeListFirstOnly
	defModeReplacesTools
	defModeEntitlementIgnored
	defModeUnentitled403
	defUnknownMode400
	defModeToolsUngated
	defModeCredential403
	defResearchModeMissing
	defResearchNeedsWildcardCredential
	defModeListLastOnly
	defModeToolReference
	defModeIgnoredErrorEvent
	defModeRemovalNotice
	// Credential scopes.
	defCredentialRemoval403
	defCredentialWildcardIgnored
	defCredentialRemovalNotice
	// The bundle document.
	defExportTasksOutsidePayload
	defTwoAgentsAccepted
	defAgentlessAccepted
	defInvalidHalfWritten
	defTwoAppsAccepted
	defAppRequired
	defOneKnowledgeSet
	defNestedProjectAccepted
	defInstalledProjectNotExportable
	defUnknownChildIgnored
	defExportPayloadTasksOnly
	defExportNestsProject
	defExportAgentDuplicated
	defExportTaskChildren
	defPayloadlessAccepted
	defExportTypeMissing
	defExportIncludesEmpty
	// Export and dropped items.
	defAgentInlined
	defExportAllKnowledge
	defExportAllConnectors
	defExportAgentConnectorsOnly
	defExportAppAlways
	defExportAppIgnored
	defExportAppRenamed
	defExportKeepsApprovers
	defExportKeepsEnvValues
	defExportDropsEnvNames
	defExportKeepsCapabilities
	defExportKeepsTriggers
	defExportDropsSchedule
	defExportKeepsWebhookCapitalised
	defExportKeepsSharedTasks
	defExportKeepsMembers
	defInstallKeepsDropped
	// Install.
	defInstallDocumentOrder
	defKnowledgeNotAttached
	defFailedChildUnnamed
	defFailureNotMarked
	defRollbackOnFailure
	defFailedDeleteKeepsChildren
	// Update.
	defRerunReinstallsUpToDate
	defGateRefusalAfterWrite
	defGateErrorUnnamed
	defGateIgnoresDirectUpdate
	defUndeclaredTaskDeleted
	defUndeclaredTaskKeepsMarker
	defUndeclaredChildRemoved
	defOrphanNotRecorded
	defOrphanedChildResourceRemoved
	defOrphanRecordMarked
	defRepeatUpdateRewritesChildren
	// Uninstall.
	defUninstallInstallOrder
	defUninstallAppAfterAgent
	defUninstallIgnoresOrphanedTasks
	defOrphanTaskRefusalUnnamed
	defRefusalDropsRecord
	defRefusalAfterRemoval
	defOrphanTaskUndeletable
	defDeleteTaskKeepsOwned
	defOrphanChildBlocksUninstall
	defUninstallCascadesOrphans
	defUninstallLeavesChildren

	numDefects
)

// defectTable is every defect switch, by ID: its name (for serve --defect
// and Config.Defects), the rules it breaks and what it does.
var defectTable = [numDefects]Defect{
	// Request body.
	defPromptTrimmed:    {"prompt-trimmed", []string{"BODY-01", "PROJ-03"}, "the prompt is trimmed of surrounding whitespace"},
	defJsonPromptParsed: {"json-prompt-parsed", []string{"BODY-02", "PROJ-03"}, "a JSON body is parsed and its prompt or last message content used"},
	// Invoke routes.
	defAgentIdUnresolved:    {"agent-id-unresolved", []string{"ROUTE-01"}, "{id} is looked up as an alias only, so agent IDs are 404"},
	defAliasUnresolved:      {"alias-unresolved", []string{"ROUTE-02"}, "{id} is never resolved as an alias"},
	defThreadIdNewThread:    {"thread-id-new-thread", []string{"ROUTE-03"}, "a thread ID in {id} runs its agent on a new thread"},
	defThreadSegmentIgnored: {"thread-segment-ignored", []string{"ROUTE-04", "ROUTE-05", "PROJ-02"}, "the thread path segment is ignored"},
	defThreadsRouteMissing:  {"threads-route-missing", []string{"ROUTE-05"}, "the /threads/{thread} spelling of the route is missing"},
	defAliasDefaultAgent:    {"alias-default-agent", []string{"ROUTE-02"}, "an alias is resolved to the service's main agent (agents.main) instead of the agent behind it"},
	defThreadIdDefaultAgent: {"thread-id-default-agent", []string{"ROUTE-03"}, "a thread ID in {id} continues the thread with the service's main agent (agents.main) instead of the agent that owns it"},
	defAgentIdDefaultAgent:  {"agent-id-default-agent", []string{"ROUTE-01"}, "an agent ID in {id} runs the service's main agent (agents.main) instead of the agent it names"},
	// Thread selection.
	defThreadHeaderWins:    {"thread-header-wins", []string{"THREAD-01", "PROJ-03"}, "X-SVC-Thread-Id beats the thread path segment"},
	defThreadHeaderIgnored: {"thread-header-ignored", []string{"THREAD-02", "PROJ-03"}, "X-SVC-Thread-Id is ignored"},
	defNewThreadReused:     {"new-thread-reused", []string{"THREAD-03", "PROJ-03"}, "a call without thread reuses the key's last thread"},
	defNoThreadHeader:      {"no-thread-header", []string{"THREAD-04", "PROJ-03"}, "responses lack X-SVC-Thread-Id"},
	defThreadResumeEchoed: {"thread-resume-echoed", []string{"ROUTE-03", "ROUTE-04", "ROUTE-05", "THREAD-01", "THREAD-02", "PROJ-02", "PROJ-03", "THREAD-04"},
		"a resumed thread runs as a fresh conversation on a new thread, and the response echoes the requested thread ID"},
	defNewThreadIdInvented: {"new-thread-id-invented", []string{"THREAD-04"}, "in the streaming forms (SSE, plain text), a new thread's response header X-SVC-Thread-Id names a provisional ID that no thread has"},
	// Response forms.
	defSseBuffered:            {"sse-buffered", []string{"FMT-01", "SSE-01", "PROJ-03"}, "the SSE stream is written only after the run ends"},
	defEnvelopeEarly:          {"envelope-early", []string{"FMT-02", "PROJ-03"}, "the JSON envelope is sent before the run ends"},
	defPlainDefaultJson:       {"plain-default-json", []string{"FMT-03", "PROJ-03"}, "a request without Accept gets the JSON envelope"},
	defAcceptPrefix:           {"accept-prefix", []string{"FMT-04", "PROJ-03"}, "Accept is matched by prefix, so text/event-stream, */* gets SSE"},
	defAcceptJsonContains:     {"accept-json-contains", []string{"FMT-05", "PROJ-03"}, "Accept is searched for application/json"},
	defPlainBuffered:          {"plain-buffered", []string{"FMT-06", "PROJ-03"}, "plain text is held until the run ends"},
	defContentCumulative:      {"content-cumulative", []string{"EVT-03"}, "each event's content repeats all content so far"},
	defDisconnectIgnored:      {"disconnect-ignored", []string{"FMT-08"}, "a run goes on after its client disconnected"},
	defAcceptCaseFolded:       {"accept-case-folded", []string{"FMT-04", "FMT-05", "PROJ-03"}, "Accept is compared ignoring case, so Text/Event-Stream gets SSE"},
	defAcceptSpacesIgnored:    {"accept-spaces-ignored", []string{"FMT-04", "FMT-05", "PROJ-03"}, "whitespace inside Accept is dropped before comparing, so text/ event-stream gets SSE"},
	defEnvelopeContentOnly:    {"envelope-content-only", []string{"FMT-07"}, "the JSON envelope holds only the events with content (no tool call, no step)"},
	defEnvelopeItemIdsMissing: {"envelope-item-ids-missing", []string{"EVT-02"}, "the JSON envelope's items lack runID and threadID"},
	defPlainPaced:             {"plain-paced", []string{"FMT-06"}, "plain text is written at a steady pace, one fragment per 1.2 s, so later fragments are held ever longer"},
	defPlainFlush750ms:        {"plain-flush-750ms", []string{"FMT-06"}, "plain text is buffered and flushed on a 750 ms timer"},
	defEnvelopeRepeatedTail:   {"envelope-repeated-tail", []string{"FMT-02", "PROJ-03"}, "the JSON envelope is followed by a second envelope holding the final event again"},
	defDisconnectIgnoredPlain: {"disconnect-ignored-plain", []string{"FMT-08"}, "a plain-text run goes on after its client disconnected (the SSE form cancels it)"},
	defEnvelopeDropsError:     {"envelope-drops-error", []string{"FMT-07"}, "the JSON envelope leaves out the error event of a failed run"},
	defSseAsTextPlain:         {"sse-as-text-plain", []string{"FMT-01", "PROJ-03"}, "the SSE stream is sent as Content-Type text/plain; charset=utf-8 (what net/http sniffs when a handler sets none)"},
	defPlainDebounced:         {"plain-debounced", []string{"FMT-06"}, "plain text is flushed only once the run has paused 200 ms, so text produced steadily is held until the run ends"},
	defPlainBufferedDefault:   {"plain-buffered-default", []string{"FMT-06", "PROJ-03"}, "plain text is streamed for Accept: text/plain, but held until the run ends for a request without Accept"},
	// SSE framing.
	defStartLate:           {"start-late", []string{"SSE-01"}, "event: start is sent with the first event instead of at once"},
	defNoEventId:           {"no-event-id", []string{"SSE-02", "SSE-03"}, "event frames carry no id line"},
	defFinalIdSuffix:       {"final-id-suffix", []string{"SSE-03"}, "the final event's id ends in :end instead of :after"},
	defFinalNotComplete:    {"final-not-complete", []string{"SSE-03"}, "the final event lacks runComplete true"},
	defNoPing:              {"no-ping", []string{"SSE-04"}, "no keepalive comment is ever written"},
	defNoClose:             {"no-close", []string{"SSE-05"}, "the stream ends without event: close"},
	defNoCloseAfterError:   {"no-close-after-error", []string{"SSE-05"}, "a failed run's stream ends without event: close"},
	defEventsAfterComplete: {"events-after-complete", []string{"SSE-06"}, "an event follows the runComplete event"},
	defErrorAsStatus:       {"error-as-status", []string{"FMT-01", "SSE-01", "SSE-07", "PROJ-03"}, "a failing run answers 500 instead of an error event"},
	defStreamCutMidFrame:   {"stream-cut-mid-frame", []string{"SSE-02", "SSE-05"}, "the stream ends inside the final event frame, before its blank line (and without event: close)"},
	defAfterOnEveryId:      {"after-on-every-id", []string{"SSE-02"}, "every event frame's id carries the :after suffix, not only the final one"},
	defDataSplitInString:   {"data-split-in-string", []string{"SSE-02"}, "a content event's data is written as two data lines cut inside the JSON string, which join into no JSON"},
	defPingAfterEvents:     {"ping-after-events", []string{"SSE-04"}, "a : ping comment follows every event frame (to push it through proxies), and none is written while the run is quiet"},
	// Event objects.
	defContentDataRaw:     {"content-data-raw", []string{"EVT-01"}, "content events are sent as raw text instead of JSON"},
	defEventThreadMissing: {"event-thread-missing", []string{"EVT-02"}, "event objects lack threadID"},
	defRicherMerged:       {"richer-merged", []string{"EVT-04"}, "a tool call event also carries a step"},
	defToolcallNoName:     {"toolcall-no-name", []string{"EVT-05"}, "toolCall carries the tool as tool instead of name"},
	defToolcallNameEmpty:  {"toolcall-name-empty", []string{"EVT-05"}, "toolCall carries an empty name (the tool as tool)"},
	defStepTitle:          {"step-title", []string{"EVT-06"}, "step carries title instead of description"},
	defPromptNoSensitive:  {"prompt-no-sensitive", []string{"EVT-07"}, "prompt events lack the sensitive flag"},
	defPromptFieldsEmpty:  {"prompt-fields-empty", []string{"EVT-07"}, "prompt events carry fields as an empty list, even when the request names fields"},
	defWaitingDropped:     {"waiting-dropped", []string{"EVT-08"}, "waitingOnModel is never signalled"},
	defToolinputDropped:   {"toolinput-dropped", []string{"EVT-09"}, "toolInput is never signalled"},
	defWaitingLate:        {"waiting-late", []string{"EVT-08"}, "waitingOnModel is signalled after the model's first content"},
	defToolinputLate:      {"toolinput-late", []string{"EVT-09"}, "toolInput is signalled after its toolCall"},
	defNoThreadHeaderWrongThread: {"no-thread-header-wrong-thread", []string{"EVT-02", "THREAD-04", "PROJ-03"},
		"responses lack X-SVC-Thread-Id and the events name another thread than the run's"},
	defWaitingWithContent: {"waiting-with-content", []string{"EVT-08"}, "waitingOnModel is not sent ahead: it is set on the event that carries the model's first content"},
	defToolinputWithToolcall: {"toolinput-with-toolcall", []string{"EVT-04", "EVT-09"},
		"toolInput is not sent ahead: it is set on the event that carries the toolCall"},
	defPromptFieldsGeneric: {"prompt-fields-generic", []string{"EVT-07"}, "prompt events carry one generic field, value, instead of the fields the request names"},
	defStepAfterContent:    {"step-after-content", []string{"EVT-06"}, "a step event is sent after the event that follows it, not before the events that belong to the step"},
	// Async and follow-up routes.
	defAsyncIgnored:       {"async-ignored", []string{"ASYNC-01", "PROJ-03"}, "async=true is ignored and the call runs synchronously"},
	defEventsRunidIgnored: {"events-runid-ignored", []string{"ASYNC-02"}, "the events route ignores runID"},
	defEventsLatestRun:    {"events-latest-run", []string{"ASYNC-03"}, "the events route without runID returns the newest run, finished or not"},
	defEventsNoWait:       {"events-no-wait", []string{"ASYNC-04"}, "the events route answers at once even with Accept: application/json"},
	defLastrunAtStart:     {"lastrun-at-start", []string{"ASYNC-05"}, "lastRunID names a run as soon as it starts"},
	defThreadGetWaits:     {"thread-get-waits", []string{"ASYNC-05"}, "GET /api/threads/{id} waits for the run to finish"},
	defAbortIgnored:       {"abort-ignored", []string{"ASYNC-06"}, "abort answers but cancels nothing"},
	defAsyncFalseAsTrue:   {"async-false-as-true", []string{"ASYNC-07"}, "any async parameter, false included, starts an async run"},
	defAbortStreamOnly:    {"abort-stream-only", []string{"ASYNC-06", "FMT-08"}, "abort ends the client's stream, but the run goes on on the server"},
	defEventsFirstRun:     {"events-first-run", []string{"ASYNC-03"}, "the events route without runID returns the thread's first completed run, not its last"},
	defAbortStreamOnlyEmptyEvents: {"abort-stream-only-empty-events", []string{"ASYNC-06", "ASYNC-04", "FMT-08"},
		"abort ends the client's stream while the run goes on, and the events route answers an empty envelope for a run that has not finished"},
	defAsyncAckNewThread: {"async-ack-new-thread", []string{"ASYNC-01", "PROJ-03"}, "on a resumed thread the async answer's threadID names a fresh thread (the header is right)"},
	defEventsRunidRelabelled: {"events-runid-relabelled", []string{"ASYNC-02"},
		"the events route with runID delivers that run's events, but labelled with the thread's newest run ID"},
	defEventsNoFinal: {"events-no-final", []string{"ASYNC-04"}, "the events route's JSON answer waits for the run but leaves out its final event (runComplete)"},
	// Authentication and errors.
	defScopeResolved:                {"scope-resolved", []string{"AUTH-01", "AUTH-02"}, "the scope is checked against the resolved agent, not the literal path value"},
	defThreadNeedsThreadScope:       {"thread-needs-thread-scope", []string{"AUTH-03", "AUTH-05"}, "continuing a thread needs agent:chat:<thread>"},
	defWildcardUnchecked:            {"wildcard-unchecked", []string{"AUTH-04"}, "a wildcard key is not re-checked against its owner's access"},
	defEventsUnscoped:               {"events-unscoped", []string{"AUTH-06"}, "the events route needs no thread:read"},
	defAbortNeedsWildcard:           {"abort-needs-wildcard", []string{"AUTH-07"}, "abort needs agent:chat:*"},
	defNonAgent404:                  {"non-agent-404", []string{"ERR-01"}, "an ID that names no agent is 404 instead of 400"},
	defMissingKey403:                {"missing-key-403", []string{"ERR-02"}, "a request without Authorization is 403"},
	defMalformedKey400:              {"malformed-key-400", []string{"ERR-03", "ERR-04"}, "a malformed key is 400"},
	defUnknownKey403:                {"unknown-key-403", []string{"ERR-04"}, "an unknown key is 403"},
	defExpired403:                   {"expired-403", []string{"ERR-05"}, "an expired key is 403 instead of 401"},
	defScopeUnchecked:               {"scope-unchecked", []string{"ERR-06", "AUTH-01", "AUTH-02"}, "any valid key may invoke any agent its owner can open"},
	defApiDisabledIgnored:           {"api-disabled-ignored", []string{"ERR-07"}, "keys work on an instance with API access disabled"},
	defUnknown400:                   {"unknown-400", []string{"ERR-08"}, "an unknown agent is 400 instead of 404"},
	defOpenaiErrors:                 {"openai-errors", []string{"ERR-10"}, "errors use the OpenAI error envelope"},
	defThreadScopeIgnored:           {"thread-scope-ignored", []string{"AUTH-02"}, "agent:chat:<thread ID> does not cover the thread; only a wildcard key opens a thread ID in {id}"},
	defEventsNeedChatScope:          {"events-need-chat-scope", []string{"AUTH-06"}, "the events route needs a chat scope for the thread beside thread:read"},
	defAbortNeedsThreadRead:         {"abort-needs-thread-read", []string{"AUTH-07"}, "abort needs thread:read beside agent:chat"},
	defProjectScopeAnyProject:       {"project-scope-any-project", []string{"AUTH-05"}, "project:chat:<any project> covers the routes of every project"},
	defScopeFromThreadHeader:        {"scope-from-thread-header", []string{"AUTH-01"}, "a key scoped to the thread in X-SVC-Thread-Id may invoke that thread's agent by its ID"},
	defScopeFromAgentHeader:         {"scope-from-agent-header", []string{"AUTH-01"}, "a key scoped to the agent in X-SVC-Agent may invoke any agent by its ID"},
	defProjectThreadsAnyThread:      {"project-threads-any-thread", []string{"AUTH-06"}, "project:threads opens the events of every thread, not only those of the key's project"},
	defUnknownThreadHeaderNewThread: {"unknown-thread-header-new-thread", []string{"ERR-08"}, "an X-SVC-Thread-Id naming no thread silently starts a new thread"},
	// Project variant.
	defProjectRouteMissing:         {"project-route-missing", []string{"PROJ-01"}, "the project invoke routes are missing (404)"},
	defProjectThreadSegmentIgnored: {"project-thread-segment-ignored", []string{"PROJ-02"}, "the project thread route starts a new thread instead of continuing the one in the path"},
	defProjectEnvelopeOnly:         {"project-envelope-only", []string{"PROJ-03"}, "project routes ignore Accept and always answer with the JSON envelope"},
	defProjectAsyncIgnored:         {"project-async-ignored", []string{"PROJ-03"}, "project routes ignore async=true"},
	defProjectNoThreadHeader:       {"project-no-thread-header", []string{"PROJ-03"}, "project route responses lack X-SVC-Thread-Id"},
	defProjectThreadHeaderIgnored:  {"project-thread-header-ignored", []string{"PROJ-03"}, "project routes ignore X-SVC-Thread-Id"},
	defProjectContextDropped:       {"project-context-dropped", []string{"PROJ-04", "PROJ-05", "PROJ-06"}, "a project invoke runs the agent bare: no tasks, project credentials or model settings"},
	defProjectTasksEverywhere:      {"project-tasks-everywhere", []string{"PROJ-04"}, "a bare-agent invoke of a project's agent has the project's tasks as tools"},
	defProjectModelEverywhere:      {"project-model-everywhere", []string{"PROJ-06"}, "a bare-agent invoke of a project's agent uses the project's model setting"},
	defProjectRouteWorkspaceAgent:  {"project-route-workspace-agent", []string{"PROJ-01"}, "the project route runs a workspace agent that has every agent's tools instead of the project's agent"},
	defProjectThreadHeaderWins:     {"project-thread-header-wins", []string{"PROJ-03"}, "on the project thread route X-SVC-Thread-Id beats the thread path segment"},
	defProjectAcceptCaseFolded:     {"project-accept-case-folded", []string{"PROJ-03"}, "project routes compare Accept ignoring case, so Text/Event-Stream gets SSE"},
	// One cell only.
	defAliasNoThreadHeader:       {"alias-no-thread-header", []string{"THREAD-04"}, "answers to the alias route lack X-SVC-Thread-Id (the agent-ID route's carry it)"},
	defScopedToolsNoThreadHeader: {"scoped-tools-no-thread-header", []string{"THREAD-04", "PROJ-03"}, "answers to a request with X-SVC-Scoped-Tools lack X-SVC-Thread-Id"},
	defProjectThreadNoClose:      {"project-thread-sse-no-close", []string{"SSE-05"}, "SSE streams of the project thread route end without event: close"},
	defAbortedNoClose:            {"aborted-stream-no-close", []string{"SSE-05"}, "the SSE stream of a run its thread's abort cancelled ends without event: close"},
	defRunModeNoClose:            {"run-mode-no-close", []string{"SSE-05"}, "SSE streams of a request with X-SVC-Run-Mode end without event: close"},
	defFailedRunNoFinal:          {"failed-run-no-final", []string{"SSE-03"}, "the SSE stream of a failed run ends on its error event: no final event with runComplete true"},
	defThreadIDAsyncNoRun:        {"thread-id-async-no-run", []string{"ASYNC-01"}, "on the thread-ID route ({id} a thread) the async answer lacks runID"},
	defFailedEnvelopeNoThread:    {"failed-envelope-no-thread", []string{"EVT-02"}, "the envelope of a failed run holds items without threadID"},
	defProjectPlainBuffered:      {"project-plain-buffered", []string{"PROJ-03"}, "plain text on the project routes is held until the run ends (only a run that pauses shows it)"},
	defAliasStartLate:            {"alias-start-late", []string{"SSE-01"}, "on the alias route the SSE stream's start frame waits for the agent's first output (only a run that pauses first shows it)"},
	defAliasScopedToolsIgnored:   {"alias-scoped-tools-ignored", []string{"TOOLS-02"}, "X-SVC-Scoped-Tools is ignored on the alias route (the agent-ID route honours it)"},
	defAsyncScopedToolsIgnored:   {"async-scoped-tools-ignored", []string{"TOOLS-02"}, "X-SVC-Scoped-Tools is ignored by async runs (async=true)"},
	defProjectThreadScopedToolsIgnored: {"project-thread-scoped-tools-ignored", []string{"TOOLS-02"},
		"X-SVC-Scoped-Tools is ignored on the project thread route"},
	defSSERunModeIgnored:     {"sse-run-mode-ignored", []string{"MODE-02"}, "X-SVC-Run-Mode is ignored when the answer is an SSE stream"},
	defThreadsRunModeIgnored: {"threads-run-mode-ignored", []string{"MODE-02"}, "X-SVC-Run-Mode is ignored on the /threads/ route (the /thread/ route honours it)"},
	defAliasCredentialGateIgnored: {"alias-credential-gate-ignored", []string{"CRED-01"},
		"on the alias route the agent's credential-backed tools are not gated by the key's credential scopes"},
	defAliasJSONPromptParsed: {"alias-json-prompt-parsed", []string{"BODY-02"},
		"on the alias route a JSON body is parsed and its prompt or last message content used (the agent-ID route keeps it verbatim)"},
	defEnvelopeJSONPromptParsed: {"envelope-json-prompt-parsed", []string{"BODY-02"},
		"a call that asks for the JSON envelope (Accept: application/json) has a JSON body parsed and its prompt or last message content used"},
	defThreadIDUnscopedExtraTool: {"thread-id-unscoped-extra-tool", []string{"TOOLS-04"},
		"on the thread-ID route a run without X-SVC-Scoped-Tools also has a tool the agent is not configured with (the workspace's browser)"},
	defProjectExpired403:          {"project-expired-403", []string{"ERR-05"}, "on the project routes an expired key is refused with 403 (the agent routes answer 401)"},
	defThreadSegmentUnknownKey403: {"thread-segment-unknown-key-403", []string{"ERR-04"}, "on the /thread/ and /threads/ routes an unknown key is refused with 403"},
	defAliasMalformedKey400:       {"alias-malformed-key-400", []string{"ERR-03"}, "on the alias route a malformed key is refused with 400"},
	defThreadsRouteUnscoped: {"threads-route-unscoped", []string{"AUTH-01", "ERR-06"},
		"the /threads/ route checks no chat scope: any valid key may run any agent of its owner there (the /thread/ route checks it)"},
	defThreadsCredentialScopesIgnored: {"threads-credential-scopes-ignored", []string{"CRED-02"},
		"on the /threads/ route no credential:use scope is honoured: the agent's credential-backed tools are always removed"},
	defSSEThreadHeaderWins: {"sse-thread-header-wins", []string{"THREAD-01"},
		"when the answer is an SSE stream, X-SVC-Thread-Id beats the thread segment of the /thread/ and /threads/ routes (the other forms use the segment)"},
	defAliasEnvelopeThreadHeaderIgnored: {"alias-envelope-thread-header-ignored", []string{"THREAD-02"},
		"on the alias route a call that asks for the JSON envelope ignores X-SVC-Thread-Id and starts a new thread"},
	defProjectStreamThreadHeaderIgnored: {"project-stream-thread-header-ignored", []string{"PROJ-03"},
		"on the project route a call that asks for an SSE stream ignores X-SVC-Thread-Id and starts a new thread (the agent routes honour it)"},
	defThreadsSSEContentDropped: {"threads-sse-content-dropped", []string{"EVT-03"},
		"on the /threads/ route an SSE stream sends the run's second piece of content as an event with empty content (the envelope, plain text and the events route keep it)"},
	defProjectDisconnectIgnored: {"project-disconnect-ignored", []string{"FMT-08"},
		"on the project routes a run goes on after its client disconnected (the agent routes cancel it)"},
	defProjectScopedToolsUntrimmed: {"project-scoped-tools-untrimmed", []string{"TOOLS-01"},
		"on the project routes the entries of X-SVC-Scoped-Tools are not trimmed (the agent routes trim them)"},
	defAsyncModeListFirstOnly: {"async-mode-list-first-only", []string{"MODE-01"},
		"async runs (async=true) read only the first entry of X-SVC-Run-Mode (synchronous calls read the whole list)"},
	defThreadsUnknownThreadNew: {"threads-unknown-thread-new", []string{"ERR-08"},
		"on the /threads/ route a thread segment naming no thread starts a new thread (the /thread/ route answers 404)"},
	defProjectUnknownThreadHeaderNew: {"project-unknown-thread-header-new", []string{"ERR-08"},
		"on the project route an X-SVC-Thread-Id naming no thread starts a new thread (the agent routes answer 404)"},
	defThreadsModeEntitlementIgnored: {"threads-mode-entitlement-ignored", []string{"MODE-03"},
		"on the /threads/ route research mode works without the workspace's entitlement (the other routes ignore it)"},
	defThreadsModeToolsUngated: {"threads-mode-tools-ungated", []string{"MODE-05"},
		"on the /threads/ route the tools a mode attaches skip the credential gate (the other routes gate them)"},
	defEnvelopeToolcallUnnamed: {"envelope-toolcall-unnamed", []string{"EVT-05"},
		"in a JSON envelope's items toolCall carries the tool as tool instead of name (SSE events carry name)"},
	defEnvelopeStepUntitled: {"envelope-step-untitled", []string{"EVT-06"},
		"in a JSON envelope's items step carries title instead of description (SSE events carry description)"},
	defThreadsAsyncFalseAsTrue: {"threads-async-false-as-true", []string{"ASYNC-07"},
		"on the /threads/ route async=false starts an async run (the other routes answer synchronously)"},
	defProjectPromptUnflagged: {"project-prompt-unflagged", []string{"EVT-07"},
		"inside a project a prompt event's sensitive flag is dropped (bare-agent runs keep it)"},
	defEnvelopeWaitingDropped: {"envelope-waiting-dropped", []string{"EVT-08"},
		"a JSON envelope's items leave out waitingOnModel (SSE events carry it)"},
	defResumedToolinputDropped: {"resumed-toolinput-dropped", []string{"EVT-09"},
		"a run that continues a thread never signals toolInput (a thread's first run does)"},
	defProjectThreadTasksMissing: {"project-thread-tasks-missing", []string{"PROJ-04"},
		"on the project thread route the run lacks the project's tasks as tools (the project route has them)"},
	defProjectThreadCredentialsMissing: {"project-thread-credentials-missing", []string{"PROJ-05"},
		"on the project thread route the project's credentials do not apply (the project route's runs use them)"},
	defResumedProjectModelUnset: {"resumed-project-model-unset", []string{"PROJ-06"},
		"a run that continues a project thread runs on the agent's own model (a project thread's first run uses the project's)"},
	defThreadRouteNonAgentIgnored: {"thread-route-non-agent-id-ignored", []string{"ERR-01"},
		"on the /thread/ route an {id} that names no agent is ignored: the thread's agent runs (the other routes answer 400)"},
	defThreadSegmentApiDisabledIgnored: {"thread-segment-api-disabled-ignored", []string{"ERR-07"},
		"on the /thread/ and /threads/ routes a key on an instance with API access disabled works (the other routes answer 403)"},
	defAsyncAgentIdRunsMain: {"async-agent-id-runs-main", []string{"ROUTE-01"},
		"an async run on an agent ID runs the workspace's main agent (agents.main), whichever agent it names (synchronous calls run the agent named)"},
	defEnvelopeAliasRunsMain: {"envelope-alias-runs-main", []string{"ROUTE-02"},
		"asked for a JSON envelope, an alias runs the workspace's main agent (agents.main), whichever agent it names (the other forms resolve it)"},
	defAsyncThreadIdNewThread: {"async-thread-id-new-thread", []string{"ROUTE-03"},
		"an async run on a thread ID starts a new thread of its agent (synchronous calls continue the thread)"},
	defStreamThreadRouteResumeEchoed: {"stream-thread-route-resume-echoed", []string{"ROUTE-04", "THREAD-01", "THREAD-04"},
		"asked for an SSE stream, the /thread/ route starts a fresh conversation under the thread's ID (the other forms continue it)"},
	defThreadRouteScopeResolved: {"thread-route-scope-resolved", []string{"AUTH-01"},
		"on the /thread/ route the scope is checked against the resolved agent: a key for the agent ID covers its alias there (the other routes check the literal {id})"},
	defThreadsNeedThreadScope: {"threads-need-thread-scope", []string{"AUTH-03"},
		"on the /threads/ route continuing a thread needs agent:chat:<thread> (the /thread/ route takes the agent's scope)"},
	defProjectThreadScopeAnyProject: {"project-thread-scope-any-project", []string{"AUTH-05"},
		"on the project thread route any project:chat scope covers every project (the project route checks the project)"},
	defAbortApiDisabledIgnored: {"abort-api-disabled-ignored", []string{"ERR-07"},
		"POST /api/threads/{id}/abort works with a key on an instance with API access disabled (the invoke routes answer 403)"},
	defStreamThreadsResumeEchoed: {"stream-threads-resume-echoed", []string{"ROUTE-05", "THREAD-01", "THREAD-04"},
		"asked for an SSE stream, the /threads/ route starts a fresh conversation under the thread's ID (the other forms continue it)"},
	defAsyncScopedToolsSticky: {"async-scoped-tools-sticky", []string{"TOOLS-03"},
		"an async run's X-SVC-Scoped-Tools is saved on the agent and narrows its later async runs too (synchronous runs are not narrowed by it)"},
	defProjectUnknownMode400: {"project-unknown-mode-400", []string{"MODE-04"},
		"on the project routes an unknown mode name in X-SVC-Run-Mode is refused with 400 (the agent routes ignore it)"},
	defAsyncCredentialGateIgnored: {"async-credential-gate-ignored", []string{"CRED-01"},
		"async runs (async=true) keep the agent's credential-backed tools whatever the key's credential scopes"},
	// Scopes of the project routes and the follow-up routes.
	defProjectNeedsAgentScope:       {"project-needs-agent-scope", []string{"AUTH-05"}, "the project routes need agent:chat:<agent> instead of project:chat:<project>"},
	defProjectAgentScopeAccepted:    {"project-agent-scope-accepted", []string{"AUTH-05"}, "agent:chat:<agent> also covers the project routes of the agent's project"},
	defEventsProjectNeedsThreadRead: {"events-project-needs-thread-read", []string{"AUTH-06"}, "the events of a project thread need thread:read; project:threads is not honoured"},
	defAbortUnscoped:                {"abort-unscoped", []string{"AUTH-07", "AUTH-09"}, "any valid key may abort any thread"},
	defAbortAnyChatScope:            {"abort-any-chat-scope", []string{"AUTH-09"}, "any agent:chat scope, for any agent, may abort any thread its owner can open"},
	// X-SVC-Scoped-Tools.
	defScopedToolsUntrimmed:         {"scoped-tools-untrimmed", []string{"TOOLS-01"}, "entries of X-SVC-Scoped-Tools are not trimmed"},
	defScopedToolsEmpty400:          {"scoped-tools-empty-400", []string{"TOOLS-01"}, "an empty entry in X-SVC-Scoped-Tools is refused with 400"},
	defScopedToolsIgnored:           {"scoped-tools-ignored", []string{"TOOLS-02"}, "X-SVC-Scoped-Tools is ignored"},
	defScopedToolsWiden:             {"scoped-tools-widen", []string{"TOOLS-02"}, "X-SVC-Scoped-Tools adds tools the agent lacks"},
	defScopedToolsBypassCredentials: {"scoped-tools-bypass-credentials", []string{"TOOLS-02"}, "a tool named in X-SVC-Scoped-Tools skips the credential gate"},
	defScopedToolsSticky:            {"scoped-tools-sticky", []string{"TOOLS-03"}, "X-SVC-Scoped-Tools is saved on the agent and narrows later runs too"},
	defCredentialGateIgnored:        {"credential-gate-ignored", []string{"CRED-01"}, "credential scopes are not checked for the agent's tools"},
	defScopedToolsWorkspaceWiden: {"scoped-tools-workspace-widen", []string{"TOOLS-02"},
		"X-SVC-Scoped-Tools is resolved against the workspace: a tool of another agent that it names is added to the run"},
	defUnscopedRunExtraTool: {"unscoped-run-extra-tool", []string{"TOOLS-04"},
		"a run without X-SVC-Scoped-Tools also has a tool the agent is not configured with (the workspace's browser)"},
	defScopedToolsDropCredentialTools: {"scoped-tools-drop-credential-tools", []string{"TOOLS-02"},
		"with X-SVC-Scoped-Tools the run keeps only credential-free tools, even a credential-backed tool it names and the key may use"},
	// X-SVC-Run-Mode.
	defModeHeaderUntrimmed:             {"mode-header-untrimmed", []string{"MODE-01"}, "entries of X-SVC-Run-Mode are not trimmed"},
	defModeListFirstOnly:               {"mode-list-first-only", []string{"MODE-01"}, "only the first entry of X-SVC-Run-Mode is read"},
	defModeReplacesTools:               {"mode-replaces-tools", []string{"MODE-02"}, "a mode's tools replace the agent's own instead of adding to them"},
	defModeEntitlementIgnored:          {"mode-entitlement-ignored", []string{"MODE-03"}, "research mode works without the workspace entitlement"},
	defModeUnentitled403:               {"mode-unentitled-403", []string{"MODE-03"}, "a mode the workspace is not entitled to is refused with 403"},
	defUnknownMode400:                  {"unknown-mode-400", []string{"MODE-04"}, "an unknown mode name is refused with 400"},
	defModeToolsUngated:                {"mode-tools-ungated", []string{"MODE-05"}, "tools a mode attaches skip the credential gate"},
	defModeCredential403:               {"mode-credential-403", []string{"MODE-05"}, "a mode whose tool the key's credential scopes exclude is refused with 403"},
	defResearchModeMissing:             {"research-mode-missing", []string{"MODE-06"}, "the research mode is unknown to the server"},
	defResearchNeedsWildcardCredential: {"research-needs-wildcard-credential", []string{"MODE-06"}, "the research tool needs credential:use:*; credential:use:search is not enough"},
	defModeListLastOnly:                {"mode-list-last-only", []string{"MODE-01"}, "only the last entry of X-SVC-Run-Mode is read (each entry overwrites the one before)"},
	defModeToolReference: {"mode-tool-reference", []string{"MODE-04"},
		"an X-SVC-Run-Mode entry that names a tool of the workspace, not a mode, attaches that tool"},
	defModeIgnoredErrorEvent: {"mode-ignored-error-event", []string{"MODE-03", "MODE-04"},
		"a mode that is ignored (unknown, or the workspace is not entitled) is reported in an event with error set; the run goes on"},
	defModeRemovalNotice: {"mode-removal-notice", []string{"MODE-05"},
		"a run-mode tool removed for the key's credential scopes is announced in an event of its own that carries only a notice member naming it (no content, no richer field, no error)"},
	// Credential scopes.
	defCredentialRemoval403:      {"credential-removal-403", []string{"CRED-01"}, "a run whose tool the key's credential scopes exclude is refused with 403"},
	defCredentialWildcardIgnored: {"credential-wildcard-ignored", []string{"CRED-02"}, "credential:use:* does not cover credential-backed tools"},
	defCredentialRemovalNotice:   {"credential-removal-notice", []string{"CRED-01"}, "a tool removed for a missing credential scope is announced in a step event"},
	// The bundle document.
	defExportTasksOutsidePayload:     {"export-tasks-outside-payload", []string{"BUNDLE-01"}, "the export puts the tasks beside spec.payload instead of in it"},
	defTwoAgentsAccepted:             {"two-agents-accepted", []string{"BUNDLE-10"}, "a document with two agents installs"},
	defAgentlessAccepted:             {"agentless-accepted", []string{"BUNDLE-10"}, "a document without an agent installs"},
	defInvalidHalfWritten:            {"invalid-half-written", []string{"BUNDLE-10"}, "a second agent is refused only when the install reaches it, after earlier children were written"},
	defTwoAppsAccepted:               {"two-apps-accepted", []string{"BUNDLE-11"}, "a document with two apps installs"},
	defAppRequired:                   {"app-required", []string{"BUNDLE-03"}, "a document without an app is refused"},
	defOneKnowledgeSet:               {"one-knowledge-set", []string{"BUNDLE-04"}, "a document with more than one knowledge set is refused"},
	defNestedProjectAccepted:         {"nested-project-accepted", []string{"BUNDLE-12"}, "a nested project child is silently skipped and the rest installs"},
	defInstalledProjectNotExportable: {"installed-project-not-exportable", []string{"BUNDLE-06"}, "a project created by an installation is not a normal project: the export route refuses it"},
	defUnknownChildIgnored:           {"unknown-child-ignored", []string{"BUNDLE-13"}, "a child of an unknown type is silently skipped"},
	defExportAgentDuplicated:         {"export-agent-duplicated", []string{"BUNDLE-02"}, "the export lists the agent child twice in spec.includes"},
	defExportTaskChildren:            {"export-task-children", []string{"BUNDLE-08"}, "the export also lists each task as a child of type task in spec.includes"},
	defPayloadlessAccepted:           {"payloadless-accepted", []string{"BUNDLE-09"}, "a document without spec.payload installs an empty project named after the document"},
	defExportNestsProject:            {"export-nests-project", []string{"BUNDLE-05"}, "the export also lists the project itself as a child of type project in spec.includes"},
	defExportPayloadTasksOnly:        {"export-payload-tasks-only", []string{"BUNDLE-01"}, "the export's spec.payload holds the tasks and environment variables but not the project itself (its lead thread is left out)"},
	defExportTypeMissing:             {"export-type-missing", []string{"BUNDLE-01"}, "the export names its kind only at the top (kind: Bundle) and leaves spec.type out"},
	defExportIncludesEmpty:           {"export-includes-empty", []string{"BUNDLE-01"}, "the export's spec.includes is an empty list (no child bundle, not even the agent)"},
	// Export and dropped items.
	// A project whose only child is its agent exports an empty
	// spec.includes with it (BUNDLE-01, as export-includes-empty).
	defAgentInlined:                  {"agent-inlined", []string{"EXPORT-01", "BUNDLE-01", "BUNDLE-02"}, "the agent is inlined in spec.payload instead of being a child bundle"},
	defExportAllKnowledge:            {"export-all-knowledge", []string{"EXPORT-02"}, "every knowledge set of the workspace is exported, attached or not"},
	defExportAllConnectors:           {"export-all-connectors", []string{"EXPORT-03"}, "every connector of the workspace is exported, referenced or not"},
	defExportAgentConnectorsOnly:     {"export-agent-connectors-only", []string{"EXPORT-03"}, "connectors the project references are not exported"},
	defExportAppAlways:               {"export-app-always", []string{"EXPORT-04"}, "an app of the workspace is exported even without ?app="},
	defExportAppIgnored:              {"export-app-ignored", []string{"EXPORT-04"}, "?app= is ignored"},
	defExportAppRenamed:              {"export-app-renamed", []string{"EXPORT-04"}, "an app of the workspace is exported even without ?app=, as a child typed application that carries its name but not its publicID"},
	defExportKeepsApprovers:          {"export-keeps-approvers", []string{"DROP-01"}, "approver addresses travel"},
	defExportKeepsEnvValues:          {"export-keeps-env-values", []string{"DROP-02"}, "environment variable values travel"},
	defExportDropsEnvNames:           {"export-drops-env-names", []string{"DROP-02"}, "environment variables are dropped altogether, names included"},
	defExportKeepsCapabilities:       {"export-keeps-capabilities", []string{"DROP-03"}, "project capabilities travel"},
	defExportKeepsTriggers:           {"export-keeps-triggers", []string{"DROP-04"}, "webhook and email triggers travel"},
	defExportDropsSchedule:           {"export-drops-schedule", []string{"DROP-04"}, "every trigger is dropped, schedule and onDemand included"},
	defExportKeepsWebhookCapitalised: {"export-keeps-webhook-capitalised", []string{"DROP-04"}, "webhook triggers travel, their type written Webhook"},
	defExportKeepsSharedTasks:        {"export-keeps-shared-tasks", []string{"DROP-05"}, "SharedTasks travel"},
	defExportKeepsMembers:            {"export-keeps-members", []string{"DROP-06"}, "members, role grants, files, credentials and Status travel"},
	defInstallKeepsDropped:           {"install-keeps-dropped", []string{"DROP-07"}, "a hand-written document's dropped items are installed as they are, without a warning"},
	// Install.
	defInstallDocumentOrder:      {"install-document-order", []string{"INSTALL-01"}, "children install in the document's order"},
	defKnowledgeNotAttached:      {"knowledge-not-attached", []string{"INSTALL-02"}, "installed knowledge sets are not attached to the installed agent"},
	defFailedChildUnnamed:        {"failed-child-unnamed", []string{"INSTALL-03"}, "a failed install's error does not name the child"},
	defFailureNotMarked:          {"failure-not-marked", []string{"INSTALL-03"}, "a child that fails is skipped and the installation is marked installed"},
	defRollbackOnFailure:         {"rollback-on-failure", []string{"INSTALL-04"}, "children installed before a failure are rolled back"},
	defFailedDeleteKeepsChildren: {"failed-delete-keeps-children", []string{"INSTALL-05"}, "deleting a failed installation removes only the parent record"},
	// Update.
	defRerunReinstallsUpToDate:      {"rerun-reinstalls-up-to-date", []string{"UPDATE-01", "UPDATE-07"}, "a re-run writes children already at the target version again"},
	defGateRefusalAfterWrite:        {"gate-refusal-after-write", []string{"UPDATE-02"}, "the eval gate refusal comes after the children before the gated one were written"},
	defGateErrorUnnamed:             {"gate-error-unnamed", []string{"UPDATE-02"}, "the eval gate refusal does not name the child"},
	defGateIgnoresDirectUpdate:      {"gate-ignores-direct-update", []string{"UPDATE-03"}, "the gate trips on the target document even when the child is already at its version"},
	defUndeclaredTaskDeleted:        {"undeclared-task-deleted", []string{"UPDATE-04"}, "a task the payload no longer declares is deleted"},
	defUndeclaredTaskKeepsMarker:    {"undeclared-task-keeps-marker", []string{"UPDATE-04"}, "a task the payload no longer declares keeps the bundle's marker"},
	defUndeclaredChildRemoved:       {"undeclared-child-removed", []string{"UPDATE-05"}, "a child spec.includes no longer declares is uninstalled"},
	defOrphanNotRecorded:            {"orphan-not-recorded", []string{"UPDATE-05"}, "a child no longer declared is forgotten instead of recorded as orphaned"},
	defOrphanedChildResourceRemoved: {"orphaned-child-resource-removed", []string{"UPDATE-05"}, "a child no longer declared is recorded as orphaned and keeps its own installation record, but its resource is removed"},
	defRepeatUpdateRewritesChildren: {"repeat-update-rewrites-children", []string{"UPDATE-07"}, "the same update sent again once it is complete writes every child again, though each is at its target version"},
	defOrphanRecordMarked:           {"orphan-record-marked", []string{"UPDATE-05"}, "a child no longer declared is recorded as orphaned, and its own installation record is changed to state orphaned"},
	// Uninstall.
	defUninstallInstallOrder:         {"uninstall-install-order", []string{"UNINSTALL-01"}, "uninstall removes in install order (connector first, project last)"},
	defUninstallAppAfterAgent:        {"uninstall-app-after-agent", []string{"UNINSTALL-01"}, "uninstall removes the agent before the app"},
	defUninstallIgnoresOrphanedTasks: {"uninstall-ignores-orphaned-tasks", []string{"UNINSTALL-02"}, "uninstall goes ahead and deletes orphaned tasks with the thread"},
	defOrphanTaskRefusalUnnamed:      {"orphan-task-refusal-unnamed", []string{"UNINSTALL-02"}, "the refusal names the orphaned task by ID, not by object name"},
	defRefusalDropsRecord:            {"refusal-drops-record", []string{"UNINSTALL-02"}, "a refused uninstall still deletes the installation record"},
	defRefusalAfterRemoval:           {"refusal-after-removal", []string{"UNINSTALL-02"}, "the uninstall removes every child before it finds the orphaned task and refuses; the record survives, installed, without its children"},
	defOrphanTaskUndeletable:         {"orphan-task-undeletable", []string{"UNINSTALL-03"}, "DELETE /api/tasks/{id} does not find orphaned tasks"},
	defDeleteTaskKeepsOwned:          {"delete-task-keeps-owned", []string{"UNINSTALL-03"}, "DELETE /api/tasks/{id} answers 204 for a task the bundle still owns but leaves it in place"},
	defOrphanChildBlocksUninstall:    {"orphan-child-blocks-uninstall", []string{"UNINSTALL-04"}, "an orphaned child blocks the uninstall"},
	defUninstallCascadesOrphans:      {"uninstall-cascades-orphans", []string{"UNINSTALL-04"}, "uninstall also removes orphaned children"},
	defUninstallLeavesChildren:       {"uninstall-leaves-children", []string{"UNINSTALL-05"}, "uninstall removes the project and the parent record but leaves the children"},
}

// Defects lists every defect switch, in the table's order (by spec area).
func Defects() []Defect { return append([]Defect(nil), defectTable[:]...) }

// defectSet says which defect switches are on.
type defectSet [numDefects]bool

func resolveDefects(names []string) (defectSet, error) {
	var on defectSet
	for _, n := range names {
		id, ok := defectByName(n)
		if !ok {
			var known []string
			for _, d := range defectTable {
				known = append(known, d.Name)
			}
			return on, fmt.Errorf("fakeserver: unknown defect %q (known: %s)", n, strings.Join(known, ", "))
		}
		on[id] = true
	}
	return on, nil
}

func defectByName(name string) (defectID, bool) {
	for id, d := range defectTable {
		if d.Name == name {
			return defectID(id), true
		}
	}
	return 0, false
}
