package proxy

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/invokeconf/invokeconf/internal/httpserve"
	"github.com/invokeconf/invokeconf/traffic"
)

const secretKey = "sk-svc-alice-k1-ProxySecret0042"

// rig is an upstream service behind a Proxy.
type rig struct {
	url  string
	up   string // the service's URL
	mu   sync.Mutex
	xs   []traffic.Exchange
	done chan traffic.Exchange
}

func newRig(t *testing.T, h http.Handler, maxRecord int64) *rig {
	t.Helper()
	up, err := httpserve.Start(h, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = up.Stop(time.Second) })
	target, _ := url.Parse(up.URL)
	r := &rig{done: make(chan traffic.Exchange, 16)}
	p := New(Config{Target: target, Recorder: traffic.NewRecorder(maxRecord, nil), Done: func(x traffic.Exchange) {
		r.mu.Lock()
		r.xs = append(r.xs, x)
		r.mu.Unlock()
		r.done <- x
	}})
	front, err := httpserve.Start(p, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = front.Stop(time.Second) })
	r.url, r.up = front.URL, up.URL
	return r
}

func (r *rig) next(t *testing.T) traffic.Exchange {
	t.Helper()
	select {
	case x := <-r.done:
		return x
	case <-time.After(10 * time.Second):
		t.Fatal("no exchange recorded within 10 s")
	}
	return traffic.Exchange{}
}

func client() *http.Client {
	return &http.Client{Transport: &http.Transport{DisableCompression: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// TestUnbuffered: the second chunk is only written after the client has read
// the first through the proxy, so a buffering proxy deadlocks into the
// test's deadline.
func TestUnbuffered(t *testing.T) {
	release := make(chan struct{})
	r := newRig(t, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("X-Custom", "kept "+req.Header.Get("Authorization"))
		w.WriteHeader(200)
		_, _ = io.WriteString(w, "event: start\ndata: {}\n\n")
		_ = http.NewResponseController(w).Flush()
		select {
		case <-release:
		case <-time.After(5 * time.Second):
		}
		_, _ = io.WriteString(w, "event: close\ndata: {}\n\n")
	}), 0)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", r.url+"/api/invoke/agt?x=1", strings.NewReader("echo "+secretKey))
	req.Header.Set("Authorization", "Bearer "+secretKey)
	resp, err := client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	first := make(chan string, 1)
	go func() {
		var b strings.Builder
		for i := 0; i < 3; i++ {
			l, _ := br.ReadString('\n')
			b.WriteString(l)
		}
		first <- b.String()
	}()
	select {
	case got := <-first:
		if got != "event: start\ndata: {}\n\n" {
			t.Fatalf("first chunk %q", got)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("the first chunk did not pass before the second was written: the proxy buffers")
	}
	close(release)
	rest, _ := io.ReadAll(br)
	if string(rest) != "event: close\ndata: {}\n\n" {
		t.Errorf("rest %q", rest)
	}
	if got := resp.Header.Get("X-Custom"); got != "kept Bearer "+secretKey {
		t.Errorf("the service did not get the Authorization header unchanged: %q", got)
	}
	x := r.next(t)
	if x.Response == nil || x.Response.End != traffic.EndComplete || len(x.Response.Body.Chunks) < 2 {
		t.Fatalf("recorded %+v", x.Response)
	}
	cs := x.Response.Body.Chunks
	if cs[len(cs)-1].At <= cs[0].At || !x.Response.Body.Timed {
		t.Errorf("chunk times %v .. %v", cs[0].At, cs[len(cs)-1].At)
	}
	if got := x.Request.Header.Get("Authorization"); got != "[key alice-k1]" {
		t.Errorf("Authorization recorded as %q", got)
	}
	all := x.Request.URL + string(x.Request.Body.Bytes()) + x.Response.Header.Get("X-Custom")
	if strings.Contains(all, "ProxySecret") {
		t.Errorf("the recording holds the key: %q", all)
	}
	if !strings.HasSuffix(x.Request.URL, "/api/invoke/agt?x=1") {
		t.Errorf("URL %q", x.Request.URL)
	}
}

// TestPassesThrough: redirects, statuses and compressed bodies pass as the
// service sent them.
func TestPassesThrough(t *testing.T) {
	gz := []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff, 1, 2, 3}
	r := newRig(t, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		switch req.URL.Path {
		case "/redirect":
			http.Redirect(w, req, "/elsewhere", http.StatusFound)
		case "/gzip":
			w.Header().Set("Content-Encoding", "gzip")
			w.WriteHeader(418)
			_, _ = w.Write(gz)
		default:
			t.Errorf("the proxy followed a redirect to %s", req.URL.Path)
		}
	}), 0)
	resp, err := client().Get(r.url + "/redirect")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 302 || resp.Header.Get("Location") != "/elsewhere" {
		t.Errorf("redirect: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	r.next(t)
	resp, err = client().Get(r.url + "/gzip")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 418 || !bytes.Equal(b, gz) || resp.Header.Get("Content-Encoding") != "gzip" {
		t.Errorf("gzip: %d %x %q", resp.StatusCode, b, resp.Header.Get("Content-Encoding"))
	}
}

// TestClientGoneReachesService: a client that goes away mid-stream cancels
// the service's request at once, an event stream (whose connection the proxy
// takes over) as any other body.
func TestClientGoneReachesService(t *testing.T) {
	for _, ct := range []string{"text/plain", "text/event-stream"} {
		t.Run(ct, func(t *testing.T) {
			gone := make(chan struct{})
			r := newRig(t, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
				w.Header().Set("Content-Type", ct)
				_, _ = io.WriteString(w, "part")
				_ = http.NewResponseController(w).Flush()
				select {
				case <-req.Context().Done():
					close(gone)
				case <-time.After(10 * time.Second):
				}
			}), 0)
			ctx, cancel := context.WithCancel(context.Background())
			req, _ := http.NewRequestWithContext(ctx, "POST", r.url+"/api/invoke/agt", strings.NewReader("{}"))
			resp, err := client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 4)
			if _, err := io.ReadFull(resp.Body, buf); err != nil {
				t.Fatal(err)
			}
			cancel()
			resp.Body.Close()
			select {
			case <-gone:
			case <-time.After(3 * time.Second):
				t.Fatal("the service did not see the client go within 3 s")
			}
			if x := r.next(t); x.Response == nil || x.Response.End != traffic.EndClientGone {
				t.Errorf("recorded end %+v", x.Response)
			}
		})
	}
}

