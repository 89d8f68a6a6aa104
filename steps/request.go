package steps

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/cucumber/godog"

	"github.com/invokeconf/invokeconf/checks"
	"github.com/invokeconf/invokeconf/outcome"
)

// requestDefs: keys, headers, invoking, statuses and the thread header.
// Shared by every area.
func requestDefs() []Def {
	return []Def{
		step1(`^the "(\w+)" key$`, (*World).useKey),
		step0(`^no key$`, (*World).useNoKey),
		step1(`^the Authorization header "([^"]*)"$`, (*World).useAuthorization),
		step0(`^the Authorization header is the agent key without Bearer$`, (*World).useKeyWithoutBearer).Need("keys.agent"),
		step0(`^the Authorization header is the agent key with another secret$`, (*World).useKeyWithOtherSecret).Need("keys.agent"),
		step2(`^the request header "([^"]*)" is "([^"]*)"$`, (*World).setHeader),
		step2(`^the request header "([^"]*)" is thread "(\w+)"$`, (*World).setThreadHeader),
		step1(`^the request header "([^"]*)" is absent$`, (*World).dropHeader),
		step1(`^a thread "(\w+)" on the main agent$`, func(w *World, name string) error { return w.openThread(name, "", "opening turn") }).Need("keys.agent", mainAgentRoute),
		step3(`^a thread "(\w+)" on the main agent whose run "(\w+)" said "(.*)"$`, (*World).openThread).Need("keys.agent", mainAgentRoute),
		step3(`^run "(\w+)" on thread "(\w+)" said "(.*)"$`, (*World).continueThread).Need("keys.agent", mainAgentRoute),

		step2(`^I invoke "([^"]*)" with the prompt "(?s)(.*)"$`, (*World).invokeQuoted),
		step2(`^I invoke "([^"]*)" with the prompt:$`, func(w *World, path string, doc *godog.DocString) error {
			return w.invoke(path, doc.Content)
		}),

		step1(`^the status is (\d{3})$`, (*World).statusIs),
		step0(`^the status is 2xx$`, (*World).status2xx),
		step2(`^the status is (\d{3}) or (\d{3})$`, (*World).statusEither),
		step2(`^the response header "([^"]*)" is thread "(\w+)"$`, (*World).headerIsThread),
		step1(`^the response header "X-SVC-Thread-Id" names a new thread, remembered as "(\w+)"$`, (*World).headerIsNewThread),
		step0(`^the plain-text answer is the prompt, byte for byte$`, (*World).plainIsPrompt).AboutRun(),
		step1(`^the plain-text answer is "(.*)"$`, (*World).plainIs).AboutRun(),
		step1(`^the body contains "([^"]*)"$`, func(w *World, s string) error { return w.bodyContains(s, "") }).AboutRun(),
		step2(`^the body contains "([^"]*)" but not "([^"]*)"$`, (*World).bodyContains).AboutRun(),
		step1(`^the answer came within (\d+)s$`, (*World).answeredWithin),
	}
}

func (w *World) useKey(role string) error {
	if _, err := w.P.Key(role); err != nil {
		return need(err)
	}
	w.keyRole, w.noKey, w.rawAuth = role, false, nil
	return nil
}

func (w *World) useNoKey() error {
	w.keyRole, w.noKey, w.rawAuth = "", true, nil
	return nil
}

// useAuthorization sets the Authorization header literally.
func (w *World) useAuthorization(v string) error {
	w.rawAuth = &v
	return nil
}

// useKeyWithoutBearer sends the profile's agent key as the whole
// Authorization value, without the Bearer scheme.
func (w *World) useKeyWithoutBearer() error {
	k, err := w.P.Key("agent")
	if err != nil {
		return need(err)
	}
	return w.useAuthorization(k)
}

// useKeyWithOtherSecret sends the profile's agent key with its secret, the
// part after the last "-", replaced: a key ID that exists with a wrong
// secret.
func (w *World) useKeyWithOtherSecret() error {
	k, err := w.P.Key("agent")
	if err != nil {
		return need(err)
	}
	i := strings.LastIndex(k, "-")
	if i < 0 {
		return fmt.Errorf("the profile's agent key %q is not of the form sk-svc-<user>-<key>-<secret>", redactForError(k))
	}
	return w.useAuthorization("Bearer " + k[:i+1] + "0ther5ecret0000")
}

