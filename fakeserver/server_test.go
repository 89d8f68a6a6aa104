package fakeserver

import (
	"bufio"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/invokeconf/invokeconf/fixtures"
	"github.com/invokeconf/invokeconf/profile"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// newTestServer starts a reference server seeded from the fixtures.
func newTestServer(t testing.TB, cfg Config) (*httptest.Server, *profile.Profile) {
	t.Helper()
	s := testServer(t, cfg)
	ts := httptest.NewServer(s)
	t.Cleanup(func() {
		s.Close() // end the runs first, so that open streams let ts.Close return
		ts.Close()
	})
	return ts, s.cfg.Profile
}

func post(t testing.TB, url, key, accept, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// TestBadInput: what the spec leaves out still gets a clear error.
func TestBadInput(t *testing.T) {
	ts, p := newTestServer(t, Config{MaxBody: 64})
	agent := ts.URL + "/api/invoke/" + p.Agents.Main.ID
	tests := []struct {
		name   string
		method string
		url    string
		body   string
		status int
		detail string
	}{
		{"oversized body", "POST", agent, strings.Repeat("x", 65), 413, "larger than 64 bytes"},
		{"bad async", "POST", agent + "?async=yes", "hi", 400, "async must be true or false"},
		{"unknown route", "POST", ts.URL + "/api/nothing", "hi", 404, "no route"},
		{"wrong method", "GET", agent, "", 404, "no route GET"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, tt.url, strings.NewReader(tt.body))
			req.Header.Set("Authorization", "Bearer "+p.Keys.Agent)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.status || !strings.Contains(string(b), tt.detail) {
				t.Fatalf("got %d %s, want %d with %q", resp.StatusCode, b, tt.status, tt.detail)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/problem+json" {
				t.Errorf("Content-Type %q, want application/problem+json", ct)
			}
		})
	}
}

func TestParseKey(t *testing.T) {
	tests := []struct {
		key string
		ok  bool
	}{
		{"sk-svc-alice-k1-s3cr3t", true},
		{"sk-svc-alice-k_1-S3CR3T", true},
		{"sk-svc-alice-k1", false},
		{"sk-svc--k1-s", false},
		{"sk-svc-alice-k1-s-extra", false},
		{"sk-xyz-alice-k1-s", false},
		{"sk-svc-al ice-k1-s", false},
		{"", false},
	}
	for _, tt := range tests {
		if _, err := parseKey(tt.key); (err == nil) != tt.ok {
			t.Errorf("parseKey(%q) error = %v, want ok=%v", tt.key, err, tt.ok)
		}
	}
}

// TestSeedRejectsBadProfiles: a seed the server cannot honour is refused at
// start, with the role named.
func TestSeedRejectsBadProfiles(t *testing.T) {
	p, err := fixtures.Reference()
	if err != nil {
		t.Fatal(err)
	}
	p.Keys.Alias = "not-a-key"
	if _, err := New(Config{Profile: p}); err == nil || !strings.Contains(err.Error(), "keys.alias") {
		t.Fatalf("New with a malformed key: %v", err)
	}
	p, _ = fixtures.Reference()
	if _, err := New(Config{Profile: p, Defects: []string{"no-such-defect"}}); err == nil {
		t.Fatal("New accepted an unknown defect")
	}
}

// TestKeepaliveAndClientGone drives the SSE loop with a short keepalive: a
// quiet run gets ": ping" comments, and a client that leaves cancels the run.
func TestKeepaliveAndClientGone(t *testing.T) {
	ts, p := newTestServer(t, Config{Keepalive: 50 * time.Millisecond})
	resp := post(t, ts.URL+"/api/invoke/"+p.Agents.Main.ID, p.Keys.Agent, "text/event-stream", "@say a\n@pause 10s\n@say b")
	r := bufio.NewReader(resp.Body)
	deadline := time.AfterFunc(5*time.Second, func() { resp.Body.Close() })
	defer deadline.Stop()
	runID := ""
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("no ping before %v", err)
		}
		if id, ok := strings.CutPrefix(line, "id: "); ok {
			runID = strings.TrimSpace(id)
		}
		if line == ": ping\n" {
			break
		}
	}
	thread := resp.Header.Get("X-SVC-Thread-Id")
	resp.Body.Close() // the client goes away during the 10 s pause

	// The events route with Accept: application/json waits for the run to
	// end; a cancelled run ends at once, an uncancelled one after 10 s,
	// beyond the client's 5 s timeout.
	req, _ := http.NewRequest("GET", ts.URL+"/api/threads/"+thread+"/events?runID="+runID, nil)
	req.Header.Set("Authorization", "Bearer "+p.Keys.Agent)
	req.Header.Set("Accept", "application/json")
	ev, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("the run was not cancelled when its client left: %v", err)
	}
	defer ev.Body.Close()
	b, _ := io.ReadAll(ev.Body)
	if ev.StatusCode != 200 || !strings.Contains(string(b), "run cancelled") {
		t.Fatalf("events of the abandoned run: %d %s", ev.StatusCode, b)
	}
}

// TestConcurrentRuns exercises the store and run logs under the race
// detector: many runs on one thread, read while they run, some aborted.
func TestConcurrentRuns(t *testing.T) {
	ts, p := newTestServer(t, Config{})
	first := post(t, ts.URL+"/api/invoke/"+p.Agents.Main.ID, p.Keys.Agent, "application/json", "hello")
	io.Copy(io.Discard, first.Body)
	first.Body.Close()
	thread := first.Header.Get("X-SVC-Thread-Id")
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			accept := []string{"text/event-stream", "application/json", "", "text/plain"}[i%4]
			req, _ := http.NewRequest("POST", ts.URL+"/api/invoke/"+p.Agents.Main.ID, strings.NewReader("@say x\n@pause 20ms\n@say y"))
			req.Header.Set("Authorization", "Bearer "+p.Keys.Agent)
			req.Header.Set("X-SVC-Thread-Id", thread)
			req.Header.Set("Accept", accept)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if i%5 == 0 {
				ab, _ := http.NewRequest("POST", ts.URL+"/api/threads/"+thread+"/abort", nil)
				ab.Header.Set("Authorization", "Bearer "+p.Keys.Agent)
				if r, err := http.DefaultClient.Do(ab); err == nil {
					r.Body.Close()
				}
			}
			for _, path := range []string{"/api/threads/" + thread, "/api/threads/" + thread + "/events"} {
				g, _ := http.NewRequest("GET", ts.URL+path, nil)
				g.Header.Set("Authorization", "Bearer "+p.Keys.Agent)
				if r, err := http.DefaultClient.Do(g); err == nil {
					io.Copy(io.Discard, r.Body)
					r.Body.Close()
				}
			}
		}(i)
	}
	wg.Wait()
}
