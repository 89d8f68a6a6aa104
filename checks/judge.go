package checks

import (
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/invokeconf/invokeconf/features"
	"github.com/invokeconf/invokeconf/outcome"
	"github.com/invokeconf/invokeconf/traffic"
)

// SummarySchema names the format of a passive summary.
const SummarySchema = "invokeconf.passive/v1"

// Verdicts of a rule over a recording.
const (
	Pass     = "pass"
	Fail     = "fail"
	Untested = "untested"
	NotSeen  = "not seen"
)

// Finding is a rule broken by one exchange.
type Finding struct {
	Rule     string `json:"rule"`
	Level    string `json:"level"`
	Exchange int    `json:"exchange"`
	Request  string `json:"request"`
	// Status is the response's status code.
	Status  int              `json:"status"`
	Failure *outcome.Failure `json:"failure"`
}

// String reads "RULE LEVEL: failure [#N METHOD URL]".
func (f Finding) String() string {
	return fmt.Sprintf("%s %s: %v [exchange #%d: %s]", f.Rule, f.Level, f.Failure, f.Exchange, f.Request)
}

// RuleVerdict is a rule's verdict over a recording.
type RuleVerdict struct {
	Rule    string `json:"rule"`
	Level   string `json:"level"`
	Spec    string `json:"spec"`
	Verdict string `json:"verdict"`
	// Decided counts the exchanges that decided the rule.
	Decided int `json:"decided"`
	// Broken counts the exchanges that broke it; Failures keeps the first
	// of them.
	Broken   int       `json:"broken,omitempty"`
	Failures []Finding `json:"failures,omitempty"`
	// Reason says why a rule is untested.
	Reason string `json:"reason,omitempty"`
}

// Summary is the verdict of a recording. It is never a certification.
type Summary struct {
	Schema   string        `json:"schema"`
	Headline string        `json:"headline"`
	Note     string        `json:"note"`
	Observed int           `json:"observed"`
	Judged   int           `json:"judged"`
	Rules    int           `json:"rules"`
	Verdicts []RuleVerdict `json:"verdicts"`
	Errors   []string      `json:"errors,omitempty"`
}

// Failed reports whether a rule failed.
func (s Summary) Failed() bool {
	for _, v := range s.Verdicts {
		if v.Verdict == Fail {
			return true
		}
	}
	return false
}

// maxFindings bounds the failures kept per rule.
const maxFindings = 20

type tally struct {
	decided  int
	aspects  map[string]int // exchanges that decided each aspect
	fails    []Finding
	failures int
	untested map[string]int
}

// Judgement judges exchanges one by one and sums up. It is safe for
// concurrent use.
type Judgement struct {
	mu      sync.Mutex
	h       History
	n       int
	tallies map[string]*tally
	levels  map[string]string
	total   int
	errs    []string
	redact  bool
	// unsettled leaves disputes no follow-up settled undecided.
	unsettled bool
	// decided hears each rule an exchange decided (OnDecided).
	decided func(x *View, rule string)
}

// RedactBodies makes every finding and error the judgement returns or
// keeps free of body text (--redact-bodies): see RedactBodyText. Call it
// before the first Add.
func (j *Judgement) RedactBodies() *Judgement {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.redact = true
	j.h.redact = true
	return j
}

// NewJudgement returns an empty Judgement.
func NewJudgement() *Judgement {
	j := &Judgement{tallies: map[string]*tally{}, levels: map[string]string{}}
	// The judgement holds the whole recording: an answer whose names of
	// its thread disagree waits for the follow-ups (identity.go).
	j.h.Defer = true
	if idx, err := features.RuleIndex(); err == nil {
		j.total = len(idx)
		for id, r := range idx {
			j.levels[id] = r.Level
		}
	}
	return j
}

// SetReportLag sets how long after a run surely completed the thread's
// follow-ups must show it (DefaultReportLag unless set): a service that
// states a shorter time is judged on it. Call it before the first Add.
func (j *Judgement) SetReportLag(d time.Duration) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.h.ReportLag = d
}

// Add judges x and returns the rules it broke.
func (j *Judgement) Add(x *traffic.Exchange) []Finding { return j.AddView(NewView(x)) }

