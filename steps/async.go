package steps

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/cucumber/godog"
	"github.com/gavv/httpexpect/v2"
	"github.com/onsi/gomega"
)

// asyncSteps: async starts and the follow-up routes of async.feature
// (ASYNC-*). The follow-up routes' response shapes are not shown, so answers
// are looked for as text in their bodies, and only lastRunID is read by name.
func asyncSteps(sc *godog.ScenarioContext, w *World) {
	step(sc, `^I start "([^"]*)" asynchronously with the prompt:$`, func(path string, doc *godog.DocString) error {
		return w.invoke(withQuery(path, "async=true"), doc.Content)
	})
	step(sc, `^I start "([^"]*)" asynchronously with the prompt "(.*)"$`, func(path, prompt string) error {
		return w.invokeQuoted(withQuery(path, "async=true"), prompt)
	})
	step(sc, `^the async answer came within (\d+)s with a threadID and a runID, remembered as run "(\w+)" on thread "(\w+)"$`, w.asyncAck)
	step(sc, `^I remember the async run as "(\w+)" on thread "(\w+)"$`, func(run, thread string) error {
		return w.rememberAsync(run, thread)
	})
	step(sc, `^I fetch the events of thread "(\w+)" with runID of run "(\w+)" as JSON$`, func(thread, run string) error {
		_, err := w.fetchEvents(thread, run)
		return err
	})
	step(sc, `^I fetch the events of thread "(\w+)" without runID as JSON$`, func(thread string) error {
		_, err := w.fetchEvents(thread, "")
		return err
	})
	step(sc, `^I get thread "(\w+)"$`, func(thread string) error {
		_, err := w.follow("GET", "/api/threads/${thread:"+thread+"}", "")
		return err
	})
	step(sc, `^I abort thread "(\w+)"$`, func(thread string) error {
		_, err := w.follow("POST", "/api/threads/${thread:"+thread+"}/abort", "")
		return err
	})
	step(sc, `^I invoke "([^"]*)" with the prompt below and abort its thread once the content "([^"]*)" arrived:$`, w.invokeAndAbort)
	step(sc, `^the abort answered 2xx and the stream ended without the content "([^"]*)"$`, w.abortedStream)
	step(sc, `^lastRunID is not run "(\w+)"$`, w.lastRunIDIsNot)
	step(sc, `^lastRunID of thread "(\w+)" eventually becomes run "(\w+)"$`, func(thread, run string) error {
		return w.waitFinished(run, thread)
	})
	step(sc, `^the events of run "(\w+)" on thread "(\w+)", once it has finished, contain "([^"]*)"$`, func(run, thread, want string) error {
		return w.finishedEventsContain(run, thread, want, "")
	})
	step(sc, `^the events of run "(\w+)" on thread "(\w+)", once it has finished, contain "([^"]*)" but not "([^"]*)"$`, w.finishedEventsContain)
	step(sc, `^the events of run "(\w+)" on thread "(\w+)", once it has finished, do not contain "([^"]*)"$`, func(run, thread, notWant string) error {
		return w.finishedEventsContain(run, thread, "", notWant)
	})
	step(sc, `^the events of that run, once it has finished, contain "([^"]*)" but not "([^"]*)"$`, func(want, notWant string) error {
		return w.finishedEventsContain("that", "that", want, notWant)
	})
}

// follow makes a plain request/response call with httpexpect and keeps the
// result as the last response.
func (w *World) follow(method, path, accept string, query ...string) (*Response, error) {
	p, err := w.expand(path)
	if err != nil {
		return nil, need(err)
	}
	e, rep := w.expect()
	req, err := w.withAuth(e.Request(method, p))
	if err != nil {
		return nil, err
	}
	if accept != "" {
		req = req.WithHeader("Accept", accept)
	}
	for i := 0; i+1 < len(query); i += 2 {
		req = req.WithQuery(query[i], query[i+1])
	}
	sent := time.Now()
	r := req.Expect()
	if err := rep.err(); err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, p, err)
	}
	elapsed := time.Since(sent)
	raw := r.Raw()
	body := []byte(r.Body().Raw())
	resp := &Response{Method: method, URL: raw.Request.URL.String(), Status: raw.StatusCode, Header: raw.Header,
		Body: body, Sent: sent, HeadersAt: elapsed, Reads: []Read{{At: elapsed, End: len(body)}}, Complete: true}
	w.resp = resp
	return resp, nil
}

func (w *World) asyncAck(within int, run, thread string) error {
	if err := w.complete(); err != nil {
		return err
	}
	if err := w.status2xx(); err != nil {
		return err
	}
	if end, limit := w.resp.End(), time.Duration(within)*time.Second; end > limit {
		return fmt.Errorf("the async answer took %s, want at most %s (it should not wait for the run)", end.Round(time.Millisecond), limit)
	}
	return w.rememberAsync(run, thread)
}

// rememberAsync reads {threadID, runID} from an async start (ASYNC-01).
func (w *World) rememberAsync(run, thread string) error {
	if err := w.complete(); err != nil {
		return err
	}
	var ack struct {
		ThreadID *string `json:"threadID"`
		RunID    *string `json:"runID"`
	}
	if err := json.Unmarshal(w.resp.Body, &ack); err != nil {
		return fmt.Errorf("the async answer is not JSON {threadID, runID}: %s", abbreviate(w.resp.Body))
	}
	return check(func(g gomega.Gomega) {
		g.Expect(ack.ThreadID).NotTo(gomega.BeNil(), "the async answer has no threadID: %s", w.resp.Body)
		g.Expect(ack.RunID).NotTo(gomega.BeNil(), "the async answer has no runID: %s", w.resp.Body)
		g.Expect(*ack.ThreadID).NotTo(gomega.BeEmpty())
		g.Expect(*ack.RunID).NotTo(gomega.BeEmpty())
		w.threads[thread], w.runs[run] = *ack.ThreadID, *ack.RunID
	})
}

