package steps

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/invokeconf/invokeconf/internal/sweep"
	"github.com/invokeconf/invokeconf/outcome"
)

// hostileWorld is a World against a test target, with the harness's client.
func hostileWorld(t *testing.T, h http.Handler, deadline time.Duration) *World {
	t.Helper()
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	w := testWorld(t)
	w.P.BaseURL = ts.URL
	w.client = Client(nil)
	w.deadline = deadline
	return w
}

// endless writes chunk until the client goes, pausing between writes.
func endless(chunk string, pause time.Duration) http.HandlerFunc {
	return endlessUpTo(chunk, pause, -1)
}

// endlessUpTo is endless, but ends the body once it has written budget
// bytes (a negative budget: never). A harness that bounds its reads stops
// long before; one that does not reads the whole body and says it was
// complete, so a test fails on the bytes it read, never on a clock.
func endlessUpTo(chunk string, pause time.Duration, budget int64) http.HandlerFunc {
	return func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(rw)
		tick := time.NewTicker(max(pause, time.Microsecond))
		defer tick.Stop()
		var written int64
		for budget < 0 || written < budget {
			n, err := rw.Write([]byte(chunk))
			written += int64(n)
			if err != nil {
				return
			}
			_ = rc.Flush()
			if pause > 0 {
				select {
				case <-r.Context().Done():
					return
				case <-tick.C:
				}
			}
		}
	}
}

// peakHeap samples the heap while fn runs and returns the highest figure.
func peakHeap(fn func()) uint64 {
	runtime.GC()
	var peak atomic.Uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var ms runtime.MemStats
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > peak.Load() {
				peak.Store(ms.HeapAlloc)
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	fn()
	close(done)
	wg.Wait()
	return peak.Load()
}

// TestHugeAndEndlessBodiesAreBounded: a body past its limit ends the read
// with a clear failure, an invoke's at MaxBody and a follow-up's at
// maxFollowUpBody, and the harness's heap stays far under 512 MB with as
// many such responses at once as a run has scenarios at once (16), each
// with a follow-up call under way.
//
// Only bytes end a read here, never the clock, so a loaded machine that
// reads slowly passes as a quiet one does: the deadline is an hour, and
// the target ends its body at twice MaxBody, so a harness that stopped
// bounding its reads would read a complete body and fail the test at once
// instead of hanging.
//
// With INVOKECONF_FULL=1, 16 at once; otherwise 8, the heap bound scaled
// with them: 32 MiB, and twice MaxBody and 2 MiB per invoke and its
// follow-up (192 MiB for 16). A harness that kept a second copy of each body, or read past its
// limit, exceeds it either way.
func TestHugeAndEndlessBodiesAreBounded(t *testing.T) {
	frame := "data: {\"content\":\"" + strings.Repeat("x", 64<<10) + "\"}\n\n"
	line := strings.Repeat("y", 64<<10) // one endless SSE line
	const budget = 2 * MaxBody
	for _, tc := range []struct {
		name   string
		target http.Handler
	}{
		{"endless frames", endlessUpTo(frame, 0, budget)},
		{"one endless line", endlessUpTo(line, 0, budget)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := hostileWorld(t, tc.target, time.Hour)
			parallel := 8
			if sweep.Full() {
				parallel = 16
			}
			errs := make([]error, 2*parallel)
			peak := peakHeap(func() {
				var wg sync.WaitGroup
				for i := range parallel {
					wg.Add(2)
					go func() {
						defer wg.Done()
						rq, _ := w.keyed("agent", map[string]string{"Accept": "text/event-stream"}, "POST", "/api/invoke/x", new(string))
						resp, err := w.do(rq)
						if err == nil {
							err = resp.Err
						}
						errs[i] = err
					}()
					go func() {
						defer wg.Done()
						_, errs[parallel+i] = w.fetch("GET", "/api/threads/x", "")
					}()
				}
				wg.Wait()
			})
			for i, err := range errs {
				var tooLarge *BodyTooLargeError
				want := "the body exceeded " + sizeText(MaxBody)
				if i >= parallel {
					want = "the body exceeded " + sizeText(maxFollowUpBody)
				}
				if i < parallel && !errors.As(err, &tooLarge) || err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("request %d: %v, want %s", i, trim(err), want)
				}
			}
			if limit := uint64(32<<20 + parallel*(2*MaxBody+2<<20)); peak > limit {
				t.Errorf("peak heap %d MiB with %d huge responses at once, want under %d MiB", peak>>20, 2*parallel, limit>>20)
			}
			t.Logf("peak heap %d MiB", peak>>20)
			for _, e := range w.Transcript() {
				if len(e.RespBody) > maxTranscriptBody+64 {
					t.Errorf("a transcript keeps %d bytes of a body", len(e.RespBody))
				}
			}
		})
	}
}

