// Package runner runs the features against one target and reports per
// scenario. The CLI and the mutation test both drive it.
package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/cucumber/godog"

	"github.com/invokeconf/invokeconf/features"
	"github.com/invokeconf/invokeconf/profile"
	"github.com/invokeconf/invokeconf/steps"
)

// Exit codes (design: Exit codes and output).
const (
	ExitPass    = 0 // every applicable MUST rule passed
	ExitFail    = 1 // a rule failed
	ExitUsage   = 2 // bad usage or profile
	ExitHarness = 3 // harness error, or no scenario ran
)

// Config says what to run against which target.
type Config struct {
	Profile *profile.Profile
	// Tags is a godog tag expression ("@SSE-01,@SSE-02", "~@slow").
	Tags string
	// Concurrency is how many scenarios run at once; 0 means 16. Scenarios
	// mostly wait on the target, so slow ones overlap.
	Concurrency int
	// OutDir receives junit.xml and cucumber.json; "" writes no files.
	OutDir string
	// Console receives progress; nil discards it.
	Console io.Writer
	// NoColors turns off ANSI colours on the console.
	NoColors bool
}

// Status of a scenario.
const (
	Passed   = "passed"
	Failed   = "failed"
	Untested = "untested"
)

// ScenarioResult is how one scenario ended.
type ScenarioResult struct {
	Feature    string           `json:"feature"`
	Name       string           `json:"name"`
	URI        string           `json:"uri"`
	Tags       []string         `json:"tags"`
	Rules      []string         `json:"rules"`
	Status     string           `json:"status"`
	Error      string           `json:"error,omitempty"`
	Transcript []steps.Exchange `json:"transcript,omitempty"`
}

// Result is a whole run.
type Result struct {
	Scenarios   []ScenarioResult
	GodogStatus int
	Duration    time.Duration
}

// Count returns how many scenarios ended with a status.
func (r *Result) Count(status string) int {
	n := 0
	for _, s := range r.Scenarios {
		if s.Status == status {
			n++
		}
	}
	return n
}

// ExitCode maps the result to the CLI's exit code.
func (r *Result) ExitCode() int {
	switch {
	case len(r.Scenarios) == 0:
		return ExitHarness
	case r.Count(Failed) > 0:
		return ExitFail
	case r.GodogStatus == 2:
		return ExitHarness
	case r.GodogStatus != 0:
		return ExitFail // undefined or pending steps under Strict
	}
	return ExitPass
}

// Failed returns the failed scenarios.
func (r *Result) Failed() []ScenarioResult {
	var out []ScenarioResult
	for _, s := range r.Scenarios {
		if s.Status == Failed {
			out = append(out, s)
		}
	}
	return out
}

// collector is the steps.Observer that gathers scenario results.
type collector struct {
	mu      sync.Mutex
	results []ScenarioResult
	p       *profile.Profile
}

func (c *collector) ScenarioDone(sc *godog.Scenario, err error, transcript []steps.Exchange) {
	tags := make([]string, 0, len(sc.Tags))
	for _, t := range sc.Tags {
		tags = append(tags, t.Name)
	}
	r := ScenarioResult{Name: sc.Name, URI: sc.Uri, Tags: tags, Rules: features.RulesOf(tags), Transcript: transcript}
	r.Feature = strings.TrimSuffix(filepath.Base(sc.Uri), ".feature")
	switch reason, untested := steps.Untested(err); {
	case err == nil:
		r.Status = Passed
	case untested:
		r.Status, r.Error = Untested, reason
	case errors.Is(err, godog.ErrSkip):
		r.Status, r.Error = Untested, "skipped"
	default:
		r.Status, r.Error = Failed, c.p.Redact(err.Error())
	}
	c.mu.Lock()
	c.results = append(c.results, r)
	c.mu.Unlock()
}

// Run runs the features matched by cfg.Tags against cfg.Profile's target.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if cfg.Profile == nil {
		return nil, errors.New("runner: no profile")
	}
	if err := cfg.Profile.Validate(); err != nil {
		return nil, fmt.Errorf("profile: %w", err)
	}
	conc := cfg.Concurrency
	if conc <= 0 {
		conc = 16
	}
	console := cfg.Console
	if console == nil {
		console = io.Discard
	}
	format := "progress"
	if cfg.OutDir != "" {
		if err := os.MkdirAll(cfg.OutDir, 0o755); err != nil {
			return nil, fmt.Errorf("create output folder: %w", err)
		}
		format += ",junit:" + filepath.Join(cfg.OutDir, "junit.xml") + ",cucumber:" + filepath.Join(cfg.OutDir, "cucumber.json")
	}
	col := &collector{p: cfg.Profile}
	suite := &steps.Suite{Profile: cfg.Profile, Client: newClient(), Observer: col}
	start := time.Now()
	status := godog.TestSuite{
		Name:                "invokeconf",
		ScenarioInitializer: suite.InitializeScenario,
		Options: &godog.Options{
			Format:         format,
			Output:         console,
			Paths:          []string{"."},
			FS:             features.FS,
			Tags:           cfg.Tags,
			Concurrency:    conc,
			Strict:         true,
			NoColors:       cfg.NoColors,
			DefaultContext: ctx,
		},
	}.Run()
	res := &Result{Scenarios: col.results, GodogStatus: status, Duration: time.Since(start)}
	sort.SliceStable(res.Scenarios, func(i, j int) bool {
		a, b := res.Scenarios[i], res.Scenarios[j]
		if a.URI != b.URI {
			return a.URI < b.URI
		}
		return a.Name < b.Name
	})
	return res, nil
}

// newClient returns the HTTP client the steps use: no overall timeout (that
// would cut streams; every request carries its own deadline), a dial timeout
// so an unreachable target fails fast, and no proxy: targets are reached
// directly.
func newClient() *http.Client {
	return &http.Client{Transport: &http.Transport{
		DialContext:           (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		MaxIdleConnsPerHost:   32,
		IdleConnTimeout:       30 * time.Second,
		ResponseHeaderTimeout: 0,
		DisableCompression:    true,
	}}
}
