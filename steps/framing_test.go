package steps

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/cucumber/godog"

	"github.com/invokeconf/invokeconf/outcome"
)

// TestPingRequestCarriesKeyAndAccept: the SSE-04 request is the scenario's
// own, with its key and Accept: text/event-stream, and its response is
// kept for the checks (a ping too early to stop at is read past).
func TestPingRequestCarriesKeyAndAccept(t *testing.T) {
	got := make(chan http.Header, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Clone()
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte("event: start\ndata: {}\n\nid: r1\ndata: {\"content\":\"quiet now\"}\n\n: ping\n\n"))
		w.(http.Flusher).Flush()
		_, _ = w.Write([]byte("id: r1:after\ndata: {\"runComplete\":true}\n\nevent: close\ndata: {}\n\n"))
	}))
	t.Cleanup(srv.Close)
	w := testWorld(t)
	w.P.BaseURL = srv.URL
	if err := w.useKey("agent"); err != nil {
		t.Fatal(err)
	}
	if err := w.setHeader("Accept", "text/event-stream"); err != nil {
		t.Fatal(err)
	}
	if err := w.invokeUntilPing("/api/invoke/${agents.main.id}", "quiet now", &godog.DocString{Content: "stay quiet"}); err != nil {
		t.Fatal(err)
	}
	h := <-got
	if h.Get("Authorization") != "Bearer "+w.P.Keys.Agent {
		t.Error("the ping request does not carry the scenario's key") // the key itself is never printed
	}
	if a := h.Get("Accept"); a != "text/event-stream" {
		t.Errorf("Accept = %q, want text/event-stream", a)
	}
	r, err := w.last()
	if err != nil {
		t.Fatalf("the response was not kept: %v", err)
	}
	if !r.Complete {
		t.Errorf("the stream was not read past the early ping: %v", r.Err)
	}
}

// TestEventFrameIDs: SSE-02 wants the run ID exactly on every event but
// the last, and allows event: message and retry lines beside id and data.
func TestEventFrameIDs(t *testing.T) {
	const start, end = "event: start\ndata: {}\n\n", "event: close\ndata: {}\n\n"
	ev := func(id string) string { return "id: " + id + "\ndata: {\"runID\":\"r1\"}\n\n" }
	tests := []struct {
		name   string
		frames []string
		ok     bool
	}{
		{"plain", []string{ev("r1"), ev("r1"), ev("r1:after")}, true},
		{"event message and retry", []string{"id: r1\nevent: message\nretry: 3000\ndata: {\"runID\":\"r1\"}\n\n", ev("r1:after")}, true},
		{":after on every id", []string{ev("r1:after"), ev("r1:after"), ev("r1:after")}, false},
		{"data before id", []string{"data: {\"runID\":\"r1\"}\nid: r1\n\n", ev("r1:after")}, false},
		{"named event", []string{"id: r1\nevent: delta\ndata: {\"runID\":\"r1\"}\n\n", ev("r1:after")}, true}, // not an event frame
		// A conforming parser joins data lines with LF: the object may span them.
		{"two data lines", []string{"id: r1\ndata: {\"runID\":\ndata: \"r1\"}\n\n", ev("r1:after")}, true},
		{"unknown fields and an id with U+0000", []string{"id: r1\nx-seq: 1\nid: x\x00\nflag\ndata: {\"runID\":\"r1\"}\n\n", ev("r1:after")}, true},
		{"an id in a frame of its own", []string{"id: r1\n\ndata: {\"runID\":\"r1\"}\n\n", ev("r1:after")}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pieces := append(append([]string{start}, tt.frames...), end)
			err := invokeHostile(t, pieces...).eventFramesIDThenData()
			if tt.ok && err != nil {
				t.Fatalf("want a pass: %v", err)
			}
			if !tt.ok {
				if _, isFailure := outcome.AsFailure(err); !isFailure {
					t.Fatalf("want a Failure, got %v", err)
				}
			}
		})
	}
}

// TestIsSetEmptyForms: the empty forms of every JSON type count as unset.
func TestIsSetEmptyForms(t *testing.T) {
	tests := []struct {
		v    any
		want bool
	}{
		{nil, false}, {false, false}, {"", false}, {map[string]any{}, false}, {[]any{}, false},
		{true, true}, {"x", true}, {map[string]any{"name": "calc"}, true}, {[]any{1}, true},
	}
	for _, tt := range tests {
		if got := isSet(map[string]any{"f": tt.v}, "f"); got != tt.want {
			t.Errorf("isSet(%#v) = %t, want %t", tt.v, got, tt.want)
		}
	}
	if isSet(map[string]any{}, "f") {
		t.Error("a missing field is set")
	}
}

// TestEnvelopeItemsOneEnvelope: whitespace may follow the envelope, a
// second JSON value may not.
func TestEnvelopeItemsOneEnvelope(t *testing.T) {
	tests := []struct {
		body string
		ok   bool
	}{
		{`{"items":[{"content":"a"}]}`, true},
		{"{\"items\":[]}\n \r\n", true},
		{`{"items":[{"content":"a"}]}{"items":[{"content":"b"}]}`, false},
		{`{"items":[]} trailing`, false},
	}
	for _, tt := range tests {
		_, err := (fake{Body: []byte(tt.body)}.response()).EnvelopeItems()
		if (err == nil) != tt.ok {
			t.Errorf("EnvelopeItems(%q): err %v, want ok %t", tt.body, err, tt.ok)
		}
	}
}

// TestPromptSensitiveFalseMayBeLeftOut: EVT-07 accepts a missing flag for
// false, never for true.
func TestPromptSensitiveFalseMayBeLeftOut(t *testing.T) {
	frame := func(prompt string) string {
		return "id: r1\ndata: {\"runID\":\"r1\",\"prompt\":" + prompt + "}\n\n"
	}
	tests := []struct {
		prompt, sensitive string
		ok                bool
	}{
		{`{"fields":["a"],"message":"m"}`, "false", true},
		{`{"fields":["a"],"message":"m","sensitive":false}`, "false", true},
		{`{"fields":["a"],"message":"m","sensitive":true}`, "false", false},
		{`{"fields":["a"],"message":"m"}`, "true", false},
		{`{"fields":["a"],"message":"m","sensitive":true}`, "true", true},
	}
	for _, tt := range tests {
		script := "@ask fields=a m"
		if tt.sensitive == "true" {
			script = "@ask sensitive fields=a m"
		}
		w := invokeHostilePrompt(t, script, "event: start\ndata: {}\n\n", frame(`{}`), frame(tt.prompt), "event: close\ndata: {}\n\n")
		if err := w.promptEvent("m", tt.sensitive); (err == nil) != tt.ok {
			t.Errorf("prompt %s, sensitive %s: err %v, want ok %t", tt.prompt, tt.sensitive, err, tt.ok)
		}
	}
}

// TestEventIDsNeedTheThreadHeader: without X-SVC-Thread-Id, EVT-02 cannot
// be shown: the answer breaks THREAD-04, which the step rests on.
func TestEventIDsNeedTheThreadHeader(t *testing.T) {
	w := invokeHostile(t, "event: start\ndata: {}\n\n", "id: r1\ndata: {\"runID\":\"r1\",\"threadID\":\"thr_1\"}\n\n")
	if err := w.eventIDs(); err != nil {
		t.Fatalf("with the header: %v", err)
	}
	w.resp.Response.Header.Del("X-SVC-Thread-Id")
	if f, ok := outcome.AsFailure(w.eventIDs()); !ok || f.Rule != "THREAD-04" {
		t.Fatalf("without the header: %v, want a failure of THREAD-04", f)
	}
}
