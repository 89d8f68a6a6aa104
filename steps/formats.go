package steps

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/cucumber/godog"
	"github.com/onsi/gomega"

	"github.com/invokeconf/invokeconf/checks"
	"github.com/invokeconf/invokeconf/outcome"
	"github.com/invokeconf/invokeconf/sseframe"
)

// formatSteps: the response forms of formats.feature (FMT-*).
func formatSteps(sc *godog.ScenarioContext, w *World) {
	step(sc, `^the response is an SSE stream$`, w.isSSE)
	step(sc, `^the SSE answer is "(.*)"$`, w.sseAnswerIs)
	step(sc, `^the event with content "(.*)" arrived at least (\S+) before the event with content "(.*)"$`, w.eventGap)
	step(sc, `^the response is a JSON envelope whose items' content is "(.*)"$`, w.envelopeAnswerIs)
	step(sc, `^the envelope's last item has runComplete true$`, w.envelopeLastComplete)
	step(sc, `^the body did not begin before (\S+) had passed$`, w.bodyNotBefore)
	step(sc, `^the envelope holds a toolCall with name "(.*)" and a step with description "(.*)"$`, w.envelopeHoldsRicher)
	step(sc, `^every item of the envelope has the same runID and threadID equal to the X-SVC-Thread-Id header$`, w.envelopeItemIDs)
	step(sc, `^the fragments (.+) arrived one by one, each at least (\d+)ms after the one before$`, w.fragmentsSpaced)
	step(sc, `^each of the fragments (.+), produced (\S+) apart, arrived within (\S+) of when it was produced, counted from the first$`, w.fragmentsOnTime)
	step(sc, `^I invoke "([^"]*)" with the prompt below as run "(\w+)" on thread "(\w+)" and disconnect after the content "(.*)":$`, w.invokeAndDisconnect)
	step(sc, `^the events of run "(\w+)" on thread "(\w+)", fetched by its runID as JSON, contain "([^"]*)" but not "([^"]*)"$`, w.disconnectedRunEvents)
	step(sc, `^I invoke "([^"]*)" with the prompt below on thread "(\w+)" and disconnect once the plain text holds "(.*)":$`, w.invokePlainAndDisconnect)
	step(sc, `^the run that thread "(\w+)" reports completed within (\S+), if any, has events that contain "([^"]*)" but not "([^"]*)"$`, w.reportedRunEvents)
	step(sc, `^I invoke "([^"]*)" with a script that says "([^"]*)" (\d+) times, every (\S+)$`, w.invokeDense)
	step(sc, `^the (\d+) fragments "([^"]*)", produced every (\S+), arrived in reads at most (\S+) apart$`, w.denseReads)
	step(sc, `^an item of the envelope has error set$`, w.envelopeHasError)
}

func (w *World) isSSE() error {
	r, err := w.last()
	if err != nil {
		return err
	}
	if mt := r.MediaType(); mt != "text/event-stream" {
		return outcome.Fail("the response's Content-Type", "text/event-stream", strconv.Quote(r.Header.Get("Content-Type")))
	}
	return nil
}

