package steps

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/invokeconf/invokeconf/agentscript"
	"github.com/invokeconf/invokeconf/checks"
	"github.com/invokeconf/invokeconf/features"
	"github.com/invokeconf/invokeconf/outcome"
	"github.com/invokeconf/invokeconf/profile"
	"github.com/invokeconf/invokeconf/sseframe"
	"github.com/invokeconf/invokeconf/traffic"
)

// Prerequisites. A scenario reaches its own check through steps whose
// success other rules govern: invoking the main agent by its ID rests on
// ROUTE-01, a key the profile says is scoped for the route on the auth rules,
// a readable SSE stream on FMT-01, an envelope on FMT-02, continuing a
// thread on the thread rules. When such a step fails, its failure names the
// rule it rests on; the report then fails that rule once and shows the
// scenario's own rules as blocked by it (never as failed). The rule is read
// from what was sent and received, so every scenario that meets the same
// fault blames the same rule.

// routeKind is what a request the scenario sent addresses.
type routeKind int

const (
	routeOther routeKind = iota
	routeAgentID
	routeAlias
	routeThreadID      // a thread ID in {id}
	routeThreadSegment // /api/invoke/{id}/thread/{thread}
	routeThreadsSegment
	routeUnknownID // {id} the profile does not know (ERR-08's unknown agent)
	routeProject
	routeProjectThread
	routeEvents
	routeThreadGet
	routeAbort
	routeExport          // the bundle export of the profile's export project
	routeExportInstalled // the bundle export of a project an installation created
	routeUninstall       // DELETE /api/bundles/installations/{id}
	routeTaskDelete      // DELETE /api/tasks/{id}
	routeBundleInstall   // the contract's install route (routes.bundleInstall)
	routeBundleUpdate    // the contract's update route (routes.bundleUpdate)
)

// routeRule is the rule a route's success rests on: that it does what its
// row of the spec's tables says.
var routeRule = map[routeKind]string{
	routeAgentID:        "ROUTE-01",
	routeAlias:          "ROUTE-02",
	routeThreadID:       "ROUTE-03",
	routeThreadSegment:  "ROUTE-04",
	routeThreadsSegment: "ROUTE-05",
	routeProject:        "PROJ-01",
	routeProjectThread:  "PROJ-02",
	routeThreadGet:      "ASYNC-05",
	routeAbort:          "ASYNC-06",
	// "Exports the agent, every standalone knowledge set ...": the export
	// rests on EXPORT-01; exporting a project an installation created, on
	// BUNDLE-06 ("Installation creates a normal project").
	routeExport:          "EXPORT-01",
	routeExportInstalled: "BUNDLE-06",
	routeUninstall:       "UNINSTALL-05",
	routeTaskDelete:      "UNINSTALL-03",
	routeBundleInstall:   "INSTALL-01",
	routeBundleUpdate:    "UPDATE-01",
}

// route classifies the request of r by the one route grammar
// (checks.View.Route) and the profile: which of the spec's routes, and for
// {id}, an agent ID, an alias or a thread.
func (w *World) route(r *Response) routeKind {
	switch rt := r.Route(); rt.Kind {
	case checks.RouteInvoke:
		switch {
		case rt.Thread != "" && rt.Threads:
			return routeThreadsSegment
		case rt.Thread != "":
			return routeThreadSegment
		}
		return w.idKind(rt.ID)
	case checks.RouteProjectInvoke:
		if rt.Thread != "" {
			return routeProjectThread
		}
		return routeProject
	case checks.RouteEvents:
		return routeEvents
	case checks.RouteAbort:
		return routeAbort
	case checks.RouteThread:
		return routeThreadGet
	case checks.RouteExport:
		if rt.ID == w.P.Bundles.Export.ProjectID {
			return routeExport
		}
		return routeExportInstalled
	case checks.RouteUninstall:
		return routeUninstall
	case checks.RouteTaskDelete:
		return routeTaskDelete
	}
	if u, err := url.Parse(r.URL()); err == nil {
		for name, kind := range map[string]routeKind{profile.RouteBundleInstall: routeBundleInstall, profile.RouteBundleUpdate: routeBundleUpdate} {
			if method, tmpl, err := w.P.Route(name); err == nil && method == r.Method() && pathMatches(tmpl, u.Path) {
				return kind
			}
		}
	}
	return routeOther
}

