package steps

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/cucumber/godog"
	"github.com/onsi/gomega"
	"github.com/onsi/gomega/types"

	"github.com/invokeconf/invokeconf/agentscript"
	"github.com/invokeconf/invokeconf/checks"
	"github.com/invokeconf/invokeconf/outcome"
	"github.com/invokeconf/invokeconf/sseframe"
)

// asyncDefs: async starts and the follow-up routes of async.feature
// (ASYNC-*). The follow-up routes' response shapes are not shown, so answers
// are looked for as text in their bodies, and only lastRunID is read by name.
func asyncDefs() []Def {
	return []Def{
		step2(`^I start "([^"]*)" asynchronously with the prompt:$`, func(w *World, path string, doc *godog.DocString) error {
			return w.invoke(withQuery(path, "async=true"), doc.Content)
		}),
		step2(`^I start "([^"]*)" asynchronously with the prompt "(.*)"$`, func(w *World, path, prompt string) error {
			return w.invokeQuoted(withQuery(path, "async=true"), prompt)
		}),
		step3(`^the async answer came within (\d+)s with a threadID and a runID, remembered as run "(\w+)" on thread "(\w+)"$`, (*World).asyncAck),
		step2(`^I remember the async run as "(\w+)" on thread "(\w+)"$`, func(w *World, run, thread string) error {
			return w.rememberAsync(run, thread)
		}),
		step2(`^I fetch the events of thread "(\w+)" with runID of run "(\w+)" as JSON$`, func(w *World, thread, run string) error {
			_, err := w.fetchEvents(thread, run)
			return err
		}),
		step1(`^I fetch the events of thread "(\w+)" without runID as JSON$`, func(w *World, thread string) error {
			_, err := w.fetchEvents(thread, "")
			return err
		}),
		step1(`^I fetch the events of thread "(\w+)" without runID and without Accept$`, func(w *World, thread string) error {
			if _, err := w.thread(thread); err != nil {
				return err
			}
			_, err := w.follow("GET", "/api/threads/${thread:"+thread+"}/events", "")
			return err
		}),
		step4(`^the body contains "([^"]*)" but not "([^"]*)", nor "([^"]*)", the answer of run "(\w+)", which had not finished when the call came$`, (*World).completedOnly).AboutRun(),
		step5(`^the body holds the last completed run's answer "([^"]*)"(?: and not "([^"]*)")?, or "([^"]*)" if the call stayed open until run "(\w+)" on thread "(\w+)" finished$`, (*World).lastCompletedOrWaited),
		step2(`^the async answer names thread "(\w+)" and a runID, remembered as run "(\w+)"$`, func(w *World, thread, run string) error {
			return w.rememberAsync(run, thread)
		}),
		step1(`^I get thread "(\w+)"$`, func(w *World, thread string) error {
			_, err := w.follow("GET", "/api/threads/${thread:"+thread+"}", "")
			return err
		}),
		step1(`^I abort thread "(\w+)"$`, func(w *World, thread string) error {
			if t, err := w.thread(thread); err == nil {
				w.abortingThread(t)
			}
			_, err := w.follow("POST", "/api/threads/${thread:"+thread+"}/abort", "")
			return err
		}),
		step5(`^I invoke "([^"]*)" with the prompt below as run "(\w+)" on thread "(\w+)" and abort the thread once the content "([^"]*)" arrived:$`, (*World).invokeAndAbort),
		step1(`^the abort answered 2xx and the stream ended without the content "([^"]*)"$`, (*World).abortedStream),
		step4(`^the events of run "(\w+)" on thread "(\w+)" show the content "([^"]*)" and that it ended without "([^"]*)"$`, (*World).abortedOnServer),
		step2(`^thread "(\w+)" was continued: its lastRunID moved on and its events without runID contain "([^"]*)"$`, (*World).threadContinued),
		step2(`^thread "(\w+)" exists: its lastRunID is set and its events without runID contain "([^"]*)"$`, (*World).threadHolds),
		step1(`^lastRunID is not run "(\w+)"$`, (*World).lastRunIDIsNot),
		step2(`^lastRunID of thread "(\w+)" eventually becomes run "(\w+)"$`, func(w *World, thread, run string) error {
			return w.waitFinished(run, thread)
		}),
		step3(`^the events of run "(\w+)" on thread "(\w+)", once it has finished, contain "([^"]*)"$`, func(w *World, run, thread, want string) error {
			return w.finishedEventsContain(run, thread, want, "")
		}),
		step4(`^the events of run "(\w+)" on thread "(\w+)", once it has finished, contain "([^"]*)" but not "([^"]*)"$`, (*World).finishedEventsContain),
		step3(`^the events of run "(\w+)" on thread "(\w+)", once it has finished, do not contain "([^"]*)"$`, func(w *World, run, thread, notWant string) error {
			return w.finishedEventsContain(run, thread, "", notWant)
		}),
	}
}

