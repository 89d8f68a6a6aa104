package runner

import (
	"sort"
	"sync"

	"github.com/invokeconf/invokeconf/internal/safetext"
	"github.com/invokeconf/invokeconf/profile"
	"github.com/invokeconf/invokeconf/testrun"

	"github.com/invokeconf/invokeconf/checks"
	"github.com/invokeconf/invokeconf/steps"
)

// observer judges a run's exchanges as they end and remembers which
// scenario made each.
type observer struct {
	j     *checks.Judgement
	clean func(string) string
	mu    sync.Mutex
	owner map[int]string // godog pickle ID, by exchange ID
	// cellOf is each exchange's cell, when it is in one; judged the cells
	// each rule was decided on, by rule and cell name.
	cellOf map[int]checks.Cell
	judged map[string]map[string]bool
	// evidence hears each exchange in the order j judges it (Config.Evidence);
	// seq keeps the two in step.
	evidence func(sc steps.Scenario, v *checks.View)
	seq      sync.Mutex
}

// newObserver returns an observer whose findings are cleaned as a step's
// failure is: keys redacted (a Judgement of the harness's own traffic sees
// them whole), then cut, then made safe to show.
func newObserver(p *profile.Profile) *observer {
	red := p.Redactor()
	clean := func(s string) string { return safetext.Clean(red.Cut(s, maxErrorMessage, " [... cut]")) }
	// The scenarios judge the names of a run's thread themselves: a dispute
	// no follow-up settled is left undecided, never guessed.
	o := &observer{clean: clean, owner: map[int]string{}, cellOf: map[int]checks.Cell{}, judged: map[string]map[string]bool{}}
	o.j = checks.NewJudgement().LeaveUnsettled().OnDecided(o.decided)
	return o
}

// decided is the judgement's OnDecided: the rule was judged on x's cell.
// The judgement holds its lock; o.mu guards the maps.
func (o *observer) decided(x *checks.View, rule string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if c, ok := o.cellOf[x.ID]; ok {
		o.judge(rule, c)
	}
}

// judge notes that a rule was judged on a cell. The caller holds o.mu.
func (o *observer) judge(rule string, c checks.Cell) {
	if o.judged[rule] == nil {
		o.judged[rule] = map[string]bool{}
	}
	o.judged[rule][c.String()] = true
}

// cells returns, per rule, the cells it was judged on: by the judgement of
// every exchange, and by its own scenarios that passed (or checked it in
// full before failing) on their last invoke's cell.
func (o *observer) cells(results []testrun.ScenarioResult) map[string][]string {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, r := range results {
		if r.Cell == nil {
			continue
		}
		if r.Status == testrun.Passed {
			for _, id := range r.Rules {
				o.judge(id, *r.Cell)
			}
		}
		for _, id := range r.Checked {
			o.judge(id, *r.Cell)
		}
	}
	out := make(map[string][]string, len(o.judged))
	for rule, cs := range o.judged {
		for c := range cs {
			out[rule] = append(out[rule], c)
		}
		sort.Strings(out[rule])
	}
	return out
}

// add is the steps' Suite.Exchanges hook.
func (o *observer) add(sc steps.Scenario, v *checks.View, cell checks.Cell, inCell bool) {
	o.mu.Lock()
	o.owner[v.ID] = sc.ID
	if inCell {
		o.cellOf[v.ID] = cell
	}
	o.mu.Unlock()
	o.seq.Lock()
	defer o.seq.Unlock()
	if o.evidence != nil {
		o.evidence(sc, v)
	}
	if v.Response != nil {
		o.j.AddView(v)
	}
}

// attach hands every failure the judgement found (those it settled at the
// end included) to the scenario whose exchange showed it.
func (o *observer) attach(results []testrun.ScenarioResult, byPickle map[string]int) {
	sum := o.j.Summary()
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, v := range sum.Verdicts {
		for _, f := range v.Failures {
			i, ok := byPickle[o.owner[f.Exchange]]
			if !ok {
				continue
			}
			fl := *f.Failure
			fl.Check, fl.Expected, fl.Actual = o.clean(fl.Check), o.clean(fl.Expected), o.clean(fl.Actual)
			results[i].Observed = append(results[i].Observed, testrun.Observation{Rule: f.Rule, Exchange: f.Exchange,
				Request: o.clean(f.Request), Status: f.Status, Failure: &fl})
		}
	}
}