func redactForError(k string) string {
	if i := strings.LastIndex(k, "-"); i > 0 {
		return k[:i+1] + "REDACTED"
	}
	return "REDACTED"
}

// setHeader sets a request header exactly as given.
func (w *World) setHeader(name, value string) error {
	v, err := w.expand(value)
	if err != nil {
		return err
	}
	delete(w.noHeaders, name)
	w.headers[name] = v
	return nil
}

func (w *World) setThreadHeader(name, thread string) error {
	id, err := w.thread(thread)
	if err != nil {
		return err
	}
	w.headers[name] = id
	delete(w.noHeaders, name)
	return nil
}

func (w *World) dropHeader(name string) error {
	delete(w.headers, name)
	w.noHeaders[name] = true
	return nil
}

// unquote reads a prompt written in a step as the body of a Go string
// literal, so \n, \t, \" and \u0020 can be written. Gherkin has already
// turned \n in a table cell into a newline; such raw line breaks are kept.
func unquote(s string) (string, error) {
	s = strings.NewReplacer("\n", `\n`, "\r", `\r`).Replace(s)
	v, err := strconv.Unquote(`"` + s + `"`)
	if err != nil {
		return "", scenarioErrorf("the prompt %q is not a valid Go string body: %v", s, err)
	}
	return v, nil
}

func (w *World) invokeQuoted(path, prompt string) error {
	p, err := unquote(prompt)
	if err != nil {
		return err
	}
	return w.invoke(path, p)
}

// invoke sends a prompt to an invoke route.
func (w *World) invoke(path, prompt string) error {
	p, err := w.prompt(prompt)
	if err != nil {
		return err
	}
	rq, err := w.prepared("POST", path, &p)
	if err != nil {
		return err
	}
	resp, err := w.do(rq)
	if err != nil {
		return err
	}
	w.resp = resp
	return nil
}

// prompt expands a prompt, checks that the target can show what it asks
// for, and remembers it as the scenario's last prompt.
func (w *World) prompt(text string) (string, error) {
	p, err := w.expand(text)
	if err != nil {
		return "", err
	}
	if err := w.needPrompt(p); err != nil {
		return "", err
	}
	w.lastPrompt = p
	return p, nil
}

// sideRequest runs a request with the given key role and headers without
// touching the scenario's own request settings.
func (w *World) sideRequest(role string, headers map[string]string, rq request) (*Response, error) {
	rq, err := w.keyed(role, headers, rq.method, rq.path, rq.body)
	if err != nil {
		return nil, err
	}
	resp, err := w.do(rq)
	if err != nil {
		return nil, err
	}
	if err := w.readWhole(resp); err != nil {
		return nil, err
	}
	return resp, nil
}

// mainAgentRoute is the invoke route of the main agent, on which the thread
// set-up steps run.
const mainAgentRoute = "/api/invoke/${agents.main.id}"

// openThread starts a thread on the main agent with the agent key and names
// it; with a run name, it also names the run and the prompt is its answer.
func (w *World) openThread(name, runName, text string) error {
	return w.runOn("agent", name, runName, mainAgentRoute, text)
}

func (w *World) continueThread(runName, thread, text string) error {
	if _, err := w.thread(thread); err != nil {
		return err
	}
	return w.runOn("agent", thread, runName, mainAgentRoute+"/thread/${thread:"+thread+"}", text)
}