// pathMatches reports whether a path is a route template's ({id} one
// segment), the base URL's own path before it.
func pathMatches(tmpl, path string) bool {
	t := strings.Split(strings.Trim(tmpl, "/"), "/")
	p := strings.Split(strings.Trim(path, "/"), "/")
	if len(p) < len(t) {
		return false
	}
	p = p[len(p)-len(t):]
	for i := range t {
		if t[i] != "{id}" && t[i] != p[i] {
			return false
		}
	}
	return true
}

// idKind tells what an {id} names: an agent ID or alias of the profile, or a
// thread the scenario opened (or the profile's thread).
func (w *World) idKind(id string) routeKind {
	for _, a := range w.P.Agents.Roles() {
		switch {
		case a.ID != "" && a.ID == id:
			return routeAgentID
		case a.Alias != "" && a.Alias == id:
			return routeAlias
		}
	}
	if id == w.P.Threads.Main.ID {
		return routeThreadID
	}
	for _, t := range w.threads {
		if t == id {
			return routeThreadID
		}
	}
	return routeUnknownID
}

// routeRuleOf is the rule r's route rests on; for the events route, the
// row it used (with runID: ASYNC-02; without: ASYNC-03).
func (w *World) routeRuleOf(r *Response) string {
	k := w.route(r)
	if k == routeEvents {
		if r.Route().Query.Has("runID") {
			return "ASYNC-02"
		}
		return "ASYNC-03"
	}
	if rule, ok := routeRule[k]; ok {
		return rule
	}
	return w.ownRule()
}

// authRule is the auth rule that says the key r carried is enough for its
// route: a refused key breaks it.
func (w *World) authRule(r *Response) string {
	wildcard := r.Role == "wildcard" || r.Role == "wildcardLimited"
	switch k := w.route(r); {
	case k == routeThreadID:
		return "AUTH-02"
	case k == routeProject || k == routeProjectThread:
		return "AUTH-05"
	case k == routeEvents:
		return "AUTH-06"
	case k == routeAbort:
		return "AUTH-07"
	case wildcard && (k == routeAgentID || k == routeAlias || k == routeThreadSegment || k == routeThreadsSegment):
		return "AUTH-04"
	case k == routeThreadSegment || k == routeThreadsSegment || ((k == routeAgentID || k == routeAlias) && r.Request.Header.Get("X-SVC-Thread-Id") != ""):
		return "AUTH-03"
	case k == routeAgentID || k == routeAlias:
		return "AUTH-01"
	}
	return w.routeRuleOf(r)
}

// credentialScopes are the credential scopes each key role stands for
// (profile.Keys); a role not listed has none.
var credentialScopes = map[string][]string{
	"credentialSearch": {"search"},
	"credentialAll":    {"*"},
	"notEntitled":      {"*"},
}

// lacksCredential reports whether a run of r loses a credential-backed tool
// of the main agent: its key lacks the tool's credential scope, or the
// credential is the project's and r is a bare-agent call (PROJ-05: "a
// bare-agent run of the same agent cannot use them, whatever its
// credential scopes").
func (w *World) lacksCredential(r *Response) bool {
	scopes := credentialScopes[r.Role]
	a, err := w.P.Agent("main")
	if err != nil {
		return false
	}
	k := w.route(r)
	bare := k != routeProject && k != routeProjectThread
	for _, cred := range a.CredentialTools {
		if bare && slices.Contains(w.P.Projects.Main.Credentials, cred) {
			return true
		}
		if !slices.Contains(scopes, "*") && !slices.Contains(scopes, cred) {
			return true
		}
	}
	return false
}

