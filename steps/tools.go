package steps

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/invokeconf/invokeconf/agentscript"
	"github.com/invokeconf/invokeconf/checks"
	"github.com/invokeconf/invokeconf/outcome"
	"github.com/invokeconf/invokeconf/profile"
)

// toolDefs: the project variant (project.feature, PROJ-*), X-SVC-Scoped-Tools
// (tools.feature, TOOLS-*), X-SVC-Run-Mode (modes.feature, MODE-*), credential
// scopes (credentials.feature, CRED-*) and the scope matrix of auth.feature.
// What a run has is read from the agent script: @tools lists the run's tools,
// @model names its model.
func toolDefs() []Def {
	return []Def{
		step0(`^the target offers research mode$`, (*World).offersResearch).Need("capabilities.researchMode"),
		step1(`^a project thread "(\w+)" on the main project$`, func(w *World, name string) error {
			return w.openThreadWith("project", name, mainProjectRoute)
		}).Need("keys.project", mainProjectRoute),
		// The key role ($3) is found in the text; the agent's ID is not.
		step3(`^a thread "(\w+)" on the (\w+) agent, opened with the "(\w+)" key$`, func(w *World, name, agent, role string) error {
			return w.openThreadWith(role, name, "/api/invoke/${agents."+agent+".id}")
		}).Need("/api/invoke/${agents.$2.id}"),

		step1(`^the answer is remembered as "(\w+)"$`, func(w *World, name string) error {
			r, err := w.finished()
			if err != nil {
				return err
			}
			w.answers[name] = r
			return nil
		}).AboutRun(),
		step1(`^the run's tools include "([^"]*)"$`, func(w *World, list string) error { return w.toolsInclude(list, true) }).AboutRun(),
		step1(`^the run's tools do not include "([^"]*)"$`, func(w *World, list string) error { return w.toolsInclude(list, false) }).AboutRun(),
		step1(`^the run's tools are exactly "([^"]*)"$`, (*World).toolsExactly).AboutRun(),
		// A scenario that needs a narrowed run before its own check: the
		// narrowing is TOOLS-02's, and its failure blocks the scenario.
		step1(`^the header narrowed the run's tools to exactly "([^"]*)"$`, (*World).toolsExactly).AboutRun().Asserts("TOOLS-02"),
		step1(`^the run is refused with a 4xx status, or its tools are exactly "([^"]*)"$`, (*World).refusedOrToolsExactly).AboutRun(),
		step2(`^the run's tools are those of answer "(\w+)"( and more)?$`, func(w *World, name, more string) error {
			base, ok := w.answers[name]
			if !ok {
				return scenarioErrorf("no answer named %q has been remembered", name)
			}
			return w.toolsLike(name, base, more != "")
		}).AboutRun(),
		step2(`^the run's model is( not)? "([^"]*)"$`, (*World).modelIs).AboutRun(),
		step0(`^no event of the run has error set$`, (*World).noErrorEvent).AboutRun(),
		step1(`^no event of the run mentions "([^"]*)"$`, (*World).noEventMentions).AboutRun(),
		step2(`^no event of the run mentions the tools answer "(\w+)" has beyond answer "(\w+)"$`, func(w *World, with, without string) error {
			a, okA := w.answers[with]
			b, okB := w.answers[without]
			if !okA || !okB {
				return scenarioErrorf("answers %q and %q must both have been remembered", with, without)
			}
			return w.noEventMentionsAdded(a, b, [2]string{with, without})
		}).AboutRun(),
		step1(`^the run's answer and kinds of events are those of answer "(\w+)"$`, func(w *World, name string) error {
			base, ok := w.answers[name]
			if !ok {
				return scenarioErrorf("no answer named %q has been remembered", name)
			}
			return w.sameEvents(name, base)
		}).AboutRun(),
	}
}

// offersResearch: scenarios that need the research entitlement are untested
// when the profile does not say the target offers research mode.
func (w *World) offersResearch() error {
	if !w.P.Capabilities.ResearchMode {
		return need(&profile.MissingError{What: "capabilities.researchMode (research mode, with the entitlement for the workspace of the keys agent, credentialSearch and credentialAll)"})
	}
	return nil
}

