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

// notOpenAIError: ERR-10. The OpenAI envelope is {"error": {"message",
// "type", "param", "code"}}. Many platform problem formats also carry
// error.message, and their shape is not shown: only a body with message and
// type as strings and param or code beside them is the OpenAI envelope.
func (w *World) notOpenAIError() error {
	r, err := w.finished()
	if err != nil {
		return err
	}
	if isOpenAIError(r.Body) {
		return outcome.Failf("the error body",
			"the platform's problem format, not the OpenAI error envelope {\"error\":{\"message\",\"type\",\"param\",\"code\"}}",
			"%s", abbreviate(r.Body))
	}
	return nil
}

func isOpenAIError(body []byte) bool {
	var v struct {
		Error map[string]json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &v) != nil || v.Error == nil {
		return false
	}
	isString := func(name string) bool {
		raw := v.Error[name]
		return len(raw) > 0 && raw[0] == '"'
	}
	_, param := v.Error["param"]
	_, code := v.Error["code"]
	return isString("message") && isString("type") && (param || code)
}
