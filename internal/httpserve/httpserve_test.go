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
