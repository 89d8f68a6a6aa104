package steps

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cucumber/godog"
	"github.com/onsi/gomega"
)

// eventSteps: the event objects of events.feature (EVT-*).
func eventSteps(sc *godog.ScenarioContext, w *World) {
	step(sc, `^every data frame of the run holds one JSON object$`, w.dataFramesAreObjects)
	step(sc, `^no event has more than one richer field set$`, w.atMostOneRicher)
	step(sc, `^every event has runID equal to its id line and threadID equal to the X-SVC-Thread-Id header$`, w.eventIDs)
	step(sc, `^an event has toolCall with name "(.*)"$`, func(v string) error { return w.innerField("toolCall", "name", v) })
	step(sc, `^an event has step with description "(.*)"$`, func(v string) error { return w.innerField("step", "description", v) })
	step(sc, `^an event has prompt with message "(.*)" and sensitive (true|false), and carries fields$`, w.promptEvent)
	step(sc, `^an event has (waitingOnModel|toolInput) set$`, w.fieldSet)
}

// dataFramesAreObjects: EVT-01, on the raw frames so that a frame a parser
// would merge or drop is still seen.
func (w *World) dataFramesAreObjects() error {
	frames, err := w.frames()
	if err != nil {
		return err
	}
	for _, f := range frames {
		if !f.IsEvent() {
			continue
		}
		if _, err := f.Object(); err != nil {
			return fmt.Errorf("%w, frame:\n%s", err, f.String())
		}
	}
	return nil
}

// events returns the event objects of a complete SSE response.
func (w *World) events() ([]map[string]any, error) {
	if _, err := w.frames(); err != nil {
		return nil, err
	}
	return w.resp.Events()
}

// atMostOneRicher: EVT-04.
func (w *World) atMostOneRicher() error {
	evs, err := w.events()
	if err != nil {
		return err
	}
	for _, ev := range evs {
		var set []string
		for _, f := range richerFields {
			if isSet(ev, f) {
				set = append(set, f)
			}
		}
		if len(set) > 1 {
			b, _ := json.Marshal(ev)
			return fmt.Errorf("an event sets %s: %s", strings.Join(set, " and "), b)
		}
	}
	return nil
}

// eventIDs: EVT-02.
func (w *World) eventIDs() error {
	frames, err := w.frames()
	if err != nil {
		return err
	}
	thread := w.resp.Header.Get("X-SVC-Thread-Id")
	return check(func(g gomega.Gomega) {
		n := 0
		for _, f := range frames {
			if !f.IsEvent() {
				continue
			}
			n++
			obj, err := f.Object()
			g.Expect(err).NotTo(gomega.HaveOccurred())
			id, _ := f.Field("id")
			g.Expect(obj).To(gomega.HaveKeyWithValue("runID", strings.TrimSuffix(id, ":after")), "runID of event:\n%s", f.String())
			if thread != "" {
				g.Expect(obj).To(gomega.HaveKeyWithValue("threadID", thread), "threadID of event:\n%s", f.String())
			} else {
				g.Expect(obj["threadID"]).To(gomega.BeAssignableToTypeOf(""), "threadID of event:\n%s", f.String())
			}
		}
		g.Expect(n).To(gomega.BeNumerically(">", 0), "the stream holds no event")
	})
}

// innerField: EVT-05 and EVT-06, an event whose richer field carries the
// inner field clients read.
func (w *World) innerField(field, inner, want string) error {
	want, err := w.expand(want)
	if err != nil {
		return need(err)
	}
	evs, err := w.events()
	if err != nil {
		return err
	}
	for _, ev := range evs {
		if m, ok := ev[field].(map[string]any); ok && m[inner] == want {
			return nil
		}
	}
	return fmt.Errorf("no event has %s.%s = %q; events: %s", field, inner, want, abbreviate(w.resp.Body))
}

// promptEvent: EVT-07. The inner structure of fields is not shown, so only
// its presence is checked.
func (w *World) promptEvent(message, sensitive string) error {
	evs, err := w.events()
	if err != nil {
		return err
	}
	for _, ev := range evs {
		p, ok := ev["prompt"].(map[string]any)
		if !ok {
			continue
		}
		return check(func(g gomega.Gomega) {
			g.Expect(p).To(gomega.HaveKeyWithValue("message", message))
			g.Expect(p).To(gomega.HaveKeyWithValue("sensitive", sensitive == "true"))
			g.Expect(p).To(gomega.HaveKey("fields"))
		})
	}
	return fmt.Errorf("no event has a prompt object; events: %s", abbreviate(w.resp.Body))
}

// fieldSet: EVT-08, EVT-09.
func (w *World) fieldSet(field string) error {
	evs, err := w.events()
	if err != nil {
		return err
	}
	for _, ev := range evs {
		if isSet(ev, field) {
			return nil
		}
	}
	return fmt.Errorf("no event has %s set; events: %s", field, abbreviate(w.resp.Body))
}
