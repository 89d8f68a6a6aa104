// Package runner runs the features against one target and reports per
// scenario. The CLI and the mutation test both drive it.
package runner

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/cucumber/godog"

	"github.com/invokeconf/invokeconf/checks"
	"github.com/invokeconf/invokeconf/features"
	"github.com/invokeconf/invokeconf/internal/safetext"
	"github.com/invokeconf/invokeconf/outcome"
	"github.com/invokeconf/invokeconf/profile"
	"github.com/invokeconf/invokeconf/steps"
	"github.com/invokeconf/invokeconf/testrun"
)

// Config says what to run against which target.
type Config struct {
	Profile *profile.Profile
	// Plan decides which scenarios run (see NewPlan); nil plans a run of the
	// scenarios Tags selects.
	Plan *testrun.Plan
	// Tags is a godog tag expression ("@SSE-01,@SSE-02", "~@slow"), used
	// only when Plan is nil.
	Tags string
	// Concurrency is how many scenarios run at once; 0 means 16. Scenarios
	// mostly wait on the target, so slow ones overlap.
	Concurrency int
	// OutDir receives cucumber.json; "" writes no file. The other reports
	// are written by package reports from the Result.
	OutDir string
	// Console receives one progress line per finished scenario; nil
	// discards them.
	Console io.Writer
	// NoColors turns off ANSI colours on the console.
	NoColors bool
	// Evidence, when set, hears every exchange of the run with the
	// scenario that made it, in the order the run's judgement of every
	// exchange judged them (an exchange without a response, which it does
	// not judge, where it ended): kept as evidence, they can be judged
	// again to the same verdicts (package evidence). Keys are in them
	// whole: it must redact what it keeps.
	Evidence func(sc steps.Scenario, v *checks.View)
}

// collector is the steps.Observer that gathers scenario results and prints
// a progress line for each.
type collector struct {
	ctx      context.Context
	p        *profile.Profile
	planned  map[string]testrun.Planned // by features.Pickle.Key
	total    int
	console  io.Writer
	noColors bool

	mu       sync.Mutex
	started  map[string]time.Time // by godog pickle ID
	results  []testrun.ScenarioResult
	byPickle map[string]int // index in results, by godog pickle ID
}

func (c *collector) begin(sc *godog.Scenario) {
	c.mu.Lock()
	c.started[sc.Id] = time.Now()
	c.mu.Unlock()
}

func (c *collector) ScenarioDone(sc *godog.Scenario, d steps.Done) {
	err := d.Err
	tags := make([]string, 0, len(sc.Tags))
	for _, t := range sc.Tags {
		tags = append(tags, t.Name)
	}
	stepTexts := make([]string, 0, len(sc.Steps))
	for _, st := range sc.Steps {
		stepTexts = append(stepTexts, features.StepText(st))
	}
	uri := path.Clean(strings.TrimPrefix(sc.Uri, "./"))
	r := testrun.ScenarioResult{Name: strings.TrimSpace(sc.Name), URI: uri, Tags: tags, Rules: features.RulesOf(tags), Transcript: d.Transcript, Cell: d.Cell}
	r.Feature = strings.TrimSuffix(path.Base(uri), ".feature")
	r.ID = uri
	if pl, ok := c.planned[features.PickleKey(uri, sc.Name, stepTexts)]; ok {
		r.ID, r.URI, r.Line, r.Example = pl.ID, pl.File, pl.Line, pl.Example
	}
	r.Status, r.Error = c.classify(err)
	if f, ok := outcome.AsFailure(err); ok && r.Status == testrun.Failed {
		r.Failure = f
		if !contains(r.Rules, f.Rule) {
			r.Status = testrun.Blocked
		}
		r.Checked = d.Checked
	}
	c.mu.Lock()
	if t, ok := c.started[sc.Id]; ok {
		r.Started, r.Duration = t, time.Since(t)
	}
	c.results = append(c.results, r)
	c.byPickle[sc.Id] = len(c.results) - 1
	c.progress(len(c.results), r) // under the lock: lines come out in order
	c.mu.Unlock()
}

// classify turns a scenario's error into its status. A step's error was
// cleaned where the step made it (steps.Settled); errors of hooks and
// panics, which no step made, are cleaned here the same way.
func (c *collector) classify(err error) (status testrun.Status, msg string) {
	status, msg = c.status(err)
	if steps.Settled(err) {
		return status, msg
	}
	return status, safetext.Clean(c.p.Redactor().Cut(msg, maxErrorMessage, " [... cut]"))
}

// maxErrorMessage bounds a scenario's error message.
const maxErrorMessage = 8 << 10