// mainProjectRoute is the invoke route of the main project.
const mainProjectRoute = "/api/projects/${projects.main.id}/invoke"

// openThreadWith starts a thread with one synchronous run of a key role on a
// path and names it.
func (w *World) openThreadWith(role, name, path string) error {
	return w.runOn(role, name, "", path, "opening turn")
}

// toolPlaceholder expands the placeholders of this area:
//
//	${agents.main.plainTool2}       a second tool of the main agent that uses no credential
//	${agents.main.plainTools}       every tool of the main agent that uses no credential
//	${agents.main.tools}            every tool configured on the main agent
//	${agents.main.searchTool}       a tool of the main agent that uses the credential search
//	${agents.main.searchTools}      every tool of the main agent that uses the credential search
//	${projects.main.tasks}          the main project's tasks
//	${projects.main.credentialTools} the main agent's tools that use a credential of the project
//	${projects.main.model}          the model the main project's settings select
//	${unknownTool}, ${unknownMode}  names no target knows
//	${agents.main.distinctTools}    credential-free tools of the main agent that the other agent lacks
//	${agents.other.distinctTools}   credential-free tools of the other agent that the main agent lacks
//	${threads.main.id}              the provisioned thread of the main agent
//
// Lists are comma-separated.
func toolPlaceholder(w *World, name string) (string, bool, error) {
	switch name {
	case "unknownTool", "unknownMode":
		return w.marker(name), true, nil
	case "threads.main.id":
		if w.P.Threads.Main.ID == "" {
			return "", true, need(&profile.MissingError{What: "threads.main.id (a thread of agents.main that the key threadChat is scoped to)"})
		}
		return w.P.Threads.Main.ID, true, nil
	case "agents.main.distinctTools", "agents.other.distinctTools":
		return w.distinctTools(strings.Split(name, ".")[1])
	case "projects.main.tasks":
		return nonEmpty(w.P.Projects.Main.Tasks, "projects.main.tasks")
	case "projects.main.model":
		if w.P.Projects.Main.Model == "" {
			return "", true, need(&profile.MissingError{What: "projects.main.model"})
		}
		return w.P.Projects.Main.Model, true, nil
	case "projects.main.credentialTools":
		a, err := w.P.Agent("main")
		if err != nil {
			return "", true, need(err)
		}
		scoped := map[string]bool{}
		for _, c := range w.P.Projects.Main.Credentials {
			scoped[c] = true
		}
		return nonEmpty(toolsWhere(a, func(cred string, gated bool) bool { return gated && scoped[cred] }),
			"projects.main.credentials naming a credential that a tool of agents.main uses")
	}
	a, err := w.P.Agent("main")
	if err != nil {
		return "", true, need(err)
	}
	plain := func(_ string, gated bool) bool { return !gated }
	search := func(cred string, gated bool) bool { return gated && cred == "search" }
	switch name {
	case "agents.main.plainTool2":
		tools := toolsWhere(a, plain)
		if len(tools) < 2 {
			return "", true, need(&profile.MissingError{What: "two tools of agents.main that use no credential"})
		}
		return tools[1], true, nil
	case "agents.main.plainTools":
		return nonEmpty(toolsWhere(a, plain), "a tool of agents.main that uses no credential")
	case "agents.main.tools":
		// Every configured tool: a narrowing that narrows nothing.
		return nonEmpty(a.Tools, "agents.main.tools")
	case "agents.main.searchTools":
		return nonEmpty(toolsWhere(a, search), "a tool of agents.main that uses the credential search (agents.main.credentialTools)")
	case "agents.main.searchTool":
		v, ok, err := nonEmpty(toolsWhere(a, search), "a tool of agents.main that uses the credential search (agents.main.credentialTools)")
		first, _, _ := strings.Cut(v, ",")
		return first, ok, err
	}
	return "", false, nil
}

