package steps

import (
	"fmt"
	"strings"
	"time"

	"github.com/cucumber/godog"

	"github.com/invokeconf/invokeconf/checks"
	"github.com/invokeconf/invokeconf/outcome"
)

// sseSteps: byte-level SSE framing of sse.feature (SSE-*), read with the raw
// frame reader because a conformant parser hides comments and frame order.
func sseSteps(sc *godog.ScenarioContext, w *World) {
	step(sc, `^the (first|last) frame is "event: (\w+)" with data "(.*)"$`, w.controlFrame)
	step(sc, `^the first frame arrived at least (\S+) before the first content$`, w.startBeforeContent)
	step(sc, `^every event frame is an id line holding the run ID, then one data line$`, w.eventFramesIDThenData)
	step(sc, `^the last event frame has the id "<run ID>:after", runComplete true and empty content$`, w.finalEventFrame)
	step(sc, `^I invoke "([^"]*)" with the prompt below and stop reading at the first ": ping" comment after the content "(.*)":$`, w.invokeUntilPing)
	step(sc, `^a ": ping" comment arrived within (\S+) after the event with content "(.*)"$`, w.pingWithin)
	step(sc, `^no event frame follows the event with runComplete true$`, w.nothingAfterComplete)
	step(sc, `^an event has error set$`, w.errorEvent)
}

// frames returns the last response's frames after checking it is a complete
// SSE response.
func (w *World) frames() ([]Frame, error) {
	if err := w.complete(); err != nil {
		return nil, err
	}
	return w.sseFrames()
}

// framesRead returns the frames of the last response read to its end, or
// to where the scenario stopped reading on purpose; a frame the stop cut
// short is left out, as a client that goes away never sees it.
func (w *World) framesRead() ([]Frame, error) {
	r, err := w.last()
	if err != nil {
		return nil, err
	}
	if r.Err != errStopped {
		if err := r.complete(); err != nil {
			return nil, err
		}
	}
	frames, err := w.sseFrames()
	if err != nil {
		return nil, err
	}
	if n := len(frames); r.Err == errStopped && !frames[n-1].Terminated {
		frames = frames[:n-1]
	}
	return frames, nil
}

// eventsRead returns the event objects of framesRead, as a conformant SSE
// client reads them.
func (w *World) eventsRead() ([]map[string]any, error) {
	frames, err := w.framesRead()
	if err != nil {
		return nil, err
	}
	body := w.resp.Body
	if w.resp.Err == errStopped {
		end := 0
		if len(frames) > 0 {
			end = frames[len(frames)-1].End
		}
		body = body[:end]
	}
	return eventsOf(body)
}

// sseFrames returns the frames of the last response, read to its end or
// stopped on purpose by the scenario.
func (w *World) sseFrames() ([]Frame, error) {
	if err := w.isSSE(); err != nil {
		return nil, err
	}
	frames, err := w.resp.Frames()
	if err != nil {
		return nil, err
	}
	if len(frames) == 0 {
		return nil, outcome.Fail("the SSE stream", "at least one frame", "an empty body")
	}
	return frames, nil
}