func (c *collector) status(err error) (status testrun.Status, msg string) {
	reason, untested := steps.Untested(err)
	switch {
	case err == nil:
		return testrun.Passed, ""
	case c.ctx.Err() != nil:
		// Whatever the step made of it (a cut stream is also "could not
		// decide"), the harness stopped this scenario, not the target.
		return testrun.HarnessError, "the run was interrupted: " + err.Error()
	case untested:
		return testrun.Untested, reason
	case steps.IsHarnessError(err):
		return testrun.HarnessError, err.Error()
	case errors.Is(err, godog.ErrSkip):
		return testrun.Untested, "skipped"
	case errors.Is(err, godog.ErrUndefined), errors.Is(err, godog.ErrPending), errors.Is(err, godog.ErrAmbiguous):
		return testrun.HarnessError, err.Error()
	case stepPanicked(err):
		// A harness bug, whatever the target answered.
		return testrun.HarnessError, "a step panicked: " + err.Error()
	}
	return testrun.Failed, err.Error()
}

// progress prints one line per finished scenario. The caller holds c.mu.
func (c *collector) progress(n int, r testrun.ScenarioResult) {
	if c.console == nil {
		return
	}
	colour := map[testrun.Status]string{testrun.Passed: "32", testrun.Failed: "31", testrun.Blocked: "33", testrun.Untested: "33", testrun.HarnessError: "35"}[r.Status]
	status := fmt.Sprintf("%-13s", r.Status)
	if !c.noColors && colour != "" {
		status = "\x1b[" + colour + "m" + status + "\x1b[0m"
	}
	line := fmt.Sprintf("[%*d/%d] %s %-22s %-14s %s (%s)", len(fmt.Sprint(c.total)), n, c.total, status, r.ID,
		strings.Join(r.Rules, ","), r.Title(), r.Duration.Round(time.Millisecond))
	if r.Error != "" {
		first, _, _ := strings.Cut(r.Error, "\n")
		if r.Status == testrun.Blocked {
			first = "blocked by " + r.Failure.Rule + ": " + first
		}
		line += "\n      " + first
		if r.Failure != nil && len(r.Failure.ExplainedBy) > 0 {
			// The verdict reconciles at the end: say where it may go.
			who := r.Failure.ExplainedBy[0] + " would explain this too: if it fails"
			if n := len(r.Failure.ExplainedBy); n > 1 {
				who = strings.Join(r.Failure.ExplainedBy[:n-1], ", ") + " or " + r.Failure.ExplainedBy[n-1] + " would explain this too: if one fails"
			}
			line += "\n      (" + who + " in its own scenarios, the verdict blames it and this scenario is blocked by it)"
		}
	}
	fmt.Fprintln(c.console, line)
}

// Run runs the planned scenarios against cfg.Profile's target.
func Run(ctx context.Context, cfg Config) (*testrun.Result, error) {
	if cfg.Profile == nil {
		return nil, errors.New("runner: no profile")
	}
	if err := cfg.Profile.Validate(); err != nil {
		return nil, fmt.Errorf("profile: %w", err)
	}
	plan := cfg.Plan
	if plan == nil {
		var err error
		if plan, err = NewPlan(cfg.Profile, testrun.Selection{Tags: cfg.Tags}); err != nil {
			return nil, err
		}
	}
	conc := cfg.Concurrency
	if conc <= 0 {
		conc = 16
	}
	if cfg.OutDir != "" {
		if err := os.MkdirAll(cfg.OutDir, 0o755); err != nil {
			return nil, fmt.Errorf("create output folder: %w", err)
		}
	}
	col := &collector{ctx: ctx, p: cfg.Profile, planned: map[string]testrun.Planned{}, total: plan.ToRun(),
		console: cfg.Console, noColors: cfg.NoColors, started: map[string]time.Time{}, byPickle: map[string]int{}}
	for _, pl := range plan.Scenarios {
		col.planned[pl.Key()] = pl
	}
	obs := newObserver(cfg.Profile)
	obs.evidence = cfg.Evidence
	suite := &steps.Suite{Profile: cfg.Profile, Client: newClient(), Observer: col, Exchanges: obs.add}
	// A connection dialled and never used is, to net/http's Shutdown, busy
	// for 5 s: the target (the embedded server) is let go at once.
	defer suite.Client.CloseIdleConnections()
	res := &testrun.Result{Plan: plan, Started: time.Now()}
	if plan.ToRun() > 0 {
		format, output, closeOutput, err := cucumberOutput(cfg.OutDir)
		if err != nil {
			return nil, err
		}
		res.GodogStatus = godog.TestSuite{
			Name: "invokeconf",
			ScenarioInitializer: func(sc *godog.ScenarioContext) {
				sc.Before(func(ctx context.Context, gsc *godog.Scenario) (context.Context, error) {
					col.begin(gsc)
					return ctx, nil
				})
				suite.InitializeScenario(sc)
			},
			Options: godogOptions(ctx, format, output, plan, conc),
		}.Run()
		if err := closeOutput(); err != nil {
			return nil, fmt.Errorf("write %s: %w", filepath.Join(cfg.OutDir, "cucumber.json"), err)
		}
		if cfg.OutDir != "" {
			res.StepLocations = stepLocations(plan)
		}
	}
	res.Duration = time.Since(res.Started)
	obs.attach(col.results, col.byPickle)
	sum := obs.j.Summary()
	res.Judgement = &sum
	res.Scenarios = col.results
	res.Cells = obs.cells(col.results)
	reported := map[string]bool{}
	for _, r := range col.results {
		reported[r.ID] = true
	}
	for _, pl := range plan.Scenarios {
		switch {
		case pl.Status == testrun.NotApplicable || pl.Status == testrun.Untested:
			res.Scenarios = append(res.Scenarios, fromPlan(pl, pl.Status, pl.Reason))
		case pl.Status == testrun.Runs && !reported[pl.ID] && ctx.Err() != nil:
			res.Scenarios = append(res.Scenarios, fromPlan(pl, testrun.HarnessError, "the run was interrupted before the scenario started"))
		case pl.Status == testrun.Runs && !reported[pl.ID] && res.GodogStatus != 2:
			// Planned but never reported: godog and the plan disagree.
			res.Scenarios = append(res.Scenarios, fromPlan(pl, testrun.HarnessError, "the scenario was planned but godog did not run it"))
		}
	}
	sort.SliceStable(res.Scenarios, func(i, j int) bool {
		a, b := res.Scenarios[i], res.Scenarios[j]
		if a.URI != b.URI {
			return a.URI < b.URI
		}
		return a.Line < b.Line
	})
	return res, nil
}