// fetchEvents calls GET /api/threads/{id}/events with Accept:
// application/json, with or without runID.
func (w *World) fetchEvents(thread, run string) (*Response, error) {
	path := "/api/threads/${thread:" + thread + "}/events"
	if run == "" {
		return w.follow("GET", path, "application/json")
	}
	id, ok := w.runs[run]
	if !ok {
		return nil, fmt.Errorf("no run named %q in this scenario", run)
	}
	return w.follow("GET", path, "application/json", "runID", id)
}

// lastRunID reads lastRunID from GET /api/threads/{id}; "" when absent or
// null.
func (w *World) lastRunID(thread string) (string, error) {
	e, rep := w.expect()
	p, err := w.expand("/api/threads/${thread:" + thread + "}")
	if err != nil {
		return "", err
	}
	req, err := w.withAuth(e.GET(p))
	if err != nil {
		return "", err
	}
	obj := req.Expect().Status(200).JSON(httpexpect.ContentOpts{MediaType: ""}).Object()
	if err := rep.err(); err != nil {
		return "", fmt.Errorf("GET %s: %w", p, err)
	}
	v, _ := obj.Raw()["lastRunID"].(string)
	return v, nil
}

func (w *World) lastRunIDIsNot(run string) error {
	var v struct {
		LastRunID *string `json:"lastRunID"`
	}
	if err := json.Unmarshal(w.resp.Body, &v); err != nil {
		return fmt.Errorf("the thread is not a JSON object: %s", abbreviate(w.resp.Body))
	}
	if v.LastRunID != nil && *v.LastRunID == w.runs[run] {
		return fmt.Errorf("lastRunID already names run %q (%s) while it is still going", run, w.runs[run])
	}
	return nil
}

// waitFinished polls the thread, within the scenario's deadline, until its
// lastRunID names the run (ASYNC-05: completion is reported through it).
func (w *World) waitFinished(run, thread string) error {
	want, ok := w.runs[run]
	if !ok {
		return fmt.Errorf("no run named %q in this scenario", run)
	}
	var lastErr error
	err := check(func(g gomega.Gomega) {
		g.Eventually(func() string {
			v, err := w.lastRunID(thread)
			lastErr = err
			return v
		}).WithTimeout(w.deadline).WithPolling(100*time.Millisecond).Should(gomega.Equal(want),
			"lastRunID of thread %q should come to name run %q", thread, run)
	})
	if err != nil && lastErr != nil {
		return fmt.Errorf("%w (last error: %v)", err, lastErr)
	}
	return err
}

// finishedEventsContain waits until the thread reports the run complete
// (lastRunID), then reads the run's events as JSON, which also waits.
func (w *World) finishedEventsContain(run, thread, want, notWant string) error {
	if _, ok := w.threads[thread]; !ok {
		return fmt.Errorf("no thread named %q in this scenario", thread)
	}
	if err := w.waitFinished(run, thread); err != nil {
		return err
	}
	if _, err := w.fetchEvents(thread, run); err != nil {
		return err
	}
	if err := w.statusIs(200); err != nil {
		return fmt.Errorf("events of run %q: %w", run, err)
	}
	return w.bodyContains(want, notWant)
}

// invokeAndAbort reads an SSE stream and, once an event carries the given
// content, aborts the stream's thread through POST /api/threads/{id}/abort
// while it goes on reading (ASYNC-06). Waiting for the content first makes
// sure the run is under way when the abort lands.
func (w *World) invokeAndAbort(path, content string, doc *godog.DocString) error {
	content, err := w.expand(content)
	if err != nil {
		return need(err)
	}
	prompt, err := w.prompt(doc.Content)
	if err != nil {
		return err
	}
	var abortErr error
	abortStatus := 0
	seen := watchFor(func(f Frame) bool { return hasContent(f, content) })
	abortOnce := func(r *Response) bool {
		if abortStatus != 0 || abortErr != nil || !seen(r) {
			return false
		}
		w.threads["that"] = r.Header.Get("X-SVC-Thread-Id")
		var ab *Response
		if ab, abortErr = w.follow("POST", "/api/threads/${thread:that}/abort", ""); abortErr == nil {
			abortStatus = ab.Status
		}
		return false
	}
	resp, err := w.do(request{method: "POST", path: path, body: &prompt, stop: abortOnce})
	if err != nil {
		return err
	}
	if abortErr != nil {
		return fmt.Errorf("abort: %w", abortErr)
	}
	if abortStatus == 0 {
		return fmt.Errorf("the stream never carried the content %q, so nothing was aborted: %s", content, abbreviate(resp.Body))
	}
	w.saved["abortStatus"] = fmt.Sprint(abortStatus)
	return nil
}

func (w *World) abortedStream(notWant string) error {
	if st, _ := strconv.Atoi(w.saved["abortStatus"]); st < 200 || st > 299 {
		return fmt.Errorf("the abort answered %d, want 2xx", st)
	}
	if err := w.complete(); err != nil {
		return fmt.Errorf("the stream did not end after the abort: %w", err)
	}
	notWant, err := w.expand(notWant)
	if err != nil {
		return need(err)
	}
	if sseHasContent(w.resp.Body, notWant) {
		return fmt.Errorf("the run went on after the abort: the stream carries %q", notWant)
	}
	return nil
}
