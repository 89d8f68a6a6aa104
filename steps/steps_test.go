package steps

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cucumber/godog"

	"github.com/invokeconf/invokeconf/profile"
)

func testWorld(t *testing.T) *World {
	t.Helper()
	p := &profile.Profile{
		BaseURL:    "http://127.0.0.1:1",
		Keys:       profile.Keys{Agent: "sk-svc-alice-k1-topsecret"},
		Agents:     profile.Agents{Main: profile.Agent{ID: "agt_1", Alias: "helper", Tools: []string{"web", "calc"}, CredentialTools: map[string]string{"web": "search"}}},
		NonAgentID: "kns_1",
	}
	w := &World{}
	w.reset(context.Background(), p, http.DefaultClient, []string{"@slow"})
	return w
}

func TestExpand(t *testing.T) {
	w := testWorld(t)
	w.threads["T"] = "thr_9"
	tests := []struct{ in, want string }{
		{"/api/invoke/${agents.main.id}", "/api/invoke/agt_1"},
		{"/api/invoke/${agents.main.alias}/thread/${thread:T}", "/api/invoke/helper/thread/thr_9"},
		{"${agents.main.plainTool}", "calc"},
		{"${nonAgentID}", "kns_1"},
		{`{"json": "stays"}`, `{"json": "stays"}`},
	}
	for _, tt := range tests {
		got, err := w.expand(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("expand(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	if a, b := w.marker("x"), w.marker("x"); a != b || a == w.marker("y") {
		t.Error("a marker is stable per name and unique across names")
	}
	esc, _ := w.expand("${escaped:x}")
	if got, err := unquote(esc); err != nil || got != w.marker("x") {
		t.Errorf("escaped marker %q unquotes to %q, %v", esc, got, err)
	}
	for _, in := range []string{"${projects.main.id}", "${agents.other.id}"} {
		_, err := w.expand(in)
		if _, ok := Untested(need(err)); !ok {
			t.Errorf("expand(%q): a profile gap should make the scenario untested, got %v", in, err)
		}
	}
	if _, err := w.expand("${thread:nope}"); err == nil {
		t.Error("an unknown thread name is an error")
	}
}

func TestUntestedIsASkip(t *testing.T) {
	err := need(&profile.MissingError{What: "keys.expired"})
	if !errors.Is(err, godog.ErrSkip) {
		t.Fatal("untested must wrap godog.ErrSkip so godog never counts it as passed")
	}
	if reason, ok := Untested(err); !ok || !strings.Contains(reason, "keys.expired") {
		t.Fatalf("reason %q", reason)
	}
}

func TestUnquote(t *testing.T) {
	for in, want := range map[string]string{
		`a\nb`:         "a\nb",
		"a\nb":         "a\nb", // a newline Gherkin already made
		`\u0020x\t`:    " x\t",
		`q \" b \\ e`:  `q " b \ e`,
		"line\r\nnext": "line\r\nnext",
	} {
		if got, err := unquote(in); err != nil || got != want {
			t.Errorf("unquote(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestIsSet(t *testing.T) {
	ev := map[string]any{"a": nil, "b": false, "c": "", "d": true, "e": "x", "f": map[string]any{}}
	for field, want := range map[string]bool{"a": false, "b": false, "c": false, "d": true, "e": true, "f": false, "zz": false} {
		if isSet(ev, field) != want {
			t.Errorf("isSet(%s) = %v", field, !want)
		}
	}
}

func TestArrivalOf(t *testing.T) {
	r := fake{Body: []byte("012345678"), HeadersAt: time.Millisecond, Reads: []Read{{At: 10 * time.Millisecond, End: 5}, {At: 20 * time.Millisecond, End: 9}}}.response()
	for off, want := range map[int]time.Duration{0: 10 * time.Millisecond, 5: 10 * time.Millisecond, 6: 20 * time.Millisecond, 9: 20 * time.Millisecond} {
		if got := r.ArrivalOf(off); got != want {
			t.Errorf("ArrivalOf(%d) = %s, want %s", off, got, want)
		}
	}
}

func TestTranscriptIsRedacted(t *testing.T) {
	w := testWorld(t)
	w.record(fake{Method: "POST", URL: "http://x", ReqHeader: http.Header{"Authorization": {"Bearer sk-svc-alice-k1-topsecret"}},
		Status: 200, Body: []byte("echo sk-svc-alice-k1-topsecret"), Complete: true}.response())
	for _, e := range w.Transcript() {
		if strings.Contains(e.Header.Get("Authorization")+e.RespBody, "topsecret") {
			t.Fatalf("secret in transcript: %+v", e)
		}
	}
	if w.deadline != SlowDeadline {
		t.Error("@slow scenarios get the slow deadline")
	}
}
