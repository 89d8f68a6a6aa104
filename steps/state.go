package steps

import (
	"github.com/invokeconf/invokeconf/outcome"
)

// The scenario's remembered state: the last response, and threads and runs
// by name. Asking for what was never remembered is a mistake of the
// scenario, not of the target, so these errors are not outcome.Failure
// values.

// ErrNoResponse says that a step judges the last response of a scenario
// that has made no request yet: the feature lacks a When step.
var ErrNoResponse error = &HarnessError{msg: "scenario error: no response yet: no request was made before this step"}

// last returns the scenario's last response, the one the When steps keep.
func (w *World) last() (*Response, error) {
	if w.resp == nil {
		return nil, ErrNoResponse
	}
	return w.resp, nil
}

// finished returns the scenario's last response, read to its end.
func (w *World) finished() (*Response, error) {
	r, err := w.last()
	if err != nil {
		return nil, err
	}
	return r, w.readWhole(r)
}

// thread returns the ID of the thread remembered under name.
func (w *World) thread(name string) (string, error) {
	if id, ok := w.threads[name]; ok {
		return id, nil
	}
	return "", scenarioErrorf("no thread named %q has been remembered", name)
}

// run returns the ID of the run remembered under name.
func (w *World) run(name string) (string, error) {
	if id, ok := w.runs[name]; ok {
		return id, nil
	}
	return "", scenarioErrorf("no run named %q has been remembered", name)
}

// statusFailure says that a response's status is not the one a check wants.
func statusFailure(check, want string, r *Response) *outcome.Failure {
	return outcome.Failf(check, want, "status %d, body %s", r.Status(), abbreviate(r.Body()))
}

// is2xx reports whether a status is a success status.
func is2xx(status int) bool { return status >= 200 && status <= 299 }

// bounded cuts target text to what a failure may quote.
func bounded(s string) string { return abbreviate([]byte(s)) }
