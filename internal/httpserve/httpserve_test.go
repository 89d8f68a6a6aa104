package httpserve

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestStartStop(t *testing.T) {
	var status int
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &StatusRecorder{ResponseWriter: w}
		_, _ = rec.Write([]byte("hi"))
		_ = http.NewResponseController(rec).Flush() // reaches the real writer through Unwrap
		status = rec.Status
	})
	l, err := Start(h, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(l.URL)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "hi" || status != http.StatusOK {
		t.Fatalf("body %q, recorded status %d", b, status)
	}
	if err := l.Stop(time.Second); err != nil {
		t.Fatal(err)
	}
	select {
	case <-l.Done():
	default:
		t.Fatal("Done is not closed after Stop")
	}
	if _, err := Start(h, "256.0.0.1:0"); err == nil {
		t.Fatal("Start on a bad address succeeded")
	}
}

// TestStopClosesHijacked: Stop waits for a tracked hijacked connection only
// up to its grace, then closes it.
func TestStopClosesHijacked(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		_ = Track(r, c) // never released: the response never ends
		_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nhi!")
	})
	l, err := Start(h, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", strings.TrimPrefix(l.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	_, _ = io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	br := bufio.NewReader(c)
	if _, err := br.ReadString('!'); err != nil {
		t.Fatal(err)
	}
	if err := l.Stop(10 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("after Stop, read: %v; want the connection closed", err)
	}
}

// TestGuardKeepsReusedConnectionsAlive: a handler that answers (and
// flushes) before it reads the body leaves net/http to read that body
// itself; once it is at its end net/http watches the connection for the
// client going away, and the guard must not take that for a body left
// unread: its read deadline would end the connection's context, and every
// later request on the kept-alive connection would start with its context
// done. Each handler gets its request's context checked at its start.
func TestGuardKeepsReusedConnectionsAlive(t *testing.T) {
	inner := guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.Context().Err(); err != nil {
			w.WriteHeader(http.StatusGone) // the test fails on it
			return
		}
		w.WriteHeader(http.StatusUnauthorized)
		_ = http.NewResponseController(w).Flush() // net/http reads the body here
	}))
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inner.ServeHTTP(w, r)
		// Give a read deadline the guard set time to end the context
		// before net/http stops its watch; a guard that sets none leaves
		// it alive, and the wait runs out.
		select {
		case <-r.Context().Done():
		case <-time.After(200 * time.Millisecond):
		}
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(c)
	for i := 0; i < 3; i++ {
		_, _ = io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello")
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("request %d: %v", i+1, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("request %d: status %d: its context was done before it started", i+1, resp.StatusCode)
		}
		if resp.Close {
			t.Fatalf("request %d: the connection was closed, the body having been read whole", i+1)
		}
	}
}

// TestGuardBodyReadElsewhere: a handler may leave a goroutine reading the
// body after it returned (a proxy's transport forwarding it to a service
// that answered early); the guard's look at the body races with nothing
// (go test -race).
func TestGuardBodyReadElsewhere(t *testing.T) {
	read := make(chan error, 1)
	started := make(chan struct{})
	h := guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		go func() {
			close(started)
			_, err := io.ReadAll(r.Body)
			read <- err
		}()
		<-started
		w.WriteHeader(http.StatusAccepted)
	}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	_, _ = io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	select {
	case <-read:
	case <-time.After(10 * time.Second):
		t.Fatal("the body's reader never ended")
	}
}
