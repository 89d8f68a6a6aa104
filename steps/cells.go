package steps

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"github.com/onsi/gomega"

	"github.com/invokeconf/invokeconf/checks"
	"github.com/invokeconf/invokeconf/features"
	"github.com/invokeconf/invokeconf/outcome"
)

// cellDefs: the cell scenarios (cells.feature). The spec states many rules
// for every route, every response form, every run and every response; each
// row of cells.feature makes one run on one cell (a route, a form, how the
// run ends, a request header), and its traffic is judged by every check
// traffic can decide, in the row's own last step and in the run's judgement
// of every exchange (package runner).
func cellDefs() []Def {
	return []Def{
		step3(`^I make a run that (completes|fails|echoes|echoes JSON) on "([^"]*)" as (an SSE stream|a JSON envelope|plain text|an async run)$`,
			func(w *World, how, path, form string) error { return w.cellRun(how, path, form, "", "") }).AboutRun().Sends(cellScriptOf),
		step5(`^I make a run that (completes|fails) on "([^"]*)" as (an SSE stream|a JSON envelope|plain text|an async run) with the header "([^"]*)" set to "([^"]*)"$`,
			(*World).cellRun).AboutRun().Sends(cellScriptOf),
		// The abort goes with the agent key (cellAbort), whatever key the
		// run went with.
		step3(`^I make a run that (is aborted) on "([^"]*)" as (an SSE stream|a JSON envelope|plain text|an async run)$`,
			func(w *World, how, path, form string) error { return w.cellRun(how, path, form, "", "") }).AboutRun().Need("keys.agent").Sends(cellScriptOf),
		step5(`^I make a run that (is aborted) on "([^"]*)" as (an SSE stream|a JSON envelope|plain text|an async run) with the header "([^"]*)" set to "([^"]*)"$`,
			(*World).cellRun).AboutRun().Need("keys.agent").Sends(cellScriptOf),
		step3(`^I make a run that (lists its tools|reports its model) on "([^"]*)" as (an SSE stream|a JSON envelope|plain text)$`,
			func(w *World, how, path, form string) error { return w.cellAnswer(how, path, form, "") }).AboutRun().Sends(cellScriptOf),
		// The events route needs thread:read or project:threads, which
		// the keys of some routes lack: the step names the key that reads
		// them.
		step3(`^I make a run that (lists its tools|reports its model) on "([^"]*)" as an async run, its events read with the "(\w+)" key$`,
			func(w *World, how, path, role string) error { return w.cellAnswer(how, path, "an async run", role) }).AboutRun().Sends(cellScriptOf),
		step2(`^I make a run that completes on "([^"]*)" with the Accept header "([^"]*)"$`, func(w *World, path, accept string) error {
			return w.cellRun("completes", path, "plain text", "Accept", accept)
		}).AboutRun().Sends(func([]string) []string { return []string{cellScripts["completes"]} }),
		step2(`^I make a timed run on "([^"]*)" as (an SSE stream|a JSON envelope|plain text|an async run)$`, func(w *World, path, form string) error {
			return w.cellRun("timed "+form, path, form, "", "")
		}).AboutRun().Sends(func(args []string) []string { return []string{cellScripts["timed "+args[1]]} }),
		step3(`^a thread "(\w+)" opened on "([^"]*)" with the "(\w+)" key$`, func(w *World, name, path, role string) error {
			return w.openThreadWith(role, name, path)
		}),
		step0(`^every exchange of the scenario holds every rule traffic decides$`, (*World).holdsEveryRule).AboutRun(),
		step0(`^the run's thread reports it through lastRunID$`, (*World).cellRunReported).Asserts("ASYNC-05"),
		step0(`^I fetch the events of the run's thread, by its runID and without$`, (*World).cellEvents),
		step0(`^the run's answer is its prompt, byte for byte$`, (*World).answerIsPrompt).Asserts("BODY-01").AboutRun(),
		step0(`^the run's answer is its JSON prompt, byte for byte$`, (*World).answerIsPrompt).Asserts("BODY-02").AboutRun(),
	}
}

