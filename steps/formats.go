package steps

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cucumber/godog"
	"github.com/onsi/gomega"

	"github.com/invokeconf/invokeconf/checks"
	"github.com/invokeconf/invokeconf/outcome"
)

// formatDefs: the response forms of formats.feature (FMT-*).
func formatDefs() []Def {
	return []Def{
		step0(`^the response is an SSE stream$`, (*World).isSSE),
		step1(`^the SSE answer is "(.*)"$`, (*World).sseAnswerIs).AboutRun(),
		step3(`^the event with content "(.*)" arrived at least (\S+) before the event with content "(.*)"$`, (*World).eventGap),
		step1(`^the response is a JSON envelope whose items' content is "(.*)"$`, (*World).envelopeAnswerIs).AboutRun(),
		step0(`^the envelope's last item has runComplete true$`, (*World).envelopeLastComplete),
		step1(`^the body did not begin before (\S+) had passed$`, (*World).bodyNotBefore),
		step2(`^the envelope holds a toolCall with name "(.*)" and a step with description "(.*)"$`, (*World).envelopeHoldsRicher).AboutRun(),
		step0(`^every item of the envelope has the same runID and threadID equal to the X-SVC-Thread-Id header$`, (*World).envelopeItemIDs),
		// The flush's timing is the run's too: a run on a thread another
		// call shares (THREAD-03) may wait for it.
		step2(`^the fragments (.+) arrived one by one, each at least (\d+)ms after the one before$`, (*World).fragmentsSpaced).AboutRun(),
		step3(`^each of the fragments (.+), produced (\S+) apart, arrived within (\S+) of when it was produced, counted from the first$`, (*World).fragmentsOnTime).AboutRun(),
		step5(`^I invoke "([^"]*)" with the prompt below as run "(\w+)" on thread "(\w+)" and disconnect after the content "(.*)":$`, (*World).invokeAndDisconnect),
		step4(`^the events of run "(\w+)" on thread "(\w+)", fetched by its runID as JSON, contain "([^"]*)" but not "([^"]*)"$`, (*World).disconnectedRunEvents),
		step4(`^I invoke "([^"]*)" with the prompt below on thread "(\w+)" and disconnect once the plain text holds "(.*)":$`, (*World).invokePlainAndDisconnect),
		step4(`^the run that thread "(\w+)" reports completed within (\S+), if any, has events that contain "([^"]*)" but not "([^"]*)"$`, (*World).reportedRunEvents),
		step4(`^I invoke "([^"]*)" with a script that says "([^"]*)" (\d+) times, every (\S+)$`, (*World).invokeDense),
		step4(`^the (\d+) fragments "([^"]*)", produced every (\S+), arrived in reads at most (\S+) apart$`, (*World).denseReads).AboutRun(),
		step0(`^an item of the envelope has error set$`, (*World).envelopeHasError).AboutRun(),
	}
}

// isSSE: FMT-01's form, judged by the passive check; every SSE step starts
// with it.
func (w *World) isSSE() error {
	if err := w.status2xx(); err != nil {
		return err
	}
	return w.judge(checks.AcceptSSE)
}

// sseAnswerIs: the concatenated content of the stream's events, as a
// conformant SSE client (go-sse) reads them.
func (w *World) sseAnswerIs(want string) error {
	if err := w.status2xx(); err != nil {
		return err
	}
	if err := w.complete(); err != nil {
		return err
	}
	if err := w.needEcho(); err != nil {
		return err
	}
	want, err := w.expandQuoted(want)
	if err != nil {
		return err
	}
	if _, err := w.resp.Events(); err != nil {
		return err // a data frame that is no JSON object: EVT-01
	}
	if got, _, _ := w.resp.Answer(); got != want {
		// "Concatenating content across events gives the answer": EVT-03.
		return outcome.Fail("the concatenated content of the SSE events", strconv.Quote(want), strconv.Quote(abbreviate([]byte(got)))).Explained("EVT-03")
	}
	return nil
}

