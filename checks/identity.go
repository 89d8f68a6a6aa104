package checks

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/invokeconf/invokeconf/outcome"
)

// Thread identity. An invoke's answer names its run's thread in up to
// three places, each under its own rule: the X-SVC-Thread-Id header
// (THREAD-04), the async acknowledgement's threadID (ASYNC-01, "Thread of
// the run (new or resumed)") and the events' threadID (EVT-02, "Thread the
// event belongs to"); the request names the thread the selection rules
// (THREAD-01/02/03) say the run must be on. When they all agree, the run is
// on that thread and only the selection rules judge it. When they
// disagree, one name lies, and each rule's check would blame a different
// one: the passive judgement (History.Defer) then waits for the
// recording's follow-ups to show on which thread the run is (a thread
// that answers 404 is none; the events route with runID, or lastRunID,
// places the run; a lastRunID that stayed on an earlier run once the run
// surely completed rules its thread out), blames the names that differ
// from it and judges the selection rules on it. What nothing settles is
// blamed at the end on the fewest broken rules that explain it (Summary).

// Names is what an invoke's request and answer say of the run's thread.
type Names struct {
	// Requested is the thread the request names by the selection rules
	// ("" for a new thread); Why says who named it.
	Requested, Why string
	// Rule is the selection rule that chose the thread: THREAD-01,
	// THREAD-02, THREAD-03, or "" (a thread in {id}, or not known).
	Rule string
	// Header, Ack and Events are the answer's names: the single
	// X-SVC-Thread-Id value, the acknowledgement's threadID, the first
	// non-empty threadID of the events ("" for none).
	Header, Ack, Events string
	// Run is the run the answer names ("" for none).
	Run string
}

// namesOf reads an invoke's names; ok is false for any other exchange, an
// answer that is not 2xx, or a recording that lost the request's or the
// response's X-SVC-Thread-Id.
func namesOf(x *View, h *History) (Names, bool) {
	inv, err := invoked(x)
	if err != nil || responseGap(x, threadHeader) != nil {
		return Names{}, false
	}
	var n Names
	n.Requested, n.Why = requestedThread(x, inv, h)
	n.Rule = selectionRule(x, inv, h)
	if n.Requested == "" && n.Rule != "THREAD-03" {
		if inv.ThreadSegment == "" && requestGap(x, threadHeader) != nil {
			return Names{}, false // the request's thread is not known
		}
	}
	if vs := x.Response.Header.Values(threadHeader); len(vs) == 1 {
		n.Header = vs[0]
	}
	if a, ok := asyncAck(x); ok {
		n.Ack, n.Run = a.ThreadID, a.RunID
	}
	if evs, ok := eventsOf(x); ok {
		for _, e := range evs {
			if n.Run == "" && e.RunID != nil {
				n.Run = *e.RunID
			}
			if n.Events == "" && e.ThreadID != nil && *e.ThreadID != "" {
				n.Events = *e.ThreadID
			}
		}
	}
	return n, true
}

// named returns the answer's names with the rule each one breaks when it
// is not the run's thread, header first.
func (n Names) named() (names, rules []string) {
	for _, p := range []struct{ name, rule string }{{n.Header, "THREAD-04"}, {n.Ack, "ASYNC-01"}, {n.Events, "EVT-02"}} {
		if p.name != "" {
			names, rules = append(names, p.name), append(rules, p.rule)
		}
	}
	return names, rules
}

// Agreed returns the thread the run is on when the names leave no doubt:
// every name of the answer is that thread, and the header is among them
// or the request named that thread or none. An answer without the header
// whose other names differ from the requested thread is disputed: the
// request and the answer disagree and no header says which is right.
func (n Names) Agreed() (string, bool) {
	names, _ := n.named()
	if len(names) == 0 {
		return "", false
	}
	for _, v := range names[1:] {
		if v != names[0] {
			return "", false
		}
	}
	if n.Header == "" && n.Requested != "" && names[0] != n.Requested {
		return "", false
	}
	return names[0], true
}

