package fakeserver

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"
)

// FuzzParseKey: a token parses only when it is exactly
// sk-svc-<user>-<key>-<secret> with non-empty parts of key characters.
func FuzzParseKey(f *testing.F) {
	for _, seed := range []string{"sk-svc-alice-k1-s3cr3t", "sk-svc-alice-k1-s-extra", "sk-svc--k1-s", "sk-svc-al ice-k1-s", ""} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, tok string) {
		parts, err := parseKey(tok)
		if want, wantErr := splitKey(tok); (err == nil) != (wantErr == nil) || parts != want {
			t.Fatalf("parseKey(%q) = %+v, %v; by splitting %+v, %v", tok, parts, err, want, wantErr)
		}
		if err != nil {
			return
		}
		if got := "sk-svc-" + parts.user + "-" + parts.key + "-" + parts.secret; got != tok {
			t.Fatalf("parsed %q as %q", tok, got)
		}
		for _, p := range []string{parts.user, parts.key, parts.secret} {
			if p == "" || strings.TrimFunc(p, isKeyChar) != "" {
				t.Fatalf("part %q of %q", p, tok)
			}
		}
	})
}

// splitKey parses a key the plain way parseKey does without allocating: its
// five parts split at "-".
func splitKey(tok string) (keyParts, error) {
	parts := strings.Split(tok, "-")
	if len(parts) != 5 || parts[0] != "sk" || parts[1] != "svc" {
		return keyParts{}, errMalformedKey
	}
	for _, p := range parts[2:] {
		if p == "" || strings.TrimFunc(p, isKeyChar) != "" {
			return keyParts{}, errMalformedKey
		}
	}
	return keyParts{user: parts[2], key: parts[3], secret: parts[4]}, nil
}

func isKeyChar(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_'
}

// FuzzResponseForm: only the exact text/event-stream gives SSE and only the
// exact application/json the envelope; anything else is plain text. Several
// Accept lines (split at "\n") count as their comma-joined whole.
func FuzzResponseForm(f *testing.F) {
	for _, seed := range []string{"text/event-stream", "application/json", "text/event-stream, */*", "text/event-stream\napplication/json",
		"Text/Event-Stream", " application/json", "", "application/json;q=1"} {
		f.Add(seed)
	}
	s := &view{sw: &switchSet{}} // every switch off
	f.Fuzz(func(t *testing.T, lines string) {
		r := httptest.NewRequest("POST", "/", nil)
		var values []string
		if lines != "" {
			values = strings.Split(lines, "\n")
		}
		for _, v := range values {
			r.Header.Add("Accept", v)
		}
		want := formPlain
		switch strings.Join(values, ", ") {
		case "text/event-stream":
			want = formSSE
		case "application/json":
			want = formJSON
		}
		if got := s.responseForm(r); got != want {
			t.Fatalf("Accept %q: form %d, want %d", values, got, want)
		}
	})
}

// FuzzParseDocument: any bundle document is parsed or refused with a 4xx
// bundleError, never a panic.
func FuzzParseDocument(f *testing.F) {
	for _, name := range []string{"desk-v1.yaml", "desk-v1.json", "malformed.json", "nested-project.yaml", "dropped.yaml"} {
		if b, err := os.ReadFile("../fixtures/bundles/" + name); err == nil {
			f.Add(b, map[bool]string{true: "application/json", false: "application/yaml"}[strings.HasSuffix(name, ".json")])
		}
	}
	f.Add([]byte("{}{}"), "application/json")
	f.Add([]byte("- a"), "")
	f.Fuzz(func(t *testing.T, body []byte, contentType string) {
		_, err := parseDocument(body, contentType)
		var be *bundleError
		if err != nil && (!errors.As(err, &be) || be.status < 400 || be.status > 499) {
			t.Fatalf("refusal %v, want a 4xx bundleError", err)
		}
	})
}

// fuzzTarget is a reference server whose log the fuzz targets read.
type fuzzTarget struct {
	s   *Server
	log *syncBuffer
}

// newFuzzTarget starts a fresh server, so that every input meets the same
// state.
func newFuzzTarget(t testing.TB) fuzzTarget {
	log := &syncBuffer{}
	s := testServer(t, Config{Logger: slog.New(slog.NewTextHandler(log, nil))})
	return fuzzTarget{s: s, log: log}
}

// serve answers one request, bounded to 100 ms so that a fuzzed script's
// pauses do not hold the fuzzer, and checks what every answer must hold: no
// server error, no part of any key's secret in the log.
func (ft fuzzTarget) serve(t *testing.T, req *http.Request, allow5xx bool) *httptest.ResponseRecorder {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	before := len(ft.log.String())
	rec := httptest.NewRecorder()
	ft.s.ServeHTTP(rec, req.WithContext(ctx))
	if rec.Code >= 500 && !allow5xx {
		t.Fatalf("%s %s: %d %.300s", req.Method, req.URL, rec.Code, rec.Body)
	}
	line := ft.log.String()[before:]
	for _, key := range ft.s.cfg.Profile.Secrets() {
		if i := leakedFragment(line, key[strings.LastIndex(key, "-")+1:]); i >= 0 {
			t.Fatalf("the log holds part of a key's secret: %q", line)
		}
	}
	return rec
}

