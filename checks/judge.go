package checks

import (
	"fmt"
	"sort"
	"sync"

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
}

// NewJudgement returns an empty Judgement.
func NewJudgement() *Judgement {
	j := &Judgement{tallies: map[string]*tally{}, levels: map[string]string{}}
	if idx, err := features.RuleIndex(); err == nil {
		j.total = len(idx)
		for id, r := range idx {
			j.levels[id] = r.Level
		}
	}
	return j
}

// Add judges x and returns the rules it broke.
func (j *Judgement) Add(x *traffic.Exchange) []Finding {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.n++
	var out []Finding
	// A rule may have several checks; the exchange decides it once.
	type perRule struct{ decided, failed bool }
	seen := map[string]*perRule{}
	for _, r := range Exchange(x, &j.h) {
		t := j.tallies[r.Rule]
		if t == nil {
			t = &tally{untested: map[string]int{}, aspects: map[string]int{}}
			j.tallies[r.Rule] = t
		}
		pr := seen[r.Rule]
		if pr == nil {
			pr = &perRule{}
			seen[r.Rule] = pr
		}
		switch {
		case r.Err != nil:
			j.errs = append(j.errs, fmt.Sprintf("exchange #%d: %v", x.ID, r.Err))
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
			f := Finding{Rule: r.Rule, Level: j.levels[r.Rule], Exchange: x.ID,
				Request: x.Request.Method + " " + x.Request.URL, Status: statusOf(x), Failure: r.Failure}
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
	return out
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
	for _, id := range Rules() {
		v := RuleVerdict{Rule: id, Level: j.levels[id], Spec: specs[id], Verdict: NotSeen}
		if t := j.tallies[id]; t != nil {
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
	s.Headline = fmt.Sprintf("observed %d exchanges; judged %d of %d rules", s.Observed, s.Judged, s.Rules)
	return s
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

func statusOf(x *traffic.Exchange) int {
	if x.Response == nil {
		return 0
	}
	return x.Response.Status
}