// headerRules are the rules a request's headers, query and body bring that
// say the request is not refused: an unknown or unentitled mode is ignored,
// scoped tools are trimmed, any Accept gets an answer, a JSON body is a
// prompt. Most specific first.
func (w *World) headerRules(r *Response) []string {
	switch w.route(r) {
	case routeAgentID, routeAlias, routeThreadID, routeThreadSegment, routeThreadsSegment, routeProject, routeProjectThread, routeUnknownID:
	default:
		return nil // only the invoke routes read these headers
	}
	var out []string
	if scriptFails(string(r.Prompt())) && r.Request.Header.Get("Accept") == "text/event-stream" {
		// "Once an SSE stream has begun, a failure arrives as an event
		// with error set, not as an HTTP status."
		out = append(out, "SSE-07")
	}
	if v, ok := r.Request.Header["X-Svc-Run-Mode"]; ok {
		research, unknown, spaced := false, false, false
		for _, line := range v {
			for _, m := range strings.Split(line, ",") {
				spaced = spaced || m != strings.TrimSpace(m)
				switch strings.TrimSpace(m) {
				case "":
				case "research":
					research = true
				default:
					unknown = true
				}
			}
		}
		if unknown {
			out = append(out, "MODE-04")
		}
		if research && r.Role == "notEntitled" {
			out = append(out, "MODE-03")
		}
		if research && w.lacksCredential(r) {
			out = append(out, "MODE-05")
		}
		if spaced {
			out = append(out, "MODE-01")
		}
		out = append(out, "MODE-02", "MODE-06")
	}
	if v, ok := r.Request.Header["X-Svc-Scoped-Tools"]; ok {
		for _, line := range v {
			for _, t := range strings.Split(line, ",") {
				if t != strings.TrimSpace(t) || t == "" {
					out = append(out, "TOOLS-01")
				}
			}
		}
		out = append(out, "TOOLS-02")
	}
	if vs, ok := r.Request.Header["Accept"]; ok && len(vs) == 1 {
		out = append(out, checks.AcceptRule(vs[0], true))
	}
	if r.Request.Header.Get("X-SVC-Thread-Id") != "" {
		out = append(out, "THREAD-02")
	}
	switch r.Route().Query.Get("async") {
	case "true":
		out = append(out, "ASYNC-01")
	case "false":
		out = append(out, "ASYNC-07")
	}
	if b := strings.TrimSpace(string(r.Prompt())); strings.HasPrefix(b, "{") || strings.HasPrefix(b, "[") {
		out = append(out, "BODY-02")
	}
	return out
}

// refusalRule is the rule a request breaks when the scenario needed a 2xx
// and r's status is another. A refused key breaks the auth rule of its
// route; a 404 breaks the route's rule (the agent, alias or thread exists);
// any other status breaks the rule of what the request carried that the
// spec says is not refused (headerRules), else the route's.
//
// Where the scenario's own rules name one of the candidates, the failure is
// that one: the scenario is about it. Some candidates only count so: a key
// that lacks a credential scope may be refused for it (CRED-01, MODE-05)
// or for its agent scope (AUTH-*), and only a scenario about credentials
// can tell.
func (w *World) refusalRule(r *Response) string {
	return w.pick(w.refusalCandidates(r))
}