// follow makes a plain request/response call (fetch) and keeps the result
// as the last response.
func (w *World) follow(method, path, accept string, query ...string) (*Response, error) {
	resp, err := w.fetch(method, path, accept, query...)
	if err != nil {
		return nil, err
	}
	w.resp = resp
	return resp, nil
}

// asyncAck: ASYNC-01 with its "at once", both judged by the passive
// checks: the script pauses longer than the step's limit plus
// LiveTolerance, and AsyncAtOnce derives that limit from the script.
func (w *World) asyncAck(within int, run, thread string) error {
	if _, err := w.finished(); err != nil {
		return err
	}
	if err := w.status2xx(); err != nil {
		return err
	}
	if err := w.judge(checks.AsyncAtOnce); err != nil {
		return err
	}
	return w.rememberAsync(run, thread)
}

// rememberAsync remembers {threadID, runID} of an async start, judged by
// ASYNC-01's check (2xx JSON with both, a resumed thread named by the
// request is the answer's). A thread the scenario already knows must be
// the answer's: "threadID: Thread of the run (new or resumed)".
func (w *World) rememberAsync(run, thread string) error {
	r, err := w.finished()
	if err != nil {
		return err
	}
	if err := w.need2xx(r.Method()+" "+r.URL()+": the status of the async start", r); err != nil {
		return err
	}
	if err := w.judge(checks.AsyncAck); err != nil {
		return outcome.Explain(err, w.selectionRules(r)...)
	}
	if known, ok := w.threads[thread]; ok {
		if err := w.judgeAs("ASYNC-01", checks.OnThread(known, fmt.Sprintf("the resumed thread %q", thread))); err != nil {
			return outcome.Explain(err, w.selectionRules(r)...)
		}
	}
	var ack struct {
		ThreadID string `json:"threadID"`
		RunID    string `json:"runID"`
	}
	if err := json.Unmarshal(r.Body(), &ack); err != nil {
		return fmt.Errorf("the async answer passed ASYNC-01 but does not decode: %w", err)
	}
	w.threads[thread], w.runs[run] = ack.ThreadID, ack.RunID
	w.chosenBy[ack.RunID], w.asyncStart[ack.RunID] = w.threadRules(r), r
	return nil
}

// lastCompletedOrWaited: ASYNC-03 without runID while a run is going. "Without
// it, returns the thread's last completed run" and "With Accept:
// application/json the call stays open until the run finishes" allow two
// answers: the last run completed when the call came (now), or, when the
// call waited for the running run, that run, which has then completed
// (later). The later answer passes only when that run has completed.
func (w *World) lastCompletedOrWaited(now, notWant, later, run, thread string) error {
	r, err := w.finished()
	if err != nil {
		return err
	}
	if err := w.needEcho(); err != nil {
		return err
	}
	for _, p := range []*string{&now, &notWant, &later} {
		if *p, err = w.expand(*p); err != nil {
			return err
		}
	}
	if err := w.judgeIfDecided(checks.EventsLastCompleted); err != nil {
		return err
	}
	body := answerOrBody(r)
	has := func(s string) bool { return s != "" && strings.Contains(body, s) }
	if has(notWant) || has(now) == has(later) {
		want := fmt.Sprintf("the answer %q, or %q if the call waited for run %s; never both", now, later, run)
		if notWant != "" {
			want += fmt.Sprintf(", never %q", notWant)
		}
		return outcome.Failf(r.Method()+" "+r.URL()+": the body", want, "%s", abbreviate(r.Body())).
			WithSpec("Without it, returns the thread's last completed run").Explained("THREAD-03", "ASYNC-05")
	}
	if has(later) {
		return w.waitFinished(run, thread)
	}
	return nil
}

