package proxy

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/invokeconf/invokeconf/traffic"
)

// keptAliveService answers every request with a header naming it, so an
// answer the service did not give shows: event streams (the proxy takes
// their connection over and hands it back), answers given before the body
// was read (refusals), and plain ones.
func keptAliveService() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("X-From-Service", req.Method+" "+req.URL.Path)
		switch req.URL.Path {
		case "/sse":
			_, _ = io.ReadAll(req.Body)
			w.Header().Set("Content-Type", "text/event-stream")
			for i := 0; i < 3; i++ {
				fmt.Fprintf(w, "data: {\"n\":%d}\n\n", i)
				_ = http.NewResponseController(w).Flush()
			}
		case "/refuse", "/refuse-early":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"error":"no key"}`)
		default:
			_, _ = io.ReadAll(req.Body)
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"ok":true}`)
		}
	})
}

// TestKeptAliveConnectionAnswersOnlyFromService: kept-alive client
// connections through the proxy carry event streams and other answers,
// refusals given before the body was read among them, then more requests:
// every answer the client reads is the service's, and every exchange is
// recorded with the service's answer. The proxy once answered later
// requests on such a connection with empty 200s of its own: net/http read
// the body of a refused request itself, and a read deadline meant for a
// body left unread ended the connection's context.
//
// A request whose body the client sends only once it has the answer (as a
// client may that waits for a refusal) has its answer at once, the
// connection closed after it, as the service's own server does; the client
// then opens a new one, as clients do.
func TestKeptAliveConnectionAnswersOnlyFromService(t *testing.T) {
	r := newRig(t, keptAliveService(), 0)
	recorded := make(chan traffic.Exchange, 1024)
	go func() {
		for x := range r.done {
			recorded <- x
		}
	}()
	body := strings.Repeat("p", 300)
	steps := []struct{ method, path string }{
		{"POST", "/sse"}, {"GET", "/thread"}, {"POST", "/refuse"}, {"POST", "/other"}, {"GET", "/events"},
		{"POST", "/sse"}, {"GET", "/thread"}, {"POST", "/refuse"}, {"POST", "/refuse-early"}, {"GET", "/thread"},
		{"GET", "/thread"}, {"POST", "/other"},
	}
	var conn net.Conn
	var br *bufio.Reader
	dial := func() {
		if conn != nil {
			conn.Close()
		}
		var err error
		if conn, err = net.Dial("tcp", strings.TrimPrefix(r.url, "http://")); err != nil {
			t.Fatal(err)
		}
		br = bufio.NewReader(conn)
	}
	dial()
	defer func() { conn.Close() }()
	const rounds = 20
	conns, sent := 1, 0
	for round := 0; round < rounds; round++ {
		for i, s := range steps {
			what := fmt.Sprintf("round %d request %d (%s %s)", round+1, i+1, s.method, s.path)
			_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
			req := s.method + " " + s.path + " HTTP/1.1\r\nHost: x\r\n"
			early := s.path == "/refuse-early"
			if s.method == "POST" {
				req += fmt.Sprintf("Content-Type: text/plain\r\nContent-Length: %d\r\n\r\n", len(body))
				if !early {
					req += body
				}
			} else {
				req += "\r\n"
			}
			if _, err := io.WriteString(conn, req); err != nil {
				t.Fatalf("%s: write: %v", what, err)
			}
			sent++
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatalf("%s: body: %v", what, err)
			}
			if got := resp.Header.Get("X-From-Service"); got != s.method+" "+s.path {
				t.Fatalf("%s: an answer the service did not give: %d %q, body %q", what, resp.StatusCode, resp.Header, b)
			}
			switch {
			case early && !resp.Close:
				t.Fatalf("%s: answered before the body was sent, the connection kept alive", what)
			case resp.Close:
				dial()
				conns++
			}
		}
	}
	// Only the refusals may close their connection; the rest is kept alive.
	if max := 1 + 3*rounds; conns > max {
		t.Errorf("%d connections for %d rounds, at most %d expected", conns, rounds, max)
	}
	for i := 0; i < sent; i++ {
		select {
		case x := <-recorded:
			if x.Response == nil || x.Error != "" {
				t.Errorf("exchange #%d %s %s recorded without the service's answer: %q", x.ID, x.Request.Method, x.Request.URL, x.Error)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%d of %d exchanges recorded", i, sent)
		}
	}
}

// TestNoAnswerIsNeverAnEmptyOK: when the service gives no answer the proxy
// never completes the response as net/http would, an empty 200: a client
// whose request has ended has its connection dropped; one that is still
// there gets a 502 that names the proxy. Either way the recording says
// it was the proxy's doing.
func TestNoAnswerIsNeverAnEmptyOK(t *testing.T) {
	gone, _ := url.Parse("http://127.0.0.1:1")
	for _, tc := range []struct {
		name      string
		cancelled bool
		status    int
		recorded  string
	}{
		{"client still there", false, http.StatusBadGateway, "the proxy answered 502 Bad Gateway: no answer from the service"},
		{"client request ended", true, 0, "the proxy dropped the client's connection"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var x traffic.Exchange
			p := New(Config{Target: gone, Done: func(e traffic.Exchange) { x = e }})
			ctx, cancel := context.WithCancel(context.Background())
			if tc.cancelled {
				cancel()
			}
			defer cancel()
			req := httptest.NewRequestWithContext(ctx, "POST", "http://proxy/api/invoke/agt", strings.NewReader("{}"))
			w := httptest.NewRecorder()
			panicked := func() (v any) {
				defer func() { v = recover() }()
				p.ServeHTTP(w, req)
				return nil
			}()
			switch {
			case tc.status == 0 && panicked != http.ErrAbortHandler:
				t.Errorf("the connection was not dropped (panic %v); the client got %d %q", panicked, w.Code, w.Body)
			case tc.status != 0 && panicked != nil:
				t.Errorf("panic %v", panicked)
			case tc.status != 0 && w.Code != tc.status:
				t.Errorf("status %d, want %d", w.Code, tc.status)
			case tc.status != 0 && (!strings.Contains(w.Body.String(), "invokeconf proxy") ||
				!strings.HasPrefix(w.Header().Get("Proxy-Status"), "invokeconf; error=")):
				t.Errorf("the answer does not name the proxy: %q %q", w.Header(), w.Body)
			}
			if x.Response != nil || !strings.HasPrefix(x.Error, tc.recorded) {
				t.Errorf("recorded %+v, error %q; want it to start %q", x.Response, x.Error, tc.recorded)
			}
		})
	}
}

// TestEarlyAnswerBodyRace: the service answers before the request body is
// read, and the client sends the rest of the body once it has the answer:
// the proxy's transport may still read the body while the server that runs
// the proxy looks at it (go test -race; this raced in httpserve's guard).
func TestEarlyAnswerBodyRace(t *testing.T) {
	r := newRig(t, keptAliveService(), 0)
	go func() {
		for range r.done {
		}
	}()
	for i := 0; i < 20; i++ {
		conn, err := net.Dial("tcp", strings.TrimPrefix(r.url, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
		_, _ = io.WriteString(conn, "POST /refuse HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nhello")
		br := bufio.NewReader(conn)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			conn.Close()
			t.Fatal(err)
		}
		_, _ = io.WriteString(conn, "world")
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		conn.Close()
		if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("X-From-Service") == "" {
			t.Fatalf("request %d: %d %q %q", i+1, resp.StatusCode, resp.Header, b)
		}
	}
}