// expandQuoted unquotes a step argument and expands its placeholders.
func (w *World) expandQuoted(s string) (string, error) {
	v, err := unquote(s)
	if err != nil {
		return "", err
	}
	v, err = w.expand(v)
	return v, need(err)
}

// eventGap: FMT-01's "live during the run", judged by the passive check
// on the scenario's script: its first and last content, produced apart.
func (w *World) eventGap(first, gap, second string) error {
	d, err := parseDuration(gap)
	if err != nil {
		return err
	}
	if t, ok := w.scriptTiming(); ok {
		n := len(t.Texts)
		if first != t.Texts[0] || second != t.Texts[n-1] {
			return scenarioErrorf("the step names %q and %q, the check times the script's first and last content %q and %q",
				first, second, t.Texts[0], t.Texts[n-1])
		}
		if err := stated("the live gap", d, t.At[n-1]-checks.LiveTolerance); err != nil {
			return err
		}
	}
	if err := w.complete(); err != nil {
		return err
	}
	return w.judge(checks.LiveSSE)
}

// envelope returns the items of the last response, a complete JSON
// envelope.
func (w *World) envelope() ([]map[string]any, error) {
	if err := w.complete(); err != nil {
		return nil, err
	}
	return w.envelopeOf(w.resp)
}

// envelopeOf returns the items of r's JSON envelope: one envelope
// {items:[...]} and nothing after it rests on FMT-02.
func (w *World) envelopeOf(r *Response) ([]map[string]any, error) {
	if err := w.need2xx(r.Method()+" "+r.URL()+": the status", r); err != nil {
		return nil, err
	}
	items, err := r.EnvelopeItems()
	return items, outcome.Claim(err, w.on(r, "FMT-02"))
}

func (w *World) envelopeAnswerIs(want string) error {
	if err := w.needEcho(); err != nil {
		return err
	}
	want, err := w.expandQuoted(want)
	if err != nil {
		return err
	}
	if _, err := w.envelope(); err != nil {
		return err
	}
	if got, _, _ := w.resp.Answer(); got != want {
		// An envelope sent before the run ended (FMT-02) holds less: the
		// failure is the scenario's (FMT-02 where it is about both).
		return outcome.Fail("the concatenated content of the envelope's items", strconv.Quote(want), strconv.Quote(abbreviate([]byte(got)))).
			Explained(w.on(w.resp, "FMT-02"), "EVT-03")
	}
	// "the answer is the concatenation of their content"
	w.passed(w.on(w.resp, "FMT-07"))
	return nil
}

// envelopeLastComplete: FMT-02, judged by the passive check.
func (w *World) envelopeLastComplete() error {
	if _, err := w.envelope(); err != nil {
		return err
	}
	return w.judge(checks.AcceptJSON)
}

// envelopeHoldsRicher: FMT-07, the items are all events of the run, not only
// those with content: the script's tool call and step are among them.
func (w *World) envelopeHoldsRicher(tool, step string) error {
	tool, err := w.expand(tool)
	if err != nil {
		return need(err)
	}
	items, err := w.envelope()
	if err != nil {
		return err
	}
	var seenTool, seenStep bool
	for _, it := range items {
		if m, ok := it["toolCall"].(map[string]any); ok && m["name"] == tool {
			seenTool = true
		}
		if m, ok := it["step"].(map[string]any); ok && m["description"] == step {
			seenStep = true
		}
	}
	if !seenTool || !seenStep {
		// A toolCall without its name, a step without its description,
		// are EVT-05's and EVT-06's.
		return outcome.Failf("the envelope's items", fmt.Sprintf("all events of the run: a toolCall named %q and a step %q", tool, step),
			"toolCall found: %t, step found: %t, in %s", seenTool, seenStep, abbreviate(w.resp.Body())).Explained("EVT-05", "EVT-06")
	}
	return nil
}

