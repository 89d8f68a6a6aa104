package runner_test

import (
	"bytes"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/invokeconf/invokeconf/features"
	"github.com/invokeconf/invokeconf/fixtures"
	"github.com/invokeconf/invokeconf/internal/sweep"
	"github.com/invokeconf/invokeconf/runner"
	"github.com/invokeconf/invokeconf/steps"
	"github.com/invokeconf/invokeconf/testrun"
)

// hostileBudget is what a hostile target sends at most per response, as
// the target the issue was measured against did: far past what the
// harness reads (steps.MaxBody).
const hostileBudget = 300 << 20

// hostileTargets answer every request with far more than the harness reads.
var hostileTargets = map[string]func(w http.ResponseWriter, r *http.Request){
	// Random bytes, in the form the request asked for.
	"garbage": func(w http.ResponseWriter, r *http.Request) {
		ct := map[string]string{"text/event-stream": "text/event-stream", "application/json": "application/json"}[r.Header.Get("Accept")]
		if ct == "" {
			ct = "text/plain"
		}
		w.Header().Set("Content-Type", ct)
		w.Header().Set("X-SVC-Thread-Id", "thr_garbage")
		writeUpTo(w, r, garbageBlock, hostileBudget)
	},
	// One line that never ends.
	"long line": func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("X-SVC-Thread-Id", "thr_line")
		writeUpTo(w, r, bytes.Repeat([]byte("x"), 64<<10), hostileBudget)
	},
	// A valid event stream that never ends.
	"endless SSE": func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("X-SVC-Thread-Id", "thr_endless")
		frame := []byte(`data: {"content":"` + strings.Repeat("y", 4000) + `","runID":"r1","threadID":"thr_endless"}` + "\n\n")
		writeUpTo(w, r, bytes.Repeat(frame, 16), hostileBudget)
	},
	// A flood of headers, just under the harness's bound
	// (runner.MaxResponseHeader), and a body past its bound.
	"header flood": func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "text/event-stream")
		for i := range runner.MaxResponseHeader/220 - 10 {
			h["X-Flood-"+strconv.Itoa(i)] = []string{strings.Repeat("h", 200)}
		}
		writeUpTo(w, r, garbageBlock, 16<<20)
	},
}

var garbageBlock = func() []byte {
	b := make([]byte, 64<<10)
	rng := rand.New(rand.NewPCG(7, 7))
	for i := range b {
		b[i] = byte(rng.UintN(256))
	}
	return b
}()

// writeUpTo writes block again and again until budget bytes went or the
// client left.
func writeUpTo(w http.ResponseWriter, r *http.Request, block []byte, budget int) {
	rc := http.NewResponseController(w)
	for sent := 0; sent < budget && r.Context().Err() == nil; sent += len(block) {
		if _, err := w.Write(block); err != nil {
			return
		}
		_ = rc.Flush()
	}
}

// liveHeap is a Console for a run that measures the live heap (after a
// collection) as each scenario ends: a harness that keeps what finished
// scenarios read grows with every one.
type liveHeap struct {
	mu    sync.Mutex
	after []uint64
}

func (l *liveHeap) Write(p []byte) (int, error) {
	if bytes.HasPrefix(p, []byte("[")) { // a scenario's progress line
		n := liveNow()
		l.mu.Lock()
		l.after = append(l.after, n)
		l.mu.Unlock()
	}
	return len(p), nil
}