// token picks the Authorization value of a fuzzed request: a key of the
// profile, as is or with something around it, or none.
func token(keys []string, which uint8, extra string) string {
	if len(keys) == 0 || which%4 == 3 {
		return extra
	}
	key := keys[int(which/4)%len(keys)]
	switch which % 4 {
	case 1:
		key += "-" + extra
	case 2:
		key += extra
	}
	return "Bearer " + key
}

// FuzzInvoke: the invoke routes answer any request without a server error,
// never log a secret, and follow the Accept rule.
func FuzzInvoke(f *testing.F) {
	p := newFuzzTarget(f).s.cfg.Profile
	routes := []string{"/api/invoke/" + p.Agents.Main.ID, "/api/invoke/" + p.Agents.Main.Alias, "/api/invoke/" + p.Agents.Main.ID + "/thread/thr_x",
		"/api/invoke/" + p.Agents.Main.ID + "/threads/thr_x", "/api/projects/" + p.Projects.Main.ID + "/invoke", "/api/invoke/" + p.NonAgentID}
	keys := p.Secrets()
	f.Add(uint8(0), uint8(0), "text/event-stream", "", "hello", "")
	f.Add(uint8(1), uint8(1), "application/json", "async=true", "@say hi\n@pause 1s", "")
	f.Add(uint8(2), uint8(2), "text/event-stream, */*", "async=maybe", "@tool search-web {}", "thr_none")
	f.Add(uint8(4), uint8(12), "", "", "@tools\n@model", "")
	f.Add(uint8(5), uint8(3), "application/json", "", "{\"prompt\":\"x\"}", "")
	f.Fuzz(func(t *testing.T, route, key uint8, accept, query, body, thread string) {
		ft := newFuzzTarget(t)
		req := httptest.NewRequest("POST", routes[int(route)%len(routes)], strings.NewReader(body))
		req.URL.RawQuery = query
		if auth := token(keys, key, thread); auth != "" {
			req.Header.Set("Authorization", auth)
		}
		req.Header.Set("Accept", accept)
		if thread != "" {
			req.Header.Set("X-SVC-Thread-Id", thread)
		}
		rec := ft.serve(t, req, false)
		if rec.Code != http.StatusOK || query != "" {
			return
		}
		ct := rec.Header().Get("Content-Type")
		if (ct == "text/event-stream") != (accept == "text/event-stream") || (ct == "application/json") != (accept == "application/json") {
			t.Fatalf("Accept %q answered with Content-Type %q", accept, ct)
		}
	})
}

// FuzzBundleRoutes: the bundle routes answer any document without a server
// error (but the 503 of the interruptOnce test hook) and never log a
// secret.
func FuzzBundleRoutes(f *testing.F) {
	p := newFuzzTarget(f).s.cfg.Profile
	desk, err := os.ReadFile("../fixtures/bundles/desk-v1.yaml")
	if err != nil {
		f.Fatal(err)
	}
	desk = []byte(strings.ReplaceAll(string(desk), "${marker:b}", "fz")) // the scenarios' placeholder
	keys := p.Secrets()
	bundles := 0
	for i, k := range keys {
		if k == p.Keys.Bundles {
			bundles = i * 4
		}
	}
	for _, name := range []string{"desk-v1.yaml", "desk-v1.json", "desk-v2.yaml", "fails-child.yaml", "malformed.yaml"} {
		if b, err := os.ReadFile("../fixtures/bundles/" + name); err == nil {
			b = []byte(strings.ReplaceAll(string(b), "${marker:b}", "fz"))
			f.Add(uint8(0), uint8(bundles), "application/yaml", "x", b)
			f.Add(uint8(1), uint8(bundles), "", "x", b)
		}
	}
	f.Add(uint8(2), uint8(bundles), "", "app=a1", []byte{})
	f.Add(uint8(3), uint8(1), "application/json", "x", []byte("{}"))
	f.Fuzz(func(t *testing.T, route, key uint8, contentType, extra string, body []byte) {
		ft := newFuzzTarget(t)
		var req *http.Request
		switch route % 4 {
		case 0:
			req = httptest.NewRequest("POST", "/api/bundles/installations", strings.NewReader(string(body)))
		case 1:
			req = httptest.NewRequest("PUT", "/api/bundles/installations/"+ft.install(t, desk), strings.NewReader(string(body)))
		case 2:
			req = httptest.NewRequest("GET", "/api/assistants/"+p.Bundles.Export.AgentID+"/projects/"+p.Bundles.Export.ProjectID+"/bundle", nil)
			req.URL.RawQuery = extra
		default:
			req = httptest.NewRequest("GET", "/api/bundles/installations", nil)
		}
		if auth := token(keys, key, extra); auth != "" {
			req.Header.Set("Authorization", auth)
		}
		req.Header.Set("Content-Type", contentType)
		ft.serve(t, req, strings.Contains(string(body), hookInterruptOnce))
	})
}

// install installs a bundle document and returns its installation ID.
func (ft fuzzTarget) install(t *testing.T, doc []byte) string {
	t.Helper()
	req := httptest.NewRequest("POST", "/api/bundles/installations", strings.NewReader(string(doc)))
	req.Header.Set("Authorization", "Bearer "+ft.s.cfg.Profile.Keys.Bundles)
	rec := ft.serve(t, req, false)
	var in struct{ ID string }
	if err := json.Unmarshal(rec.Body.Bytes(), &in); err != nil || in.ID == "" {
		t.Fatalf("install: %d %.300s", rec.Code, rec.Body)
	}
	return in.ID
}
