package steps

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/cucumber/godog"
	"github.com/onsi/gomega"

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
	step(sc, `^the fragments (.+) arrived one by one, each at least (\d+)ms after the one before$`, w.fragmentsSpaced)
	step(sc, `^I invoke "([^"]*)" with the prompt below and disconnect after the content "(.*)":$`, w.invokeAndDisconnect)
}

func (w *World) isSSE() error {
	if w.resp == nil {
		return fmt.Errorf("no response yet")
	}
	if mt := w.resp.MediaType(); mt != "text/event-stream" {
		return fmt.Errorf("Content-Type %q, want text/event-stream", w.resp.Header.Get("Content-Type"))
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
	return check(func(g gomega.Gomega) {
		g.Expect(concatContent(evs)).To(gomega.Equal(want), "concatenated content of the SSE events")
	})
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
	return 0, fmt.Errorf("no event with content %q in the stream", content)
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
		return fmt.Errorf("%q arrived at %s and %q at %s: %s apart, want at least %s (the stream is not live)",
			first, a.Round(time.Millisecond), second, b.Round(time.Millisecond), (b - a).Round(time.Millisecond), d)
	}
	return nil
}

func (w *World) envelopeAnswerIs(want string) error {
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
	items, err := w.resp.EnvelopeItems()
	if err != nil {
		return err
	}
	return check(func(g gomega.Gomega) {
		g.Expect(concatContent(items)).To(gomega.Equal(want), "concatenated content of the envelope's items")
	})
}

func (w *World) envelopeLastComplete() error {
	items, err := w.resp.EnvelopeItems()
	if err != nil {
		return err
	}
	return check(func(g gomega.Gomega) {
		g.Expect(items).NotTo(gomega.BeEmpty(), "the envelope holds no items")
		g.Expect(items[len(items)-1]).To(gomega.HaveKeyWithValue("runComplete", true),
			"the envelope should hold every event of the run, the final one (runComplete true) last")
	})
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
		return fmt.Errorf("the body began %s after the request, before the run could have ended (%s)",
			first.Round(time.Millisecond), d)
	}
	return nil
}

var quotedArg = regexp.MustCompile(`"([^"]*)"`)

// fragmentsSpaced checks the plain-text flush (FMT-06): fragments produced
// 800 ms apart, each held at most 500 ms, arrive at least 100 ms apart even
// with 200 ms of network jitter. Text held until the end arrives all at once.
func (w *World) fragmentsSpaced(list string, minGapMS int) error {
	if err := w.complete(); err != nil {
		return err
	}
	var frags []string
	for _, m := range quotedArg.FindAllStringSubmatch(list, -1) {
		frags = append(frags, m[1])
	}
	if len(frags) < 2 {
		return fmt.Errorf("want at least two quoted fragments in %q", list)
	}
	minGap := time.Duration(minGapMS) * time.Millisecond
	body := string(w.resp.Body)
	var times []string
	prev, from := time.Duration(-1), 0
	for _, f := range frags {
		i := strings.Index(body[from:], f)
		if i < 0 {
			return fmt.Errorf("fragment %q not found in order in %q", f, body)
		}
		from += i + len(f)
		at := w.resp.ArrivalOf(from)
		times = append(times, fmt.Sprintf("%q at %s", f, at.Round(time.Millisecond)))
		if prev >= 0 && at-prev < minGap {
			return fmt.Errorf("fragments arrived too close together (%s): text was held back longer than 500 ms",
				strings.Join(times, ", "))
		}
		prev = at
	}
	return nil
}

// sseHasContent reports whether a (partial) SSE body holds a complete event
// frame with that content.
func sseHasContent(body []byte, content string) bool {
	frames, _ := sseframe.ReadAll(body)
	for _, f := range frames {
		if !f.Terminated {
			continue
		}
		data, _ := f.Field("data")
		if obj, err := decodeObject([]byte(data)); err == nil && obj["content"] == content {
			return true
		}
	}
	return false
}

// invokeAndDisconnect reads an SSE stream until an event carries the given
// content, then closes the connection.
func (w *World) invokeAndDisconnect(path, content string, doc *godog.DocString) error {
	content, err := w.expand(content)
	if err != nil {
		return need(err)
	}
	prompt, err := w.prompt(doc.Content)
	if err != nil {
		return err
	}
	seen := func(r *Response) bool { return sseHasContent(r.Body, content) }
	rq, err := w.prepared("POST", path, &prompt)
	if err != nil {
		return err
	}
	rq.stop = seen
	resp, err := w.do(rq)
	if err != nil {
		return err
	}
	w.resp = resp
	if resp.Status != 200 {
		return fmt.Errorf("status %d, want 200: %s", resp.Status, abbreviate(resp.Body))
	}
	if resp.Err != errStopped {
		return fmt.Errorf("the stream ended before an event with content %q (%v): %s", content, resp.Err, abbreviate(resp.Body))
	}
	// Remember the run and thread for the follow-up check.
	frames, _ := sseframe.ReadAll(resp.Body)
	for _, f := range frames {
		if id, ok := f.Field("id"); ok && id != "" {
			w.runs["that"] = strings.TrimSuffix(id, ":after")
			break
		}
	}
	if _, ok := w.runs["that"]; !ok {
		return fmt.Errorf("no event frame carried an id line with the run ID")
	}
	w.threads["that"] = resp.Header.Get("X-SVC-Thread-Id")
	if !bytes.Contains(resp.Body, []byte("data:")) {
		return fmt.Errorf("no data frame before the disconnect")
	}
	return nil
}
