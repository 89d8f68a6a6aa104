package fakeserver

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// do serves one request with the agent key and returns the recorder.
func do(t *testing.T, s *Server, method, path string, headers map[string]string, body string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+s.cfg.Profile.Keys.Agent)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	return rec
}

// retained counts what the store holds for invokes.
func retained(s *Server) (threads, runs int, bytes int64) {
	s.current().st.mu.Lock()
	defer s.current().st.mu.Unlock()
	for t := s.current().st.recent.front; t != nil; t = t.next {
		threads++
		runs += len(t.runs)
	}
	return threads, runs, s.current().st.kept
}

// TestRetentionBounded: however many runs are made, on new threads or on one
// thread, the store keeps at most its bounds.
func TestRetentionBounded(t *testing.T) {
	tests := []struct {
		name                string
		cfg                 Config
		threads, perThread  int
		prompt              string
		maxThreads, maxRuns int
	}{
		{"thread count", Config{MaxThreads: 5, MaxRunsPerThread: 3}, 60, 1, "hi", 5, 5},
		{"runs per thread", Config{MaxThreads: 5, MaxRunsPerThread: 3}, 2, 40, "hi", 2, 6},
		{"prompt bytes", Config{MaxThreads: 100, MaxRetainedBytes: 1000}, 30, 1, strings.Repeat("x", 300), 3, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := testServer(t, tt.cfg)
			path := "/api/invoke/" + s.cfg.Profile.Agents.Main.ID
			json := map[string]string{"Accept": "application/json"}
			for i := 0; i < tt.threads; i++ {
				thread := do(t, s, "POST", path, json, tt.prompt).Header().Get("X-SVC-Thread-Id")
				for j := 1; j < tt.perThread; j++ {
					if rec := do(t, s, "POST", path+"/thread/"+thread, json, tt.prompt); rec.Code != 200 {
						t.Fatalf("run %d on the thread: %d %s", j, rec.Code, rec.Body)
					}
				}
			}
			threads, runs, bytes := retained(s)
			if threads > tt.maxThreads || runs > tt.maxRuns {
				t.Errorf("after %d runs the store keeps %d threads and %d runs, want at most %d and %d",
					tt.threads*tt.perThread, threads, runs, tt.maxThreads, tt.maxRuns)
			}
			if limit := s.current().st.keep.bytes; bytes > limit {
				t.Errorf("the store keeps %d prompt bytes, want at most %d", bytes, limit)
			}
		})
	}
}

// TestEvictedThreadIs404: a forgotten thread answers like an unknown one, a
// thread with a run in progress is never forgotten, and a forgotten run of a
// kept thread is 404 while its last completed run stays.
func TestEvictedThreadIs404(t *testing.T) {
	s := testServer(t, Config{MaxThreads: 2, MaxRunsPerThread: 2})
	path := "/api/invoke/" + s.cfg.Profile.Agents.Main.ID
	start := func(prompt string, headers map[string]string) (thread, run string) {
		var ids struct{ ThreadID, RunID string }
		rec := do(t, s, "POST", path+"?async=true", headers, prompt)
		if err := json.Unmarshal(rec.Body.Bytes(), &ids); err != nil {
			t.Fatalf("async start: %d %s", rec.Code, rec.Body)
		}
		return ids.ThreadID, ids.RunID
	}
	busy, _ := start("@pause 1m", nil) // in progress until the server closes
	old := do(t, s, "POST", path, map[string]string{"Accept": "application/json"}, "hi").Header().Get("X-SVC-Thread-Id")
	oldRun := ""
	for i := 0; i < 3; i++ {
		do(t, s, "POST", path, map[string]string{"Accept": "application/json"}, "hi")
	}
	kept := do(t, s, "POST", path, map[string]string{"Accept": "application/json"}, "first").Header().Get("X-SVC-Thread-Id")
	_, oldRun = start("@say 2", map[string]string{"X-SVC-Thread-Id": kept})
	do(t, s, "GET", "/api/threads/"+kept+"/events?runID="+oldRun, map[string]string{"Accept": "application/json"}, "")
	for i := 0; i < 2; i++ {
		do(t, s, "POST", path+"/thread/"+kept, map[string]string{"Accept": "application/json"}, "later")
	}

	unknown := do(t, s, "GET", "/api/threads/thr_0000000000000000", nil, "")
	tests := []struct {
		name, method, path string
		headers            map[string]string
		want               int
	}{
		{"unknown thread", "GET", "/api/threads/thr_0000000000000000", nil, unknown.Code},
		{"forgotten thread", "GET", "/api/threads/" + old, nil, unknown.Code},
		{"forgotten thread's events", "GET", "/api/threads/" + old + "/events", nil, http.StatusNotFound},
		{"forgotten thread by header", "POST", path, map[string]string{"X-SVC-Thread-Id": old}, http.StatusNotFound},
		{"forgotten thread in the path", "POST", path + "/thread/" + old, nil, http.StatusNotFound},
		{"thread with a run in progress", "GET", "/api/threads/" + busy, nil, http.StatusOK},
		{"forgotten run of a kept thread", "GET", "/api/threads/" + kept + "/events?runID=" + oldRun, nil, http.StatusNotFound},
		{"last completed run of a kept thread", "GET", "/api/threads/" + kept + "/events", nil, http.StatusOK},
	}
	if unknown.Code != http.StatusNotFound {
		t.Fatalf("unknown thread: %d, want 404", unknown.Code)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if rec := do(t, s, tt.method, tt.path, tt.headers, "hi"); rec.Code != tt.want {
				t.Errorf("%s %s: %d %s, want %d", tt.method, tt.path, rec.Code, rec.Body, tt.want)
			}
		})
	}
}

// TestScriptTimeBound: a script whose pauses add up to more than a run may
// last ends at once with an error event instead of running for hours.
func TestScriptTimeBound(t *testing.T) {
	s := testServer(t, Config{})
	prompt := strings.Repeat("@pause 10m\n", 1000)
	rec := do(t, s, "POST", "/api/invoke/"+s.cfg.Profile.Agents.Main.ID, map[string]string{"Accept": "application/json"}, prompt)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "pauses add up to more than") {
		t.Fatalf("got %d %.300s, want 200 with an error event on the pauses", rec.Code, rec.Body)
	}
}
