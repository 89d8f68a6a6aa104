package runner_test

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/invokeconf/invokeconf/fakeserver"
	"github.com/invokeconf/invokeconf/features"
	"github.com/invokeconf/invokeconf/runner"
)

// runAgainst runs the scenarios matched by tags against a fresh reference
// server with the given defects switched on.
func runAgainst(t *testing.T, tags string, defects ...string) *runner.Result {
	t.Helper()
	return runWith(t, tags, fakeserver.Config{Defects: defects})
}

// runWith runs the scenarios matched by tags against a fresh reference
// server configured by cfg (defects, variants).
func runWith(t *testing.T, tags string, cfg fakeserver.Config) *runner.Result {
	t.Helper()
	p := startReference(t, cfg)
	res, err := runner.Run(context.Background(), runner.Config{Profile: p, Tags: tags})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// onlyMatching returns a filter from the regular expression in the named
// environment variable (all names when it is unset), so a developer can run
// the mutation or variant test for the switches they work on.
func onlyMatching(t *testing.T, env string) func(name string) bool {
	expr := os.Getenv(env)
	if expr == "" {
		return func(string) bool { return true }
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		t.Fatalf("%s: %v", env, err)
	}
	return re.MatchString
}

func describe(res *runner.Result) string {
	var b strings.Builder
	for _, s := range res.Scenarios {
		if s.Status != runner.Passed {
			fmt.Fprintf(&b, "\n  %s %s [%s]: %s", s.Status, s.Name, strings.Join(s.Rules, " "), s.Error)
		}
	}
	return b.String()
}

// TestCleanServerPasses: the reference server passes every scenario, the
// 20 s keepalive included, and none is left untested.
func TestCleanServerPasses(t *testing.T) {
	// Not parallel: it must pass every timing rule, so it does not share the
	// machine with the mutation runs (parallel tests start after it).
	res := runAgainst(t, "")
	if len(res.Scenarios) == 0 {
		t.Fatal("no scenario ran")
	}
	if res.Count(runner.Passed) != len(res.Scenarios) || exitCode(t, res) != runner.ExitPass {
		t.Fatalf("clean server: %d of %d passed, exit %d:%s", res.Count(runner.Passed), len(res.Scenarios), exitCode(t, res), describe(res))
	}
}

// TestEveryDefectIsCaught is the mutation test: each defect switch turns at
// least one scenario of the rules it breaks red.
func TestEveryDefectIsCaught(t *testing.T) {
	t.Parallel()
	idx, err := features.RuleIndex()
	if err != nil {
		t.Fatal(err)
	}
	sem := make(chan struct{}, 6)
	var wg sync.WaitGroup
	only := onlyMatching(t, "INVOKECONF_TEST_DEFECTS")
	for _, d := range fakeserver.Defects() {
		if !only(d.Name) {
			continue
		}
		var tags []string
		for _, id := range d.Rules {
			if _, ok := idx[id]; !ok {
				t.Errorf("defect %s names unknown rule %s", d.Name, id)
			}
			tags = append(tags, "@"+id)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			res := runAgainst(t, strings.Join(tags, ","), d.Name)
			if len(res.Scenarios) == 0 {
				t.Errorf("defect %s: no scenario is tagged %s", d.Name, strings.Join(tags, ","))
				return
			}
			if res.Count(runner.Failed) == 0 {
				t.Errorf("defect %s (%s) went unnoticed by %d scenarios of %s:%s", d.Name, d.Description,
					len(res.Scenarios), strings.Join(d.Rules, ","), describe(res))
			}
		}()
	}
	wg.Wait()
}

// TestEveryCheckedRuleHasADefect: a rule the suite claims to check must be
// shown to fail against a server that breaks it.
func TestEveryCheckedRuleHasADefect(t *testing.T) {
	rules, err := features.Rules()
	if err != nil {
		t.Fatal(err)
	}
	scenarios, err := features.Scenarios()
	if err != nil {
		t.Fatal(err)
	}
	checked := map[string]bool{}
	for _, sc := range scenarios {
		for _, id := range sc.Rules {
			checked[id] = true
		}
	}
	broken := map[string]bool{}
	for _, d := range fakeserver.Defects() {
		for _, id := range d.Rules {
			broken[id] = true
		}
	}
	var missing []string
	for _, r := range rules {
		if checked[r.ID] && !broken[r.ID] {
			missing = append(missing, r.ID)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Fatalf("rules with scenarios but no defect switch to show they can fail: %s", strings.Join(missing, ", "))
	}
}