// refusalCandidates are refusalRule's candidates: main in the order they
// are blamed, ownOnly those only a scenario about them blames.
func (w *World) refusalCandidates(r *Response) (main, ownOnly []string) {
	switch {
	case r.Status() == 401 || r.Status() == 403:
		main = []string{w.authRule(r)}
		switch w.route(r) {
		case routeEvents, routeThreadGet, routeAbort, routeThreadID, routeThreadSegment, routeThreadsSegment:
			ownOnly = append(ownOnly, "ROUTE-01") // the thread's agent, chosen by the ID it was opened on
		}
		if k := w.route(r); k != routeEvents && k != routeAbort && k != routeThreadGet && w.lacksCredential(r) {
			ownOnly = append(ownOnly, "CRED-01")
		}
		for _, h := range w.headerRules(r) {
			if strings.HasPrefix(h, "MODE-") {
				ownOnly = append(ownOnly, h)
			}
		}
	case r.Status() == 404:
		if r.Request.Header.Get("X-SVC-Thread-Id") != "" {
			main = append(main, "THREAD-02")
		}
		main = append(main, w.routeRuleOf(r))
		switch w.route(r) {
		case routeEvents, routeThreadGet, routeAbort, routeThreadID, routeThreadSegment, routeThreadsSegment, routeProjectThread:
			// The thread's ID came from an answer's X-SVC-Thread-Id: a
			// thread it never named as new, or named wrongly, is not found;
			// a run the scenario started on it may have gone to another
			// thread (how its call chose one), or ran another agent.
			ownOnly = append(ownOnly, "THREAD-03", "THREAD-04")
			ownOnly = append(ownOnly, w.selections()...)
			ownOnly = append(ownOnly, "ROUTE-01")
			if rule, ok := routeRule[w.idKind(r.Route().ID)]; ok && r.Route().Thread != "" {
				ownOnly = append(ownOnly, rule) // the {id} before the segment: an alias unresolved (ROUTE-02)
			}
		}
	default:
		main = append(w.headerRules(r), w.routeRuleOf(r))
	}
	switch w.route(r) {
	case routeUninstall:
		// An uninstall refused: the order of removal (a knowledge set
		// still attached to the agent) or an orphaned child blocking it
		// explain it as well as the uninstall itself.
		if w.orphans {
			main = append([]string{"UNINSTALL-04"}, main...)
		}
		ownOnly = append(ownOnly, "UNINSTALL-01")
	case routeExportInstalled:
		if r.Route().Query.Has("app") {
			// An app an update no longer declares is left untouched
			// (UPDATE-05) and exports with ?app= (EXPORT-04).
			ownOnly = append(ownOnly, "UPDATE-05", "EXPORT-04")
		}
	}
	for i := range main {
		main[i] = w.on(r, main[i])
	}
	return main, ownOnly
}

// refusal is the failure of a call that needed a 2xx and got r's status:
// it breaks refusalRule(r); the other candidates explain it too (pick).
func (w *World) refusal(check string, r *Response) *outcome.Failure {
	f := statusFailure(check, "a 2xx status", r)
	main, ownOnly := w.refusalCandidates(r)
	w.blame(f, main, ownOnly)
	return f
}

// pick returns the first candidate the scenario is about (one of its own
// rules), else the first of main.
func (w *World) pick(main, ownOnly []string) string {
	f := &outcome.Failure{}
	w.blame(f, main, ownOnly)
	return f.Rule
}

// blame sets f's rule to the first candidate the scenario is about (one of
// its own rules), else to the first of main, and lists what else explains
// it: the more specific candidates before the one it took, and the rules
// only a scenario about them blames. A rule taken only because the
// scenario is about it, not because the answer shows it (an ownOnly one),
// is tentative: the main candidates explain it when it holds elsewhere in
// the run.
func (w *World) blame(f *outcome.Failure, main, ownOnly []string) {
	own := features.RulesOf(w.tags)
	all := append(append([]string(nil), main...), ownOnly...)
	at := -1
	for i, c := range all {
		if slices.Contains(own, c) {
			at = i
			break
		}
	}
	switch {
	case at >= 0:
		f.Rule = all[at]
	case len(main) > 0:
		at, f.Rule = 0, main[0]
	default:
		f.Rule = w.ownRule()
	}
	if at >= len(main) {
		f.Tentative = true
		f.Explained(main...)
		return
	}
	if at > 0 {
		f.Explained(main[:at]...)
	}
	f.Explained(ownOnly...)
}

// need2xx returns a failure when r's status is not 2xx: what the scenario
// needed before its own check (refusal). check names the call.
func (w *World) need2xx(check string, r *Response) error {
	if is2xx(r.Status()) {
		return nil
	}
	return w.refusal(check, r)
}