// sseAnswerIs: the concatenated content of the stream's events, as a
// conformant SSE client (go-sse) reads them.
func (w *World) sseAnswerIs(want string) error {
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
	evs, err := w.resp.Events()
	if err != nil {
		return err
	}
	if got := concatContent(evs); got != want {
		return outcome.Fail("the concatenated content of the SSE events", strconv.Quote(want), strconv.Quote(abbreviate([]byte(got))))
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

// eventArrival returns when the first event frame with that content arrived.
func (w *World) eventArrival(content string) (time.Duration, error) {
	frames, err := w.resp.EventFrames()
	if err != nil {
		return 0, err
	}
	for _, f := range frames {
		obj, err := f.Object()
		if err != nil {
			continue
		}
		if obj["content"] == content {
			return f.At, nil
		}
	}
	return 0, outcome.Fail("the SSE stream", fmt.Sprintf("an event with content %q", content), "no such event")
}

func (w *World) eventGap(first, gap, second string) error {
	if err := w.complete(); err != nil {
		return err
	}
	d, err := parseDuration(gap)
	if err != nil {
		return err
	}
	a, err := w.eventArrival(first)
	if err != nil {
		return err
	}
	b, err := w.eventArrival(second)
	if err != nil {
		return err
	}
	if b-a < d {
		return outcome.Failf("the live SSE stream", fmt.Sprintf("%q at least %s after %q", second, d, first),
			"%q at %s and %q at %s, %s apart", first, ms(a), second, ms(b), ms(b-a))
	}
	return nil
}

// envelope returns the items of a complete JSON envelope.
func (w *World) envelope() ([]map[string]any, error) {
	if err := w.complete(); err != nil {
		return nil, err
	}
	return w.resp.EnvelopeItems()
}

func (w *World) envelopeAnswerIs(want string) error {
	if err := w.needEcho(); err != nil {
		return err
	}
	want, err := w.expandQuoted(want)
	if err != nil {
		return err
	}
	items, err := w.envelope()
	if err != nil {
		return err
	}
	if got := concatContent(items); got != want {
		return outcome.Fail("the concatenated content of the envelope's items", strconv.Quote(want), strconv.Quote(abbreviate([]byte(got))))
	}
	return nil
}

// envelopeLastComplete: FMT-02, judged by the passive check.
func (w *World) envelopeLastComplete() error {
	if _, err := w.envelope(); err != nil {
		return err
	}
	return w.judge("FMT-02", checks.AcceptJSON)
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
		return outcome.Failf("the envelope's items", fmt.Sprintf("all events of the run: a toolCall named %q and a step %q", tool, step),
			"toolCall found: %t, step found: %t, in %s", seenTool, seenStep, abbreviate(w.resp.Body))
	}
	return nil
}

// envelopeItemIDs: FMT-07 and EVT-02, every item is an event object with the
// run's ID and the thread's.
func (w *World) envelopeItemIDs() error {
	items, err := w.envelope()
	if err != nil {
		return err
	}
	if len(items) == 0 {
		return outcome.Fail("the envelope's items", "the events of the run", "no items")
	}
	thread := w.resp.Header.Get("X-SVC-Thread-Id")
	if thread == "" {
		return outcome.Fail("the threadID of the envelope's items", "a comparison with the X-SVC-Thread-Id header",
			"threadID cannot be compared: the response has no X-SVC-Thread-Id header")
	}
	run, _ := idString(items[0]["runID"])
	for i, it := range items {
		r, okR := idString(it["runID"])
		t, okT := idString(it["threadID"])
		if !okR || r != run || !okT || t != thread {
			b, _ := json.Marshal(it)
			want := fmt.Sprintf("runID %q as on the first item and threadID %q", run, thread)
			return outcome.Failf(fmt.Sprintf("item %d of the envelope", i), want, "%s", abbreviate(b))
		}
	}
	return nil
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

// fragmentArrivals finds the quoted fragments in order in the plain-text
// body and returns when the last byte of each arrived.
func (w *World) fragmentArrivals(list string) ([]string, []time.Duration, error) {
	if err := w.complete(); err != nil {
		return nil, nil, err
	}
	var frags []string
	for _, m := range quotedArg.FindAllStringSubmatch(list, -1) {
		frags = append(frags, m[1])
	}
	if len(frags) < 2 {
		return nil, nil, fmt.Errorf("want at least two quoted fragments in %q", list)
	}
	body := string(w.resp.Body)
	var at []time.Duration
	from := 0
	for _, f := range frags {
		i := strings.Index(body[from:], f)
		if i < 0 {
			return nil, nil, outcome.Fail("the plain-text body", fmt.Sprintf("the fragments %s in order", list),
				strconv.Quote(abbreviate(w.resp.Body)))
		}
		from += i + len(f)
		at = append(at, w.resp.ArrivalOf(from))
	}
	return frags, at, nil
}

func arrivals(frags []string, at []time.Duration) string {
	var parts []string
	for i, f := range frags {
		parts = append(parts, fmt.Sprintf("%q at %s", f, ms(at[i])))
	}
	return strings.Join(parts, ", ")
}

// fragmentsSpaced checks the plain-text flush (FMT-06): fragments produced
// 800 ms apart, each held at most 500 ms, arrive at least 100 ms apart even
// with 200 ms of network jitter. Text held until the end arrives all at once.
func (w *World) fragmentsSpaced(list string, minGapMS int) error {
	frags, at, err := w.fragmentArrivals(list)
	if err != nil {
		return err
	}
	minGap := time.Duration(minGapMS) * time.Millisecond
	for i := 1; i < len(at); i++ {
		if at[i]-at[i-1] < minGap {
			return outcome.Fail("the plain-text flush", fmt.Sprintf("each fragment at least %s after the one before", minGap),
				arrivals(frags, at))
		}
	}
	return nil
}

// fragmentsOnTime: FMT-06 per fragment. Fragment i is produced i*every after
// the first, and the first was produced no later than it arrived, so it must
// arrive within the hold limit of first+i*every. A steady delay between
// fragments that keeps them apart but lets the hold grow fails here.
func (w *World) fragmentsOnTime(list, every, within string) error {
	step, err := parseDuration(every)
	if err != nil {
		return err
	}
	limit, err := parseDuration(within)
	if err != nil {
		return err
	}
	frags, at, err := w.fragmentArrivals(list)
	if err != nil {
		return err
	}
	for i := 1; i < len(at); i++ {
		if held := at[i] - at[0] - time.Duration(i)*step; held > limit {
			return outcome.Failf(fmt.Sprintf("the plain-text fragment %q", frags[i]),
				fmt.Sprintf("arrival within %s of its production (%s after the first fragment's arrival)", limit, time.Duration(i)*step),
				"held %s: %s", ms(held), arrivals(frags, at))
		}
	}
	return nil
}

// sseHasContent reports whether a (partial) SSE body holds a complete event
// frame with that content.
func sseHasContent(body []byte, content string) bool {
	frames, _ := sseframe.ReadAll(body)
	for _, f := range frames {
		if hasContent(Frame{Frame: f}, content) {
			return true
		}
	}
	return false
}

// hasContent reports whether a frame is a complete event with that content.
func hasContent(f Frame, content string) bool {
	if !f.Terminated || !f.IsEvent() {
		return false
	}
	obj, err := f.Object()
	return err == nil && obj["content"] == content
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
	resp, err := w.invokeStopping(path, prompt, watchFor(func(f Frame) bool { return hasContent(f, content) }))
	if err != nil {
		return err
	}
	if !is2xx(resp.Status) {
		return statusFailure("the SSE invoke", "a 2xx status", resp)
	}
	if resp.Err != errStopped {
		return outcome.Failf("the SSE stream", fmt.Sprintf("an event with content %q", content),
			"the stream ended without it (%v): %s", resp.Err, abbreviate(resp.Body))
	}
	frames, _ := resp.Frames()
	run := runIDOf(frames)
	if run == "" {
		return outcome.Fail("the SSE stream", "events naming their run (runID or id line)", "no event names its run")
	}
	thread := resp.Header.Get("X-SVC-Thread-Id")
	if thread == "" {
		return outcome.Fail("the disconnected stream", "an X-SVC-Thread-Id header", "none")
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
	resp, err := w.invokeStopping(path, prompt, func(r *Response) bool { return strings.Contains(string(r.Body), text) })
	if err != nil {
		return err
	}
	if !is2xx(resp.Status) {
		return statusFailure("the plain-text invoke", "a 2xx status", resp)
	}
	if resp.Err != errStopped {
		return outcome.Failf("the plain-text answer", fmt.Sprintf("text holding %q", text),
			"the answer ended without it (%v): %q", resp.Err, abbreviate(resp.Body))
	}
	thread := resp.Header.Get("X-SVC-Thread-Id")
	if thread == "" {
		return outcome.Fail("the disconnected answer", "an X-SVC-Thread-Id header", "none")
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
	run, err := w.pollLastRunIDFor(thread, limit)
	if err != nil || run == "" {
		return err
	}
	w.runs["reported:"+thread] = run
	if _, err := w.fetchEvents(thread, "reported:"+thread); err != nil {
		return err
	}
	if err := w.status2xx(); err != nil {
		return err
	}
	return w.bodyContains(want, notWant)
}

// pollLastRunIDFor polls the thread's lastRunID until it is set or limit
// has passed; "" when it never was.
func (w *World) pollLastRunIDFor(thread string, limit time.Duration) (string, error) {
	// No run within limit is no failure: a cancelled run need not be
	// reported as completed.
	return eventually(w.ctx, limit, func() (string, error) { return w.lastRunID(thread) },
		gomega.Not(gomega.BeEmpty()), func(string) error { return nil })
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

// denseReads: FMT-06 on a run that produces output every few 100 ms. While
// it produces, text held at most 500 ms (plus the tolerance) arrives in
// reads no further apart than the limit, and the reads span the production
// less the limit (the first text is produced no later than it arrives).
// A flush timer slower than 500 ms leaves a gap wider than the limit.
func (w *World) denseReads(n int, text, every, within string) error {
	step, err := parseDuration(every)
	if err != nil {
		return err
	}
	limit, err := parseDuration(within)
	if err != nil {
		return err
	}
	r, err := w.finished()
	if err != nil {
		return err
	}
	if want := strings.Repeat(text, n); string(r.Body) != want {
		return outcome.Failf("the plain-text body", fmt.Sprintf("%d times %q", n, text), "%q", abbreviate(r.Body))
	}
	reads := r.Reads
	if len(reads) == 0 {
		return outcome.Fail("the plain-text body", "text in reads", "no read")
	}
	for i := 1; i < len(reads); i++ {
		if gap := reads[i].At - reads[i-1].At; gap > limit {
			return outcome.Failf("the plain-text flush", fmt.Sprintf("reads at most %s apart while the run produced text every %s", limit, step),
				"%s between the read ending at byte %d (at %s) and the next (at %s)", ms(gap), reads[i-1].End, ms(reads[i-1].At), ms(reads[i].At))
		}
	}
	produced := time.Duration(n-1) * step
	if span := reads[len(reads)-1].At - reads[0].At; span < produced-limit {
		return outcome.Failf("the plain-text flush", fmt.Sprintf("text produced over %s arriving over at least %s", produced, produced-limit),
			"%d reads over %s", len(reads), ms(span))
	}
	return nil
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
		len(items), abbreviate(w.resp.Body))
}
