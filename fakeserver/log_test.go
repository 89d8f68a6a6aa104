package fakeserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// syncBuffer is a log sink that handlers on several goroutines may share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestLogNamesKeyIDOnly: the request log names a key by its ID and never
// shows any part of a secret, whatever is around the key in the token.
func TestLogNamesKeyIDOnly(t *testing.T) {
	var logBuf syncBuffer
	ts, p := newTestServer(t, Config{Logger: slog.New(slog.NewTextHandler(&logBuf, nil))})
	key := p.Keys.Agent
	secret := key[strings.LastIndex(key, "-")+1:]
	tests := []struct {
		name, auth, want string
	}{
		{"valid key", "Bearer " + key, "key=alice-kagent"},
		{"valid key plus a suffix", "Bearer " + key + "-anything", "key=malformed"},
		{"valid key plus a dash", "Bearer " + key + "-", "key=malformed"},
		{"secret moved into the key ID", "Bearer sk-svc-alice-" + secret + "-x", "key=unknown"},
		{"secret alone", "Bearer " + secret, "key=malformed"},
		{"not bearer", "Basic " + key, "key=not-bearer"},
		{"none", "", "key=none"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(logBuf.String())
			req, _ := http.NewRequest("POST", ts.URL+"/api/invoke/"+p.Agents.Main.ID, strings.NewReader("hi"))
			if tt.auth != "" {
				req.Header.Set("Authorization", tt.auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			line := logBuf.String()[before:]
			if !strings.Contains(line, tt.want) {
				t.Errorf("log line %q does not hold %q", line, tt.want)
			}
			if i := leakedFragment(line, secret); i >= 0 {
				t.Errorf("log line %q holds part of the secret at %d", line, i)
			}
		})
	}
}

// leakedFragment returns where the log holds 6 or more consecutive
// characters of the secret, or -1.
func leakedFragment(log, secret string) int {
	const n = 6
	for i := 0; i+n <= len(secret); i++ {
		if j := strings.Index(log, secret[i:i+n]); j >= 0 {
			return j
		}
	}
	return -1
}

// TestKeysInPathsAreHidden: a key in a request's path or query, as sent or
// percent-encoded, a profile's key or one of the spec's shape the server
// never issued, and the admin key, reach neither the request log (stderr)
// nor the recent requests whole or in pieces.
func TestKeysInPathsAreHidden(t *testing.T) {
	var logBuf syncBuffer
	s, ts, p := adminServer(t, Config{Logger: slog.New(slog.NewTextHandler(&logBuf, nil))})
	encode := func(k string) string {
		var b strings.Builder
		for i := 0; i < len(k); i++ {
			fmt.Fprintf(&b, "%%%02X", k[i])
		}
		return b.String()
	}
	const stranger = "sk-svc-eve-kx-StrangerSecret77"
	secrets := map[string]string{"agent": p.Keys.Agent, "stranger": stranger, "admin": testAdminKey}
	var paths []string
	for _, k := range secrets {
		paths = append(paths, "/api/invoke/"+k, "/api/invoke/"+encode(k), "/api/threads/x/events?runID="+encode(k), "/x/"+url.PathEscape(k)+"?q="+k)
	}
	for _, path := range paths {
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	recent, err := json.Marshal(s.Requests(0))
	if err != nil {
		t.Fatal(err)
	}
	for where, text := range map[string]string{"the request log": logBuf.String(), "the recent requests": string(recent)} {
		for who, k := range secrets {
			secret := k[strings.LastIndex(k, "-")+1:]
			if i := leakedFragment(text, secret); i >= 0 {
				t.Errorf("%s holds a piece of the %s key's secret: ...%s...", where, who, text[max(i-60, 0):min(i+20, len(text))])
			}
		}
	}
	if !strings.Contains(logBuf.String(), "[key alice-kagent]") {
		t.Errorf("the request log does not name the key in the path by its ID:\n%s", logBuf.String())
	}
}

// TestKeptTextIsCutAsSent: a text a recorded request keeps reads as the
// text sent, its keys hidden and cut, whether it was kept raw or, too long
// for that, hidden at once; a key straddling either bound is hidden.
func TestKeptTextIsCutAsSent(t *testing.T) {
	s := testServer(t, Config{})
	key := s.cfg.Profile.Keys.Agent
	tests := []struct {
		name string
		text string
	}{
		{"short", "/api/invoke/agt?key=" + key},
		{"key across the cut", strings.Repeat("x", maxRecordedText-5) + key},
		{"kept raw at the bound", strings.Repeat("y", maxKeptRaw-len(key)) + key},
		{"too long to keep raw", strings.Repeat("z", maxKeptRaw) + key},
		{"key across the raw bound", strings.Repeat("w", maxKeptRaw-5) + key + strings.Repeat("w", 10)},
		{"empty", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for name, hide := range map[string]hiding{"method": hideMethod, "path": hidePath, "header": hideHeader} {
				got, want := keep(s, hide, tt.text).text(s, hide), hide(s, tt.text)
				if got != want {
					t.Errorf("%s kept %q, want %q", name, got, want)
				}
				if strings.Contains(got, key[len(key)-8:]) {
					t.Errorf("%s: a piece of the secret in %q", name, got)
				}
			}
		})
	}
}