// cellScripts are the agent scripts of a cell's run, by how it ends: two
// pieces of text, a failure after text, or text and a long pause the
// scenario's abort cuts short.
var cellScripts = map[string]string{
	"completes":  "@say ${marker:a} \n@say ${marker:b}",
	"fails":      "@say ${marker:a}\n@fail the cell's failure ${marker:f}",
	"is aborted": "@say ${marker:a}\n@pause 5s\n@say ${marker:late}",
	// The run's tools, which the request headers X-SVC-Scoped-Tools and
	// X-SVC-Run-Mode change on every route and in every form.
	"lists its tools": "@tools",
	// The run's model, which a project's model settings set inside it
	// (PROJ-06) on every project route and in every form.
	"reports its model": "@model",
	// An echo: no directive, so the agent answers the prompt verbatim
	// (BODY-01), lines, spaces and characters of every width kept.
	"echoes": "echo ${marker:e}\n  indented,\ttabbed\n\nand wide: gr\u00fc\u00dfe \U0001F600 ",
	// JSON as a client of another API would send it, a list of messages:
	// literal prompt text (BODY-02), echoed as it is. A list, not an
	// object: content sent raw in a data line must not read as an event
	// object (EVT-01's to judge).
	"echoes JSON": `[{"role":"system","content":"be brief ${marker:s}"},{"role":"user","content":"hi ${marker:j}"}]`,
	// The timed runs: what the timing rules decide on, form by form (the
	// start frame at once and events live; plain text flushed; the
	// envelope after the run; the async answer at once).
	"timed an SSE stream":   "@pause 1s\n@say ${marker:a}\n@pause 1s\n@say ${marker:b}",
	"timed plain text":      "@say ${marker:a}\n@pause 800ms\n@say ${marker:b}\n@pause 800ms\n@say ${marker:c}",
	"timed a JSON envelope": "@say ${marker:a}\n@pause 1s\n@say ${marker:b}",
	"timed an async run":    "@pause 1500ms\n@say ${marker:a}",
}

// cellScriptOf is the script of a cell step's run by how it ends (its
// first argument).
func cellScriptOf(args []string) []string { return []string{cellScripts[args[0]]} }

// cellForms are the request settings of each response form.
var cellForms = map[string]struct{ accept, query string }{
	"an SSE stream":   {accept: "text/event-stream"},
	"a JSON envelope": {accept: "application/json"},
	"plain text":      {},
	"an async run":    {query: "async=true"},
}

// cellRun makes one run on a cell: the script of how it ends, on path, in
// a form, with one more request header when name is set; a run the
// scenario aborts is aborted through POST /api/threads/{id}/abort once its
// first text arrived (an SSE stream or plain text: the scenario reads on to
// the stream's end, the abort sent beside the reading) or once it was
// acknowledged (async). The run's thread and run are remembered as "cell".
// What the run rests on fails the rule it rests on: a refused or failed
// invoke its route's (need2xx), an answer naming no thread to abort the
// header's.
func (w *World) cellRun(how, path, form, name, value string) error {
	f, ok := cellForms[form]
	if !ok {
		return scenarioErrorf("unknown form %q", form)
	}
	script, ok := cellScripts[how]
	if !ok {
		return scenarioErrorf("unknown run %q", how)
	}
	prompt, err := w.prompt(script)
	if err != nil {
		return err
	}
	rq, err := w.prepared("POST", path, &prompt)
	if err != nil {
		return err
	}
	if f.accept != "" {
		rq.header.Set("Accept", f.accept)
	}
	if name != "" {
		if value, err = w.expand(value); err != nil {
			return err
		}
		rq.header.Set(name, value)
	}
	rq.query = f.query
	aborting := how == "is aborted"
	abort := &cellAbortion{done: make(chan struct{})}
	if aborting && f.query == "" {
		if f.accept == "application/json" {
			return scenarioErrorf("a JSON envelope comes after its run ends: a client cannot abort the run once it has begun")
		}
		rq.stop = w.abortOnText(abort, f.accept == "text/event-stream")
	}
	w.aborting = aborting
	resp, err := w.do(rq)
	if abort.started {
		<-abort.done // the abort went beside the reading, on this cell
	}
	w.aborting = false
	if err != nil {
		return err
	}
	w.resp = resp
	if err := w.need2xx(resp.Method()+" "+resp.URL()+": the status of the cell's run", resp); err != nil {
		return err
	}
	if abort.err != nil {
		return abort.err
	}
	if !aborting || f.query != "" {
		// The answer to its end: one that never ends breaks its form's
		// rule (an aborted stream ends once the abort lands: its steps
		// judge that).
		if err := w.readWhole(resp); err != nil {
			return err
		}
	}
	thread := resp.Header().Get("X-SVC-Thread-Id")
	if f.query != "" {
		if t, run := asyncThread(resp); t != "" {
			thread = t // "threadID: Thread of the run (new or resumed)"
			if run != "" {
				w.runs["cell"] = run
			}
		}
	}
	// Which rule says the thread is the run's: the async answer's threadID
	// ("Thread of the run"), else the response header.
	w.cellNamedBy = w.on(resp, "THREAD-04")
	w.cellSelectedBy = w.selectionRules(resp)
	if f.query != "" {
		w.cellNamedBy = w.on(resp, "ASYNC-01")
	}
	if thread == "" {
		// The events name it too (EVT-02): the scenario follows the run
		// there, and its last step judges the header.
		thread = answerField(resp, "threadID")
	}
	if thread == "" {
		return outcome.Fail(resp.Method()+" "+resp.URL()+": the run's thread", "named by the answer", "none").Breaks(w.cellNamedBy)
	}
	w.threads["cell"] = thread
	if run := answerRunID(resp); run != "" {
		w.runs["cell"] = run
	}
	if aborting && f.query != "" {
		return w.cellAbort(thread, w.cellNamedBy, w.on(resp, "ASYNC-06"))
	}
	if aborting && !abort.started {
		if f.accept == "text/event-stream" && resp.MediaType() != "text/event-stream" {
			// Not the stream asked for: the form's rule, a prerequisite.
			return outcome.Failf("the answer to Accept: text/event-stream", "an SSE stream", "%s", resp.MediaType()).Breaks(w.formRule(resp))
		}
		return textNeverCame(resp, outcome.Fail("the run to abort", "its first text, then the rest of the run", "no text").Breaks(w.on(resp, "ASYNC-06")))
	}
	return nil
}