// cucumberOutput returns godog's format and output for a run writing
// cucumber.json into dir ("" writes nothing), and a function that finishes
// the file. The file is buffered: godog's cucumber formatter issues a write
// per JSON token, which on a full run cost most of a second of system calls.
func cucumberOutput(dir string) (format string, w io.Writer, closeFn func() error, err error) {
	if dir == "" {
		return "progress", io.Discard, func() error { return nil }, nil
	}
	f, err := os.Create(filepath.Join(dir, "cucumber.json"))
	if err != nil {
		return "", nil, nil, fmt.Errorf("create output file: %w", err)
	}
	bw := bufio.NewWriterSize(f, 64<<10)
	return "cucumber", bw, func() error {
		return errors.Join(bw.Flush(), f.Close())
	}, nil
}

func fromPlan(pl testrun.Planned, status testrun.Status, reason string) testrun.ScenarioResult {
	return testrun.ScenarioResult{ID: pl.ID, Feature: strings.TrimSuffix(pl.File, ".feature"), Name: pl.Name, URI: pl.File,
		Line: pl.Line, Example: pl.Example, Tags: pl.Tags, Rules: pl.Rules, Status: status, Error: reason}
}

// Unattempted returns the result of a run that never started, because the
// target did not answer at all: every scenario the plan would have run is
// untested with the reason, so that the reports still say what was meant to
// run and why it did not.
func Unattempted(plan *testrun.Plan, reason string) *testrun.Result {
	res := &testrun.Result{Plan: plan, Started: time.Now()}
	for _, pl := range plan.Scenarios {
		switch pl.Status {
		case testrun.Runs:
			res.Scenarios = append(res.Scenarios, fromPlan(pl, testrun.Untested, reason))
		case testrun.NotApplicable, testrun.Untested:
			res.Scenarios = append(res.Scenarios, fromPlan(pl, pl.Status, pl.Reason))
		}
	}
	return res
}

// stepLocations maps each step text of the scenarios plan runs to where
// its definition is in the step table ("steps/sse.go:40"), for the
// Cucumber JSON (testrun.Result.StepLocations).
func stepLocations(plan *testrun.Plan) map[string]string {
	out := map[string]string{}
	for _, pl := range plan.Scenarios {
		if pl.Status != testrun.Runs {
			continue
		}
		for _, text := range pl.Texts {
			if _, seen := out[text]; seen {
				continue
			}
			out[text] = ""
			if d, ok := steps.DefinitionOf(text); ok {
				out[text] = d.Location
			}
		}
	}
	return out
}

// MemoryLimit is the soft memory limit `invokeconf run` sets for its
// process (runtime/debug.SetMemoryLimit) unless GOMEMLIMIT is set: a target
// that answers every request with as much as the harness reads (MaxBody,
// 16 scenarios at once) then keeps the process under 512 MB, the collector
// working harder instead of letting the heap double.
const MemoryLimit = 384 << 20

// MaxResponseHeader bounds the status line and headers of one answer the
// harness reads (net/http's own default is 10 MB: a target flooding its
// headers at 16 scenarios at once would hold hundreds of MB).
const MaxResponseHeader = 1 << 20

// newClient returns the HTTP client the steps use: no overall timeout (that
// would cut streams; every request carries its own deadline), a dial timeout
// so an unreachable target fails fast, headers bounded, and no proxy:
// targets are reached directly.
func newClient() *http.Client {
	return &http.Client{Transport: &http.Transport{
		DialContext:            (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		MaxIdleConnsPerHost:    32,
		IdleConnTimeout:        30 * time.Second,
		ResponseHeaderTimeout:  0,
		DisableCompression:     true,
		MaxResponseHeaderBytes: MaxResponseHeader,
	}}
}
