package runner_test

import (
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/invokeconf/invokeconf/fakeserver"
	"github.com/invokeconf/invokeconf/internal/sweep"
	"github.com/invokeconf/invokeconf/testrun"
)

// sampleVariants run alone even when the complete sweep is off: the
// timing variants, whose effect the compatible group could mask.
var sampleVariants = []string{"plain-flush-timer", "pauses-overrun", "async-202"}

// TestEveryVariantPasses is the mirror image of the mutation test: each
// variant switch turns on a behaviour the spec allows, and the whole suite
// must still pass against it, one variant at a time and all compatible
// variants at once. A failure here is a check stricter than the spec. With
// INVOKECONF_FULL=1 every variant runs; otherwise all compatible variants
// at once, and alone the variants that conflict with them or change the
// suite's timing (sampleVariants), those --quick (the 20 s keepalive runs
// in the compatible run).
func TestEveryVariantPasses(t *testing.T) {
	t.Parallel()
	only := onlyMatching(t, "INVOKECONF_TEST_VARIANTS")
	runs := map[string][]string{}
	if only("all") {
		runs["all compatible variants"] = fakeserver.CompatibleVariants()
	}
	compatible := fakeserver.CompatibleVariants()
	for _, v := range fakeserver.Variants() {
		if only(v.Name) && (named("INVOKECONF_TEST_VARIANTS") || sweep.Includes(v.Name, sampleVariants) || !slices.Contains(compatible, v.Name)) {
			runs[v.Name] = []string{v.Name}
		}
	}
	var wg sync.WaitGroup // suiteRuns bounds the runs at once
	for name, variants := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tags := "" // the 20 s keepalive too
			if !sweep.Full() && len(variants) == 1 {
				tags = sampled("~@slow") // the keepalive and the cells in the compatible run only
			}
			res := runWith(t, tags, fakeserver.Config{Variants: variants})
			if len(res.Scenarios) == 0 {
				t.Errorf("variant %s: no scenario ran", name)
				return
			}
			if n := res.Count(testrun.Passed); !allPassed(t, res) {
				t.Errorf("variant %s (%s): %d of %d scenarios passed; the spec allows this behaviour:%s",
					name, strings.Join(variants, ", "), n, len(res.Scenarios), describe(res))
			}
		}()
	}
	wg.Wait()
}