// cellAnswer makes a run on a cell whose agent lists its tools (@tools)
// or reports its model (@model), how says which, with the request headers
// the scenario set: the header rules are the
// invoke routes' ("Payload of all five"; "Project routes behave
// identically ... same Accept variants, same async parameter"). An async
// run's answer is read from the events route by its runID, which waits
// for the run ("With Accept: application/json the call stays open until
// the run finishes"), with the key of role; the tool and model steps read
// the last answer.
func (w *World) cellAnswer(how, path, form, role string) error {
	delete(w.runs, "cell") // an earlier run's ID must not stand for this one's
	if err := w.cellRun(how, path, form, "", ""); err != nil {
		return err
	}
	if cellForms[form].query == "" {
		return nil
	}
	if _, ok := w.runs["cell"]; !ok {
		// "returns at once with threadID and runID": without it the run's
		// events cannot be asked for.
		return outcome.Fail(w.resp.Method()+" "+w.resp.URL()+": the async answer", "a runID", "none").Breaks(w.on(w.resp, "ASYNC-01"))
	}
	rq, err := w.keyed(role, nil, "GET", "/api/threads/${thread:cell}/events", nil)
	if err != nil {
		return err
	}
	rq.header.Set("Accept", "application/json")
	rq.query, rq.maxBody = url.Values{"runID": {w.runs["cell"]}}.Encode(), maxFollowUpBody
	ack := w.resp
	r, err := w.do(rq)
	if err != nil {
		return err
	}
	w.resp, w.startedBy[r] = r, ack
	if err := w.readWhole(r); err != nil {
		return err
	}
	if f, ok := outcome.AsFailure(w.need2xx("GET /api/threads/{id}/events?runID= of the cell's run", r)); ok {
		// The thread is the one the async answer named (ASYNC-01), on
		// the thread the request chose: either may be wrong.
		return f.Explained(w.cellNamedBy).Explained(w.cellSelectedBy...)
	}
	return nil
}

// cellAbortion is an abort a stream's reader sent beside its reading.
type cellAbortion struct {
	started bool
	done    chan struct{}
	err     error
}

// abortOnText returns a stop function that, once the run's first text has
// arrived (the answer so far holds the scenario's marker "a"), aborts the
// run's thread on another goroutine and reads on: the stream's times stay
// those of its arrival.
func (w *World) abortOnText(ab *cellAbortion, sse bool) stopFunc {
	first := w.marker("a")
	var seen contentWatch
	sw := &streamWatch{match: func(fr Frame) bool { return seen.see(fr, first) }}
	seenText := watchText(first)
	return func(rd *reading) bool {
		if ab.started {
			return false
		}
		if sse && !sw.seen(rd) || !sse && !seenText(rd) {
			return false
		}
		ab.started = true
		v := checks.NewView(rd.x) // the request's route; its answer still arriving
		thread, threadRule, rule := rd.x.Response.Header.Get("X-SVC-Thread-Id"), checks.RuleOn("THREAD-04", v), checks.RuleOn("ASYNC-06", v)
		go func() {
			defer close(ab.done)
			ab.err = w.cellAbort(thread, threadRule, rule)
		}()
		return false // read on: the stream ends as the abort ends the run
	}
}

