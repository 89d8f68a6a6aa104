package steps

import (
	"encoding/json"

	"github.com/cucumber/godog"

	"github.com/invokeconf/invokeconf/outcome"
)

// errorSteps: errors.feature (ERR-*). The problem format's body shape is not
// shown, so only what it must not be is checked.
func errorSteps(sc *godog.ScenarioContext, w *World) {
	step(sc, `^the body is not an OpenAI error envelope$`, w.notOpenAIError)
}

// notOpenAIError: ERR-10. The OpenAI envelope is {"error": {"message": ...,
// "type": ...}}.
func (w *World) notOpenAIError() error {
	r, err := w.finished()
	if err != nil {
		return err
	}
	var v struct {
		Error *struct {
			Message *string `json:"message"`
			Type    *string `json:"type"`
		} `json:"error"`
	}
	if json.Unmarshal(r.Body, &v) == nil && v.Error != nil && v.Error.Message != nil {
		return outcome.Failf("the error body", "the platform's problem format, not the OpenAI error envelope {\"error\":{\"message\":...}}",
			"%s", abbreviate(r.Body))
	}
	return nil
}
