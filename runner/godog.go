package runner

// Everything that knows how godog (v0.15) behaves lives here, and
// godog_test.go pins each assumption against a real godog run, so that an
// upgrade fails a test, not a certification:
//
//   - a step's error reaches the After hook unchanged, so errors.As finds
//     an outcome.Failure in it (TestGodogKeepsTheErrorChain);
//   - a panicking step arrives as godog's private *traceError, the only sign
//     of a panic (stepPanicked, TestClassify);
//   - godog's tag filter is internal: matchTags is a copy of its
//     evaluation, compared with godog's own filtering on every feature file
//     (TestMatchTagsAgreesWithGodog);
//   - godog hands hooks a scenario's file, name and step texts, which
//     identify a planned pickle (features.PickleKey;
//     TestEveryPickleIsMatchedOnce);
//   - Strict turns undefined and pending steps into failures; Options must
//     never be nil (godog would read os.Args); a tag expression that matches
//     nothing runs nothing and says "passed" (the runner counts scenarios
//     itself).

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cucumber/godog"

	"github.com/invokeconf/invokeconf/features"
	"github.com/invokeconf/invokeconf/testrun"
)

// godogOptions are the options of every run: the embedded features,
// strict, and the console left to the collector (godog's own progress dots
// would interleave with its lines): godog's output is cucumber.json or
// nothing. NoColors is off because it costs: godog's colourless writer
// strips escapes one rune at a time through fmt (a tenth of a second for a
// quick run's cucumber.json), while its coloured one passes JSON through
// as it is; the texts in it carry no escapes (safetext made them visible).
func godogOptions(ctx context.Context, format string, output io.Writer, plan *testrun.Plan, concurrency int) *godog.Options {
	return &godog.Options{
		Format:         format,
		Output:         output,
		Paths:          featureOrder(plan),
		FS:             features.FS,
		Tags:           plan.Expr,
		Concurrency:    concurrency,
		Strict:         true,
		DefaultContext: ctx,
	}
}

// featureOrder lists the feature files of the scenarios a plan runs,
// those with the longest scenarios first: godog runs features in the order
// of its paths, and scenarios in file order, as slots of its concurrency
// free up, so a run lasts about as long as its longest scenario only when
// that one starts early. A scenario's length is what its agent scripts
// pause for; scenarios the plan does not run (the @slow ones of a quick
// run) do not count. Of two as long, the one with fewer scenarios goes
// first.
func featureOrder(plan *testrun.Plan) []string {
	longest, count := map[string]time.Duration{}, map[string]int{}
	for _, s := range plan.Scenarios {
		if s.Status == testrun.Runs {
			longest[s.File] = max(longest[s.File], scriptLength(s.Steps))
			count[s.File]++
		}
	}
	if len(longest) == 0 {
		return []string{"."} // godog runs nothing, or reports why
	}
	files := make([]string, 0, len(longest))
	for f := range longest {
		files = append(files, f)
	}
	sort.Slice(files, func(i, j int) bool {
		a, b := files[i], files[j]
		if longest[a] != longest[b] {
			return longest[a] > longest[b]
		}
		if count[a] != count[b] {
			return count[a] < count[b] // the fewer delay the next one's long scenario less
		}
		return a < b
	})
	return files
}

var (
	pauseLine = regexp.MustCompile(`@pause (\S+)`)
	everyLine = regexp.MustCompile(`(\d+) times, every (\S+)`)
)

// scriptLength is how long a scenario's agent scripts pause, in all.
func scriptLength(steps []string) time.Duration {
	var d time.Duration
	for _, st := range steps {
		for _, m := range pauseLine.FindAllStringSubmatch(st, -1) {
			if p, err := time.ParseDuration(m[1]); err == nil {
				d += p
			}
		}
		for _, m := range everyLine.FindAllStringSubmatch(st, -1) {
			n, _ := strconv.Atoi(m[1])
			if p, err := time.ParseDuration(m[2]); err == nil {
				d += time.Duration(n) * p
			}
		}
	}
	return d
}

// stepPanicked reports whether godog says a step panicked: it wraps the
// panic in its private *traceError and nothing else.
func stepPanicked(err error) bool {
	return fmt.Sprintf("%T", err) == "*godog.traceError"
}

var tagToken = regexp.MustCompile(`^~?@?[^\s,&~@]+$`)

// checkTagExpr rejects expressions godog would misread or panic on (an empty
// alternative such as "@a,,@b").
func checkTagExpr(expr string) error {
	if expr == "" {
		return nil
	}
	for _, and := range strings.Split(expr, "&&") {
		for _, tok := range strings.Split(and, ",") {
			if !tagToken.MatchString(strings.TrimSpace(tok)) {
				return &SelectionError{fmt.Sprintf("--tags %q: %q is not a tag (write @tag or ~@tag, join with , for or and && for and)", expr, strings.TrimSpace(tok))}
			}
		}
	}
	return nil
}

// matchTags evaluates a godog tag expression the way godog v0.15 does:
// groups joined by && must all hold; within a group, alternatives joined by
// commas, any one of which holds; ~ negates.
func matchTags(expr string, tags []string) bool {
	if expr == "" {
		return true
	}
	has := map[string]bool{}
	for _, t := range tags {
		has[strings.TrimPrefix(t, "@")] = true
	}
	for _, and := range strings.Split(expr, "&&") {
		ok := false
		for _, tok := range strings.Split(and, ",") {
			tok = strings.ReplaceAll(strings.TrimSpace(tok), "@", "")
			if neg, found := strings.CutPrefix(tok, "~"); found {
				ok = ok || !has[neg]
			} else {
				ok = ok || has[tok]
			}
		}
		if !ok {
			return false
		}
	}
	return true
}
