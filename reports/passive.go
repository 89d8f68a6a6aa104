package reports

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/invokeconf/invokeconf/checks"
	"github.com/invokeconf/invokeconf/features"
	"github.com/invokeconf/invokeconf/outcome"
	"github.com/invokeconf/invokeconf/testrun"
	"github.com/invokeconf/invokeconf/traffic"
	"github.com/invokeconf/invokeconf/transcript"
)

// Modes of a report (Report.Mode): the active suite's run, or a passive
// judgement of recorded traffic (invokeconf proxy and judge).
const (
	ModeActive  = "active"
	ModePassive = "passive"
)

// Outcomes of a passive report: never "pass", since a passive judgement is
// never a certification.
const (
	PassiveFail      = "fail"
	PassiveNoFailure = "no failure"
	// PassiveNothing is a judgement of no exchange (a proxy no client went
	// through, a HAR file without entries): nothing was judged, so it is no
	// "no failure", and exits 2 as a recording that cannot be judged.
	PassiveNothing = "nothing observed"
)

// notDecidablePrefix starts the reason of a rule traffic cannot decide.
const notDecidablePrefix = "not decidable from traffic: "

// PassiveNote is what every passive report says about itself.
const PassiveNote = "Passive judgement, not a certification: this report judges only what the recorded traffic showed. " +
	"A rule no exchange exercised is not seen, and a rule that traffic alone cannot decide is listed with the reason; " +
	"invokeconf run judges those."

// Passive is what a passive report adds to a Report.
type Passive struct {
	// Source is where the traffic came from: "proxy" or "har".
	Source string `json:"source"`
	// Observed counts the recorded exchanges; Judged the rules that got
	// pass or fail, of Rules in the catalog; Decidable the rules that
	// traffic can decide (a check in package checks).
	Observed  int    `json:"observed"`
	Judged    int    `json:"judged"`
	Rules     int    `json:"rules"`
	Decidable int    `json:"decidable"`
	Note      string `json:"note"`
	// Errors are checks that broke on an exchange.
	Errors []string `json:"errors"`
}

// RuleTraffic is what the traffic showed of one rule, in a passive report.
type RuleTraffic struct {
	// Decided counts the exchanges that decided the rule; Broken those
	// that broke it.
	Decided int `json:"decided"`
	Broken  int `json:"broken"`
}

// PassiveInput is what BuildPassive judges.
type PassiveInput struct {
	Summary checks.Summary
	// Source is "proxy" or "har"; Target describes it for people ("proxy
	// to https://svc.example", "HAR file staging.har"); BaseURL is the
	// service's URL when known.
	Source, Target, BaseURL string
	// Started and Duration span the recording.
	Started  time.Time
	Duration time.Duration
	// Exchange returns a recorded exchange by ID as a failure shows it
	// (EvidenceOf, or an Evidence's Lookup); nil, or false, shows only the
	// request line and status.
	Exchange func(id int) (transcript.Exchange, bool)
	// Unanswered counts the exchanges recorded without a response, which
	// are not judged (Summary.Observed leaves them out).
	Unanswered int
}

// Evidence keeps the exchanges that broke a rule as a passive report shows
// them (EvidenceOf: keys hidden, bodies cut), at most Max of them, so a
// long recording need not stay in memory for its report. It is safe for
// concurrent use.
type Evidence struct {
	mu     sync.Mutex
	max    int
	redact bool
	m      map[int]transcript.Exchange
}

// DefaultEvidence is enough for every failure a report shows: the first 20
// per rule.
const DefaultEvidence = 500

// NewEvidence returns an Evidence that keeps at most max exchanges; with
// redactBodies, only their bodies' lengths (--redact-bodies).
func NewEvidence(max int, redactBodies bool) *Evidence {
	return &Evidence{max: max, redact: redactBodies, m: map[int]transcript.Exchange{}}
}

// Add keeps x, unless max exchanges are kept already.
func (e *Evidence) Add(x *traffic.Exchange) {
	if e.redact {
		stripped := traffic.StripBodies(*x)
		x = &stripped
	}
	ex := EvidenceOf(x)
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.m) < e.max {
		e.m[x.ID] = ex
	}
}