// envelopeItemIDs: FMT-07 and EVT-02, every item is an event object with the
// run's ID and the thread's. The step compares with the header it names, so
// an answer without it cannot show the rule; the rest is EventsNameRun's.
func (w *World) envelopeItemIDs() error {
	items, err := w.envelope()
	if err != nil {
		return err
	}
	if len(items) == 0 {
		return outcome.Fail("the envelope's items", "the events of the run", "no items")
	}
	if err := w.judge(checks.ThreadHeader); err != nil {
		return err // threadID is compared with the header
	}
	return w.judge(checks.EventsNameRun)
}

func (w *World) bodyNotBefore(after string) error {
	if err := w.complete(); err != nil {
		return err
	}
	d, err := parseDuration(after)
	if err != nil {
		return err
	}
	if first := w.resp.ArrivalOf(1); first < d {
		return outcome.Failf("the JSON envelope", fmt.Sprintf("no byte before the run ended (%s)", d),
			"the body began %s after the request", ms(first))
	}
	return nil
}

var quotedArg = regexp.MustCompile(`"([^"]*)"`)

// flushLimit is FMT-06's bound with its tolerance, as the check applies it.
const flushLimit = checks.FlushHold + checks.FlushTolerance

// plainFlush: FMT-06, judged by the passive check on the scenario's script
// once the step's figures are found to be the script's: the fragments it
// names and the time between them.
func (w *World) plainFlush(texts []string, every time.Duration) error {
	if t, ok := w.scriptTiming(); ok {
		if !slices.Equal(texts, t.Texts) {
			return scenarioErrorf("the step names the fragments %q, the script says %q", texts, t.Texts)
		}
		for i := 1; i < len(t.At); i++ {
			if err := stated("the time between fragments", every, t.At[i]-t.At[i-1]); err != nil {
				return err
			}
		}
	}
	if _, err := w.finished(); err != nil {
		return err
	}
	return w.judge(checks.PlainFlush)
}

// quotedList returns the quoted fragments of a step's list.
func quotedList(list string) []string {
	var out []string
	for _, m := range quotedArg.FindAllStringSubmatch(list, -1) {
		out = append(out, m[1])
	}
	return out
}

// fragmentsSpaced: FMT-06. Fragments produced 800 ms apart, each held at
// most 500 ms (plus the tolerance), arrive at least 100 ms apart.
func (w *World) fragmentsSpaced(list string, minGapMS int) error {
	t, ok := w.scriptTiming()
	if !ok || len(t.At) < 2 {
		return w.plainFlush(quotedList(list), 0)
	}
	every := t.At[1] - t.At[0]
	if err := stated("the least time between arrivals", time.Duration(minGapMS)*time.Millisecond, every-flushLimit); err != nil {
		return err
	}
	return w.plainFlush(quotedList(list), every)
}

// flushFigures reads a flush step's production step and limit; the limit
// it states (what) must be the one the check applies.
func flushFigures(every, within, what string) (time.Duration, error) {
	step, err := parseDuration(every)
	if err != nil {
		return 0, err
	}
	limit, err := parseDuration(within)
	if err != nil {
		return 0, err
	}
	return step, stated(what, limit, flushLimit)
}

// fragmentsOnTime: FMT-06 per fragment: each arrives within the hold limit
// of its production, counted from the first fragment's arrival.
func (w *World) fragmentsOnTime(list, every, within string) error {
	step, err := flushFigures(every, within, "the hold limit")
	if err != nil {
		return err
	}
	return w.plainFlush(quotedList(list), step)
}

// textNeverCame is the failure of a step that waited for text a stream
// never showed: a stream whose events a client cannot read breaks the rule
// that makes them readable (checks.View.Unreadable), a prerequisite; else
// the step's own failure, which an unreadable event would explain too.
func textNeverCame(r *Response, f *outcome.Failure) *outcome.Failure {
	if rule := r.Unreadable(); rule != "" {
		return f.Breaks(rule)
	}
	return f.Explained("EVT-01", "SSE-02")
}