// AddView judges an exchange already viewed (the active suite judges the
// views its steps read) and returns the rules it broke.
func (j *Judgement) AddView(x *View) []Finding {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.n++
	var out []Finding
	var quoted []*string // what the findings quote, redacted at once
	// A rule may have several checks; the exchange decides it once.
	type perRule struct{ decided, failed bool }
	seen := map[string]*perRule{}
	for _, r := range Exchange(x, &j.h) {
		if r.Failure != nil && r.Failure.Rule != "" {
			// The rule the failure breaks (a check may name another:
			// the run's events, delivered, naming another thread break
			// EVT-02, not ASYNC-02), as the active steps count it.
			r.Rule = r.Failure.Rule
		}
		t := j.tally(j.tallies, r.Rule)
		pr := seen[r.Rule]
		if pr == nil {
			pr = &perRule{}
			seen[r.Rule] = pr
		}
		switch {
		case r.Err != nil:
			msg := fmt.Sprintf("exchange #%d: %v", x.ID, r.Err)
			if j.redact {
				RedactBodyText(x, &msg)
			}
			j.errs = append(j.errs, msg)
		case r.Skip != nil:
			if r.Skip.Untested {
				t.untested[r.Skip.Reason]++
			}
		case r.Failure != nil:
			t.aspects[r.Aspect]++
			if !pr.decided {
				t.decided++
			}
			if !pr.failed {
				t.failures++
			}
			pr.decided, pr.failed = true, true
			fl := r.Failure
			if j.redact {
				c := *fl
				quoted = append(quoted, &c.Check, &c.Expected, &c.Actual)
				fl = &c
			}
			f := Finding{Rule: r.Rule, Level: j.levels[r.Rule], Exchange: x.ID,
				Request: x.Request.Method + " " + x.Request.URL, Status: statusOf(x), Failure: fl}
			if len(t.fails) < maxFindings {
				t.fails = append(t.fails, f)
			}
			out = append(out, f)
		default:
			t.aspects[r.Aspect]++
			if !pr.decided {
				t.decided++
			}
			pr.decided = true
		}
	}
	if len(quoted) > 0 {
		RedactBodyText(x, quoted...) // one pass over the bodies
	}
	if j.decided != nil {
		for rule, pr := range seen {
			if pr.decided {
				j.decided(x, rule)
			}
		}
	}
	// Disputes History could hold no longer are blamed by default now.
	for _, d := range j.h.evicted {
		out = append(out, j.blameDefault(j.tallies, d)...)
	}
	j.h.evicted = nil
	return out
}

// tally returns ts's tally of rule, made when missing.
func (j *Judgement) tally(ts map[string]*tally, rule string) *tally {
	t := ts[rule]
	if t == nil {
		t = &tally{untested: map[string]int{}, aspects: map[string]int{}}
		ts[rule] = t
	}
	return t
}

// Unsettled is why a rule is left untested where an answer named its
// thread in places that disagree and no follow-up showed which is the
// run's (a Judgement that does not guess: LeaveUnsettled).
const Unsettled = "the answer names its thread in places that disagree, and no follow-up shows which is the run's"

// LeaveUnsettled makes the judgement leave a dispute no follow-up settled
// undecided rather than blame it by default: a run of the active suite,
// whose own scenarios judge the names of a run's thread, guesses nothing.
// Call it before the first Add.
func (j *Judgement) LeaveUnsettled() *Judgement {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.unsettled = true
	return j
}

// OnDecided sets a function that hears, for every exchange judged, each
// rule it decided (held or broke): where a rule was judged. It is called
// with the judgement locked. Call it before the first Add.
func (j *Judgement) OnDecided(f func(x *View, rule string)) *Judgement {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.decided = f
	return j
}

// blameDefault adds to ts the default blame of a dispute that no
// follow-up settled (dispute.defaultBlame), each rule decided once by its
// exchange, and returns its findings; with LeaveUnsettled the rules are
// left untested instead.
func (j *Judgement) blameDefault(ts map[string]*tally, d *dispute) []Finding {
	var out []Finding
	b := d.defaultBlame(&j.h)
	if j.unsettled {
		for base := range b {
			j.tally(ts, d.rule(base)).untested[Unsettled]++
		}
		return nil
	}
	rules := make([]string, 0, len(b))
	for r := range b {
		rules = append(rules, r)
	}
	sort.Strings(rules)
	for _, base := range rules {
		rule := d.rule(base)
		t := j.tally(ts, rule)
		t.decided++
		t.aspects[""]++
		f := b[base]
		if f == nil {
			continue
		}
		f.Breaks(rule)
		t.failures++
		fd := Finding{Rule: rule, Level: j.levels[rule], Exchange: d.id, Request: d.request, Status: d.status, Failure: f}
		if len(t.fails) < maxFindings {
			t.fails = append(t.fails, fd)
		}
		out = append(out, fd)
	}
	return out
}

// Pending reports whether exchange id's answer named its thread in ways
// that disagree and no follow-up has settled which one lies yet: its
// findings come with the follow-up that does, or with the summary. A
// report keeps it as evidence.
func (j *Judgement) Pending(id int) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, d := range j.h.disputes {
		if d.id == id {
			return true
		}
	}
	return false
}

