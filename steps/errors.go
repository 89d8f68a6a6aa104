package steps

import (
	"github.com/invokeconf/invokeconf/checks"
)

// errorDefs: errors.feature (ERR-*). The problem format's body shape is not
// shown, so only what it must not be is checked.
func errorDefs() []Def {
	return []Def{
		step0(`^the body is not an OpenAI error envelope$`, (*World).notOpenAIError),
	}
}

// notOpenAIError: ERR-10, judged by the passive check.
func (w *World) notOpenAIError() error {
	if _, err := w.finished(); err != nil {
		return err
	}
	return w.judge(checks.ProblemFormat)
}