// contentWatch follows the answer of an SSE stream as it arrives: every
// complete event's content joined (checks.Joiner), however the service
// splits the agent's text into events.
type contentWatch struct{ j checks.Joiner }

// see adds a frame's content; it reports whether the answer so far holds
// text.
func (c *contentWatch) see(f Frame, text string) bool {
	if f.Terminated && f.IsEvent() {
		if data, ok := f.Field("data"); ok {
			var obj map[string]json.RawMessage
			if json.Unmarshal([]byte(data), &obj) == nil {
				c.j.Add(obj["content"])
			}
		}
	}
	return strings.Contains(c.j.Text(), text)
}

// hasContentSoFar returns a frame matcher that is true once the stream's
// answer so far holds text.
func hasContentSoFar(text string) func(Frame) bool {
	var c contentWatch
	return func(f Frame) bool { return c.see(f, text) }
}

// invokeAndDisconnect reads an SSE stream until an event carries the given
// content, then closes the connection, and remembers the run and thread.
func (w *World) invokeAndDisconnect(path, runName, threadName, content string, doc *godog.DocString) error {
	content, err := w.expand(content)
	if err != nil {
		return need(err)
	}
	prompt, err := w.prompt(doc.Content)
	if err != nil {
		return err
	}
	resp, err := w.invokeStopping(path, prompt, watchFor(hasContentSoFar(content)))
	if err != nil {
		return err
	}
	if err := w.need2xx("the SSE invoke", resp); err != nil {
		return err
	}
	if resp.Err != errStopped {
		return textNeverCame(resp, outcome.Failf("the SSE stream", fmt.Sprintf("an event with content %q", content),
			"the stream ended without it (%v): %s", resp.Err, abbreviate(resp.Body())))
	}
	if err := w.heldBack(resp); err != nil {
		return err
	}
	frames, _ := resp.Frames()
	run := runIDOf(frames)
	if run == "" {
		return outcome.Fail("the SSE stream", "events naming their run (runID or id line)", "no event names its run").Breaks("EVT-02")
	}
	thread := resp.Header().Get("X-SVC-Thread-Id")
	if thread == "" {
		return outcome.Fail("the disconnected stream", "an X-SVC-Thread-Id header", "none").Breaks(w.on(resp, "THREAD-04"))
	}
	w.runs[runName], w.threads[threadName] = run, thread
	return nil
}

// disconnectedRunEvents: FMT-08. The events route with runID and Accept:
// application/json stays open until the run finishes, so it answers once the
// cancelled run has ended; a run that went on shows its later content. The
// spec ties lastRunID to completion, which a cancelled run need not reach.
func (w *World) disconnectedRunEvents(run, thread, want, notWant string) error {
	if _, err := w.fetchEvents(thread, run); err != nil {
		return err
	}
	if err := w.status2xx(); err != nil {
		return err
	}
	return w.bodyContains(want, notWant)
}

// invokePlainAndDisconnect reads a plain-text answer until it holds the
// given text, then closes the connection, and remembers the thread.
func (w *World) invokePlainAndDisconnect(path, threadName, text string, doc *godog.DocString) error {
	text, err := w.expand(text)
	if err != nil {
		return need(err)
	}
	prompt, err := w.prompt(doc.Content)
	if err != nil {
		return err
	}
	resp, err := w.invokeStopping(path, prompt, watchText(text))
	if err != nil {
		return err
	}
	if err := w.need2xx("the plain-text invoke", resp); err != nil {
		return err
	}
	if resp.Err != errStopped {
		return outcome.Failf("the plain-text answer", fmt.Sprintf("text holding %q", text),
			"the answer ended without it (%v): %q", resp.Err, abbreviate(resp.Body()))
	}
	if err := w.heldBack(resp); err != nil {
		return err
	}
	thread := resp.Header().Get("X-SVC-Thread-Id")
	if thread == "" {
		return outcome.Fail("the disconnected answer", "an X-SVC-Thread-Id header", "none").Breaks(w.on(resp, "THREAD-04"))
	}
	w.threads[threadName] = thread
	return nil
}