// Summary returns the verdict per rule so far.
func (j *Judgement) Summary() Summary {
	j.mu.Lock()
	defer j.mu.Unlock()
	s := Summary{Schema: SummarySchema, Observed: j.n, Rules: j.total, Errors: j.errs,
		Note: "A passive report judges only what the recorded traffic showed; it is never a certification."}
	specs := map[string]string{}
	for _, c := range All() {
		if specs[c.Rule] == "" {
			specs[c.Rule] = c.Spec
		}
	}
	aspects := Aspects()
	// The disputes no follow-up settled are blamed by default, on a copy:
	// a later follow-up may still settle them.
	tallies := j.tallies
	if len(j.h.disputes) > 0 {
		tallies = make(map[string]*tally, len(j.tallies))
		for id, t := range j.tallies {
			c := *t
			c.fails = slices.Clone(t.fails)
			c.aspects = maps.Clone(t.aspects)
			tallies[id] = &c
		}
		for _, d := range j.h.disputes {
			j.blameDefault(tallies, d)
		}
	}
	for _, id := range Rules() {
		v := RuleVerdict{Rule: id, Level: j.levels[id], Spec: specs[id], Verdict: NotSeen}
		if t := tallies[id]; t != nil {
			v.Decided = t.decided
			missing := ""
			for _, a := range aspects[id] {
				if t.aspects[a] == 0 && missing == "" {
					missing = a
				}
			}
			switch {
			case t.failures > 0:
				v.Verdict, v.Failures, v.Broken = Fail, t.fails, t.failures
			case t.decided > 0 && missing != "":
				v.Verdict, v.Reason = Untested, "not decided: "+missing
				if len(t.untested) > 0 {
					v.Reason += "; " + commonest(t.untested)
				}
			case t.decided > 0:
				v.Verdict = Pass
			case len(t.untested) > 0:
				v.Verdict, v.Reason = Untested, commonest(t.untested)
			}
		}
		if v.Verdict == Pass || v.Verdict == Fail {
			s.Judged++
		}
		s.Verdicts = append(s.Verdicts, v)
	}
	s.Headline = fmt.Sprintf("observed %s; judged %d of %d rules", plural(s.Observed, "exchange", "exchanges"), s.Judged, s.Rules)
	return s
}

// plural is "1 exchange" or "N exchanges".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func commonest(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(a, b int) bool {
		if m[keys[a]] != m[keys[b]] {
			return m[keys[a]] > m[keys[b]]
		}
		return keys[a] < keys[b]
	})
	return keys[0]
}

func statusOf(x *View) int {
	if x.Response == nil {
		return 0
	}
	return x.Response.Status
}

// BodyTextRedacted stands for body text in a finding under --redact-bodies.
const BodyTextRedacted = "[body text redacted]"

// minBodyRun is the shortest run of a text taken for body text: shorter
// runs (a status code, "data: {}") are too common to say anything.
const minBodyRun = 8

// RedactBodyText replaces, in each text, every run of minBodyRun or more
// bytes that the exchange's request or response body holds, as recorded or
// as %q writes it (checks quote what they saw with %q), by
// BodyTextRedacted. What the exchange's headers and URL hold stays (a
// header's thread ID, a run ID in the query), and so does what a check
// writes of its own: status codes, lengths, timings, the spec's words.
// Failures are few, so the bodies are scanned per call.
func RedactBodyText(x *View, texts ...*string) {
	want := map[uint64]bool{} // the texts' windows of minBodyRun bytes
	for _, t := range texts {
		for i := 0; i+minBodyRun <= len(*t); i++ {
			want[window(*t, i)] = false
		}
	}
	if len(want) == 0 {
		return
	}
	var bodies []string
	if !x.Request.Body.Redacted {
		bodies = append(bodies, string(x.Request.Body.Bytes()))
	}
	if x.Response != nil && !x.Response.Body.Redacted {
		bodies = append(bodies, string(x.Body()))
	}
	// Windows not found yet, counted per hash slot: most of a long body's
	// windows need no map lookup.
	var pending [1 << 14]uint16
	slot := func(w uint64) uint64 { return (w * 0x9e3779b97f4a7c15) >> 50 }
	for w := range want {
		pending[slot(w)]++
	}
	left := len(want)
	scan := func(v string) {
		var w uint64 // the window ending at i, rolled on byte by byte
		for i := 0; i < len(v) && left > 0; i++ {
			w = w<<8 | uint64(v[i])
			if i+1 < minBodyRun || pending[slot(w)] == 0 {
				continue
			}
			if seen, ok := want[w]; ok && !seen {
				want[w] = true
				pending[slot(w)]--
				left--
			}
		}
	}
	variants := append([]string(nil), bodies...)
	for _, b := range bodies {
		scan(b)
	}
	for _, b := range bodies {
		if left == 0 {
			break // every window found: no need to quote a long body
		}
		q := strconv.Quote(b)
		variants = append(variants, q)
		scan(q)
	}
	if left == len(want) {
		return
	}
	keep := keptValues(x)
	for _, t := range texts {
		*t = redactRuns(*t, want, keep, variants)
	}
}