// wrongStatus is the failure of a status the scenario expected (not a
// 2xx) and r did not answer. The rule that names the expected status for
// r's request breaks (statusRules); the scenario's own rule when it is one
// of them. A route that does not do what its row says (runs another agent,
// ignores a thread) answers other statuses too: the route's rule explains
// the failure when it fails in its own scenarios.
func (w *World) wrongStatus(check string, wants []int, r *Response) *outcome.Failure {
	parts := make([]string, len(wants))
	for i, s := range wants {
		parts[i] = fmt.Sprint(s)
	}
	f := statusFailure(check, strings.Join(parts, " or "), r)
	var main []string
	for _, s := range wants {
		main = append(main, w.statusRules(s, r)...)
	}
	// The statuses' rules are alternatives, the scenario's own first: none
	// explains another.
	f.Rule = w.pick(main, nil)
	f.Explained(w.pathRules(r)...)
	f.Explained(w.selectionRules(r)...)
	if (r.Status() == 401 || r.Status() == 403) && !slices.ContainsFunc(wants, func(s int) bool { return s == 401 || s == 403 }) {
		// A refusal where the request's key is enough for its route: the
		// auth rule that says so explains it (a scoped key refused before
		// the service looked for what the request names).
		f.Explained(w.authRule(r))
	}
	return f
}

// pathRules are the rules of what r's path names: its route's rule, and
// for a thread segment the rule of the {id} before it (an agent ID,
// ROUTE-01; an alias, ROUTE-02), which chose the agent.
func (w *World) pathRules(r *Response) []string {
	var out []string
	switch k := w.route(r); k {
	case routeOther, routeUnknownID:
		return nil
	case routeThreadSegment, routeThreadsSegment:
		out = append(out, w.routeRuleOf(r))
		if rule, ok := routeRule[w.idKind(r.Route().ID)]; ok {
			out = append(out, rule)
		}
	case routeThreadID, routeEvents, routeThreadGet, routeAbort:
		// A thread the scenario opened on the main agent's ID.
		out = append(out, w.routeRuleOf(r), "ROUTE-01")
	default:
		out = append(out, w.routeRuleOf(r))
	}
	return out
}

// statusRules are the rules that name a status for r's request: 400 for
// an ID that names no agent (ERR-01); 401 for a missing (ERR-02),
// malformed (ERR-03), unknown (ERR-04) or expired key (ERR-05); 403 for a
// scope that does not cover the route (its auth rule, ERR-06) or API
// access disabled (ERR-07); 404 for what does not exist (ERR-08).
func (w *World) statusRules(status int, r *Response) []string {
	switch status {
	case 400:
		return []string{"ERR-01"}
	case 401:
		auth := r.Request.Header.Get("Authorization")
		switch {
		case auth == "":
			return []string{"ERR-02"}
		case r.Role == "expired":
			return []string{"ERR-05"}
		case r.Role != "":
			return []string{"ERR-04"}
		}
		if tok, ok := strings.CutPrefix(auth, "Bearer "); ok && strings.HasPrefix(tok, "sk-svc-") && strings.Count(tok, "-") >= 4 {
			return []string{"ERR-04"}
		}
		return []string{"ERR-03"}
	case 403:
		if r.Role == "apiDisabled" {
			return []string{"ERR-07"}
		}
		switch k := w.route(r); k {
		case routeAbort:
			// "covered by agent:chat": for another agent only is AUTH-09's.
			return []string{"AUTH-09", "AUTH-07"}
		case routeEvents, routeThreadGet:
			return []string{w.authRule(r)}
		default:
			out := []string{"ERR-06", w.authRule(r)}
			if k == routeAgentID || k == routeAlias || k == routeThreadSegment || k == routeThreadsSegment {
				out = append(out, "AUTH-01") // the scope comes from the path value {id}, whatever the headers
			}
			if strings.HasPrefix(r.Role, "wildcard") {
				out = append(out, "AUTH-04") // re-checked against the owner's access
			}
			return out
		}
	case 404:
		return []string{"ERR-08"}
	}
	return nil
}

// formRule is the rule the form of r's answer rests on, by the Accept it
// sent: an SSE stream (FMT-01), one envelope after the run (FMT-02) or
// plain text (FMT-03) on an invoke route; on another route, the route's
// own rule.
func (w *World) formRule(r *Response) string {
	switch w.route(r) {
	case routeAgentID, routeAlias, routeThreadID, routeThreadSegment, routeThreadsSegment, routeProject, routeProjectThread:
	default:
		return w.routeRuleOf(r)
	}
	switch r.Request.Header.Get("Accept") {
	case "text/event-stream":
		if r.MediaType() == "text/event-stream" {
			return "SSE-05" // a stream that does not end with its close
		}
		return w.on(r, "FMT-01")
	case "application/json":
		return w.on(r, "FMT-02")
	}
	return w.on(r, "FMT-03")
}