// TestStreamPipelined: a request sent on a connection while an event stream
// runs on it is answered once the stream is complete, as net/http answers
// pipelined requests.
func TestStreamPipelined(t *testing.T) {
	release := make(chan struct{})
	r := newRig(t, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: "+req.URL.Path+"\n\n")
		_ = http.NewResponseController(w).Flush()
		if req.URL.Path == "/one" {
			select {
			case <-release:
			case <-req.Context().Done():
			}
		}
	}), 0)
	go func() {
		for range r.done {
		}
	}()
	conn, err := net.Dial("tcp", strings.TrimPrefix(r.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(conn)
	_, _ = io.WriteString(conn, "GET /one HTTP/1.1\r\nHost: x\r\n\r\n")
	one, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(one.Body).ReadString('\n')
	if err != nil || line != "data: /one\n" {
		t.Fatalf("first stream: %q, %v", line, err)
	}
	_, _ = io.WriteString(conn, "GET /two HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	close(release)
	for _, want := range []string{"", "data: /two\n\n"} {
		var resp *http.Response
		if want == "" {
			resp = one
		} else if resp, err = http.ReadResponse(br, nil); err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		if err != nil || want != "" && string(b) != want {
			t.Fatalf("read %q, %v", b, err)
		}
	}
}

// TestStreamHead: an event stream whose client connection the proxy takes
// over reaches the client as net/http writes it: the same status line and
// header lines (Date aside), the same body and the same trailers.
func TestStreamHead(t *testing.T) {
	r := newRig(t, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		_, _ = io.ReadAll(req.Body)
		w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
		w.Header()["X-Custom"] = []string{"a  b", "c"}
		w.WriteHeader(201)
		_, _ = io.WriteString(w, "event: start\ndata: {}\n\n")
		_ = http.NewResponseController(w).Flush()
		_, _ = io.WriteString(w, strings.Repeat("x", 3000)+"\n\n")
		w.Header().Set(http.TrailerPrefix+"X-T", "late")
	}), 0)
	go func() {
		for range r.done {
		}
	}()
	raw := func(base string) (head []string, resp *http.Response, body []byte) {
		conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
		_, _ = io.WriteString(conn, "POST /api/invoke/agt HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
		all, err := io.ReadAll(conn)
		if err != nil {
			t.Fatal(err)
		}
		h, _, _ := strings.Cut(string(all), "\r\n\r\n")
		for _, l := range strings.Split(h, "\r\n") {
			if !strings.HasPrefix(l, "Date: ") {
				head = append(head, l)
			}
		}
		sort.Strings(head[1:]) // net/http puts Connection: close at its own place
		resp, err = http.ReadResponse(bufio.NewReader(bytes.NewReader(all)), nil)
		if err != nil {
			t.Fatal(err)
		}
		body, err = io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return head, resp, body
	}
	dh, dr, db := raw(r.up)
	vh, vr, vb := raw(r.url)
	if !slices.Equal(dh, vh) {
		t.Errorf("head through the proxy\n%q\ndirect\n%q", vh, dh)
	}
	if !bytes.Equal(db, vb) || !slices.Equal(dr.TransferEncoding, []string{"chunked"}) ||
		!slices.Equal(vr.TransferEncoding, []string{"chunked"}) {
		t.Errorf("body through the proxy %q (%v), direct %q (%v)", vb, vr.TransferEncoding, db, dr.TransferEncoding)
	}
	if vr.Trailer.Get("X-T") != "late" || dr.Trailer.Get("X-T") != "late" {
		t.Errorf("trailers through the proxy %v, direct %v", vr.Trailer, dr.Trailer)
	}
}

// TestMaxRecord: the traffic passes whole; the recording keeps the cap.
func TestMaxRecord(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789"), 10000)
	r := newRig(t, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) { _, _ = w.Write(big) }), 1000)
	resp, err := client().Get(r.url + "/big")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Equal(b, big) {
		t.Errorf("the client got %d bytes of %d", len(b), len(big))
	}
	x := r.next(t)
	if got := len(x.Response.Body.Bytes()); got != 1000 || !x.Response.Body.Truncated || x.Response.Body.Size != int64(len(big)) {
		t.Errorf("recorded %d bytes (truncated %v, size %d)", got, x.Response.Body.Truncated, x.Response.Body.Size)
	}
}

