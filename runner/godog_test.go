package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/cucumber/godog"

	"github.com/invokeconf/invokeconf/features"
	"github.com/invokeconf/invokeconf/outcome"
	"github.com/invokeconf/invokeconf/testrun"
)

// TestGodogKeepsTheErrorChain: a structured failure a step returns, wrapped,
// reaches the After hook (and so the collector) with its chain intact.
func TestGodogKeepsTheErrorChain(t *testing.T) {
	feature := "Feature: f\n  Scenario: fails\n    Given a step that fails\n    Then a step that is skipped\n"
	var got error
	status := godog.TestSuite{
		ScenarioInitializer: func(sc *godog.ScenarioContext) {
			sc.Step(`^a step that fails$`, func() error {
				return fmt.Errorf("in context: %w", outcome.Fail("the status", "401", "403"))
			})
			sc.Step(`^a step that is skipped$`, func() error { return nil })
			sc.After(func(ctx context.Context, _ *godog.Scenario, err error) (context.Context, error) {
				got = err
				return ctx, nil
			})
		},
		Options: &godog.Options{Format: "progress", Output: io.Discard, FS: fstest.MapFS{"f.feature": {Data: []byte(feature)}},
			Paths: []string{"."}, Strict: true},
	}.Run()
	f, ok := outcome.AsFailure(got)
	if status != 1 || !ok || f.Expected != "401" || f.Actual != "403" {
		t.Fatalf("godog status %d; the After hook got %v (%T), want the outcome.Failure inside", status, got, got)
	}
}

// TestMatchTagsAgreesWithGodog: for tag expressions of every shape the
// runner builds, matchTags selects exactly the pickles godog runs.
func TestMatchTagsAgreesWithGodog(t *testing.T) {
	pickles, err := features.Pickles()
	if err != nil {
		t.Fatal(err)
	}
	for _, expr := range []string{
		"@sse", "~@slow", "@SSE-01,@SSE-02", "@sse && ~@slow", "@auth,@errors && ~@slow && ~@scripted",
		"@capability-bundles", "~@capability-researchMode && ~@needs-bundleTestHooks",
	} {
		ran := godogRuns(t, expr)
		var want []string
		for _, pk := range pickles {
			if matchTags(expr, pk.Tags) {
				want = append(want, pk.Key())
			}
		}
		sort.Strings(want)
		if len(want) == 0 {
			t.Errorf("%q selects nothing: the comparison would prove nothing", expr)
		}
		if strings.Join(ran, "\n") != strings.Join(want, "\n") {
			t.Errorf("%q: godog runs %d pickles, matchTags selects %d", expr, len(ran), len(want))
		}
	}
}

// TestEveryPickleIsMatchedOnce: what godog hands a hook (file, name, step
// texts) names exactly one planned pickle, for every pickle of the
// features.
func TestEveryPickleIsMatchedOnce(t *testing.T) {
	pickles, err := features.Pickles()
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]int{}
	for _, pk := range pickles {
		keys[pk.Key()]++
	}
	ran := godogRuns(t, "")
	if len(ran) != len(pickles) {
		t.Errorf("godog runs %d pickles, the features hold %d", len(ran), len(pickles))
	}
	for _, k := range ran {
		if keys[k] != 1 {
			t.Errorf("godog's pickle %q matches %d planned pickles, want 1", strings.ReplaceAll(k, "\x00", " | "), keys[k])
		}
	}
}

// godogRuns returns the keys of the pickles godog runs for a tag
// expression, every step a no-op.
func godogRuns(t *testing.T, expr string) []string {
	t.Helper()
	var mu sync.Mutex
	var ran []string
	opts := godogOptions(context.Background(), "progress", io.Discard, &testrun.Plan{Expr: expr}, 4)
	opts.Strict = false
	godog.TestSuite{
		ScenarioInitializer: func(sc *godog.ScenarioContext) {
			sc.Before(func(ctx context.Context, gsc *godog.Scenario) (context.Context, error) {
				texts := make([]string, 0, len(gsc.Steps))
				for _, st := range gsc.Steps {
					texts = append(texts, features.StepText(st))
				}
				mu.Lock()
				ran = append(ran, features.PickleKey(gsc.Uri, gsc.Name, texts))
				mu.Unlock()
				return ctx, errors.New("recorded") // skip the steps
			})
		},
		Options: opts,
	}.Run()
	sort.Strings(ran)
	return ran
}
