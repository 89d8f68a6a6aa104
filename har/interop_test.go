package har_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/invokeconf/invokeconf/checks"
	"github.com/invokeconf/invokeconf/har"
	"github.com/invokeconf/invokeconf/traffic"
)

// outsideExpect is what the judgement of one outside recording must be:
// the recorder (the file's name up to "-clean" or "-defects") and the
// server it recorded (clean, or with the defects no-close, richer-merged,
// openai-errors and events-first-run, .ci/interop-passive.sh) decide it.
type outsideExpect struct {
	// fail: the rules that must fail, and no other.
	fail []string
	// untested: rules that must be untested, with a piece of the reason.
	untested map[string]string
	// pass: rules that must pass.
	pass []string
}

// Rules every outside recording of the plan (.ci/interop/plan.mjs)
// decides, as the reference server keeps them.
var outsidePass = []string{"THREAD-01", "THREAD-02", "THREAD-03", "THREAD-04", "FMT-02", "FMT-03", "FMT-04", "FMT-05",
	"SSE-02", "SSE-06", "SSE-07", "EVT-01", "EVT-02", "EVT-04", "EVT-05", "EVT-06", "EVT-07",
	"ASYNC-02", "ASYNC-03", "ASYNC-04", "ERR-02", "ERR-03", "ERR-10", "BUNDLE-01", "BUNDLE-05", "DROP-04"}

// Neither recorder writes chunk timings: every timing rule is untested.
var outsideUntimed = map[string]string{"SSE-04": checks.NoTimings, "FMT-06": checks.NoTimings, "ASYNC-06": checks.NoTimings,
	"FMT-01": checks.NoTimings, "SSE-01": checks.NoTimings, "ASYNC-01": checks.NoTimings}

// defectRules are the rules the defects break.
var defectRules = []string{"SSE-05", "EVT-04", "ERR-10", "ASYNC-03"}

func without(ids []string, drop ...string) []string {
	var out []string
	for _, id := range ids {
		if !slices.Contains(drop, id) {
			out = append(out, id)
		}
	}
	return out
}

func withUntested(extra map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range outsideUntimed {
		out[k] = v
	}
	for k, v := range extra {
		out[k] = v
	}
	return out
}

var outsideExpects = map[string]outsideExpect{
	"mitmproxy-clean":  {untested: outsideUntimed, pass: append([]string{"SSE-03", "SSE-05"}, outsidePass...)},
	"chrome-har-clean": {untested: outsideUntimed, pass: append([]string{"SSE-03", "SSE-05"}, outsidePass...)},
	// mitmproxy writes only whole answers: every violation shows.
	"mitmproxy-defects": {fail: defectRules, untested: outsideUntimed, pass: without(outsidePass, defectRules...)},
	// chrome-har does not say how a body ended: a stream without its
	// close frame may be one the page stopped reading.
	"chrome-har-defects": {fail: without(defectRules, "SSE-05"), untested: withUntested(map[string]string{"SSE-05": checks.NoEnd}),
		pass: without(outsidePass, defectRules...)},
}

// TestOutsideRecordings judges HAR files that recorders this project does
// not write made of the reference server's traffic (har/testdata/interop,
// recorded by .ci/interop-passive.sh, keys replaced; with
// INVOKECONF_INTEROP_DIR set, the fresh recordings there too): no failure
// on clean traffic, each recorder's gaps untested with their reasons, and
// a broken server's violations caught where the recorder shows them.
func TestOutsideRecordings(t *testing.T) {
	files, _ := filepath.Glob("testdata/interop/*.har")
	if dir := os.Getenv("INVOKECONF_INTEROP_DIR"); dir != "" {
		fresh, _ := filepath.Glob(filepath.Join(dir, "*.har"))
		if len(fresh) != len(outsideExpects) {
			t.Errorf("%s holds %d recordings, want %d", dir, len(fresh), len(outsideExpects))
		}
		files = append(files, fresh...)
	}
	if len(files) == 0 {
		t.Fatal("no outside recording")
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".har")
		t.Run(file, func(t *testing.T) {
			want, ok := outsideExpects[name]
			if !ok {
				t.Fatalf("no expectation for %s", name)
			}
			f, err := os.Open(file)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			j := checks.NewJudgement()
			j.SetReportLag(time.Second) // the plan waits 1.5 s before the follow-ups
			r := har.NewReader(f, traffic.NewRecorder(0, nil))
			n := 0
			for {
				x, err := r.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				n++
				if x.Response != nil {
					j.Add(&x)
				}
			}
			if n < 20 {
				t.Errorf("%d exchanges", n)
			}
			s := j.Summary()
			var failed []string
			byRule := map[string]checks.RuleVerdict{}
			for _, v := range s.Verdicts {
				byRule[v.Rule] = v
				if v.Verdict == checks.Fail {
					failed = append(failed, v.Rule)
				}
			}
			sort.Strings(failed)
			wantFail := append([]string(nil), want.fail...)
			sort.Strings(wantFail)
			if !slices.Equal(failed, wantFail) {
				for _, id := range failed {
					for _, fd := range byRule[id].Failures {
						t.Logf("%s: %v", id, fd)
					}
				}
				t.Errorf("failed %v, want %v", failed, wantFail)
			}
			for id, why := range want.untested {
				if v := byRule[id]; v.Verdict != checks.Untested || !strings.Contains(v.Reason, why) {
					t.Errorf("%s: %s (%s), want untested: ...%s...", id, v.Verdict, v.Reason, why)
				}
			}
			for _, id := range want.pass {
				if v := byRule[id]; v.Verdict != checks.Pass {
					t.Errorf("%s: %s (%s), want pass", id, v.Verdict, v.Reason)
				}
			}
			t.Logf("%s: %s", name, s.Headline)
		})
	}
}