// runOn makes one synchronous JSON-envelope run with a key role and
// remembers its thread and, when runName is set, its run ID.
func (w *World) runOn(role, thread, runName, path, text string) error {
	body, err := w.expand(text)
	if err != nil {
		return err
	}
	if err := w.needPrompt(body); err != nil {
		return err
	}
	resp, err := w.sideRequest(role, map[string]string{"Accept": "application/json"},
		request{method: "POST", path: path, body: &body})
	if err != nil {
		return fmt.Errorf("set up thread %q: %w", thread, err)
	}
	if err := w.need2xx(fmt.Sprintf("set-up run on thread %q (%s %s)", thread, resp.Method(), resp.URL()), resp); err != nil {
		return err
	}
	id := resp.Header().Get("X-SVC-Thread-Id")
	if id == "" {
		return outcome.Fail(fmt.Sprintf("set-up run on thread %q: the response header X-SVC-Thread-Id", thread),
			"the thread's ID (\"Every response carries the header X-SVC-Thread-Id\")", "no such header").
			Breaks(w.on(resp, "THREAD-04"))
	}
	w.threads[thread] = id
	if k := w.route(resp); k != routeThreadSegment && k != routeThreadsSegment && k != routeProjectThread && w.madeBy[id] == "" {
		w.madeBy[id] = w.routeRuleOf(resp)
	}
	items, err := w.envelopeOf(resp)
	if err != nil {
		return fmt.Errorf("set-up run on thread %q: %w", thread, err)
	}
	for _, it := range items {
		if r, ok := idString(it["runID"]); ok { // its type is not shown
			// The thread's newest run, for checks that the thread moved on.
			w.runs[openingRun(thread)] = r
			if runName != "" {
				w.runs[runName] = r
			}
			return nil
		}
	}
	return outcome.Failf(fmt.Sprintf("set-up run on thread %q: the envelope's items", thread),
		"an item carrying runID", "%s", abbreviate(resp.Body())).Breaks("EVT-02")
}

// openingRun names the newest set-up run of a thread among the runs; the
// name cannot clash with a scenario's, which are words.
func openingRun(thread string) string { return "set-up:" + thread }

// statusIs: the status a scenario expects. A refused key (ERR-02/03) is
// judged by its passive check first, so its failure carries the rule's
// words; any status the check does not rank falls to the comparison.
func (w *World) statusIs(want int) error {
	r, err := w.last()
	if err != nil {
		return err
	}
	if err := w.judgeIfDecided(checks.MissingKey, checks.MalformedKey); err != nil {
		return err
	}
	if r.Status() != want {
		return w.wrongStatus(r.Method()+" "+r.URL()+": the status", []int{want}, r)
	}
	return nil
}

// status2xx: a 2xx the scenario needs. The rule a refusal breaks is read
// from the request (refusalRule): the scenario's own rule when the request
// carries what it is about, else the rule the route or key rests on.
func (w *World) status2xx() error {
	r, err := w.last()
	if err != nil {
		return err
	}
	return w.need2xx(r.Method()+" "+r.URL()+": the status", r)
}

// statusEither: where the spec allows two statuses and gives no precedence.
func (w *World) statusEither(a, b int) error {
	r, err := w.last()
	if err != nil {
		return err
	}
	if r.Status() != a && r.Status() != b {
		return w.wrongStatus(r.Method()+" "+r.URL()+": the status", []int{a, b}, r)
	}
	return nil
}

// headerIsThread: the answer runs on the thread the scenario expects, as
// its X-SVC-Thread-Id header (once: THREAD-04) and its events or async
// acknowledgement say; the check is the one the selection rules use.
func (w *World) headerIsThread(name, thread string) error {
	id, err := w.thread(thread)
	if err != nil {
		return err
	}
	r, err := w.last()
	if err != nil {
		return err
	}
	if err := w.threadHeader(name); err != nil {
		return err
	}
	if !strings.EqualFold(name, "X-SVC-Thread-Id") {
		if got := r.Header().Values(name); len(got) != 1 || got[0] != id {
			return outcome.Failf("the response header "+name, fmt.Sprintf("one value, thread %q (%s)", thread, id), "%q", got)
		}
		return nil
	}
	return outcome.Explain(w.judgeAs("", checks.OnThread(id, fmt.Sprintf("thread %q of the scenario", thread))), w.selectionRules(r)...)
}