// completedOnly: the events route without runID "returns the thread's last
// completed run", not the answer of a run that had not finished when the
// call came. A call sent after that run's pauses could have passed (a
// harness that ran late) may rightly hold its answer: no verdict then.
func (w *World) completedOnly(want, notWant, later, run string) error {
	r, err := w.finished()
	if err != nil {
		return err
	}
	if later, err = w.expand(later); err != nil {
		return err
	}
	if id, ok := w.runs[run]; ok && strings.Contains(answerOrBody(r), later) {
		if err := w.askedLate(r, id, run, "called", "which run is the last completed"); err != nil {
			return err
		}
	}
	if err := w.bodyContains(want, notWant); err != nil {
		return err
	}
	return w.bodyContains("", later)
}

// askedLate returns an untested verdict when r was sent after the async run
// id (the scenario's run) could have completed: its script's pauses had
// passed since it was started. Whether it had is then unknown: no verdict
// on what depends on it. nil when r came sooner, or the run's script is not
// known.
func (w *World) askedLate(r *Response, id, run, did, verdict string) error {
	start, ok := w.asyncStart[id]
	if !ok {
		return nil
	}
	s, err := agentscript.Parse(start.Prompt())
	if err != nil || s.Echo {
		return nil
	}
	if asked, least := r.Sent().Sub(start.Sent()), s.Pauses(); asked >= least {
		return &untested{reason: fmt.Sprintf("%s late: it %s %s after run %s was started, and the run's pauses last %s: it may have completed, no verdict on %s",
			checks.HarnessLatePhrase, did, asked.Round(time.Millisecond), run, least, verdict)}
	}
	return nil
}

// fetchEvents calls GET /api/threads/{id}/events with Accept:
// application/json, with or without runID, and keeps the answer as the
// last response.
func (w *World) fetchEvents(thread, run string) (*Response, error) {
	r, err := w.threadEvents(thread, run)
	if err != nil {
		return nil, err
	}
	w.resp = r
	return r, nil
}

// threadEvents is fetchEvents without keeping the answer.
func (w *World) threadEvents(thread, run string) (*Response, error) {
	if _, err := w.thread(thread); err != nil {
		return nil, err
	}
	path := "/api/threads/${thread:" + thread + "}/events"
	if run == "" {
		return w.fetch("GET", path, "application/json")
	}
	id, err := w.run(run)
	if err != nil {
		return nil, err
	}
	return w.fetch("GET", path, "application/json", "runID", id)
}

// lastRunID reads lastRunID from GET /api/threads/{id}; "" when absent or
// null. The spec names no success status: any 2xx will do.
func (w *World) lastRunID(thread string) (string, error) {
	if _, err := w.thread(thread); err != nil {
		return "", err
	}
	rq, err := w.followUp("GET", "/api/threads/${thread:"+thread+"}", "")
	if err != nil {
		return "", err
	}
	check := "GET /api/threads/{id} of thread " + thread
	r, err := w.do(rq)
	if err != nil {
		return "", err
	}
	if err := w.readWhole(r); err != nil {
		return "", err
	}
	if err := w.need2xx(check, r); err != nil {
		return "", err
	}
	id, err := lastRunIDOf(r.Body())
	if err != nil {
		return "", outcome.Failf(check, "a JSON object with lastRunID", "%s", abbreviate(r.Body())).Breaks("ASYNC-05")
	}
	return id, nil
}

// lastRunIDOf reads lastRunID from a thread's JSON: "" when absent or null.
// Its type is not shown: a string or a number will do.
func lastRunIDOf(body []byte) (string, error) {
	v, err := decodeObject(body)
	if err != nil {
		return "", err
	}
	id, _ := idString(v["lastRunID"])
	return id, nil
}

func (w *World) lastRunIDIsNot(run string) error {
	id, err := w.run(run)
	if err != nil {
		return err
	}
	r, err := w.last()
	if err != nil {
		return err
	}
	got, err := lastRunIDOf(r.Body())
	if err != nil {
		return outcome.Failf("the thread", "a JSON object", "%s", abbreviate(r.Body()))
	}
	if got == id {
		// A run asked about after its script's pauses could have passed
		// may have completed: the harness asked too late to tell.
		if err := w.askedLate(r, id, run, "asked for the thread", "lastRunID"); err != nil {
			return err
		}
		// A thread that was not the run's own (another call's, reused)
		// reports another story of runs.
		return outcome.Fail("lastRunID while run "+run+" is still going", "not run "+run+" (it reports completion)", id).
			Explained(w.chosenBy[id]...)
	}
	return nil
}

// pollLastRunID polls the thread, within the scenario's deadline, until its
// lastRunID satisfies m; a timeout is the failure fail makes of the last
// value seen.
func (w *World) pollLastRunID(thread string, m types.GomegaMatcher, fail func(last string) error) error {
	_, err := eventually(w.ctx, w.deadline, func() (string, error) { return w.lastRunID(thread) }, m, fail)
	return err
}