// window is the minBodyRun bytes of s at i, as a number.
func window(s string, i int) uint64 {
	var w uint64
	for _, c := range []byte(s[i : i+minBodyRun]) {
		w = w<<8 | uint64(c)
	}
	return w
}

// keptValues are what an exchange shows outside its bodies, raw and as %q
// writes them: header values, the URL's path segments and query values.
func keptValues(x *View) []string {
	var vs []string
	headers := []http.Header{x.Request.Header}
	if x.Response != nil {
		headers = append(headers, x.Response.Header)
	}
	for _, h := range headers {
		for _, values := range h {
			vs = append(vs, values...)
		}
	}
	if u, err := url.Parse(x.Request.URL); err == nil {
		vs = append(vs, strings.Split(u.Path, "/")...)
		for _, values := range u.Query() {
			vs = append(vs, values...)
		}
	}
	var out []string
	for _, v := range vs {
		if len(v) >= minBodyRun {
			out = append(out, v, strings.Trim(strconv.Quote(v), `"`))
		}
	}
	return out
}

// redactRuns replaces by BodyTextRedacted each run of t that a body holds
// (its windows are in hit; bodies as written), less what keep holds: a run
// of minBodyRun bytes within one quoted value (checks write what they saw
// with %q), or one of minUnquotedRun bytes anywhere. A check's own words
// may match a body ("threadID" in `runID "r1", threadID "t1"`,
// `{"error":{"message"`) and stay; so do the quotes around a value.
func redactRuns(t string, hit map[uint64]bool, keep []string, bodies []string) string {
	seg := quotedValues(t)
	redact := make([]bool, len(t))
	starts := make([]bool, len(t)) // a window that a body holds starts here
	for i := 0; i+minBodyRun <= len(t); i++ {
		if !hit[window(t, i)] {
			continue
		}
		starts[i] = true
		if seg[i] != 0 && seg[i+minBodyRun-1] == seg[i] {
			for k := i; k < i+minBodyRun; k++ {
				redact[k] = true
			}
		}
	}
	// Outside quoted values only a long run that a body holds whole: a
	// chain of short windows may stitch a check's words together.
	for i := 0; i < len(t); i++ {
		if !starts[i] {
			continue
		}
		last := i
		for last+1 < len(t) && starts[last+1] {
			last++
		}
		if end := last + minBodyRun; end-i >= minUnquotedRun && heldBy(t[i:end], bodies) {
			for k := i; k < end; k++ {
				redact[k] = true
			}
		}
		i = last
	}
	for _, v := range keep {
		for from := 0; ; {
			i := strings.Index(t[from:], v)
			if i < 0 {
				break
			}
			for k := from + i; k < from+i+len(v); k++ {
				redact[k] = false
			}
			from += i + 1
		}
	}
	var b strings.Builder
	for i := 0; i < len(t); i++ {
		if !redact[i] || (t[i] == '"' && seg[i] == 0) {
			b.WriteByte(t[i])
			continue
		}
		b.WriteString(BodyTextRedacted)
		for i+1 < len(t) && redact[i+1] && !(t[i+1] == '"' && seg[i+1] == 0) {
			i++
		}
	}
	return b.String()
}

func heldBy(s string, bodies []string) bool {
	for _, b := range bodies {
		if strings.Contains(b, s) {
			return true
		}
	}
	return false
}

// minUnquotedRun is the shortest run of body text redacted outside a
// quoted value.
const minUnquotedRun = 24

// quotedValues numbers the "quoted values" of t from 1 and gives each
// byte inside one its number, 0 to the rest (quotes included); a quote
// left open runs to the end.
func quotedValues(t string) []int {
	seg := make([]int, len(t))
	n, open := 0, false
	for i := 0; i < len(t); i++ {
		switch {
		case t[i] == '"':
			if open = !open; open {
				n++
			}
		case open && t[i] == '\\' && i+1 < len(t):
			seg[i], seg[i+1] = n, n
			i++
		case open:
			seg[i] = n
		}
	}
	return seg
}