// nonComment drops comment lines, and fails when nothing else is left.
func nonComment(frames []Frame) ([]Frame, error) {
	var out []Frame
	for _, f := range frames {
		if !f.IsComment() {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		return nil, outcome.Failf("the SSE stream", "frames beside comment lines",
			"%d comment lines and no frame", len(frames))
	}
	return out, nil
}

// controlFrame: SSE-01 (start first) and SSE-05 (close last), judged by
// the checks the passive judge runs.
func (w *World) controlFrame(which, event, data string) error {
	if _, err := w.frames(); err != nil {
		return err
	}
	switch {
	case which == "first" && event == "start" && data == "{}":
		return w.judge("SSE-01", checks.StartFirst)
	case which == "last" && event == "close" && data == "{}":
		return w.judge("SSE-05", checks.CloseAtEnd)
	}
	return fmt.Errorf("no rule checks the %s frame event: %s with data %s", which, event, data)
}

// firstContent returns the first event frame whose content is not empty.
func firstContent(frames []Frame) (Frame, bool) {
	for _, f := range frames {
		if !f.IsEvent() {
			continue
		}
		if obj, err := f.Object(); err == nil {
			if s, _ := obj["content"].(string); s != "" {
				return f, true
			}
		}
	}
	return Frame{}, false
}

// startBeforeContent: SSE-01. The scenario's script pauses before its first
// content; the start frame must not wait for it.
func (w *World) startBeforeContent(gap string) error {
	d, err := parseDuration(gap)
	if err != nil {
		return err
	}
	frames, err := w.frames()
	if err != nil {
		return err
	}
	others, err := nonComment(frames)
	if err != nil {
		return err
	}
	first := others[0]
	content, ok := firstContent(frames)
	if !ok {
		return outcome.Fail("the SSE stream", "an event with content", "no event with content")
	}
	if content.At-first.At < d {
		return outcome.Failf("the start frame", fmt.Sprintf("at least %s before the first content", d),
			"the first frame at %s and the first content at %s", ms(first.At), ms(content.At))
	}
	return nil
}

func ms(d time.Duration) time.Duration { return d.Round(time.Millisecond) }

// runIDOf returns the run ID the events name: their runID field, or the id
// line of the first event frame when no event names one.
func runIDOf(frames []Frame) string {
	for _, f := range frames {
		if !f.IsEvent() {
			continue
		}
		if obj, err := f.Object(); err == nil {
			if r, ok := idString(obj["runID"]); ok {
				return r
			}
		}
	}
	for _, f := range frames {
		if id, ok := f.Field("id"); ok && f.IsEvent() {
			return strings.TrimSuffix(id, ":after")
		}
	}
	return ""
}

// eventFramesIDThenData: SSE-02.
func (w *World) eventFramesIDThenData() error {
	if _, err := w.frames(); err != nil {
		return err
	}
	return w.judge("SSE-02", checks.IDBeforeData)
}

// finalEventFrame: SSE-03.
func (w *World) finalEventFrame() error {
	if _, err := w.frames(); err != nil {
		return err
	}
	return w.judge("SSE-03", checks.FinalAfter)
}

// isPing reports whether a frame is a ": ping" comment line.
func isPing(f Frame) bool {
	return f.IsComment() && strings.TrimSpace(f.Lines[0].Value) == "ping"
}

// invokeUntilPing: SSE-04 reads the stream until the first ping after the
// content that begins the quiet, then goes away (the run is cancelled), so
// the scenario lasts the keepalive interval and not the whole script.
func (w *World) invokeUntilPing(path, content string, doc *godog.DocString) error {
	prompt, err := w.prompt(doc.Content)
	if err != nil {
		return err
	}
	quiet := false
	stop := watchFor(func(f Frame) bool {
		if quiet {
			return isPing(f)
		}
		if f.IsEvent() {
			obj, err := f.Object()
			quiet = err == nil && obj["content"] == content
		}
		return false
	})
	_, err = w.invokeStopping(path, prompt, stop)
	return err
}

// pingWithin: SSE-04. A comment whose text is "ping" must arrive no later
// than the limit after the event that began the quiet, timed by the end of
// the comment's own line. The spec's 20 s plus 1.5 s tolerance is written
// in the scenario. The response may have been stopped at the ping.
func (w *World) pingWithin(limit, content string) error {
	d, err := parseDuration(limit)
	if err != nil {
		return err
	}
	frames, err := w.sseFrames()
	if err != nil {
		return err
	}
	quietFrom := -1
	for i, f := range frames {
		if obj, err := f.Object(); err == nil && f.IsEvent() && obj["content"] == content {
			quietFrom = i
			break
		}
	}
	if quietFrom < 0 {
		return outcome.Fail("the SSE stream", fmt.Sprintf("an event with content %q", content), "no such event")
	}
	from := frames[quietFrom].At
	for _, f := range frames[quietFrom+1:] {
		if !isPing(f) {
			continue
		}
		if f.At-from > d {
			return outcome.Failf("the keepalive", fmt.Sprintf(`a ": ping" comment within %s of quiet`, d),
				`the first ": ping" %s after the quiet began`, ms(f.At-from))
		}
		return nil
	}
	how := "the stream ended"
	if !w.resp.Complete && w.resp.Err != nil {
		how = w.resp.Err.Error()
	}
	return outcome.Failf("the keepalive", fmt.Sprintf(`a ": ping" comment within %s of quiet`, d),
		"no \": ping\" comment during %s of quiet (%s)", ms(w.resp.End()-from), how)
}

// nothingAfterComplete: SSE-06.
func (w *World) nothingAfterComplete() error {
	if _, err := w.frames(); err != nil {
		return err
	}
	return w.judge("SSE-06", checks.NothingAfterComplete)
}

// errorEvent: SSE-07, judged by the passive check on the scenario's script
// that fails after content.
func (w *World) errorEvent() error {
	if _, err := w.finished(); err != nil {
		return err
	}
	return w.judge("SSE-07", checks.FailureAsEvent)
}