// Lookup returns the kept exchange of that ID.
func (e *Evidence) Lookup(id int) (transcript.Exchange, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	ex, ok := e.m[id]
	return ex, ok
}

// BuildPassive turns a passive judgement into a Report that the same
// writers put down: every rule of the catalog gets pass (decided, with the
// number of exchanges), fail (with each exchange that broke it), untested
// (with the reason), not seen, or not decidable (traffic alone cannot
// decide it: the catalog's passive_why). Its outcome is fail or "no
// failure", never pass: it is never a certification.
func BuildPassive(in PassiveInput) (*Report, error) {
	catalog, err := features.Rules()
	if err != nil {
		return nil, err
	}
	s := in.Summary
	id := Identify(nil)
	rep := &Report{
		Schema: SchemaVersion, Mode: ModePassive, Harness: id.Harness, Identity: id,
		Target: clean(in.Target), BaseURL: clean(redactURL(in.BaseURL)),
		Started: in.Started.UTC().Truncate(time.Second), Duration: in.Duration.Round(time.Millisecond).Seconds(),
		Gaps: []testrun.Gap{}, Scenarios: []testrun.ScenarioResult{}, Counts: Counts{},
		Passive: &Passive{Source: in.Source, Observed: s.Observed, Rules: len(catalog), Note: PassiveNote, Errors: []string{}},
	}
	for _, e := range s.Errors {
		rep.Passive.Errors = append(rep.Passive.Errors, clean(e))
	}
	byRule := map[string]checks.RuleVerdict{}
	for _, v := range s.Verdicts {
		byRule[v.Rule] = v
	}
	rep.Findings = []Finding{}
	for _, r := range catalog {
		rr := RuleResult{Rule: r, Scenarios: []string{}}
		v, decidable := byRule[r.ID]
		if decidable {
			rep.Passive.Decidable++
			rr.Traffic = &RuleTraffic{Decided: v.Decided, Broken: v.Broken}
		}
		switch {
		case !decidable:
			why := r.PassiveWhy
			if why == "" {
				why = "no check in package checks"
			}
			rr.Verdict, rr.Reason = NotDecidable, notDecidablePrefix+why
		case v.Verdict == checks.Pass:
			rr.Verdict, rr.Reason = Pass, "decided by "+plural(v.Decided, "exchange", "exchanges")
		case v.Verdict == checks.Fail:
			rr.Verdict = failedVerdict(r.Level, false)
			rr.Reason = fmt.Sprintf("%s of %d broke it", plural(v.Broken, "exchange", "exchanges"), v.Decided)
			for _, f := range v.Failures {
				rep.Findings = append(rep.Findings, passiveFinding(f, r, rr.Verdict, in.Exchange))
			}
		case v.Verdict == checks.Untested:
			rr.Verdict, rr.Reason = Untested, clean(v.Reason)
		default:
			rr.Verdict, rr.Reason = NotSeen, "no recorded exchange could decide it"
		}
		if r.Passive == features.PassivePartly && rr.Verdict == NotSeen {
			rr.Reason += " (traffic decides it partly: " + r.PassiveWhy + ")"
		}
		if rr.Verdict == Pass || rr.Verdict == Fail || rr.Verdict == Warning {
			rep.Passive.Judged++
		}
		rep.Rules = append(rep.Rules, rr)
		rep.Counts[rr.Verdict]++
	}
	rep.Areas = areasOf(rep.Rules)
	rep.Spec = passiveSource(features.SourceSpec, rep.Rules)
	rep.Contract = passiveSource(features.SourceContract, rep.Rules)
	sort.SliceStable(rep.Findings, func(i, j int) bool { return severity(rep.Findings[i].Verdict) < severity(rep.Findings[j].Verdict) })
	rep.FailedRules = failedRules(rep.Rules, rep.Findings)
	if s.Observed == 0 {
		rep.Outcome, rep.ExitCode, rep.Headline = PassiveNothing, outcome.ExitUsage, nothingObserved(in)
		return rep, nil
	}
	rep.Outcome, rep.ExitCode = PassiveNoFailure, outcome.ExitPass
	head := fmt.Sprintf("observed %s; judged %d of %d rules", plural(s.Observed, "exchange", "exchanges"), rep.Passive.Judged, rep.Passive.Rules)
	var parts []string
	if n := rep.Counts[Fail]; n > 0 {
		rep.Outcome, rep.ExitCode = PassiveFail, outcome.ExitFail
		parts = append(parts, plural(n, "MUST rule", "MUST rules")+" failed: "+strings.Join(ruleIDs(rep.Rules, Fail), " "))
	} else {
		parts = append(parts, "no MUST rule failed")
	}
	if n := rep.Counts[Warning]; n > 0 {
		parts = append(parts, plural(n, "SHOULD rule", "SHOULD rules")+" failed (warnings): "+strings.Join(ruleIDs(rep.Rules, Warning), " "))
	}
	rep.Headline = head + "; " + strings.Join(parts, "; ")
	return rep, nil
}