// waitFinished polls the thread until its lastRunID names the run
// (ASYNC-05: completion is reported through it).
func (w *World) waitFinished(run, thread string) error {
	want, err := w.run(run)
	if err != nil {
		return err
	}
	return w.pollLastRunID(thread, gomega.Equal(want), func(got string) error {
		// A thread that another call reused reports that call's run
		// (THREAD-03).
		return outcome.Fail(fmt.Sprintf("lastRunID of thread %q within %s", thread, w.deadline), "run "+run+" ("+want+")", got).
			Explained("THREAD-03")
	})
}

// finishedEventsContain waits until the thread reports the run complete
// (lastRunID), then reads the run's events as JSON, which also waits.
func (w *World) finishedEventsContain(run, thread, want, notWant string) error {
	if err := w.waitFinished(run, thread); err != nil {
		return err
	}
	if _, err := w.fetchEvents(thread, run); err != nil {
		return err
	}
	if err := w.status2xx(); err != nil {
		return err
	}
	// The run was waited for through lastRunID (ASYNC-05): a thread that
	// reports a run complete before it is explains missing content too.
	return outcome.Explain(w.bodyContains(want, notWant), "ASYNC-05")
}

// threadContinued: a resumed thread really continues. The response's
// X-SVC-Thread-Id alone would pass a service that starts a fresh
// conversation and echoes the ID it was given: the thread's own follow-ups
// must show the new run (lastRunID moves on from the thread's set-up run,
// and the events route without runID, the last completed run, holds its
// answer).
func (w *World) threadContinued(thread, said string) error {
	// The thread's set-up run: without it, any lastRunID would look new.
	before, err := w.run(openingRun(thread))
	if err != nil {
		return scenarioErrorf("thread %q was not opened by a set-up step: %v", thread, err)
	}
	return w.threadRan(thread, said, before,
		"Thread selection rules: the thread segment or X-SVC-Thread-Id is used; Thread ID in {id}: continues that thread")
}

// threadHolds: a thread a response header named as new really exists and
// holds the run. The header is the only name a call without thread context
// gets of its new thread: one that names no thread, or not the run's, is
// THREAD-04's failure ("the header names the run's thread"), and it leaves
// THREAD-03 (a new thread was created) unknown, so a THREAD-03 scenario
// that meets it is blocked by THREAD-04 when THREAD-04's own scenarios
// fail too.
func (w *World) threadHolds(thread, said string) error {
	return outcome.Explain(w.threadRan(thread, said, "",
		"Otherwise a new thread is created; Every response carries the header X-SVC-Thread-Id"), "THREAD-04")
}

// threadRan: the thread's lastRunID moves on from before (polled: it
// reports completion), and its events without runID, the last completed
// run, hold what the run said.
func (w *World) threadRan(thread, said, before, spec string) error {
	said, err := w.expand(said)
	if err != nil {
		return err
	}
	// The scenario knows every run the thread had before: any other is
	// the new one (its answer did not name it).
	ran := checks.Ran{AllOlder: true}
	if before != "" {
		ran.Older = []string{before}
	}
	what := fmt.Sprintf("lastRunID of thread %q after the run on it", thread)
	shown := gomega.Satisfy(func(got string) bool { return ran.Shown(got, what) == nil })
	err = w.pollLastRunID(thread, shown, func(got string) error {
		err := ran.Shown(got, what)
		if f, ok := outcome.AsFailure(err); ok {
			// lastRunID reports completion (ASYNC-05): a thread that
			// reports it wrongly explains this too.
			return f.WithSpec(spec).Explained("ASYNC-05")
		}
		return err
	})
	if err != nil {
		return err
	}
	rq, err := w.followUp("GET", "/api/threads/${thread:"+thread+"}/events", "application/json")
	if err != nil {
		return err
	}
	r, err := w.do(rq)
	if err != nil {
		return err
	}
	if err := w.readWhole(r); err != nil {
		return err
	}
	if err := w.need2xx(fmt.Sprintf("the events of thread %q without runID", thread), r); err != nil {
		return err
	}
	// The events route without runID answers the last completed run
	// (ASYNC-03): a route that answers another, or a thread another call
	// reused (THREAD-03), explains this too.
	if got := answerOrBody(r); !strings.Contains(got, said) {
		return outcome.Failf(fmt.Sprintf("the events of thread %q without runID (its last completed run)", thread),
			fmt.Sprintf("an answer holding %q", said), "%s", abbreviate([]byte(got))).Explained("ASYNC-03", "THREAD-03")
	}
	return nil
}

