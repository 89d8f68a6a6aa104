// Package checks holds rule checks as pure functions of recorded traffic
// (package traffic): given an exchange, and for rules over several
// exchanges what came before it, a check returns nil (the rule held), an
// *outcome.Failure (it broke), or a *Skip (the exchange cannot decide it).
// The passive proxy and the offline judge call them; the active steps can
// call the very same functions on the exchanges they record.
//
// Each check stands beside the spec's words it rests on, h2spec style, and
// decides only on evidence that settles the rule: where the spec leaves a
// choice, or the recording lacks what deciding needs, it skips.
package checks

import (
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/invokeconf/invokeconf/outcome"
	"github.com/invokeconf/invokeconf/traffic"
)

// Skip says that a check did not decide its rule on an exchange.
type Skip struct {
	// Reason says why.
	Reason string
	// Untested is true when the exchange bore on the rule but the recording
	// lacks what deciding needs (chunk timings, a body): the rule is then
	// untested rather than not seen.
	Untested bool
}

func (s *Skip) Error() string { return s.Reason }

// skip returns a Skip for an exchange that does not bear on the rule.
func skip(format string, args ...any) error { return &Skip{Reason: fmt.Sprintf(format, args...)} }

// untested returns a Skip for an exchange that bears on the rule but cannot
// decide it.
func untested(reason string) error { return &Skip{Reason: reason, Untested: true} }

// Reasons a recording cannot decide a rule.
const (
	NoTimings   = "the recording has no chunk timings"
	NoBody      = "the recording keeps no bodies (--redact-bodies)"
	CutBody     = "the recording holds only the start of the body (--max-record)"
	NotRecorded = "the recording holds none of the body"
)

// cutReason says why the recording holds only the start of a body: the
// recorder's own gap, or this harness's --max-record.
func cutReason(b *traffic.Body) string {
	if b.Gap != "" {
		return b.Gap
	}
	return CutBody
}

// missingReason says why the recording holds none of a body.
func missingReason(b *traffic.Body) string {
	if b.Gap != "" {
		return b.Gap
	}
	return NotRecorded
}

// requestText returns the request body's text (an agent script, say), or
// an untested Skip when the recording does not hold it whole.
func requestText(x *traffic.Exchange) (string, error) {
	b := &x.Request.Body
	switch {
	case b.Redacted:
		return "", untested(NoBody)
	case b.Missing:
		return "", untested("the request body: " + missingReason(b))
	case b.Truncated:
		return "", untested("the request body: " + cutReason(b))
	}
	return string(b.Bytes()), nil
}

// Check is one rule's check.
type Check struct {
	// Rule is the catalog ID the check decides.
	Rule string
	// Spec is the spec's words the check rests on.
	Spec string
	// Aspect names the part of the rule the check decides when the rule has
	// several checks ("" for its main one). A rule passes only when every
	// aspect was decided: never on less evidence than the active suite
	// needs.
	Aspect string
	// Judge decides the rule on x; h holds what the exchanges before x
	// showed.
	Judge func(x *View, h *History) error
}

// All returns every check, ordered by rule ID. The slice is shared: the
// caller must not modify it.
func All() []Check { return allChecks() }

var allChecks = sync.OnceValue(func() []Check {
	var all []Check
	for _, group := range [][]Check{formatChecks, liveChecks, sseChecks, threadChecks, followupChecks, errorChecks, eventChecks, bundleChecks} {
		all = append(all, group...)
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].Rule < all[j].Rule })
	return all
})

// Aspects returns the aspects of each rule's checks.
func Aspects() map[string][]string {
	out := map[string][]string{}
	for _, c := range All() {
		out[c.Rule] = append(out[c.Rule], c.Aspect)
	}
	return out
}

// Rules returns the IDs of the rules traffic can decide.
func Rules() []string {
	var ids []string
	seen := map[string]bool{}
	for _, c := range All() {
		if !seen[c.Rule] {
			seen[c.Rule] = true
			ids = append(ids, c.Rule)
		}
	}
	return ids
}

// History is what the exchanges judged so far showed, for rules over
// several exchanges. The zero value is empty and ready.
type History struct {
	// ReportLag, when set, replaces DefaultReportLag: how long after a
	// run surely completed the thread's follow-ups must show it.
	ReportLag time.Duration
	// Defer makes the identity checks wait, on an answer whose names of
	// its thread disagree, for the follow-ups that show the run's thread
	// (identity.go): the passive judgement holds the whole recording. An
	// active step decides at once, each check on its own view, and the
	// report's reconcile blames one rule.
	Defer bool
	// redact hides the body's names in the failures of disputes
	// (Judgement.RedactBodies).
	redact bool

	threads  map[string]bool
	named    map[string]time.Time // when a response surely named the thread
	resolved map[string]bool
	runs     map[string][]*runRecord  // by thread, in the order they were added
	aborts   map[string][]abortRecord // by thread
	// newThreads are the threads the X-SVC-Thread-Id response header of a
	// call that named none named, with that exchange's ID.
	newThreads map[string]int
	disputes   []*dispute // disputed answers no follow-up settled yet, oldest first
	evicted    []*dispute // disputes dropped past maxDisputes, for Judgement to blame
}

// Thread reports whether an earlier response named the thread.
func (h *History) Thread(id string) bool { return h != nil && h.threads[id] }

// NamedBefore reports whether a response had named the thread before t:
// its headers had arrived. Exchanges end in any order (a stream outlives
// the calls it starts), so "earlier" is by time, not by judging order.
func (h *History) NamedBefore(id string, t time.Time) bool {
	if h == nil {
		return false
	}
	at, ok := h.named[id]
	return ok && at.Before(t)
}