// nothingObserved is the headline of a judgement of no exchange: what was
// (not) seen, and its likely cause.
func nothingObserved(in PassiveInput) string {
	const tail = "; nothing judged, which is no pass"
	switch {
	case in.Unanswered > 0:
		return fmt.Sprintf("observed %s, none with a response (does the service answer at its URL?)", plural(in.Unanswered, "exchange", "exchanges")) + tail
	case in.Source == "proxy":
		return "observed 0 exchanges: no client sent a request through the proxy (point the client at the proxy's URL)" + tail
	}
	return "observed 0 exchanges: the recording holds none" + tail
}

// passiveSource is a source's verdict in a passive report: fail, or
// "passive" (never pass or partial: the traffic certifies nothing).
func passiveSource(source string, rules []RuleResult) SourceVerdict {
	sv := sourceVerdict(source, rules)
	switch sv.Outcome {
	case "fail", "none":
	default:
		sv.Outcome = ModePassive
	}
	return sv
}

// maxEvidence bounds each body a passive failure shows.
const maxEvidence = 8 << 10

// hideKeys hides anything shaped like a key, should one have slipped past
// the recording's redaction.
var hideKeys = traffic.NewRedactor()

// clean makes target bytes safe for a report: keys hidden, then printable.
func clean(t string) string { return printable(hideKeys.RedactString(t)) }

// passiveFinding is one exchange that broke a rule, as the writers show
// it: the rule with its spec words, expected vs actual, and the exchange
// (its request line and status, or the whole recorded exchange when it can
// be had). Its target bytes are cleaned here, where the finding is made.
func passiveFinding(f checks.Finding, r features.Rule, v Verdict, lookup func(int) (transcript.Exchange, bool)) Finding {
	fl := f.Failure
	if fl == nil {
		fl = &outcome.Failure{}
	}
	req := clean(f.Request)
	method, url, _ := strings.Cut(req, " ")
	ex := transcript.Exchange{Method: method, URL: url, Status: f.Status}
	if lookup != nil {
		if x, ok := lookup(f.Exchange); ok {
			ex = x
		}
	}
	return Finding{Rule: r, RuleID: r.ID, Verdict: v, Check: clean(fl.Check), Expected: clean(fl.Expected),
		Actual: clean(fl.Actual), Spec: clean(fl.Spec), Exchange: &ExchangeRef{ID: f.Exchange, Request: req, Status: f.Status},
		Transcript: []transcript.Exchange{ex}, Curl: []string{}}
}

// EvidenceOf is a recorded exchange as a passive failure shows it
// (transcript.Of): keys hidden (again, should one have slipped past the
// recording's redaction), every byte printable, each body cut to 8 KiB.
func EvidenceOf(x *traffic.Exchange) transcript.Exchange {
	return transcript.Of(x, transcript.Options{Cut: cutHidden, Printable: printable, MaxBody: maxEvidence, KeyLen: 4 << 10})
}

// cutHidden hides what is shaped like a key in s, then cuts it to n bytes.
func cutHidden(s string, n int, note string) string {
	if s = hideKeys.RedactString(s); len(s) > n {
		return strings.ToValidUTF8(s[:n], "") + note
	}
	return s
}
