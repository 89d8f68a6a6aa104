package steps

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/invokeconf/invokeconf/checks"
	"github.com/invokeconf/invokeconf/internal/lateness"
	"github.com/invokeconf/invokeconf/traffic"
)

// Exchange returns the response as recorded traffic, so the active steps
// judge a rule with the very check the passive judge runs: each read is a
// timed chunk, and how reading ended is the body's end (a scenario that
// stopped reading on purpose is a client that went away).
func (r *Response) Exchange() *traffic.Exchange {
	req := &http.Request{Method: r.Method, Header: r.ReqHeader}
	req.URL, _ = url.Parse(r.URL)
	if req.URL == nil {
		req.URL = &url.URL{}
	}
	pieces := make([]traffic.Timed, 0, len(r.Reads))
	from := 0
	for _, rd := range r.Reads {
		pieces = append(pieces, traffic.Timed{At: rd.At, Data: r.Body[from:rd.End]})
		from = rd.End
	}
	end := traffic.EndComplete
	switch {
	case r.Err == errStopped:
		end = traffic.EndClientGone
	case !r.Complete:
		end = traffic.EndError
	}
	hr := &http.Response{StatusCode: r.Status, Header: r.Header}
	x := traffic.FromHTTP(r.Sent, req, r.ReqBody, hr, pieces, nil, end)
	x.Response.HeaderAt = r.HeadersAt
	x.Stalls, x.Probed = lateness.During(r.Sent, r.End())
	return x
}

// judge decides a shared check's rule on the last response, as the
// passive judge decides it (checks.Check.Decide): a failure names the rule
// and the spec words from the checks table. A check that skips leaves the
// rule untested in this scenario, with the check's reason: the exchange
// cannot decide it, which is never a failure by itself.
func (w *World) judge(check func(*traffic.Exchange, *checks.History) error) error {
	c, ok := checks.Of(check)
	if !ok {
		return scenarioErrorf("judge: a check that is not in the checks table (use judgeAs)")
	}
	return w.decide(c)
}

// judgeAs is judge for a check made by a constructor (checks.OnThread),
// which no table entry holds: rule names what it decides ("" for the
// scenario's own rule).
func (w *World) judgeAs(rule string, check func(*traffic.Exchange, *checks.History) error) error {
	return w.decide(checks.Check{Rule: rule, Judge: check})
}

func (w *World) decide(c checks.Check) error {
	r, err := w.last()
	if err != nil {
		return err
	}
	x := r.Exchange()
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
// Past maxRemembered a body is kept as the proxy keeps one past
// --max-record, cut: what History reads of a run is small, and reading a
// huge body again would hold it twice.
func (w *World) remember(r *Response) {
	w.histMu.Lock()
	defer w.histMu.Unlock()
	if len(r.Body) <= maxRemembered {
		w.hist.Add(r.Exchange())
		return
	}
	cut := *r
	cut.Body = r.Body[:maxRemembered]
	var reads []Read
	for _, rd := range r.Reads {
		if rd.End > maxRemembered {
			reads = append(reads, Read{At: rd.At, End: maxRemembered})
			break
		}
		reads = append(reads, rd)
	}
	cut.Reads = reads
	x := cut.Exchange()
	x.Response.Body.Truncated = true
	x.Response.Body.Size = int64(len(r.Body))
	w.hist.Add(x)
}

// maxRemembered bounds the body bytes remember reads.
const maxRemembered = 256 << 10

// judgeIfDecided runs checks on the last response and fails only on a
// failure: a check that skips did not bear on what the step asserts.
func (w *World) judgeIfDecided(cs ...func(*traffic.Exchange, *checks.History) error) error {
	r, err := w.last()
	if err != nil {
		return err
	}
	x := r.Exchange()
	w.histMu.Lock()
	defer w.histMu.Unlock()
	for _, fn := range cs {
		c, ok := checks.Of(fn)
		if !ok {
			return scenarioErrorf("judgeIfDecided: a check that is not in the checks table")
		}
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