// cellAbort aborts a cell's run on its thread with the agent key (abort "is
// covered by agent:chat"; every cell's run is the main agent's). No thread
// to abort, or a 404 for the thread the run's answer named, breaks the
// header's rule (threadRule, as it stands on the run's route); a refused
// abort, AUTH-07; another answer, the abort's own rule.
func (w *World) cellAbort(thread, threadRule, rule string) error {
	if thread == "" {
		return outcome.Fail("the run to abort", "an X-SVC-Thread-Id header naming its thread", "none").Breaks(threadRule)
	}
	w.abortingThread(thread)
	rq, err := w.keyed("agent", nil, "POST", "/api/threads/"+url.PathEscape(thread)+"/abort", nil)
	if err != nil {
		return err
	}
	rq.maxBody = maxFollowUpBody
	r, err := w.do(rq)
	if err != nil {
		return err
	}
	if err := w.readWhole(r); err != nil {
		return err
	}
	check := "POST /api/threads/{id}/abort of the run's thread with the agent key"
	switch st := r.Status(); {
	case st/100 == 2:
		return nil
	case st == http.StatusNotFound:
		return outcome.Failf(check, "2xx: the thread the run's answer named exists", "%d", st).Breaks(threadRule).Explained(rule)
	case st == http.StatusUnauthorized || st == http.StatusForbidden:
		return outcome.Failf(check, "2xx: the abort is covered by agent:chat", "%d", st).Breaks("AUTH-07").Explained(rule)
	default:
		return outcome.Failf(check, "2xx: the abort cancels the run", "%d", st).Breaks(rule)
	}
}

// answerRunID returns the run an answer names: an async acknowledgement's
// runID, or its events' (the first that names one); "" for none (plain
// text names none).
func answerRunID(r *Response) string {
	if _, run := asyncThread(r); run != "" {
		return run
	}
	return answerField(r, "runID")
}

// answerField returns the first ID an event of r's answer (SSE or
// envelope) holds under key; "" when none does.
func answerField(r *Response, key string) string {
	if evs, err := r.Events(); err == nil && r.MediaType() == "text/event-stream" {
		for _, ev := range evs {
			if id, ok := idString(ev[key]); ok {
				return id
			}
		}
	}
	if items, err := r.EnvelopeItems(); err == nil {
		for _, it := range items {
			if id, ok := idString(it[key]); ok {
				return id
			}
		}
	}
	return ""
}

// asyncThread returns the threadID and runID of an async acknowledgement.
func asyncThread(r *Response) (thread, run string) {
	var ack struct {
		ThreadID json.RawMessage `json:"threadID"`
		RunID    json.RawMessage `json:"runID"`
	}
	if inv, ok := checks.InvokeOf(r.View); !ok || !inv.Async || json.Unmarshal(r.Body(), &ack) != nil {
		return "", ""
	}
	text := func(raw json.RawMessage) string {
		var v any
		if json.Unmarshal(raw, &v) != nil {
			return ""
		}
		s, _ := idString(v)
		if n, ok := v.(float64); ok {
			s = fmt.Sprint(int64(n))
		}
		return s
	}
	return text(ack.ThreadID), text(ack.RunID)
}

// holdsEveryRule judges every exchange of the scenario, in order, with
// every check traffic can decide, as the passive judge would (a History of
// the scenario's own). Every rule is judged on every exchange: the rules
// that held on all of them are checked in full (checkedInFull) whatever
// broke, and the first broken rule, one of the scenario's own first, fails
// the step. A check that cannot decide on an exchange leaves it out.
func (w *World) holdsEveryRule() error {
	w.mu.Lock()
	views := append([]*checks.View(nil), w.views...)
	w.mu.Unlock()
	var h checks.History
	var failures []*outcome.Failure
	held, broke := map[string]bool{}, map[string]bool{}
	for _, v := range views {
		for _, c := range checks.All() {
			err := c.Decide(v, &h)
			if f, ok := outcome.AsFailure(err); ok {
				failures = append(failures, f)
				broke[f.Rule] = true
			} else if err == nil && v.Response != nil {
				held[checks.RuleOn(c.Rule, v)] = true
			}
		}
		h.Add(v)
	}
	var kept []string
	for rule := range held {
		if !broke[rule] {
			kept = append(kept, rule)
		}
	}
	w.checkedInFull(kept...)
	if len(failures) == 0 {
		return nil
	}
	own := features.RulesOf(w.tags)
	for _, f := range failures {
		if slices.Contains(own, f.Rule) {
			return f
		}
	}
	return failures[0]
}