// TestTrickleIsBoundedByTheDeadline: a target that sends a byte at a time
// for ever ends at the deadline, with a bounded list of reads.
func TestTrickleIsBoundedByTheDeadline(t *testing.T) {
	w := hostileWorld(t, endless(":", 50*time.Microsecond), 500*time.Millisecond)
	rq, _ := w.keyed("agent", nil, "POST", "/api/invoke/x", new(string))
	start := time.Now()
	resp, err := w.do(rq)
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("the read took %s with a deadline of 500ms", took)
	}
	if resp.Complete || resp.Err == nil || !strings.Contains(resp.Err.Error(), "did not end within") {
		t.Errorf("Err = %v, want the deadline named", resp.Err)
	}
	chunks := resp.Response.Body.Chunks
	if max := int(500*time.Millisecond/readGrain) + 1; len(chunks) > max {
		t.Errorf("%d reads kept for %d bytes, want at most %d", len(chunks), len(resp.Body()), max)
	}
	if len(chunks) == 0 || resp.ArrivalOf(len(resp.Body())) != chunks[len(chunks)-1].At {
		t.Error("the last read must end at the body's end")
	}
}

// TestErrorMessagesAreBounded: a failure that quotes a whole huge body is
// cut, redacted first, before anyone sees it.
func TestErrorMessagesAreBounded(t *testing.T) {
	w := testWorld(t)
	big := errors.New(strings.Repeat("z", 10<<20))
	if got := w.settle(&Def{}, big).Error(); len(got) > maxMessage+64 {
		t.Errorf("a message of %d bytes", len(got))
	}
}

func trim(err error) string {
	if err == nil {
		return "<nil>"
	}
	s := err.Error()
	return s[:min(len(s), 300)]
}

// TestRedirectIsAnAnswer: the harness's client answers a redirect with the
// redirect itself, key and body never sent on, and a failure after it
// names the Location.
func TestRedirectIsAnAnswer(t *testing.T) {
	var reached atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached.Add(1) }))
	defer other.Close()
	w := hostileWorld(t, http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		http.Redirect(rw, r, other.URL+"/stolen", http.StatusTemporaryRedirect)
	}), 5*time.Second)
	body := "prompt"
	rq, _ := w.keyed("agent", nil, "POST", "/api/invoke/x", &body)
	resp, err := w.do(rq)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status() != http.StatusTemporaryRedirect || reached.Load() != 0 {
		t.Fatalf("status %d, %d requests reached the other host", resp.Status(), reached.Load())
	}
	err = w.settle(&Def{}, outcome.Fail("the status", "200", "307"))
	f, _ := outcome.AsFailure(err)
	if want := `Location: "` + other.URL + `/stolen"`; !strings.Contains(err.Error(), want) || f == nil || !strings.Contains(f.Actual, want) {
		t.Errorf("the failure does not name the Location: %v", err)
	}
	if again := w.settle(&Def{}, err).Error(); strings.Count(again, "Location") != 1 {
		t.Errorf("settling twice repeats the note: %s", again)
	}
}
