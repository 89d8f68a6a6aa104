package steps

import (
	"errors"
	"strings"

	"github.com/invokeconf/invokeconf/checks"
	"github.com/invokeconf/invokeconf/traffic"
)

// judge decides a shared check's rule on the last response, as the
// passive judge decides it (checks.Check.Decide): a failure names the rule
// and the spec words from the checks table. A check that skips leaves the
// rule untested in this scenario, with the check's reason: the exchange
// cannot decide it, which is never a failure by itself.
func (w *World) judge(c checks.Check) error { return w.decide(c) }

// judgeAs is judge for a check made by a constructor (checks.OnThread),
// which no table entry holds: rule names what it decides ("" for the
// scenario's own rule).
func (w *World) judgeAs(rule string, check func(*checks.View, *checks.History) error) error {
	return w.decide(checks.Check{Rule: rule, Judge: check})
}

func (w *World) decide(c checks.Check) error {
	r, err := w.last()
	if err != nil {
		return err
	}
	x := r.View
	w.histMu.Lock()
	defer w.histMu.Unlock()
	err = c.Decide(x, &w.hist)
	if err == nil && c.Rule != "" {
		w.stepChecked = append(w.stepChecked, checks.RuleOn(c.Rule, x))
	}
	var s *checks.Skip
	if errors.As(err, &s) {
		rule := c.Rule
		if rule == "" {
			rule = w.ownRule()
		}
		return &untested{reason: rule + " could not be decided on this answer: " + s.Reason}
	}
	return err
}

// remember adds an exchange of the scenario to its History, so checks over
// several exchanges run as the passive judge runs them. The exchange judged
// may be in it too: no check reads an exchange's own record as earlier.
func (w *World) remember(r *Response) {
	w.histMu.Lock()
	defer w.histMu.Unlock()
	w.hist.Add(r.judged())
}

// maxJudged bounds the body bytes the scenario's History and the run's
// judgement of every exchange read, as the proxy records at most
// --max-record of a body: what a History keeps of a run is small, and
// parsing a huge body for it would hold it several times over. A step's
// own checks read the whole body.
const maxJudged = 1 << 20

// judged returns the view the History and the run judge: r's own, or for a
// body past maxJudged a view of its first maxJudged bytes, marked cut.
func (r *Response) judged() *checks.View {
	r.cutOnce.Do(func() {
		r.cut = r.View
		x := r.Exchange
		if x.Response == nil || len(r.Body()) <= maxJudged {
			return
		}
		cx := *x
		resp := *x.Response
		resp.Body = traffic.Cut(x.Response.Body, maxJudged)
		cx.Response = &resp
		r.cut = checks.NewView(&cx)
	})
	return r.cut
}

// judgeIfDecided runs checks on the last response and fails only on a
// failure: a check that skips did not bear on what the step asserts.
func (w *World) judgeIfDecided(cs ...checks.Check) error {
	r, err := w.last()
	if err != nil {
		return err
	}
	x := r.View
	w.histMu.Lock()
	defer w.histMu.Unlock()
	for _, c := range cs {
		err := c.Decide(x, &w.hist)
		var s *checks.Skip
		if err != nil && !errors.As(err, &s) {
			return err
		}
		if err == nil && c.Rule != "" {
			w.stepChecked = append(w.stepChecked, checks.RuleOn(c.Rule, x))
		}
	}
	return nil
}

// plainForm: FMT-03/04/05, an Accept other than the two literal values (or
// none) gives plain text, not SSE and not the envelope. What the text says
// is the scenario's to check.
func (w *World) plainForm() error {
	return w.judgeIfDecided(checks.AcceptOther, checks.AcceptSSELiteral, checks.AcceptJSONLiteral)
}

// threadHeader: THREAD-04 on a 2xx invoke, when the step reads
// X-SVC-Thread-Id: one value, naming the thread the answer names. Which
// thread it must be is the scenario's to check.
func (w *World) threadHeader(name string) error {
	if !strings.EqualFold(name, "X-SVC-Thread-Id") {
		return nil
	}
	return w.judgeIfDecided(checks.ThreadHeader)
}