// distinctTools lists the credential-free tools of one agent (main or
// other) that the other one lacks: a run that has them ran on that agent.
func (w *World) distinctTools(role string) (string, bool, error) {
	this, that := "main", "other"
	if role == "other" {
		this, that = that, this
	}
	a, err := w.P.Agent(this)
	if err != nil {
		return "", true, need(err)
	}
	b, err := w.P.Agent(that)
	if err != nil {
		return "", true, need(err)
	}
	theirs := map[string]bool{}
	for _, t := range b.Tools {
		theirs[t] = true
	}
	return nonEmpty(toolsWhere(a, func(_ string, gated bool) bool { return !gated }, func(t string) bool { return !theirs[t] }),
		"a tool of agents."+this+" that uses no credential and that agents."+that+" lacks (agents."+this+".tools)")
}

// toolsWhere returns the agent's tools, in profile order, whose credential
// (gated: it uses one) passes keep.
func toolsWhere(a profile.Agent, keep func(cred string, gated bool) bool, also ...func(tool string) bool) []string {
	var out []string
tools:
	for _, t := range a.Tools {
		cred, gated := a.CredentialTools[t]
		if !keep(cred, gated) {
			continue
		}
		for _, f := range also {
			if !f(t) {
				continue tools
			}
		}
		out = append(out, t)
	}
	return out
}

func nonEmpty(list []string, what string) (string, bool, error) {
	if len(list) == 0 {
		return "", true, need(&profile.MissingError{What: what})
	}
	return strings.Join(list, ","), true, nil
}

