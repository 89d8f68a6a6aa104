package fakeserver

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
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

// TestKeptTextIsCutAsSent: a text a recorded request keeps reads as the
// text sent, redacted and cut, whether it was kept raw or, too long for
// that, redacted and cut at once; a key straddling either bound is hidden.
func TestKeptTextIsCutAsSent(t *testing.T) {
	s := testServer(t, Config{})
	red := s.requestRedactor()
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
			got, want := keep(red, tt.text).text(red), red.Cut(tt.text, maxRecordedText, "...")
			if got != want {
				t.Errorf("kept %q, want %q", got, want)
			}
			if strings.Contains(got, key[len(key)-8:]) {
				t.Errorf("a piece of the secret in %q", got)
			}
		})
	}
}
