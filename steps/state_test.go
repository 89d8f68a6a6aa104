package steps

import (
	"strings"
	"testing"

	"github.com/invokeconf/invokeconf/outcome"
	"github.com/invokeconf/invokeconf/profile"
)

func TestStateLookups(t *testing.T) {
	w := testWorld(t)
	w.threads["T"], w.runs["R"] = "thr_9", "run_9"
	if id, err := w.thread("T"); id != "thr_9" || err != nil {
		t.Errorf("thread(T) = %q, %v", id, err)
	}
	if id, err := w.run("R"); id != "run_9" || err != nil {
		t.Errorf("run(R) = %q, %v", id, err)
	}
	for name, err := range map[string]error{"thread": second(w.thread("U")), "run": second(w.run("U")), "last": second(w.last())} {
		if err == nil || !strings.Contains(err.Error(), "scenario error") {
			t.Errorf("%s of an unknown name: %v, want a scenario error", name, err)
		}
		if _, ok := outcome.AsFailure(err); ok {
			t.Errorf("%s: a scenario's own mistake is not a failure of the target", name)
		}
	}
}

func second[T any](_ T, err error) error { return err }

// TestStatusChecks: statuses are judged as the scenario says, with the
// status and body in the failure.
func TestStatusChecks(t *testing.T) {
	tests := []struct {
		status int
		check  func(w *World) error
		pass   bool
	}{
		{201, func(w *World) error { return w.status2xx() }, true},
		{200, func(w *World) error { return w.statusIs(201) }, false},
		{404, func(w *World) error { return w.statusEither(403, 404) }, true},
		{403, func(w *World) error { return w.statusEither(403, 404) }, true},
		{400, func(w *World) error { return w.statusEither(403, 404) }, false},
	}
	for _, tc := range tests {
		w := testWorld(t)
		w.resp = fake{Method: "POST", URL: "http://x/api", Status: tc.status, Body: []byte("problem"), Complete: true}.response()
		err := tc.check(w)
		if (err == nil) != tc.pass {
			t.Errorf("status %d: %v, want pass %v", tc.status, err, tc.pass)
		}
		if f, ok := outcome.AsFailure(err); err != nil && (!ok || !strings.Contains(f.Actual, "problem")) {
			t.Errorf("status %d: %v, want a Failure quoting the body", tc.status, err)
		}
	}
}

func TestDistinctTools(t *testing.T) {
	w := testWorld(t)
	w.P.Agents.Other = profile.Agent{ID: "agt_2", Tools: []string{"calc", "weather"}}
	w.P.Agents.Main.Tools = append(w.P.Agents.Main.Tools, "notes")
	for in, want := range map[string]string{"${agents.main.distinctTools}": "notes", "${agents.other.distinctTools}": "weather"} {
		if got, err := w.expand(in); got != want || err != nil {
			t.Errorf("expand(%s) = %q, %v; want %q", in, got, err, want)
		}
	}
	w.P.Agents.Other.Tools = w.P.Agents.Main.Tools
	if _, err := w.expand("${agents.other.distinctTools}"); err == nil {
		t.Error("agents with the same tools cannot be told apart: the scenario is untested")
	}
}

// TestDerivedAuthorization: the two Authorization values derived from the
// agent key are what their steps say, and a profile without the key makes
// the scenario untested.
func TestDerivedAuthorization(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(w *World) error
		want string
	}{
		{"without Bearer", (*World).useKeyWithoutBearer, "sk-svc-alice-k1-topsecret"},
		{"with another secret", (*World).useKeyWithOtherSecret, "Bearer sk-svc-alice-k1-0ther5ecret0000"},
	} {
		w := testWorld(t)
		if err := tc.set(w); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got, err := w.authorization(); got != tc.want || err != nil {
			t.Errorf("%s: Authorization %q, %v; want %q", tc.name, got, err, tc.want)
		}
		w.P.Keys.Agent = ""
		if _, untested := Untested(tc.set(w)); !untested {
			t.Errorf("%s without keys.agent: want untested", tc.name)
		}
	}
}