// Disputed reports whether the names disagree.
func (n Names) Disputed() bool {
	names, _ := n.named()
	_, ok := n.Agreed()
	return len(names) > 0 && !ok
}

// candidates are the threads the run may be on: each name, and the
// requested thread.
func (n Names) candidates() []string {
	var out []string
	for _, v := range []string{n.Requested, n.Header, n.Ack, n.Events} {
		if v != "" && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// String lists the names for a failure: `header "a", async answer "b",
// events "c", requested "d" (the thread segment of the path)`.
func (n Names) String() string {
	var parts []string
	for _, p := range []struct{ what, v string }{{"header", n.Header}, {"async answer", n.Ack}, {"events", n.Events}} {
		if p.v != "" {
			parts = append(parts, fmt.Sprintf("%s %q", p.what, p.v))
		}
	}
	if n.Requested != "" {
		parts = append(parts, fmt.Sprintf("requested %q (%s)", n.Requested, n.Why))
	} else if n.Rule == "THREAD-03" {
		parts = append(parts, "requested a new thread")
	}
	return strings.Join(parts, ", ")
}

// pending is the Skip of an identity check on a disputed answer while the
// judgement waits for the follow-ups.
func pending(n Names) error {
	return skip("the answer's names of its thread disagree (%s): the recording's follow-ups decide which one lies", n)
}

// deferred reports whether x's identity check waits for the follow-ups:
// the judgement defers (History.Defer) and x's names disagree.
func deferred(x *View, h *History) (Names, bool) {
	if h == nil || !h.Defer {
		return Names{}, false
	}
	n, ok := namesOf(x, h)
	return n, ok && n.Disputed()
}

// dispute is a disputed answer the judgement holds until a follow-up shows
// the run's thread.
type dispute struct {
	names   Names
	id      int       // the exchange
	request string    // its method and URL
	status  int       // its status
	start   time.Time // when it was sent, for THREAD-03 (a new thread)
	project bool      // a project route: the agent routes' rules are PROJ-03
	run     *runRecord
	// out are the candidates a follow-up ruled out, with why.
	out map[string]string
}

// maxDisputes bounds the disputes History holds; past it the oldest is
// blamed by default at once (Judgement.Add).
const maxDisputes = 256

// Blame is what a settled (or defaulted) dispute breaks: per rule (the
// agent routes' ID; dispute.rule maps it on a project route), the
// failure.
type Blame map[string]*outcome.Failure

// blame judges a dispute once its run's thread is known: each name that
// differs breaks its rule; the selection rule is judged on the thread;
// why says how the thread is known. Rules that the dispute decided and
// that hold map to nil.
func (d *dispute) blame(thread, why string, h *History) Blame {
	b := Blame{}
	names, rules := d.names.named()
	for i, v := range names {
		rule := rules[i]
		if v == thread {
			if _, ok := b[rule]; !ok {
				b[rule] = nil
			}
			continue
		}
		b[rule] = outcome.Failf(fmt.Sprintf("the %s of exchange #%d (%s)", nameWhat(rules[i]), d.id, d.request),
			fmt.Sprintf("the run's thread, %q (%s)", thread, why), "%q", v)
	}
	if rule := d.names.Rule; rule != "" {
		switch {
		case d.names.Requested != "" && thread != d.names.Requested:
			b[rule] = outcome.Failf(fmt.Sprintf("the thread of the run of exchange #%d (%s)", d.id, d.request),
				fmt.Sprintf("%q, %s", d.names.Requested, d.names.Why), "%q (%s)", thread, why)
		case d.names.Requested == "" && h.NamedBefore(thread, d.start):
			b[rule] = outcome.Failf(fmt.Sprintf("the thread of exchange #%d (%s), a call that names none", d.id, d.request),
				"a new thread", "%q (%s), which a response had named before the call", thread, why)
		default:
			if _, ok := b[rule]; !ok {
				b[rule] = nil
			}
		}
	}
	if h != nil && h.redact {
		for _, f := range b {
			if f != nil {
				d.redactNames(&f.Check, &f.Expected, &f.Actual)
			}
		}
	}
	return b
}

// redactNames hides, under --redact-bodies, the names the dispute read
// from the answer's body (the acknowledgement's, the events'), unless a
// header or the URL shows them too: the failure of a follow-up quotes
// them, and redacting the follow-up's bodies would not find them.
func (d *dispute) redactNames(texts ...*string) {
	for _, v := range []string{d.names.Ack, d.names.Events, d.names.Run} {
		if len(v) < minBodyRun || v == d.names.Header || v == d.names.Requested || strings.Contains(d.request, v) {
			continue
		}
		for _, t := range texts {
			*t = strings.ReplaceAll(*t, v, BodyTextRedacted)
		}
	}
}

// rule is the rule a check of rule decides on the dispute's route
// (RuleOn).
func (d *dispute) rule(rule string) string { return ruleOnRoute(rule, d.project) }

func nameWhat(rule string) string {
	switch rule {
	case "THREAD-04":
		return threadHeader + " response header"
	case "ASYNC-01":
		return "threadID of the async answer"
	}
	return "events' threadID"
}

// defaultThread is the thread a dispute nothing settled is judged on: the
// candidate that the fewest broken rules explain (each name that differs
// breaks its rule, a thread other than the requested one breaks the
// selection rule); of equals, the requested thread, then the answer's
// body (its events or acknowledgement, written by the run), then the
// header.
func (d *dispute) defaultThread() string {
	best, bestLies, bestRank := "", 0, 0
	for _, c := range d.names.candidates() {
		if _, out := d.out[c]; out {
			continue
		}
		lies := 0
		names, _ := d.names.named()
		for _, v := range names {
			if v != c {
				lies++
			}
		}
		if d.names.Requested != "" && c != d.names.Requested {
			lies++
		}
		rank := 3
		switch c {
		case d.names.Requested:
			rank = 0
		case d.names.Events, d.names.Ack:
			rank = 1
		case d.names.Header:
			rank = 2
		}
		if best == "" || lies < bestLies || lies == bestLies && rank < bestRank {
			best, bestLies, bestRank = c, lies, rank
		}
	}
	return best
}

// defaultBlame blames a dispute that no follow-up settled.
func (d *dispute) defaultBlame(h *History) Blame {
	t := d.defaultThread()
	if t == "" {
		return nil
	}
	return d.blame(t, "no follow-up in the recording shows the run's thread: judged on the thread the fewest broken rules explain", h)
}

// left returns the candidates no follow-up ruled out.
func (d *dispute) left() []string {
	var out []string
	for _, c := range d.names.candidates() {
		if _, ok := d.out[c]; !ok {
			out = append(out, c)
		}
	}
	return out
}

// settling is what a follow-up shows of a dispute: the run's thread (and
// why), or candidates it rules out.
type settling struct {
	d      *dispute
	thread string
	why    string
	out    map[string]string
}

// settlements returns what follow-up x shows of the disputes History
// holds: GET /api/threads/{id} or its events route answered 404 rules the
// thread out (it does not exist); the events route with the run's runID
// answered 2xx with its events, or lastRunID naming the run, places the run
// on the thread; lastRunID naming a run that had completed on the thread
// before the run was sent, once the run surely completed more than the
// report lag before, rules the thread out.
func (h *History) settlements(x *View) []settling {
	if h == nil || len(h.disputes) == 0 || x.Response == nil || x.Request.Method != "GET" {
		return nil
	}
	rt := x.Route()
	if rt.Kind != RouteThread && rt.Kind != RouteEvents {
		return nil
	}
	t := rt.ID
	isEvents := rt.Kind == RouteEvents
	var out []settling
	for _, d := range h.disputes {
		if !slices.Contains(d.left(), t) {
			continue
		}
		s := settling{d: d}
		switch st := x.Response.Status; {
		case st == 404:
			s.out = map[string]string{t: fmt.Sprintf("%s %s answered 404 (exchange #%d)", x.Request.Method, x.Request.Path(), x.ID)}
		case st/100 != 2 || d.names.Run == "":
		case isEvents:
			vs := x.Route().Query["runID"]
			evs, ok := eventsOf(x)
			if len(vs) == 1 && vs[0] == d.names.Run && ok && slices.ContainsFunc(evs, func(e eventObject) bool {
				return e.RunID != nil && *e.RunID == d.names.Run
			}) {
				s.thread, s.why = t, fmt.Sprintf("the events route of thread %q delivered run %q's events (exchange #%d)", t, d.names.Run, x.ID)
			}
		default:
			got, ok := LastRunID(x.Body())
			switch {
			case !ok || !x.Response.Body.Complete():
			case got == d.names.Run:
				s.thread, s.why = t, fmt.Sprintf("lastRunID of thread %q is run %q (exchange #%d)", t, got, x.ID)
			case d.run != nil && !d.run.done.IsZero() && d.run.done.Add(h.reportLag()).Before(earliest(x)):
				if r := h.run(t, got); r != nil && !r.done.IsZero() && r.done.Before(d.run.sent) {
					s.out = map[string]string{t: fmt.Sprintf("lastRunID of thread %q stayed on its earlier run %q after run %q completed (exchange #%d)",
						t, got, d.names.Run, x.ID)}
				}
			}
		}
		if s.thread == "" && len(s.out) > 0 {
			var left []string
			for _, c := range d.left() {
				if _, ok := s.out[c]; !ok {
					left = append(left, c)
				}
			}
			if len(left) == 1 {
				s.thread = left[0]
				for _, why := range s.out {
					s.why = why + ", the only other thread named"
				}
			}
		}
		if s.thread != "" || len(s.out) > 0 {
			out = append(out, s)
		}
	}
	return out
}

// settle applies what follow-up x shows: a dispute whose run's thread is
// known leaves History, its run recorded on that thread.
func (h *History) settle(x *View) {
	for _, s := range h.settlements(x) {
		for c, why := range s.out {
			s.d.out[c] = why
		}
		if s.thread == "" {
			continue
		}
		h.disputes = slices.DeleteFunc(h.disputes, func(d *dispute) bool { return d == s.d })
		if r := s.d.run; r != nil {
			r.thread = s.thread
			h.keepRun(r)
		}
	}
}

// hold keeps a disputed answer until a follow-up settles it; past
// maxDisputes the oldest goes to evicted, for Judgement to blame at once.
func (h *History) hold(x *View, n Names, r *runRecord) {
	inv, _ := InvokeOf(x)
	d := &dispute{names: n, id: x.ID, request: x.Request.Method + " " + x.Request.URL, status: x.Response.Status,
		start: earliest(x), project: inv.Project, run: r, out: map[string]string{}}
	if len(h.disputes) >= maxDisputes {
		h.evicted = append(h.evicted, h.disputes[0])
		h.disputes = h.disputes[1:]
	}
	h.disputes = append(h.disputes, d)
}

// Settled returns the check of rule over follow-ups: the blame of each
// dispute the follow-up settles (the names that differ from the run's
// thread, the selection rule judged on it).
func Settled(rule string) func(*View, *History) error {
	return func(x *View, h *History) error {
		decided := false
		for _, s := range h.settlements(x) {
			if s.thread == "" {
				continue
			}
			f, ok := s.d.blame(s.thread, s.why, h)[rule]
			if f != nil {
				return f.Breaks(s.d.rule(rule))
			}
			// A project route's pass is PROJ-03's, which this check
			// cannot name: it decides nothing there.
			decided = decided || ok && s.d.rule(rule) == rule
		}
		if !decided {
			return skip("settles no disputed answer's thread")
		}
		return nil
	}
}
