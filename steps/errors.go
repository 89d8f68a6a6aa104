package steps

import (
	"github.com/cucumber/godog"

	"github.com/invokeconf/invokeconf/checks"
)

// errorSteps: errors.feature (ERR-*). The problem format's body shape is not
// shown, so only what it must not be is checked.
func errorSteps(sc *godog.ScenarioContext, w *World) {
	step(sc, `^the body is not an OpenAI error envelope$`, w.notOpenAIError)
}

// notOpenAIError: ERR-10, judged by the passive check.
func (w *World) notOpenAIError() error {
	if _, err := w.finished(); err != nil {
		return err
	}
	return w.judge("ERR-10", checks.ProblemFormat)
}