// cellEvents fetches the events of the cell's run by its thread: with its
// runID as JSON (ASYNC-02, and ASYNC-04: the call waits for the run), and
// without runID (ASYNC-03: the thread's last completed run). What they
// answer is judged by the checks, in the row's last step and the run's
// judgement of every exchange; a follow-up that cannot be made (no run ID
// in a plain-text answer) is left out.
func (w *World) cellEvents() error {
	if _, err := w.thread("cell"); err != nil {
		return err
	}
	if _, err := w.run("cell"); err == nil {
		if _, err := w.threadEvents("cell", "cell"); err != nil {
			return err
		}
	}
	_, err := w.threadEvents("cell", "")
	return err
}

// answerIsPrompt: BODY-01, in any form: the answer of an echoing run (its
// events' content joined, or its plain text) is the prompt the scenario
// sent, byte for byte.
func (w *World) answerIsPrompt() error {
	r, err := w.finished()
	if err != nil {
		return err
	}
	if err := w.needEcho(); err != nil {
		return err // an agent that does not echo: untested
	}
	// The form first: an envelope with bytes after it, events that are no
	// objects, break their own rules (FMT-02, EVT-01) and block this one.
	if r.MediaType() == "application/json" {
		if _, err := w.envelopeOf(r); err != nil {
			return err
		}
	}
	got, err := answerText(r)
	if err != nil {
		return err
	}
	if got != w.lastPrompt {
		f := outcome.Failf("the answer of an echoing agent", strconv.Quote(w.lastPrompt), "%s", strconv.Quote(abbreviate([]byte(got))))
		if r.MediaType() == "text/event-stream" {
			// A stream whose events do not add up to its answer shows the
			// same: EVT-03's, when it fails in its own scenarios.
			f.Explained("EVT-03")
		}
		return f
	}
	return nil
}

// cellRunReported: ASYNC-05, "reports completion through lastRunID": the
// thread of the cell's run reports it (its run ID when the answer named
// one; else any run but those the scenario saw the thread complete before:
// plain text names none).
func (w *World) cellRunReported() error {
	if _, err := w.thread("cell"); err != nil {
		return err
	}
	// The thread is the one the run's answer named: one that does not
	// exist breaks the rule that named it; one that is not the run's is
	// its failure too.
	threadRule := w.cellNamedBy
	rq, err := w.followUp("GET", "/api/threads/${thread:cell}", "")
	if err != nil {
		return err
	}
	r, err := w.do(rq)
	if err != nil {
		return err
	}
	if r.Status() == http.StatusNotFound {
		return outcome.Failf("GET /api/threads/{id} of the thread the run's answer named", "the run's thread", "404: %s",
			abbreviate(r.Body())).Breaks(threadRule)
	}
	var older []string // the runs of the scenario before the cell's
	for name, id := range w.runs {
		if name != "cell" {
			older = append(older, id)
		}
	}
	slices.Sort(older)
	// A resumed thread that still reports a run it had before the cell's
	// does not show that lastRunID is wrong: the run may not have gone
	// onto the thread at all, the fault of the rule that selects it (a
	// service that runs it on a new thread and echoes the ID it was
	// given). Blamed on ASYNC-05 only when that rule holds.
	earlier := func(got string, f *outcome.Failure) error {
		if slices.Contains(older, got) {
			f.Tentative = true
			f.Explained(w.cellSelectedBy...)
		}
		return f.Explained(threadRule, "THREAD-03")
	}
	what := "lastRunID of the run's thread within " + w.deadline.String()
	if want, err := w.run("cell"); err == nil {
		return w.pollLastRunID("cell", gomega.Equal(want), func(got string) error {
			return earlier(got, outcome.Fail(what, "the run, "+strconv.Quote(want), strconv.Quote(got)))
		})
	}
	ran := checks.Ran{Older: older, AllOlder: true}
	return w.pollLastRunID("cell", gomega.Satisfy(func(got string) bool { return ran.Shown(got, what) == nil }), func(got string) error {
		if f, ok := outcome.AsFailure(ran.Shown(got, what)); ok {
			return earlier(got, f)
		}
		return nil
	})
}
