package steps

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cucumber/godog"

	"github.com/invokeconf/invokeconf/features"
	"github.com/invokeconf/invokeconf/outcome"
)

// What a step's error becomes. Every step's error passes World.settle once,
// where it is made (the step table binds each step through it), and leaves
// as one of three kinds, already cleaned for any reader:
//
//   - untested: the profile or the target lacks a prerequisite (Untested);
//   - a harness error: the scenario is written wrong (HarnessError);
//   - a failure: the target broke a rule, named in the failure (Failed).

// maxMessage bounds a step's failure message, and maxActual the actual
// value of a failure; both are redacted before they are cut.
const (
	maxMessage = 4 << 10
	maxActual  = 1 << 10
)

// Failed is a step's settled failure: the target broke Failure.Rule. Its
// message may say more than the Failure (context the step wrapped around
// it). Everything in it is cleaned: keys appear as the environment
// variables that hold them, no piece of a secret shows, and target bytes
// are bounded and printable.
type Failed struct {
	*outcome.Failure
	msg string
}

func (e *Failed) Error() string { return e.msg }

// Unwrap lets errors.As find the Failure.
func (e *Failed) Unwrap() error { return e.Failure }

// HarnessError says the scenario itself is wrong (a step names a thread it
// never opened, states a figure the check does not apply): the harness
// broke, whatever the target did.
type HarnessError struct{ msg string }

func (e *HarnessError) Error() string { return e.msg }

// IsHarnessError reports whether err says the harness broke.
func IsHarnessError(err error) bool {
	var h *HarnessError
	return errors.As(err, &h)
}

// scenarioErrorf returns a HarnessError: a mistake of the scenario, not of
// the target.
func scenarioErrorf(format string, args ...any) error {
	return &HarnessError{msg: "scenario error: " + fmt.Sprintf(format, args...)}
}

// untested marks a scenario that cannot run because the profile or the
// target lacks a prerequisite. It wraps godog.ErrSkip so the scenario is
// never green.
type untested struct{ reason string }

func (u *untested) Error() string { return "untested: " + u.reason }
func (u *untested) Unwrap() error { return godog.ErrSkip }

// Untested returns the reason when err says a scenario could not run.
func Untested(err error) (string, bool) {
	var u *untested
	if errors.As(err, &u) {
		return u.reason, true
	}
	return "", false
}

// settle makes a step's error what godog and every report see. A failure
// keeps the rule the check or prerequisite that made it named; one that
// names none breaks the rule the step asserts (Def.Rule), else the
// scenario's own rule. An error of any other kind from a step is the
// target's doing too (the steps turn what they cannot read into failures
// where they can name a better rule) and becomes a failure the same way.
func (w *World) settle(d *Def, err error) error {
	held := w.stepChecked
	w.stepChecked = nil
	switch {
	case err == nil:
		w.checked = append(w.checked, held...)
		if d.Rule != "" {
			w.checked = append(w.checked, d.Rule)
		}
		return nil
	case errors.Is(err, godog.ErrPending):
		return err
	}
	if reason, ok := Untested(err); ok {
		return &untested{reason: w.cleanText(reason, maxMessage)}
	}
	if IsHarnessError(err) {
		return &HarnessError{msg: w.cleanText(err.Error(), maxMessage)}
	}
	f, ok := outcome.AsFailure(err)
	if !ok {
		f = outcome.Fail("the target's answer", "an answer the step can judge", err.Error())
	}
	c := *f
	c.ExplainedBy = slices.Clone(c.ExplainedBy)
	if d.AboutTheRun && w.resp != nil {
		c.Explained(w.runRules(w.resp)...)
	}
	if c.Rule == "" {
		c.Rule = d.Rule
	}
	if c.Rule == "" {
		c.Rule = w.ownRule()
	}
	c.Explained(restsOn(c.Rule)...)
	c.ExplainedBy = slices.DeleteFunc(slices.Clone(c.ExplainedBy), func(r string) bool { return r == c.Rule })
	c.Check = w.cleanText(c.Check, maxMessage)
	c.Expected = w.cleanText(c.Expected, maxMessage)
	c.Actual = w.cleanText(c.Actual, maxActual)
	c.Spec = w.cleanText(c.Spec, maxMessage)
	if note := w.redirectNote(); note != "" && !strings.Contains(c.Actual, "Location") {
		c.Actual += note
	}
	msg := c.Error()
	if ok && err.Error() != f.Error() {
		// The step wrapped context around the failure: keep it.
		msg = w.cleanText(err.Error(), maxMessage) + w.redirectNote()
	}
	return &Failed{Failure: &c, msg: msg}
}

// Settled reports whether err is a step's error as settle made it: cleaned
// already, so a reader shows it as it is.
func Settled(err error) bool {
	var f *Failed
	var h *HarnessError
	var u *untested
	return errors.As(err, &f) || errors.As(err, &h) || errors.As(err, &u)
}

// ownRule is the scenario's own rule: the first rule its tags name. A
// failure that no check or step named a rule for breaks it.
func (w *World) ownRule() string {
	if rules := features.RulesOf(w.tags); len(rules) > 0 {
		return rules[0]
	}
	return ""
}

// passed records that the running step's check of rule passed: the rule
// is checked once the step passes (stepChecked, as decide records it).
func (w *World) passed(rule string) { w.stepChecked = append(w.stepChecked, rule) }

// checkedInFull records, in a step that judges several rules each on its
// own, that the rules its checks passed so far (decide) and rules hold
// whatever the step's later checks find.
func (w *World) checkedInFull(rules ...string) {
	w.checked = append(append(w.checked, w.stepChecked...), rules...)
	w.stepChecked = nil
}

// Checked returns the scenario's own rules, other than the one its failure
// breaks, that it checked in full before failing: a step that asserts the
// rule (Def.Rule), or a check of it, passed, and the failing step was the
// scenario's last, failing on one of the scenario's own rules, so no later
// step had more of the rule to check. (A last step that failed on a
// prerequisite never reached its own check, whatever rule that was.) Each
// counts as a pass of the rule, not as blocked by the failure. Nil for any
// other scenario.
func (w *World) Checked() []string {
	if w.firstErr == nil || !w.failedLast {
		return nil
	}
	f, ok := outcome.AsFailure(w.firstErr)
	own := features.RulesOf(w.tags)
	if !ok || !slices.Contains(own, f.Rule) {
		return nil
	}
	cause := f.Rule
	var out []string
	for _, id := range own {
		if id != cause && slices.Contains(w.checked, id) && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// restsOn is what the catalog says a rule's scenarios observe it through
// (features.Rule.RestsOn).
func restsOn(rule string) []string {
	idx, err := features.RuleIndex()
	if err != nil {
		return nil
	}
	return idx[rule].RestsOn
}
