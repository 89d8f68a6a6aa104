package steps

import (
	"fmt"
	"strings"
	"time"

	"github.com/cucumber/godog"
	"github.com/onsi/gomega"
)

// sseSteps: byte-level SSE framing of sse.feature (SSE-*), read with the raw
// frame reader because a conformant parser hides comments and frame order.
func sseSteps(sc *godog.ScenarioContext, w *World) {
	step(sc, `^the (first|last) frame is "event: (\w+)" with data "(.*)"$`, w.controlFrame)
	step(sc, `^the first frame arrived at least (\S+) before the first content$`, w.startBeforeContent)
	step(sc, `^every event frame is an id line holding the run ID, then one data line$`, w.eventFramesIDThenData)
	step(sc, `^the last event frame has the id "<run ID>:after", runComplete true and empty content$`, w.finalEventFrame)
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
	if err := w.isSSE(); err != nil {
		return nil, err
	}
	frames, err := w.resp.Frames()
	if err != nil {
		return nil, err
	}
	if len(frames) == 0 {
		return nil, fmt.Errorf("the stream holds no frame")
	}
	return frames, nil
}

// nonComment drops frames that are only comments.
func nonComment(frames []Frame) []Frame {
	var out []Frame
	for _, f := range frames {
		if !f.IsComment() {
			out = append(out, f)
		}
	}
	return out
}

// controlFrame: SSE-01 (start first) and SSE-05 (close last), each with data
// {} and ended by a blank line.
func (w *World) controlFrame(which, event, data string) error {
	frames, err := w.frames()
	if err != nil {
		return err
	}
	frames = nonComment(frames)
	f := frames[0]
	if which == "last" {
		f = frames[len(frames)-1]
	}
	return check(func(g gomega.Gomega) {
		ev, _ := f.Field("event")
		g.Expect(ev).To(gomega.Equal(event), "the %s frame should be event: %s, got:\n%s", which, event, f.String())
		d, _ := f.Field("data")
		g.Expect(strings.TrimSpace(d)).To(gomega.Equal(data), "the %s frame's data", which)
		g.Expect(f.Terminated).To(gomega.BeTrue(), "the %s frame should end with a blank line", which)
	})
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

func (w *World) startBeforeContent(gap string) error {
	d, err := parseDuration(gap)
	if err != nil {
		return err
	}
	frames, err := w.frames()
	if err != nil {
		return err
	}
	first := nonComment(frames)[0]
	content, ok := firstContent(frames)
	if !ok {
		return fmt.Errorf("no event with content in the stream")
	}
	if content.At-first.At < d {
		return fmt.Errorf("the first frame arrived at %s and the first content at %s: the stream did not open at once",
			first.At.Round(time.Millisecond), content.At.Round(time.Millisecond))
	}
	return nil
}

// runIDOf returns the run ID the events name: their runID field, or the id
// line of the first event frame when no event names one.
func runIDOf(frames []Frame) string {
	for _, f := range frames {
		if !f.IsEvent() {
			continue
		}
		if obj, err := f.Object(); err == nil {
			if r, _ := obj["runID"].(string); r != "" {
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

// eventFramesIDThenData: SSE-02. The final event's id carries ":after" and is
// checked by SSE-03.
func (w *World) eventFramesIDThenData() error {
	frames, err := w.frames()
	if err != nil {
		return err
	}
	run := runIDOf(frames)
	return check(func(g gomega.Gomega) {
		g.Expect(run).NotTo(gomega.BeEmpty(), "no event names its run")
		n := 0
		for _, f := range frames {
			if !f.IsEvent() {
				continue
			}
			n++
			g.Expect(f.Fields()).To(gomega.Equal([]string{"id", "data"}),
				"an event frame should be an id line then one data line, got:\n%s", f.String())
			id, _ := f.Field("id")
			g.Expect(strings.TrimSuffix(id, ":after")).To(gomega.Equal(run), "the id line should hold the run ID, frame:\n%s", f.String())
		}
		g.Expect(n).To(gomega.BeNumerically(">", 0), "the stream holds no event frame")
	})
}

// finalEventFrame: SSE-03.
func (w *World) finalEventFrame() error {
	frames, err := w.frames()
	if err != nil {
		return err
	}
	var last *Frame
	for i := range frames {
		if frames[i].IsEvent() {
			last = &frames[i]
		}
	}
	if last == nil {
		return fmt.Errorf("the stream holds no event frame")
	}
	run := runIDOf(frames)
	obj, err := last.Object()
	if err != nil {
		return err
	}
	return check(func(g gomega.Gomega) {
		id, _ := last.Field("id")
		g.Expect(id).To(gomega.Equal(run+":after"), "the last event's id, frame:\n%s", last.String())
		g.Expect(obj).To(gomega.HaveKeyWithValue("runComplete", true), "the last event should have runComplete true")
		if c, ok := obj["content"]; ok {
			g.Expect(c).To(gomega.Equal(""), "the last event's content should be empty")
		}
	})
}

// pingWithin: SSE-04. A comment whose text is "ping" must arrive no later
// than the limit after the event that began the quiet. The spec's 20 s plus
// 1.5 s tolerance is written in the scenario.
func (w *World) pingWithin(limit, content string) error {
	d, err := parseDuration(limit)
	if err != nil {
		return err
	}
	frames, err := w.frames()
	if err != nil {
		return err
	}
	quietFrom, err := w.eventArrival(content)
	if err != nil {
		return err
	}
	for _, f := range frames {
		if f.At < quietFrom {
			continue
		}
		for _, l := range f.Lines {
			if l.IsComment() && strings.TrimSpace(l.Value) == "ping" {
				if f.At-quietFrom > d {
					return fmt.Errorf("the first \": ping\" came %s after the quiet began, want at most %s",
						(f.At - quietFrom).Round(time.Millisecond), d)
				}
				return nil
			}
		}
	}
	return fmt.Errorf("no \": ping\" comment arrived during %s of quiet",
		(w.resp.End() - quietFrom).Round(time.Millisecond))
}

// nothingAfterComplete: SSE-06.
func (w *World) nothingAfterComplete() error {
	frames, err := w.frames()
	if err != nil {
		return err
	}
	complete := false
	for _, f := range frames {
		if !f.IsEvent() {
			continue
		}
		if complete {
			return fmt.Errorf("an event follows the runComplete event:\n%s", f.String())
		}
		if obj, err := f.Object(); err == nil && obj["runComplete"] == true {
			complete = true
		}
	}
	if !complete {
		return fmt.Errorf("no event has runComplete true")
	}
	return nil
}

// errorEvent: SSE-07.
func (w *World) errorEvent() error {
	if err := w.complete(); err != nil {
		return err
	}
	evs, err := w.resp.Events()
	if err != nil {
		return err
	}
	for _, ev := range evs {
		if isSet(ev, "error") {
			return nil
		}
	}
	return fmt.Errorf("no event has error set; events: %s", abbreviate(w.resp.Body))
}
