package steps

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/cucumber/godog"

	"github.com/invokeconf/invokeconf/checks"
	"github.com/invokeconf/invokeconf/outcome"
)

// eventDefs: the event objects of events.feature (EVT-*).
func eventDefs() []Def {
	return []Def{
		step0(`^every data frame of the run holds one JSON object$`, (*World).dataFramesAreObjects),
		step0(`^no event has more than one richer field set$`, (*World).atMostOneRicher),
		step0(`^every event has runID equal to its id line and threadID equal to the X-SVC-Thread-Id header$`, (*World).eventIDs),
		step1(`^an event has toolCall with name "(.*)"$`, func(w *World, v string) error { return w.innerField("toolCall", "name", v) }).Asserts("EVT-05").AboutRun(),
		step1(`^an event has step with description "(.*)"$`, func(w *World, v string) error { return w.innerField("step", "description", v) }).Asserts("EVT-06").AboutRun(),
		step2(`^an event has prompt with message "(.*)" and sensitive (true|false), and carries fields$`, (*World).promptEvent).AboutRun(),
		step2(`^I invoke "([^"]*)" with the prompt "(.*)" and stop reading at the first prompt event$`, func(w *World, path, text string) error {
			text, err := unquote(text)
			if err != nil {
				return err
			}
			return w.invokeUntilPrompt(path, text)
		}),
		step2(`^I invoke "([^"]*)" with the prompt below and stop reading at the first prompt event:$`, func(w *World, path string, doc *godog.DocString) error { return w.invokeUntilPrompt(path, doc.Content) }),
		step2(`^an event has (waitingOnModel|toolInput) set before the first event with (content|toolCall)$`, (*World).setBefore).AboutRun(),
		step0(`^the step event comes before the events that belong to the step$`, func(w *World) error { return w.judge(checks.StepAhead) }).AboutRun(),
	}
}

// invokeUntilPrompt reads an SSE stream up to its first event with a prompt
// set, then goes away: a run that needs input may wait for it and never end
// (nothing in the spec says it goes on without it).
func (w *World) invokeUntilPrompt(path, text string) error {
	prompt, err := w.prompt(text)
	if err != nil {
		return err
	}
	_, err = w.invokeStopping(path, prompt, watchFor(func(f Frame) bool {
		if !f.Terminated || !f.IsEvent() {
			return false
		}
		obj, err := f.Object()
		return err == nil && isSet(obj, "prompt")
	}))
	return err
}

// dataFramesAreObjects: EVT-01, judged by the passive check on the frames
// read (up to the prompt event where the scenario stopped).
func (w *World) dataFramesAreObjects() error {
	frames, err := w.framesRead()
	if err != nil {
		return err
	}
	// The check passes a stream without data frames, which shows nothing
	// of EVT-01: the scenario's run has some.
	if !slices.ContainsFunc(frames, Frame.IsEvent) {
		return outcome.Fail("the SSE stream", "the run's data frames", "no data frame")
	}
	return w.judge(checks.DataIsObject)
}

// events returns the event objects of an SSE response read to its end or
// to where the scenario stopped reading.
func (w *World) events() ([]map[string]any, error) { return w.eventsRead() }

func quoteEvent(ev map[string]any) string {
	b, _ := json.Marshal(ev)
	return abbreviate(b)
}

// atMostOneRicher: EVT-04, the passive check's: no event sets more than
// one richer field (null, false, 0, "", {} and [] are not set).
func (w *World) atMostOneRicher() error {
	return w.judge(checks.OneRicherField)
}

// eventIDs: EVT-02, judged by the passive check: every event carries
// runID and threadID naming one run and the thread of the X-SVC-Thread-Id
// header (without the header the threadID cannot be compared, and the
// check's skip fails the step). "runID equal to its id line" is SSE-02's
// "an id: line holding the run ID", given EVT-02's one run: its check
// compares each id line with the run the events name.
func (w *World) eventIDs() error {
	if err := w.judge(checks.ThreadHeader); err != nil {
		return err
	}
	if err := w.judge(checks.EventsNameRun); err != nil {
		return err
	}
	return w.judgeIfDecided(checks.IDBeforeData)
}

// innerField: EVT-05 and EVT-06. That every event with the richer field
// carries the inner field clients read is the passive check's; that one
// names what the script did is the scenario's.
func (w *World) innerField(field, inner, want string) error {
	want, err := w.expand(want)
	if err != nil {
		return need(err)
	}
	check := checks.ToolCallName
	if field == "step" {
		check = checks.StepDescription
	}
	if err := w.judge(check); err != nil {
		return err
	}
	// The events of an SSE stream (read up to where the scenario stopped)
	// or of a JSON envelope, whichever form the request asked for.
	var evs []map[string]any
	if w.resp != nil && w.resp.MediaType() == "application/json" {
		evs, err = w.responseEvents(w.resp)
	} else {
		evs, err = w.events()
	}
	if err != nil {
		return err
	}
	for _, ev := range evs {
		if m, ok := ev[field].(map[string]any); ok && m[inner] == want {
			return nil
		}
	}
	return outcome.Failf("the run's events", fmt.Sprintf("an event with %s.%s = %q", field, inner, want),
		"%d events without it: %s", len(evs), abbreviate(w.resp.Body()))
}

// promptEvent: EVT-07. The passive check judges each prompt event against
// the script's @ask line of its message (sensitive, fields); the step's
// words must say what that line says, and the scenario wants the event to
// be there.
func (w *World) promptEvent(message, sensitive string) error {
	r, err := w.last()
	if err != nil {
		return err
	}
	sens, fields, ok := checks.ScriptAsk(r.View, message)
	if !ok || strconv.FormatBool(sens) != sensitive || !fields {
		return scenarioErrorf("the step states a prompt %q, sensitive %s, with fields; the script's @ask lines say: found %t, sensitive %t, fields %t",
			message, sensitive, ok, sens, fields)
	}
	if err := w.judge(checks.PromptCarries); err != nil {
		return err
	}
	evs, err := w.events()
	if err != nil {
		return err
	}
	for _, ev := range evs {
		if p, ok := ev["prompt"].(map[string]any); ok && isSet(ev, "prompt") && p["message"] == message {
			return nil
		}
	}
	return outcome.Failf("the SSE events", fmt.Sprintf("a prompt event with message %q", message), "%d events without one: %s",
		len(evs), abbreviate(w.resp.Body()))
}

// setBefore: EVT-08 and EVT-09, where the spec's words give an order,
// judged by checks.SetBefore.
func (w *World) setBefore(field, later string) error {
	err := w.judgeAs(map[string]string{"waitingOnModel": "EVT-08", "toolInput": "EVT-09"}[field], checks.SetBefore(field, later))
	if r := w.resp; r != nil && r.MediaType() == "application/json" {
		// The envelope's items are the run's events: an envelope that
		// leaves some out (FMT-07) or came before the run ended (FMT-02)
		// explains a signal missing from them.
		return outcome.Explain(err, w.on(r, "FMT-07"), w.on(r, "FMT-02"))
	}
	return err
}
