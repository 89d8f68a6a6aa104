package steps

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/cucumber/godog"

	"github.com/invokeconf/invokeconf/checks"
	"github.com/invokeconf/invokeconf/profile"
	"github.com/invokeconf/invokeconf/traffic"
)

// Observer hears how each scenario ended, with the transcript of its
// exchanges (secrets redacted). The runner builds its reports from it.
type Observer interface {
	ScenarioDone(sc *godog.Scenario, d Done)
}

// Done is what a scenario left when it ended.
type Done struct {
	// Err is the first step error (nil when every step passed).
	Err error
	// Transcript is every exchange, keys as their variables.
	Transcript []Exchange
	// Checked are the scenario's own rules it checked in full before its
	// failure (World.Checked): passes, not blocked.
	Checked []string
	// Cell is the cell of the scenario's last invoke (nil for none): where
	// a passing scenario judged its own rules.
	Cell *checks.Cell
}

// Suite binds the step table to one target.
type Suite struct {
	Profile  *profile.Profile
	Client   *http.Client
	Observer Observer // may be nil
	// Exchanges, when set, hears every exchange a scenario makes as it
	// ends, with the scenario that made it: the run judges each with every
	// check traffic can decide (and may keep it as evidence). It may be
	// called from several scenarios at once.
	Exchanges func(sc Scenario, v *checks.View, cell checks.Cell, ok bool)

	once   sync.Once
	shared *shared
}

// Scenario names the scenario an exchange was made in.
type Scenario struct {
	// ID is godog's pickle ID; URI the feature file; Name the scenario's.
	ID, URI, Name string
}

// shared is what the scenarios of one run share: the recorder every
// exchange goes through, and the exchanges' numbering.
type shared struct {
	recorder  *traffic.Recorder
	ids       atomic.Int64
	exchanges func(sc Scenario, v *checks.View, cell checks.Cell, ok bool)
}

// nextID numbers the run's exchanges from 1, in the order they start.
func (s *shared) nextID() int { return int(s.ids.Add(1)) }

// run returns the state the suite's scenarios share, made once.
func (s *Suite) run() *shared {
	s.once.Do(func() {
		// Keys are kept in memory (the checks judge the bytes as they
		// passed); every report redacts them.
		s.shared = newShared(s.Exchanges)
	})
	return s.shared
}

// newShared returns the state of a run whose exchanges go to exchanges
// (nil: nowhere).
func newShared(exchanges func(Scenario, *checks.View, checks.Cell, bool)) *shared {
	// Keys are kept in memory (the checks judge the bytes as they passed);
	// every report redacts them.
	rc := &traffic.Recorder{MaxRecord: MaxBody, KeepKeys: true, Grain: readGrain}
	return &shared{recorder: rc, exchanges: exchanges}
}

// InitializeScenario is a godog ScenarioInitializer. godog calls it once per
// scenario: it makes the scenario's World and binds every step of the table
// (Definitions) to it.
func (s *Suite) InitializeScenario(sc *godog.ScenarioContext) {
	client := Client(s.Client)
	w := &World{shared: s.run()}
	w.reset(context.Background(), s.Profile, client, nil)
	sc.Before(func(ctx context.Context, gsc *godog.Scenario) (context.Context, error) {
		tags := make([]string, 0, len(gsc.Tags))
		for _, t := range gsc.Tags {
			tags = append(tags, t.Name)
		}
		w.reset(ctx, s.Profile, client, tags)
		w.scenario = Scenario{ID: gsc.Id, URI: gsc.Uri, Name: gsc.Name}
		return ctx, nil
	})
	// godog hands the After hook the last step's error, which is nil when an
	// earlier step was skipped as untested: keep the first error ourselves.
	// The hook returns nil: godog would join a returned error to the step's
	// own, and every failure message would read twice.
	var failedStep string
	sc.StepContext().After(func(ctx context.Context, st *godog.Step, _ godog.StepResultStatus, err error) (context.Context, error) {
		if err != nil && w.firstErr == nil {
			w.firstErr, failedStep = err, st.Id
		}
		return ctx, nil
	})
	sc.After(func(ctx context.Context, gsc *godog.Scenario, err error) (context.Context, error) {
		if err == nil {
			err = w.firstErr
		}
		if n := len(gsc.Steps); n > 0 && failedStep != "" {
			w.failedLast = gsc.Steps[n-1].Id == failedStep
		}
		failedStep = ""
		// What the scenario installed is removed as far as the target
		// lets (bundle.go); a clean-up that fails changes no verdict.
		w.cleanUp()
		if s.Observer != nil {
			s.Observer.ScenarioDone(gsc, Done{Err: err, Transcript: w.Transcript(), Checked: w.Checked(), Cell: w.LastCell()})
		}
		// godog keeps every scenario's step closures, and with them its
		// World, until the run ends: let go of what it read.
		w.release()
		return ctx, nil
	})
	defs := Definitions()
	for i := range defs {
		d := &defs[i]
		sc.Step(d.re, d.bind(w, d))
	}
}