// headerIsNewThread: THREAD-03, judged by the passive check over the
// scenario's exchanges: the answer's thread is none that a response had
// named before the call. The check leaves a call undecided when no response
// of the scenario had named a thread before it (a scenario's first call):
// no thread of the scenario can be reused then, so the step does not fail.
func (w *World) headerIsNewThread(name string) error {
	r, err := w.last()
	if err != nil {
		return err
	}
	if err := w.threadHeader("X-SVC-Thread-Id"); err != nil {
		return err
	}
	if err := w.judgeIfDecided(checks.NewThread); err != nil {
		return err
	}
	got := r.Header().Values("X-SVC-Thread-Id")
	if len(got) != 1 || got[0] == "" {
		return outcome.Failf("the response header X-SVC-Thread-Id", "one value naming a new thread", "%q", got)
	}
	w.threads[name] = got[0]
	return nil
}

func (w *World) plainIsPrompt() error {
	return w.plainIsExactly(w.lastPrompt)
}

func (w *World) plainIs(want string) error {
	v, err := unquote(want)
	if err != nil {
		return err
	}
	if v, err = w.expand(v); err != nil {
		return err
	}
	return w.plainIsExactly(v)
}

// plainIsExactly: the plain-text form's body is the answer itself, nothing
// around it (not an SSE stream, not an envelope).
func (w *World) plainIsExactly(want string) error {
	r, err := w.finished()
	if err != nil {
		return err
	}
	if err := w.needEcho(); err != nil {
		return err
	}
	if err := w.need2xx(r.Method()+" "+r.URL()+": the status", r); err != nil {
		return err
	}
	if err := w.plainForm(); err != nil {
		return err
	}
	if got := string(r.Body()); got != want {
		return outcome.Failf("the plain-text body", fmt.Sprintf("exactly the answer %q", bounded(want)), "%q", bounded(got)).Explained("EVT-03")
	}
	return nil
}

func (w *World) bodyContains(want, notWant string) error {
	r, err := w.finished()
	if err != nil {
		return err
	}
	// On the events route the follow-up rules decide too (ASYNC-02/03/04):
	// which text the run said is the scenario's.
	if err := w.judgeIfDecided(checks.EventsOfRun, checks.EventsLastCompleted, checks.EventsWait); err != nil {
		return err
	}
	if err := w.needEcho(); err != nil {
		return err
	}
	if want, err = w.expand(want); err != nil {
		return err
	}
	if notWant, err = w.expand(notWant); err != nil {
		return err
	}
	body := string(r.Body())
	check := r.Method() + " " + r.URL() + ": the body"
	// On a follow-up route the answer holds what the thread's runs said: a
	// thread another call reused (THREAD-03), a run reported complete too
	// early (ASYNC-05) explain other text too.
	var why []string
	if k := w.route(r); k == routeEvents || k == routeThreadGet {
		why = []string{"THREAD-03", "ASYNC-05"}
	}
	if !strings.Contains(body, want) {
		return outcome.Failf(check, fmt.Sprintf("text containing %q", want), "%s", abbreviate(r.Body())).Explained(why...)
	}
	if notWant != "" && strings.Contains(body, notWant) {
		return outcome.Failf(check, fmt.Sprintf("text without %q", notWant), "%s", abbreviate(r.Body())).Explained(why...)
	}
	return nil
}

// answeredWithin: ASYNC-05's "Answers immediately", judged by
// checks.AnsweredWithin (which excuses a delay the harness's own lateness
// could explain).
func (w *World) answeredWithin(secs int) error {
	if _, err := w.finished(); err != nil {
		return err
	}
	return w.judgeAs("ASYNC-05", checks.AnsweredWithin(time.Duration(secs)*time.Second))
}

// withQuery adds a query parameter to a path that may already have a query.
func withQuery(path, kv string) string {
	if strings.Contains(path, "?") {
		return path + "&" + kv
	}
	return path + "?" + kv
}

// durationArg reads a step's duration such as "1s", "21.5s" or "800ms".
var durationArg = regexp.MustCompile(`^[0-9.]+(ms|s)$`)

func parseDuration(s string) (time.Duration, error) {
	if !durationArg.MatchString(s) {
		return 0, scenarioErrorf("bad duration %q", s)
	}
	return time.ParseDuration(s)
}