// readWhole returns a failure unless r was read to its end: a stream cut,
// an answer that did not end within the deadline, a body past the limit.
func (w *World) readWhole(r *Response) error {
	if r.Complete {
		return nil
	}
	rule := w.formRule(r)
	if rule == w.on(r, "FMT-03") && len(r.Body()) > 0 {
		rule = w.on(r, "FMT-06") // text that comes, but too slowly to end: held back
	}
	if !is2xx(r.Status()) {
		rule = w.refusalRule(r)
	}
	return outcome.Failf(r.Method()+" "+r.URL()+": the answer", "an answer read to its end", "%v", r.Err).Breaks(rule)
}

// sendFailure is a request that got no answer at all: it breaks the rule
// its route rests on.
func (w *World) sendFailure(method, path string, err error) error {
	r := &Response{View: checks.NewView(&traffic.Exchange{Request: traffic.Request{Method: method, URL: strings.TrimRight(w.P.BaseURL, "/") + path}})}
	return outcome.Failf(method+" "+path, "an answer", "%v", err).Breaks(w.routeRuleOf(r))
}

// describe names a request for a failure: its method and URL.
func describe(r *Response) string { return fmt.Sprintf("%s %s", r.Method(), r.URL()) }

// on is rule as it stands on r's route: an agent-route rule that PROJ-03
// states again for the project routes is PROJ-03 there (checks.RuleOn, the
// passive judge's mapping too).
func (w *World) on(r *Response, rule string) string { return checks.RuleOn(rule, r.View) }

// scriptFails reports whether a prompt is an agent script that fails
// (@fail): a failure of the run, which a stream must carry as an event.
func scriptFails(prompt string) bool {
	sc, err := agentscript.Parse(prompt)
	if err != nil {
		return false
	}
	for _, d := range sc.Directives {
		if d.Kind == agentscript.Fail {
			return true
		}
	}
	return false
}

// runRules are the rules a run rests on besides the scenario's own: that
// its route runs the agent (or thread) it names, and for an export that it
// is a project bundle. A step that judges what the agent did names them as
// explanations (Def.AboutRun): a route that runs another agent fails such a
// step in every scenario, and the route's rule fails on its own. What the
// run's tools show is read from them (toolRules).
func (w *World) runRules(r *Response) []string {
	var out []string
	if start, ok := w.startedBy[r]; ok {
		// An async run's answer read from the events route: the run rests
		// on the invoke that started it, and on the events route's
		// delivering that run's events (ASYNC-02).
		out = append(out, w.routeRuleOf(r))
		r = start
	}
	k := w.route(r)
	switch k {
	case routeAgentID, routeAlias, routeThreadID, routeThreadSegment, routeThreadsSegment, routeProject, routeProjectThread:
		out = append(out, w.pathRules(r)...)
	case routeExport:
		// What an export holds rests on its being a project bundle.
		return []string{"BUNDLE-01"}
	case routeExportInstalled:
		return []string{"BUNDLE-06", "BUNDLE-01"}
	default:
		return nil
	}
	switch {
	case r.Request.Header.Get("X-SVC-Thread-Id") != "":
		out = append(out, w.on(r, "THREAD-02"))
	case k == routeAgentID || k == routeAlias || k == routeProject:
		// A call that names no thread runs on a new one (THREAD-03): a run
		// on a thread another call shares may be cut, or joined, by it.
		out = append(out, w.on(r, "THREAD-03"))
	}
	return out
}