// splitList reads a step's comma-separated list after expansion.
func (w *World) splitList(list string) ([]string, error) {
	v, err := w.expand(list)
	if err != nil {
		return nil, err
	}
	out := []string{}
	for _, e := range strings.Split(v, ",") {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	sort.Strings(out)
	return out, nil
}

// answerText returns the answer of a complete response in any form: the
// joined content of an SSE stream or a JSON envelope (checks.View.Answer),
// else the body.
func answerText(r *Response) (string, error) {
	if r.MediaType() == "text/event-stream" {
		if _, err := r.Events(); err != nil {
			return "", err // a data frame that is no JSON object: EVT-01
		}
	}
	if text, _, ok := r.Answer(); ok {
		return text, nil
	}
	return string(r.Body()), nil
}

// runTools reads the tool list a run printed for @tools.
func (w *World) runTools(r *Response) ([]string, error) {
	text, err := w.runText(r, "the run that lists its tools")
	if err != nil {
		return nil, err
	}
	tools, ok := agentscript.ParseTools(text)
	if !ok {
		return nil, w.notPrinted(r, "the tool list of the agent script's @tools", text)
	}
	return tools, nil
}

// runText reads the answer of a run whose agent printed something (@tools,
// @model), in whatever form r carries it. Its status and its form are the
// prerequisites: a refusal fails the route's rule, events that cannot be
// read the form's.
func (w *World) runText(r *Response, what string) (string, error) {
	if err := w.need2xx(r.Method()+" "+r.URL()+": the status of "+what, r); err != nil {
		return "", err
	}
	if w.route(r) == routeEvents && r.MediaType() != "text/event-stream" {
		if _, _, ok := r.Answer(); !ok {
			// "events of a run; shape: not shown": only an SSE stream or
			// an envelope of events can be read.
			return "", &untested{reason: "the events route's answer is neither an SSE stream nor an envelope of events (its shape is not shown): the run's answer cannot be read from it"}
		}
	}
	text, err := answerText(r)
	if err != nil {
		// The answer's form is the prerequisite: an SSE stream whose
		// events are JSON objects (EVT-01), an envelope (FMT-02).
		rule := w.on(r, "FMT-02")
		switch f, named := outcome.AsFailure(err); {
		case r.MediaType() == "text/event-stream" && named && f.Rule != "":
			rule = f.Rule // EVT-01, or SSE-02 for data split over lines (eventsOf)
		case r.MediaType() == "text/event-stream":
			rule = "EVT-01"
		case r.Request.Header.Get("Accept") == "text/event-stream":
			rule = w.on(r, "FMT-01")
		}
		return "", outcome.Failf(r.Method()+" "+r.URL()+": the run's answer", "events that can be read", "%v", err).Breaks(rule)
	}
	return text, nil
}

// notPrinted is the failure of an answer that does not hold what the
// agent printed: the answer its form carries may be an envelope sent before
// the run ended (FMT-02, or the events route's ASYNC-04), or content that
// does not add up (EVT-03).
func (w *World) notPrinted(r *Response, want, text string) *outcome.Failure {
	f := outcome.Failf("the run's answer", want, "%s", bounded(text)).Explained("EVT-03")
	switch {
	case w.route(r) == routeEvents && r.MediaType() == "application/json":
		// The events route's envelope, answered before the run ended
		// ("stays open until the run finishes"), or not the run's.
		f.Explained("ASYNC-04", "ASYNC-02")
	case r.MediaType() == "application/json":
		f.Explained(w.on(r, "FMT-02"))
	}
	return f
}

func (w *World) lastTools() ([]string, error) {
	r, err := w.finished()
	if err != nil {
		return nil, err
	}
	return w.runTools(r)
}

// wantedAndRunTools reads a step's list of tools and the last run's tools.
func (w *World) wantedAndRunTools(list string) (want, got []string, err error) {
	if want, err = w.splitList(list); err != nil {
		return nil, nil, err
	}
	got, err = w.lastTools()
	return want, got, err
}

func (w *World) toolsInclude(list string, include bool) error {
	want, got, err := w.wantedAndRunTools(list)
	if err != nil {
		return err
	}
	for _, tool := range want {
		if slices.Contains(got, tool) != include {
			what := "tools including "
			if !include {
				what = "tools without "
			}
			return outcome.Failf("the run's tools (@tools)", what+strings.Join(want, ", "), "%s", strings.Join(got, ", ")).
				Explained(w.toolRules(got)...)
		}
	}
	return nil
}

func (w *World) toolsExactly(list string) error {
	want, got, err := w.wantedAndRunTools(list)
	if err != nil {
		return err
	}
	want, got = w.withoutServiceTools(want), w.withoutServiceTools(got)
	if !slices.Equal(sorted(got), want) {
		return outcome.Failf("the run's tools (@tools)", "exactly "+strings.Join(want, ", "), "%s", strings.Join(got, ", ")).
			Explained(w.toolRules(got)...).Explained(w.missingTasks(want, got)...)
	}
	return nil
}

// missingTasks: a project's run that lacks a task of the project the step
// wanted shows a project route that dropped its tasks (PROJ-04).
func (w *World) missingTasks(want, got []string) []string {
	for _, t := range want {
		if slices.Contains(w.P.Projects.Main.Tasks, t) && !slices.Contains(got, t) {
			return []string{"PROJ-04"}
		}
	}
	return nil
}

// refusedOrToolsExactly: where the spec leaves open whether a request is
// refused or its extra part ignored, a 4xx refusal passes; a run must have
// exactly the tools listed.
func (w *World) refusedOrToolsExactly(list string) error {
	r, err := w.finished()
	if err != nil {
		return err
	}
	if r.Status() >= 400 && r.Status() < 500 {
		return nil
	}
	if !is2xx(r.Status()) {
		return statusFailure(r.Method()+" "+r.URL()+": the status", "a 4xx refusal, or 2xx with the narrowed tools", r)
	}
	return w.toolsExactly(list)
}

// withoutServiceTools drops the profile's service tools (agents.*.serviceTools)
// from a list: the spec's "configured tools" do not address tools the
// service offers every run, so exact comparisons leave them out.
func (w *World) withoutServiceTools(list []string) []string {
	svc := map[string]bool{}
	for _, a := range w.P.Agents.Roles() {
		for _, t := range a.ServiceTools {
			svc[t] = true
		}
	}
	return slices.DeleteFunc(slices.Clone(list), func(t string) bool { return svc[t] })
}

func sorted(list []string) []string {
	out := slices.Clone(list)
	sort.Strings(out)
	return out
}

// toolsLike compares the run's tools with a remembered answer's: the same,
// or (more) a strict superset of them.
func (w *World) toolsLike(name string, base *Response, more bool) error {
	own, err := w.runTools(base)
	if err != nil {
		return fmt.Errorf("answer %q: %w", name, err)
	}
	got, err := w.lastTools()
	if err != nil {
		return err
	}
	own, got = w.withoutServiceTools(own), w.withoutServiceTools(got)
	check, gotList := "the run's tools (@tools)", strings.Join(got, ", ")
	if !more {
		if !slices.Equal(sorted(got), sorted(own)) {
			// Either run may be the wrong one: the remembered answer's
			// tools show what its run rested on too.
			return outcome.Failf(check, fmt.Sprintf("those of answer %q: %s", name, strings.Join(own, ", ")), "%s", gotList).
				Explained(w.toolRules(got)...).Explained(w.toolRulesOn(base, own)...)
		}
		return nil
	}
	for _, t := range own {
		if !slices.Contains(got, t) {
			return outcome.Failf(check, fmt.Sprintf("every tool of answer %q (%s) and more", name, strings.Join(own, ", ")), "%s", gotList).
				Explained(w.toolRules(got)...).Explained(w.toolRulesOn(base, own)...)
		}
	}
	if len(got) <= len(own) {
		// A mode that adds nothing: the research mode is not offered
		// (MODE-06), or the key's credential scope for it is not honoured
		// (CRED-02).
		return outcome.Failf(check, fmt.Sprintf("more tools than answer %q (%s)", name, strings.Join(own, ", ")), "%s", gotList).
			Explained(append(w.toolRules(got), "MODE-06", "CRED-02")...)
	}
	return nil
}

// toolRules are the rules that the tools a run listed show broken, beside
// the scenario's own: tools of the other agent, or none of the main
// agent's, show a route that ran another agent (on a thread, maybe the
// route that opened it); the project's tasks on a
// bare-agent run, PROJ-04; a credential-backed tool the key may not use,
// CRED-01; one it may use missing, CRED-02; plain tools missing without a
// narrowing header, a narrowing that stuck (TOOLS-03); tools beyond a
// narrowing header, TOOLS-02. A run's tools rest on these, so a tool check
// of any scenario is blamed on the one that fails in its own scenarios.
func (w *World) toolRules(got []string) []string { return w.toolRulesOn(w.resp, got) }

// toolRulesOn is toolRules for the run whose tools r listed: for an answer
// of the events route, the invoke that started the run (startedBy).
func (w *World) toolRulesOn(r *Response, got []string) []string {
	if r == nil {
		return nil
	}
	if start, ok := w.startedBy[r]; ok {
		r = start
	}
	main, err := w.P.Agent("main")
	if err != nil {
		return nil
	}
	k := w.route(r)
	bare := k != routeProject && k != routeProjectThread
	var out []string
	wrongAgent := false // the tools are another agent's: its route's doing
	if other, err := w.P.Agent("other"); err == nil {
		if w.namesAgent(r, &other) {
			// A run of the other agent: only its route can be wrong (tools
			// of the main agent it lacks, or none of its own); what the
			// main agent's tools, credentials and narrowing would show
			// does not apply.
			if foreignTools(got, main.Tools, other.Tools) ||
				!slices.ContainsFunc(got, func(t string) bool { return slices.Contains(other.Tools, t) }) {
				return []string{w.routeRuleOf(r)}
			}
			return nil
		}
		if foreignTools(got, other.Tools, main.Tools) || len(got) == 0 {
			wrongAgent = len(got) > 0 // none at all may be a narrowing or a mode too
			out = append(out, w.routeRuleOf(r))
			if made := w.madeBy[w.threadInPath(r)]; made != "" {
				out = append(out, made) // the thread's agent came from the route that opened it
			}
		}
	}
	if bare {
		for _, t := range got {
			if slices.Contains(w.P.Projects.Main.Tasks, t) {
				out = append(out, "PROJ-04")
				break
			}
		}
	}
	_, scoped := r.Request.Header["X-Svc-Scoped-Tools"]
	scopes := credentialScopes[r.Role]
	may := func(cred string) bool {
		return (slices.Contains(scopes, "*") || slices.Contains(scopes, cred)) &&
			!(bare && slices.Contains(w.P.Projects.Main.Credentials, cred))
	}
	for tool, cred := range main.CredentialTools {
		has := slices.Contains(got, tool)
		switch {
		case has && !may(cred):
			out = append(out, "CRED-01")
		case !has && may(cred):
			out = append(out, "CRED-02")
		}
	}
	missingPlain := false
	for _, t := range main.Tools {
		if _, gated := main.CredentialTools[t]; !gated && !slices.Contains(got, t) {
			missingPlain = true
		}
	}
	// A tool no agent of the profile has: another agent's tools show a
	// route that ran that agent (above), not a run given more tools.
	other, _ := w.P.Agent("other")
	unknown := false
	for _, t := range got {
		unknown = unknown || !slices.Contains(main.Tools, t) && !slices.Contains(other.Tools, t) &&
			!slices.Contains(w.P.Projects.Main.Tasks, t) && !w.isServiceTool(t)
	}
	if unknown && !scoped && r.Request.Header.Get("X-SVC-Run-Mode") == "" {
		out = append(out, "TOOLS-04") // without the header, the agent's tools: no other
	}
	switch {
	case scoped:
		out = append(out, "TOOLS-02")
	case wrongAgent:
		// Plain tools missing from another agent's run show its route,
		// not a narrowing that stuck.
	case missingPlain && r.Request.Header.Get("X-SVC-Run-Mode") != "":
		// A mode adds to the agent's own tools, or an earlier run's
		// narrowing stuck to the agent (a project's runs too).
		out = append(out, "MODE-02", "TOOLS-03")
	case missingPlain:
		out = append(out, "TOOLS-03")
	}
	return out
}

// foreignTools reports whether got holds a tool of the stranger agent that
// the run's own agent lacks: the run ran on another agent.
func foreignTools(got, stranger, own []string) bool {
	return slices.ContainsFunc(got, func(t string) bool { return slices.Contains(stranger, t) && !slices.Contains(own, t) })
}

// namesAgent reports whether r's invoke path names agent a by its ID or
// alias ({id}, with or without a thread segment).
func (w *World) namesAgent(r *Response, a *profile.Agent) bool {
	rt := r.Route()
	if rt.Kind != checks.RouteInvoke {
		return false
	}
	return rt.ID == a.ID || a.Alias != "" && rt.ID == a.Alias
}

func (w *World) modelIs(not, want string) error {
	want, err := w.expand(want)
	if err != nil {
		return err
	}
	r, err := w.finished()
	if err != nil {
		return err
	}
	text, err := w.runText(r, "the run that reports its model")
	if err != nil {
		return err
	}
	got, ok := agentscript.ParseModel(text)
	if !ok {
		return w.notPrinted(r, "the model name of the agent script's @model", text)
	}
	if (got == want) == (not != "") {
		return outcome.Fail("the run's model (@model)", strings.TrimSpace(not+" "+want), got)
	}
	return nil
}

// responseEvents returns the event objects of an SSE stream or a JSON
// envelope. The form the request asked for is the prerequisite: an answer
// in another form breaks FMT-01 or FMT-02, unreadable events EVT-01 or
// FMT-02.
func (w *World) responseEvents(r *Response) ([]map[string]any, error) {
	var evs []map[string]any
	var err error
	switch r.MediaType() {
	case "text/event-stream":
		evs, err = r.Events()
		err = outcome.Claim(err, "EVT-01")
	case "application/json":
		evs, err = r.EnvelopeItems()
		err = outcome.Claim(err, w.on(r, "FMT-02"))
	default:
		rule := w.on(r, "FMT-02")
		if r.Request.Header.Get("Accept") == "text/event-stream" {
			rule = w.on(r, "FMT-01")
		}
		return nil, outcome.Failf(r.Method()+" "+r.URL()+": the response", "an SSE stream or a JSON envelope of events",
			"Content-Type %q", r.Header().Get("Content-Type")).Breaks(rule)
	}
	if err != nil {
		f, _ := outcome.AsFailure(err)
		return nil, outcome.Failf(r.Method()+" "+r.URL()+": the run's events", "event objects that can be read", "%v", err).Breaks(f.Rule)
	}
	return evs, nil
}

// noErrorEvent: CRED-01, MODE-05, the removal of a tool is not an error;
// MODE-03, MODE-04, nor is an ignored mode.
func (w *World) noErrorEvent() error {
	r, err := w.finished()
	if err != nil {
		return err
	}
	evs, err := w.responseEvents(r)
	if err != nil {
		return err
	}
	for _, ev := range evs {
		if isSet(ev, "error") {
			return outcome.Failf("the run's events", "none with error set (a removal of a tool, or an ignored mode, is not an error)", "error %s", bounded(fmt.Sprint(ev["error"])))
		}
	}
	return nil
}

// noEventMentions: Authentication 5, a tool is removed "silently": no
// event of any kind, in any field, names it (checks.MentionsNone).
func (w *World) noEventMentions(list string) error {
	names, err := w.splitList(list)
	if err != nil {
		return err
	}
	if _, err := w.finished(); err != nil {
		return err
	}
	return w.judgeAs("CRED-01", checks.MentionsNone(credentialRemovalSpec, names))
}

// credentialRemovalSpec and modeRemovalSpec are the spec's words on a
// silent removal.
const (
	credentialRemovalSpec = "a tool that uses a credential the key has no credential:use: scope for is removed from the run, silently"
	modeRemovalSpec       = "An attached tool is gated like a tool configured on the agent, including the key's credential scopes. This removal is silent: no error and no event."
)

// noEventMentionsAdded: MODE-05, the tools a mode adds for a key that may
// use them (answer with, beyond answer without) are, for a key that may
// not, removed silently: no event of the run names them.
func (w *World) noEventMentionsAdded(with, without *Response, names [2]string) error {
	added, err := w.runTools(with)
	if err != nil {
		return fmt.Errorf("answer %q: %w", names[0], err)
	}
	base, err := w.runTools(without)
	if err != nil {
		return fmt.Errorf("answer %q: %w", names[1], err)
	}
	added = slices.DeleteFunc(added, func(t string) bool { return slices.Contains(base, t) })
	if len(added) == 0 {
		// The research mode adds its tool for a key that may use it: MODE-06.
		return outcome.Failf(fmt.Sprintf("the tools of answer %q beyond answer %q", names[0], names[1]), "the tools the mode adds", "none").
			WithSpec(modeRemovalSpec).Explained("MODE-06", "MODE-02")
	}
	if _, err := w.finished(); err != nil {
		return err
	}
	return w.judgeAs("MODE-05", checks.MentionsNone(modeRemovalSpec, added))
}

// eventKinds is the set of kinds of a run's events: the richer field each
// sets, "content" and "error". waitingOnModel and toolInput are left out:
// whether they show up depends on the model's timing, not on the run.
func (w *World) eventKinds(r *Response) ([]string, error) {
	evs, err := w.responseEvents(r)
	if err != nil {
		return nil, err
	}
	set := map[string]bool{}
	for _, ev := range evs {
		for _, f := range append([]string{"content", "error"}, checks.RicherFields...) {
			if f != "waitingOnModel" && f != "toolInput" && isSet(ev, f) {
				set[f] = true
			}
		}
	}
	kinds := make([]string, 0, len(set))
	for k := range set {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	return kinds, nil
}

// sameEvents: MODE-05, a silent removal adds no event: the run
// gives the same answer, with events of the same kinds, as the same script
// in a run that never had the tool.
func (w *World) sameEvents(name string, base *Response) error {
	r, err := w.finished()
	if err != nil {
		return err
	}
	wantKinds, err := w.eventKinds(base)
	if err != nil {
		return fmt.Errorf("answer %q: %w", name, err)
	}
	gotKinds, err := w.eventKinds(r)
	if err != nil {
		return err
	}
	want, err := answerText(base)
	if err != nil {
		return fmt.Errorf("answer %q: %w", name, err)
	}
	got, err := answerText(r)
	if err != nil {
		return err
	}
	if got != want {
		return outcome.Failf("the run's answer", fmt.Sprintf("that of answer %q: %q", name, bounded(want)), "%q", bounded(got))
	}
	if !slices.Equal(gotKinds, wantKinds) {
		return outcome.Failf("the kinds of the run's events", fmt.Sprintf("those of answer %q: %s", name, strings.Join(wantKinds, ", ")),
			"%s", strings.Join(gotKinds, ", "))
	}
	return nil
}

// isServiceTool reports whether a tool is one the profile says the service
// gives every run (agents.*.serviceTools).
func (w *World) isServiceTool(t string) bool {
	return len(w.withoutServiceTools([]string{t})) == 0
}
