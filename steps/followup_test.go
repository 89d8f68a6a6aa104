package steps

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/invokeconf/invokeconf/outcome"
)

// TestFollowUpFailures: the follow-up routes' checks, made through
// httpexpect and gomega, fail as outcome.Failure with the target's values,
// and pass on every legal answer (any 2xx, an ID of any JSON scalar type,
// no Content-Type demanded).
func TestFollowUpFailures(t *testing.T) {
	thread := func(status int, ctype, body string) http.HandlerFunc {
		return func(rw http.ResponseWriter, r *http.Request) {
			if ctype != "" {
				rw.Header().Set("Content-Type", ctype)
			}
			rw.WriteHeader(status)
			fmt.Fprint(rw, body)
		}
	}
	tests := []struct {
		name          string
		target        http.Handler
		call          func(w *World) error
		expected, got string // empty: the call passes
	}{
		{"run named", thread(200, "application/json", `{"lastRunID":"run_1"}`),
			func(w *World) error { return w.waitFinished("R", "T") }, "", ""},
		{"numeric run ID", thread(203, "", `{"lastRunID":7}`),
			func(w *World) error { w.runs["R"] = "7"; return w.waitFinished("R", "T") }, "", ""},
		{"hidden thread", thread(404, "application/json", `{"error":"no such thread"}`),
			func(w *World) error { return w.waitFinished("R", "T") }, "a 2xx status", "status 404"},
		{"not an object", thread(200, "application/json", `["run_1"]`),
			func(w *World) error { return w.waitFinished("R", "T") }, "a JSON object with lastRunID", `["run_1"]`},
		{"never finishes", thread(200, "application/json", `{"lastRunID":"run_0"}`),
			func(w *World) error { return w.waitFinished("R", "T") }, "run R (run_1)", "run_0"},
		{"events lack the answer", thread(200, "application/json", `{"lastRunID":"run_2","events":[]}`),
			func(w *World) error { return w.threadRan("T", "hello", "run_1", "spec") }, `"hello"`, `events`},
		{"lastRunID stays", thread(200, "application/json", `{"lastRunID":"run_1"}`),
			func(w *World) error { return w.threadRan("T", "hello", "run_1", "spec") }, "not the thread's earlier \"run_1\"", "run_1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := hostileWorld(t, tc.target, 400*time.Millisecond)
			w.threads["T"], w.runs["R"] = "thr_1", "run_1"
			err := tc.call(w)
			if tc.expected == "" {
				if err != nil {
					t.Fatalf("a legal answer failed: %v", err)
				}
				return
			}
			f, ok := outcome.AsFailure(err)
			if !ok {
				t.Fatalf("got %v, want an outcome.Failure", err)
			}
			if !strings.Contains(f.Expected, tc.expected) || !strings.Contains(f.Actual, tc.got) || f.Check == "" {
				t.Errorf("failure %+v, want expected ~ %q, actual ~ %q", f, tc.expected, tc.got)
			}
			t.Log(f)
			if strings.Contains(f.Error(), "topsecret") {
				t.Errorf("the key leaked into %v", f)
			}
		})
	}
}

// TestPollStopsOnAFailure: a follow-up that fails ends the polling at once,
// without waiting for the deadline.
func TestPollStopsOnAFailure(t *testing.T) {
	var calls atomic.Int32
	w := hostileWorld(t, http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		rw.WriteHeader(500)
	}), 5*time.Second)
	w.threads["T"], w.runs["R"] = "thr_1", "run_1"
	start := time.Now()
	if _, ok := outcome.AsFailure(w.waitFinished("R", "T")); !ok {
		t.Fatal("a 500 did not fail the wait")
	}
	if n, d := calls.Load(), time.Since(start); n != 1 || d > 2*time.Second {
		t.Errorf("%d calls in %s, want one, at once", n, d)
	}
}