// selectionRules are the rules by which r's request chose its thread: the
// path's thread segment (ROUTE-04, ROUTE-05, PROJ-02, and THREAD-01 over a
// header), a thread ID in {id} (ROUTE-03), or X-SVC-Thread-Id (THREAD-02).
// A run on another thread than the scenario expects is explained by them.
func (w *World) selectionRules(r *Response) []string {
	var out []string
	switch w.route(r) {
	case routeThreadSegment:
		out = append(out, "ROUTE-04")
	case routeThreadsSegment:
		out = append(out, "ROUTE-05")
	case routeProjectThread:
		out = append(out, "PROJ-02")
	case routeThreadID:
		out = append(out, "ROUTE-03")
	}
	if r.Request.Header.Get("X-SVC-Thread-Id") != "" {
		if len(out) > 0 {
			out = append(out, w.on(r, "THREAD-01"))
		}
		out = append(out, w.on(r, "THREAD-02"))
	}
	return out
}

// heldBack returns a failure when a client that stopped reading r (to go
// away, or to abort) had already received what the script says last: the
// answer was not live, so what the scenario does mid-run came after the
// run. It breaks the rule of the answer's form: FMT-01 ("live during the
// run") for SSE, FMT-06 (flushed at most every 500 ms) for plain text.
func (w *World) heldBack(r *Response) error { return w.heldBackUpTo(r, len(r.Body())) }

// answerUpTo returns the answer the first n bytes of r's body hold: an SSE
// stream's events' content joined, else the bytes themselves.
func answerUpTo(r *Response, n int) string {
	b := r.Body()[:min(n, len(r.Body()))]
	if r.MediaType() != "text/event-stream" {
		return string(b)
	}
	var c contentWatch
	frames, _ := sseframe.ReadAll(b)
	for _, f := range frames {
		c.see(Frame{Frame: f}, "")
	}
	return c.j.Text()
}

// heldBackUpTo is heldBack on the first n bytes of r's body: what the
// client had when it acted.
func (w *World) heldBackUpTo(r *Response, n int) error {
	sc, err := agentscript.Parse(string(r.Prompt()))
	if err != nil || sc.Echo {
		return nil
	}
	last, lastAt, at := "", time.Duration(0), time.Duration(0)
	for _, d := range sc.Directives {
		switch d.Kind {
		case agentscript.Pause:
			at += d.Duration
		case agentscript.Say:
			last, lastAt = d.Text, at
		}
	}
	if last == "" {
		return nil
	}
	if !strings.Contains(answerUpTo(r, n), last) {
		// The text may not have been read yet although it had been sent
		// (one write read in pieces): a client that acted only once the
		// script's last words were due cannot show that it acted mid-run.
		if got := r.ArrivalOf(n); lastAt > 0 && got >= lastAt {
			return &untested{reason: fmt.Sprintf("the client could not act mid-run: what it waited for arrived %s after the request, "+
				"when the script's last words were due (%s); an answer this late or held back is FMT-01's or FMT-06's to judge",
				got.Round(time.Millisecond), lastAt)}
		}
		return nil
	}
	rule := w.on(r, "FMT-06")
	if r.Request.Header.Get("Accept") == "text/event-stream" {
		rule = w.on(r, "FMT-01")
	}
	return outcome.Failf("the answer when the client went away mid-run", fmt.Sprintf("text the script says later, %q, not yet sent", last),
		"it had arrived already: the answer was held back until the run ended").Breaks(rule)
}

// threadRules are the rules r's request chose its thread by: the
// selectionRules of a thread it named, or THREAD-03 ("Without thread
// context, a new thread is created") when it named none.
func (w *World) threadRules(r *Response) []string {
	if sel := w.selectionRules(r); len(sel) > 0 {
		return sel
	}
	switch w.route(r) {
	case routeAgentID, routeAlias, routeProject:
		return []string{w.on(r, "THREAD-03")}
	}
	return nil
}

// selections is lastSelection, read under its lock.
func (w *World) selections() []string {
	w.histMu.Lock()
	defer w.histMu.Unlock()
	return slices.Clone(w.lastSelection)
}

// threadInPath is the thread a request of r names in its path (the
// /thread/{thread} or /threads/{thread} segment), or "".
func (w *World) threadInPath(r *Response) string {
	switch w.route(r) {
	case routeThreadSegment, routeThreadsSegment, routeProjectThread:
		return r.Route().Thread
	}
	return ""
}
