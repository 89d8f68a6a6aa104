package fakeserver

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/invokeconf/invokeconf/fixtures"
)

// TestSSEOnTheWire: an SSE answer reads the same on the wire whether its
// connection is hijacked (HTTP/1.1) or served by net/http (HTTP/1.0): the
// status, the header as the header variants leave it, every frame from
// start to close; a hijacked one is chunked and its connection closes after
// it.
func TestSSEOnTheWire(t *testing.T) {
	tests := []struct {
		name     string
		proto    string
		variants []string
		status   int
		header   string // the thread header's name, as sent
		chunked  bool
	}{
		{name: "hijacked", proto: "HTTP/1.1", status: 200, header: "X-Svc-Thread-Id", chunked: true},
		{name: "hijacked variants", proto: "HTTP/1.1", variants: []string{"header-case", "charset-utf8", "sync-2xx"},
			status: 203, header: "x-svc-thread-id", chunked: true},
		{name: "net/http", proto: "HTTP/1.0", status: 200, header: "X-Svc-Thread-Id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := fixtures.Reference()
			if err != nil {
				t.Fatal(err)
			}
			srv, err := Listen(Config{Profile: p, Variants: tt.variants}, "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			host := strings.TrimPrefix(srv.URL, "http://")
			c, err := net.Dial("tcp", host)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(10 * time.Second))
			const script = "@say a\n@pause 10ms\n@say b"
			fmt.Fprintf(c, "POST /api/invoke/%s %s\r\nHost: %s\r\nAuthorization: Bearer %s\r\nAccept: text/event-stream\r\nContent-Length: %d\r\n\r\n%s",
				p.Agents.Main.ID, tt.proto, host, p.Keys.Agent, len(script), script)
			var raw bytes.Buffer
			br := bufio.NewReader(io.TeeReader(c, &raw))
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			head := raw.String()
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatalf("body: %v after %q", err, body)
			}
			if resp.StatusCode != tt.status || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") ||
				!strings.Contains(head, "\r\n"+tt.header+": thr") || resp.Header.Get("Cache-Control") != "no-cache" {
				t.Errorf("head:\n%s", head)
			}
			if strings.Contains(strings.Join(tt.variants, ","), "charset-utf8") && resp.Header.Get("Content-Type") != "text/event-stream; charset=utf-8" {
				t.Errorf("charset-utf8: Content-Type %q", resp.Header.Get("Content-Type"))
			}
			if got := len(resp.TransferEncoding) == 1 && resp.TransferEncoding[0] == "chunked"; got != tt.chunked || !resp.Close {
				t.Errorf("transfer encoding %q, close %v", resp.TransferEncoding, resp.Close)
			}
			s := string(body)
			if !strings.HasPrefix(s, "event: start\ndata: {}\n\n") || !strings.HasSuffix(s, "event: close\ndata: {}\n\n") ||
				!strings.Contains(s, `"content":"a"`) || !strings.Contains(s, `"content":"b"`) || !strings.Contains(s, ":after\n") {
				t.Errorf("body:\n%s", s)
			}
			if n, err := br.Read(make([]byte, 1)); err != io.EOF {
				t.Errorf("after the stream: %d bytes, %v; want the connection closed", n, err)
			}
		})
	}
}

// TestHijackedStreamWithoutClose: a stream the no-close defect ends without
// its close frame still ends its chunked body, so the client sees the end.
func TestHijackedStreamWithoutClose(t *testing.T) {
	ts, p := newTestServer(t, Config{Defects: []string{"no-close"}})
	resp := post(t, ts.URL+"/api/invoke/"+p.Agents.Main.ID, p.Keys.Agent, "text/event-stream", "hi")
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || strings.Contains(string(b), "event: close") || !strings.Contains(string(b), "runComplete\":true") {
		t.Fatalf("body %q, %v", b, err)
	}
}

// TestCloseEndsHijackedStreams: closing a running server ends its open
// streams (their runs are cancelled) and closes their connections.
func TestCloseEndsHijackedStreams(t *testing.T) {
	p, err := fixtures.Reference()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := Listen(Config{Profile: p}, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	host := strings.TrimPrefix(srv.URL, "http://")
	c, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	const script = "@pause 10m"
	fmt.Fprintf(c, "POST /api/invoke/%s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nAccept: text/event-stream\r\nContent-Length: %d\r\n\r\n%s",
		p.Agents.Main.ID, host, p.Keys.Agent, len(script), script)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	first := make([]byte, len("event: start\ndata: {}\n\n"))
	if _, err := io.ReadFull(resp.Body, first); err != nil {
		t.Fatal(err)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	rest, err := io.ReadAll(resp.Body)
	if err != nil || !strings.HasSuffix(string(rest), "event: close\ndata: {}\n\n") {
		t.Fatalf("after Close: %q, %v", rest, err)
	}
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("after Close, read: %v; want the connection closed", err)
	}
}

// TestHijackedHeaderDefects: a defect that rewrites a header at WriteHeader
// (headerWriter) still does on a hijacked stream, whose head the server
// writes itself: new-thread-id-invented's header names another thread than
// the events.
func TestHijackedHeaderDefects(t *testing.T) {
	p, err := fixtures.Reference()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := Listen(Config{Profile: p, Defects: []string{"new-thread-id-invented"}}, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	req, err := http.NewRequest("POST", srv.URL+"/api/invoke/"+p.Agents.Main.ID, strings.NewReader("hello"))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+p.Keys.Agent)
	req.Header.Set("Accept", "text/event-stream")
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		t.Fatal(err)
	}
	header := resp.Header.Get("X-SVC-Thread-Id")
	if header == "" || !strings.Contains(string(body), `"threadID"`) || strings.Contains(string(body), `"threadID":"`+header+`"`) {
		t.Errorf("header %q, body %s: want a header naming another thread than the events", header, body)
	}
}