// NamedAnyBefore reports whether a response had named any thread before t.
func (h *History) NamedAnyBefore(t time.Time) bool {
	if h == nil {
		return false
	}
	for _, at := range h.named {
		if at.Before(t) {
			return true
		}
	}
	return false
}

// Resolved reports whether an earlier invoke of that path ({id} of an
// agent route, {project_id} of a project route) was answered 2xx: its {id}
// resolves.
func (h *History) Resolved(inv Invoke) bool { return h != nil && h.resolved[resolveKey(inv)] }

func resolveKey(inv Invoke) string {
	if inv.Project {
		return "project/" + inv.ID
	}
	return "agent/" + inv.ID
}

// Add records what x shows: the threads its response names, the {id} it
// resolved, the run it started (its thread, how the call chose it, when
// its answer showed it complete, an agent script's content as it arrived)
// and an abort it made. Runs are kept per thread, the last
// maxRunsPerThread of at most maxRunThreads threads.
func (h *History) Add(x *View) {
	if h.threads == nil {
		h.threads, h.resolved, h.named = map[string]bool{}, map[string]bool{}, map[string]time.Time{}
		h.runs, h.aborts = map[string][]*runRecord{}, map[string][]abortRecord{}
	}
	if x.Response == nil {
		return
	}
	// Before the threads below: a run's selection rule reads what came
	// before it.
	h.settle(x)
	h.addRun(x)
	h.addAbort(x)
	if inv, ok := InvokeOf(x); ok && x.Response.Status/100 == 2 && inv.ThreadSegment == "" {
		h.resolved[resolveKey(inv)] = true
	}
	name := func(id string) {
		h.threads[id] = true
		if x.Response.HeaderAt < 0 || x.Start.IsZero() {
			return // unknown when: never counts as earlier
		}
		at := latest(x, x.Response.HeaderAt)
		if old, ok := h.named[id]; !ok || at.Before(old) {
			h.named[id] = at
		}
	}
	if t := x.Response.Header.Get(threadHeader); t != "" && x.Response.Gaps.Of(threadHeader) == "" {
		name(t)
		if inv, err := invoked(x); err == nil && selectionRule(x, inv, h) == "THREAD-03" && len(h.newThreads) < maxRunThreads {
			if h.newThreads == nil {
				h.newThreads = map[string]int{}
			}
			h.newThreads[t] = x.ID
		}
	}
	if a, ok := asyncAck(x); ok {
		name(a.ThreadID)
	}
}

// Result is one check's outcome on one exchange.
type Result struct {
	Rule     string
	Aspect   string
	Spec     string
	Exchange int
	// Failure is set when the rule broke.
	Failure *outcome.Failure
	// Skip is set when the exchange did not decide the rule.
	Skip *Skip
	// Err is set when the check itself broke (a harness error).
	Err error
}

// Passed reports whether the exchange decided the rule and it held.
func (r Result) Passed() bool { return r.Failure == nil && r.Skip == nil && r.Err == nil }

// Exchange runs every check on x, then adds x to h.
func Exchange(x *View, h *History) []Result {
	var out []Result
	for _, c := range All() {
		out = append(out, run(c, x, h))
	}
	h.Add(x)
	return out
}

func run(c Check, x *View, h *History) (r Result) {
	r = Result{Rule: RuleOn(c.Rule, x), Aspect: c.Aspect, Spec: c.Spec, Exchange: x.ID}
	defer func() {
		if p := recover(); p != nil {
			r.Err = fmt.Errorf("check %s panicked: %v", c.Rule, p)
		}
	}()
	err := c.Decide(x, h)
	var s *Skip
	switch {
	case err == nil:
	case errors.As(err, &s):
		r.Skip = s
	default:
		if f, ok := outcome.AsFailure(err); ok {
			r.Failure = f
		} else {
			r.Err = err
		}
	}
	return r
}

// Decide runs the check on x: nil when the rule held, a *Skip when x
// cannot decide it, or an *outcome.Failure that names the check's rule and,
// unless the check quoted other words, its spec words. The passive judge and
// the active steps both decide through it, so a failure carries its rule
// from the check that found it.
func (c Check) Decide(x *View, h *History) error {
	err := c.Judge(x, h)
	if f, ok := outcome.AsFailure(err); ok {
		if f.Rule == "" {
			f.Rule = RuleOn(c.Rule, x)
		}
		if f.Spec == "" {
			f.Spec = c.Spec
		}
	}
	return err
}

// projectMirrors are the agent-route rules that PROJ-03 states again for
// the project routes: "Project routes behave identically to the agent
// routes (same response body, same X-SVC-Thread-Id response header, same
// Accept variants, same async parameter)".
var projectMirrors = map[string]bool{
	"BODY-01": true, "BODY-02": true,
	"THREAD-01": true, "THREAD-02": true, "THREAD-03": true, "THREAD-04": true,
	"FMT-01": true, "FMT-02": true, "FMT-03": true, "FMT-04": true, "FMT-05": true, "FMT-06": true,
	"ASYNC-01": true, "ASYNC-07": true,
}

// RuleOn returns the rule a check of rule decides on x: on a project
// route, an agent-route rule that PROJ-03 states again for the project
// routes is PROJ-03 (a project route that breaks it breaks PROJ-03, not
// the agent routes' rule); otherwise rule itself.
func RuleOn(rule string, x *View) string {
	inv, ok := InvokeOf(x)
	return ruleOnRoute(rule, ok && inv.Project)
}

// ruleOnRoute is RuleOn for a call known to be on a project route or not.
func ruleOnRoute(rule string, project bool) string {
	if project && projectMirrors[rule] {
		return "PROJ-03"
	}
	return rule
}