// invokeAndAbort reads an SSE stream and, once an event carries the given
// content, aborts the stream's thread through POST /api/threads/{id}/abort
// while it goes on reading (ASYNC-06). Waiting for the content first makes
// sure the run is under way when the abort lands. The stream's thread and
// run (when an event names it) are remembered under the names given.
func (w *World) invokeAndAbort(path, run, thread, content string, doc *godog.DocString) error {
	w.aborting = true // the stream's run, and the abort in its cell
	defer func() { w.aborting = false }()
	content, err := w.expand(content)
	if err != nil {
		return err
	}
	prompt, err := w.prompt(doc.Content)
	if err != nil {
		return err
	}
	var abortErr error
	abortStatus, abortedAt := 0, 0
	seen := watchFor(hasContentSoFar(content))
	abortOnce := func(rd *reading) bool {
		if abortStatus != 0 || abortErr != nil || !seen(rd) {
			return false
		}
		w.threads[thread] = rd.x.Response.Header.Get("X-SVC-Thread-Id")
		if w.threads[thread] == "" {
			abortErr = outcome.Fail("the SSE stream to abort", "an X-SVC-Thread-Id header naming its thread", "none").
				Breaks(checks.RuleOn("THREAD-04", checks.NewView(rd.x)))
			return true
		}
		if id := sseRunID(rd.body); id != "" {
			w.runs[run] = id
		}
		var ab *Response
		abortedAt = len(rd.body)
		if ab, abortErr = w.fetch("POST", "/api/threads/${thread:"+thread+"}/abort", ""); abortErr == nil {
			abortStatus = ab.Status()
			w.abortResp = ab
		}
		return false
	}
	resp, err := w.invokeStopping(path, prompt, abortOnce)
	if err != nil {
		return err
	}
	if err := w.need2xx("the SSE invoke", resp); err != nil {
		return err
	}
	if abortErr != nil {
		return fmt.Errorf("abort: %w", abortErr)
	}
	if err := w.heldBackUpTo(resp, abortedAt); err != nil {
		return err
	}
	if abortStatus == 0 {
		return textNeverCame(resp, outcome.Failf("the SSE stream before the abort", fmt.Sprintf("an event with the content %q", content), "%s", abbreviate(resp.Body())))
	}
	w.abortStatus = abortStatus
	return nil
}

// sseRunID returns the runID of the first event object of an SSE body.
func sseRunID(body []byte) string {
	frames, _ := sseframe.ReadAll(body)
	for _, f := range frames {
		data, _ := f.Field("data")
		if obj, err := decodeObject([]byte(data)); err == nil {
			if id, ok := idString(obj["runID"]); ok {
				return id
			}
		}
	}
	return ""
}

// abortedStream: ASYNC-06 on the stream, judged by the passive check over
// the scenario's exchanges (the stream and its abort): the content the
// script says after the abort (notWant) never arrives. The check finds
// that content in the script itself.
func (w *World) abortedStream(notWant string) error {
	if w.abortResp == nil {
		return scenarioErrorf("no abort was sent in this scenario")
	}
	if err := w.need2xx("POST /api/threads/{id}/abort: the status", w.abortResp); err != nil {
		return err
	}
	if _, err := w.finished(); err != nil {
		return outcome.Fail("the SSE stream after the abort", "its end", err.Error())
	}
	return w.judge(checks.AbortEndsRun)
}

// abortedOnServer: abort cancels the run on the server, not only the
// client's stream, judged by the passive check over the scenario's
// exchanges. The events route with runID and Accept: application/json
// stays open until the run finishes; for a cancelled run that is at once,
// and its events hold what the stream showed before the abort (want) and
// nothing the script says later (notWant). A service that only cut the
// stream answers once the script has run out, with the later content; an
// empty answer shows nothing. lastRunID is not read: it reports
// completion, and the spec does not say that a cancelled run completes.
func (w *World) abortedOnServer(run, thread, want, notWant string) error {
	if _, err := w.run(run); err != nil {
		return fmt.Errorf("%w (no event of the stream carried a runID)", err)
	}
	if _, err := w.fetchEvents(thread, run); err != nil {
		return err
	}
	if err := w.status2xx(); err != nil {
		return err
	}
	return w.judge(checks.AbortEndsRun)
}