// reportedRunEvents: FMT-08 in the plain-text form, which names no run. A
// run that went on after the disconnect completes when its script ends and
// the thread then reports it (lastRunID): its events must not hold the
// content made after the disconnect. A cancelled run need not be reported
// as completed at all; then there is nothing more to see.
func (w *World) reportedRunEvents(thread, within, want, notWant string) error {
	limit, err := parseDuration(within)
	if err != nil {
		return err
	}
	// A resumed thread reports its earlier run until another completes:
	// a run whose events lack the text said before the disconnect is not
	// this one, and the poll waits for another.
	first, err := w.lastRunID(thread)
	if err != nil {
		return err
	}
	if first != "" {
		ours, err := w.reportedHolds(thread, first, want, notWant)
		if err != nil || ours {
			return err
		}
	}
	run, err := eventually(w.ctx, limit, func() (string, error) { return w.lastRunID(thread) },
		gomega.Satisfy(func(got string) bool { return got != "" && got != first }), func(string) error { return nil })
	if err != nil || run == "" || run == first {
		return err // no other run reported: a cancelled run need not be
	}
	if ours, err := w.reportedHolds(thread, run, want, notWant); err != nil || ours {
		return err
	}
	return w.bodyContains(want, notWant) // a run reported after the disconnect without its text
}

// reportedHolds fetches the events of a run the thread reported and says
// whether they hold want, the text said before the disconnect: when they
// do, the run is the scenario's and its error is bodyContains's.
func (w *World) reportedHolds(thread, run, want, notWant string) (bool, error) {
	w.runs["reported:"+thread] = run
	if _, err := w.fetchEvents(thread, "reported:"+thread); err != nil {
		return false, err
	}
	if err := w.status2xx(); err != nil {
		return false, err
	}
	if want, err := w.expand(want); err != nil {
		return false, err
	} else if r, err := w.finished(); err != nil {
		return false, err
	} else if !strings.Contains(answerOrBody(r), want) {
		return false, nil
	}
	return true, w.bodyContains(want, notWant)
}

// invokeDense invokes a script that says the text n times, pausing between,
// so the run produces output steadily for (n-1)*every.
func (w *World) invokeDense(path, text string, n int, every string) error {
	if _, err := parseDuration(every); err != nil {
		return err
	}
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			fmt.Fprintf(&b, "@pause %s\n", every)
		}
		fmt.Fprintf(&b, "@say %s\n", strconv.Quote(text))
	}
	return w.invoke(path, b.String())
}

// denseReads: FMT-06 on a run that produces output every few 100 ms: its
// text arrives in reads no further apart than the limit, and spread over
// the production less the limit.
func (w *World) denseReads(n int, text, every, within string) error {
	step, err := flushFigures(every, within, "the read gap limit")
	if err != nil {
		return err
	}
	texts := make([]string, n)
	for i := range texts {
		texts[i] = text
	}
	return w.plainFlush(texts, step)
}

// envelopeHasError: FMT-07 and the event's error field. A failed run's
// envelope holds all its events, the one with error set among them.
func (w *World) envelopeHasError() error {
	items, err := w.envelope()
	if err != nil {
		return err
	}
	for _, it := range items {
		if isSet(it, "error") {
			return nil
		}
	}
	return outcome.Failf("the envelope's items", "an item with error set (the run failed)", "%d items, none with error: %s",
		len(items), abbreviate(w.resp.Body())).Explained(w.on(w.resp, "FMT-02"))
}