// TestUnreachableService: the client gets 502 and the recording an error,
// not a response to judge.
func TestUnreachableService(t *testing.T) {
	l, err := httpserve.Start(http.NotFoundHandler(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone, _ := url.Parse(l.URL)
	_ = l.Stop(time.Second)
	done := make(chan traffic.Exchange, 1)
	front, err := httpserve.Start(New(Config{Target: gone, Done: func(x traffic.Exchange) { done <- x }}), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer front.Stop(time.Second)
	resp, err := client().Get(front.URL + "/api/threads/t")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway {
		t.Errorf("status %d, want 502", resp.StatusCode)
	}
	select {
	case x := <-done:
		if x.Response != nil || x.Error == "" {
			t.Errorf("recorded %+v", x)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no exchange recorded")
	}
}

// TestKeepAliveBodies: requests with a body, one after the other on one
// kept-alive connection, each answered with a short stream: none is cut.
// (The transport's check that a body is not longer than declared used to
// land after the server closed the inbound body, dropping the connection
// to the service mid-answer, a few times in a hundred.)
func TestKeepAliveBodies(t *testing.T) {
	r := newRig(t, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		_, _ = io.ReadAll(req.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for i := 0; i < 3; i++ {
			_, _ = io.WriteString(w, "data: {}\n\n")
			_ = http.NewResponseController(w).Flush()
			select {
			case <-req.Context().Done():
				return
			case <-time.After(2 * time.Millisecond): // spaces the chunks; no synchronisation rests on it
			}
		}
	}), 0)
	go func() {
		for range r.done {
		}
	}()
	c := &http.Transport{}
	defer c.CloseIdleConnections()
	for i := 0; i < 300; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		reused := false
		ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { reused = i.Reused }})
		req, _ := http.NewRequestWithContext(ctx, "POST", r.url+"/api/invoke/agt", strings.NewReader("hello"))
		resp, err := c.RoundTrip(req)
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		if err != nil || len(b) != 30 {
			t.Fatalf("request %d: %d bytes, %v", i+1, len(b), err)
		}
		if i > 0 && !reused {
			// An event stream's connection, taken over, is served again.
			t.Fatalf("request %d: the connection was not kept alive", i+1)
		}
	}
}

// TestBodyEnds: trailers (announced or not) pass after the body, and a body
// the service breaks off reaches the client broken, not ended cleanly.
func TestBodyEnds(t *testing.T) {
	for _, tc := range []struct {
		name    string
		h       http.HandlerFunc
		trailer string // the X-T trailer the client must see
		broken  bool
		end     traffic.End
	}{
		{"announced trailer", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Trailer", "X-T")
			_, _ = io.WriteString(w, "body")
			w.Header().Set("X-T", "announced")
		}, "announced", false, traffic.EndComplete},
		{"unannounced trailer", func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, "body")
			_ = http.NewResponseController(w).Flush()
			w.Header().Set(http.TrailerPrefix+"X-T", "late")
		}, "late", false, traffic.EndComplete},
		{"broken off", func(w http.ResponseWriter, r *http.Request) {
			conn, bw, err := http.NewResponseController(w).Hijack()
			if err != nil {
				t.Error(err)
				return
			}
			defer conn.Close()
			_, _ = bw.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nbody\r\n8\r\ncut")
			_ = bw.Flush()
		}, "", true, traffic.EndError},
		{"event stream, unannounced trailer", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, "body")
			_ = http.NewResponseController(w).Flush()
			w.Header().Set(http.TrailerPrefix+"X-T", "late")
		}, "late", false, traffic.EndComplete},
		{"event stream broken off", func(w http.ResponseWriter, r *http.Request) {
			conn, bw, err := http.NewResponseController(w).Hijack()
			if err != nil {
				t.Error(err)
				return
			}
			defer conn.Close()
			_, _ = bw.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nbody\r\n8\r\ncut")
			_ = bw.Flush()
		}, "", true, traffic.EndError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, tc.h, 0)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, "GET", r.url+"/x", nil)
			resp, err := client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if (err != nil) != tc.broken || !strings.HasPrefix(string(b), "body") {
				t.Errorf("read %q, %v (broken: %v)", b, err, tc.broken)
			}
			if got := resp.Trailer.Get("X-T"); got != tc.trailer {
				t.Errorf("trailer X-T %q, want %q", got, tc.trailer)
			}
			if x := r.next(t); x.Response == nil || x.Response.End != tc.end || !strings.HasPrefix(string(x.Response.Body.Bytes()), "body") {
				t.Errorf("recorded %+v", x.Response)
			}
		})
	}
}