// peakRSS returns the process's peak resident set (VmHWM), having reset it
// first when reset (Linux; 0 where it cannot be read).
func peakRSS(reset bool) uint64 {
	if reset {
		_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
		return 0
	}
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// TestHostileTargetMemoryIsBounded: against a target that answers every
// request with 300 MB (random bytes, one endless line, an endless valid
// stream) or floods its headers, what a finished scenario read is let go
// once its transcript is taken: the live heap (measured after a collection
// as each scenario ends, so it counts what is kept, not what awaits the
// collector) holds, past what it held before the run, at most the
// scenarios in flight, and after the last one only the results (bounded
// transcripts).
//
// Sampled (go test): a few scenarios against random bytes and the header
// flood, one at a time: at most
// eight times steps.MaxBody past the start as each ends (one scenario's
// reads: two bodies at MaxBody, each held about four times while judged),
// 32 MiB after the last. With
// INVOKECONF_FULL=1: every form, every hostile area, 16 at once (the run's default),
// under runner.MemoryLimit as `invokeconf run` sets it: 32 MiB after the
// last beside twice the bytes of the results' transcripts (bounded per
// exchange), and the process's peak resident set under 512 MB (Linux).
func TestHostileTargetMemoryIsBounded(t *testing.T) {
	// Of the cells, the sample takes the async rows (a cell's answer cut at
	// the bound must not pass); the full sweep takes every row.
	sel := testrun.Selection{Tags: "@FMT-01,@FMT-02,@FMT-03,@SSE-03,@THREAD-01,@ASYNC-02,@ERR-02 && ~@cells,@ASYNC-01", Quick: true}
	conc := 1
	if sweep.Full() {
		sel, conc = testrun.Selection{Areas: hostileAreas, Quick: true}, 16
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(runner.MemoryLimit))
	}
	idx, err := features.RuleIndex()
	if err != nil {
		t.Fatal(err)
	}
	for name, h := range hostileTargets {
		if !sweep.Includes(name, []string{"garbage", "header flood"}) {
			continue
		}
		t.Run(name, func(t *testing.T) {
			ts := httptest.NewServer(http.HandlerFunc(h))
			defer ts.Close()
			p, err := fixtures.Reference()
			if err != nil {
				t.Fatal(err)
			}
			p.BaseURL = ts.URL
			plan, err := runner.NewPlan(p, sel)
			if err != nil {
				t.Fatal(err)
			}
			live := &liveHeap{}
			before := liveNow()
			peakRSS(true)
			res, err := runSuite(runner.Config{Profile: p, Plan: plan, Console: live, Concurrency: conc})
			if err != nil {
				t.Fatal(err)
			}
			rss := peakRSS(false)
			if len(live.after) < 5 {
				t.Fatalf("%d scenarios measured: the test proves nothing", len(live.after))
			}
			// A target that answers nothing valid passes nothing: a row
			// whose answer was cut at the bound judged nothing. The scope
			// rows (area auth) judge the status alone, which the target's
			// 200 answers, and may pass.
			for _, s := range res.Scenarios {
				if s.Status == testrun.Passed && !onlyArea(idx, s.Rules, "auth") {
					t.Errorf("%s (%s) passed against a target that answers nothing valid", s.ID, s.Name)
				}
			}
			most, last := slicesMax(live.after), live.after[len(live.after)-1]
			t.Logf("live heap before the run %d MiB; as each of %d scenarios ended: at most %d MiB, after the last %d MiB; peak RSS %d MiB",
				before>>20, len(live.after), most>>20, last>>20, rss>>20)
			if conc == 1 && most > before+8*steps.MaxBody {
				t.Errorf("the live heap reached %d MiB (%d MiB before the run) with one scenario at a time: finished scenarios keep what they read",
					most>>20, before>>20)
			}
			// The results keep each scenario's transcript, bounded per
			// exchange (16 KiB of a body, 16 KiB of headers): the more
			// scenarios, the more they hold, twice their bytes allowed
			// for maps and strings.
			if kept := transcriptBytes(res); last > before+32<<20+2*kept {
				t.Errorf("after the last scenario the live heap holds %d MiB (%d MiB before the run, %d MiB of transcripts in the results): finished scenarios keep what they read",
					last>>20, before>>20, kept>>20)
			}
			if sweep.Full() && rss > 512<<20 {
				t.Errorf("peak resident set %d MiB, want under 512 MiB", rss>>20)
			}
		})
	}
}

// onlyArea reports whether every rule of a scenario is of one area.
func onlyArea(idx map[string]features.Rule, rules []string, area string) bool {
	for _, id := range rules {
		if idx[id].Area != area {
			return false
		}
	}
	return len(rules) > 0
}

// liveNow returns the live heap after a collection.
func liveNow() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// transcriptBytes counts the bytes of the transcripts res keeps.
func transcriptBytes(res *testrun.Result) uint64 {
	var n int
	for _, s := range res.Scenarios {
		for _, ex := range s.Transcript {
			n += len(ex.Method) + len(ex.URL) + len(ex.Body) + len(ex.RespBody) + len(ex.Elapsed) + len(ex.Error)
			for _, h := range []http.Header{ex.Header, ex.RespHeader} {
				for k, vs := range h {
					n += len(k)
					for _, v := range vs {
						n += len(v)
					}
				}
			}
		}
	}
	return uint64(n)
}

func slicesMax(xs []uint64) uint64 {
	m := uint64(0)
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}
