package fakeserver

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/invokeconf/invokeconf/fixtures"
)

// listenTest runs a reference server on its own listener, as `serve` does.
func listenTest(t *testing.T, cfg Config) *Running {
	t.Helper()
	p, err := fixtures.Reference()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Profile = p
	srv, err := Listen(cfg, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

func dial(t *testing.T, url string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", strings.TrimPrefix(url, "http://"), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// readClosed reports whether the server closed the connection within
// within: a read ends with EOF (or a reset) rather than the deadline.
func readClosed(c net.Conn, r *bufio.Reader, within time.Duration) error {
	_ = c.SetReadDeadline(time.Now().Add(within))
	_, err := r.ReadByte()
	var ne net.Error
	switch {
	case err == nil:
		return errors.New("the server sent more bytes")
	case errors.As(err, &ne) && ne.Timeout():
		return errors.New("the connection is still open")
	}
	return nil
}

// TestIdleConnectionClosed: a keep-alive connection with no next request is
// closed after the idle timeout (200 ms here; tolerance 3 s).
func TestIdleConnectionClosed(t *testing.T) {
	srv := listenTest(t, Config{IdleTimeout: 200 * time.Millisecond})
	c := dial(t, srv.URL)
	_, _ = io.WriteString(c, "GET /api/threads/thr_none HTTP/1.1\r\nHost: x\r\n\r\n")
	r := bufio.NewReader(c)
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.Close {
		t.Fatal("the server closed the connection after the answer; want it kept alive until idle")
	}
	if err := readClosed(c, r, 3*time.Second); err != nil {
		t.Fatalf("idle connection after 3 s: %v", err)
	}
}

// TestTrickledBodyWithoutKey: a request without a valid key is answered 401
// at once (tolerance 2 s) while its body trickles in, and the connection is
// closed instead of waiting for the rest of the body.
func TestTrickledBodyWithoutKey(t *testing.T) {
	srv := listenTest(t, Config{})
	path := "/api/invoke/" + srv.cfg.Profile.Agents.Main.ID
	tests := []struct{ name, head, first string }{
		{"chunked", "Transfer-Encoding: chunked\r\n", "1\r\na\r\n"},
		{"content-length", "Content-Length: 100000\r\n", "a"},
		{"unknown key", "Authorization: Bearer sk-svc-alice-kagent-wrong\r\nContent-Length: 100000\r\n", "a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := dial(t, srv.URL)
			_, _ = io.WriteString(c, "POST "+path+" HTTP/1.1\r\nHost: x\r\n"+tt.head+"\r\n"+tt.first)
			r := bufio.NewReader(c)
			_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
			resp, err := http.ReadResponse(r, nil)
			if err != nil {
				t.Fatalf("no answer within 2 s while the body trickles: %v", err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized {
				t.Fatalf("status %d, want 401", resp.StatusCode)
			}
			if err := readClosed(c, r, 2*time.Second); err != nil {
				t.Fatalf("after the 401: %v", err)
			}
		})
	}
}

// TestStreamOutlastsTimeouts: an SSE stream that lasts longer than the read
// and idle timeouts completes, whether its request had a body (invoke) or
// not (events).
func TestStreamOutlastsTimeouts(t *testing.T) {
	srv := listenTest(t, Config{ReadTimeout: 200 * time.Millisecond, IdleTimeout: 200 * time.Millisecond})
	p := srv.cfg.Profile
	// A fresh connection per request: a kept-alive one may be closed by the
	// short idle timeout just as it is reused.
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	do := func(method, path, accept, body string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+p.Keys.Agent)
		req.Header.Set("Accept", accept)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	script := "@say a\n@pause 800ms\n@say b" // 4 times the timeouts
	t.Run("invoke", func(t *testing.T) {
		assertCompleteStream(t, do("POST", "/api/invoke/"+p.Agents.Main.ID, "text/event-stream", script))
	})
	t.Run("events", func(t *testing.T) {
		start := do("POST", "/api/invoke/"+p.Agents.Main.ID+"?async=true", "", script)
		var ids struct{ ThreadID, RunID string }
		err := json.NewDecoder(start.Body).Decode(&ids)
		start.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		assertCompleteStream(t, do("GET", "/api/threads/"+ids.ThreadID+"/events?runID="+ids.RunID, "text/event-stream", ""))
	})
}

func assertCompleteStream(t *testing.T, resp *http.Response) {
	t.Helper()
	defer resp.Body.Close()
	timer := time.AfterFunc(5*time.Second, func() { resp.Body.Close() })
	defer timer.Stop()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("stream cut after %q: %v", b, err)
	}
	if !strings.Contains(string(b), `"content":"b"`) || !strings.HasSuffix(string(b), "event: close\ndata: {}\n\n") {
		t.Fatalf("incomplete stream: %q", b)
	}
}
