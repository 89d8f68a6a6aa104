package fakeserver

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/invokeconf/invokeconf/fixtures"
	"github.com/invokeconf/invokeconf/internal/httpserve"
)

// bareEcho is the least a server can do for an echo invoke: read the body
// and write it back with the headers the reference sends.
func bareEcho(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	w.Header().Set("X-SVC-Thread-Id", "thr_0123456789abcdef")
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}

// BenchmarkEchoVersusBare runs the reference server's synchronous echo
// invoke (plain-text form) and a bare net/http handler that writes the same
// bytes, one after the other on loopback under the same load (b.N requests
// from 32 keep-alive clients each), and reports the reference's throughput as
// a fraction of the bare one's (ref/bare, 1 = as fast).
func BenchmarkEchoVersusBare(b *testing.B) {
	p, err := fixtures.Reference()
	if err != nil {
		b.Fatal(err)
	}
	ref, err := Listen(Config{Profile: p}, "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ref.Close()
	bare, err := httpserve.Start(http.HandlerFunc(bareEcho), "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer bare.Stop(time.Second)
	const prompt = "Hello, agent"
	refReq := rawRequest(ref.URL, "/api/invoke/"+p.Agents.Main.ID, p.Keys.Agent, prompt)
	bareReq := rawRequest(bare.URL, "/", p.Keys.Agent, prompt)
	b.ResetTimer()
	// Alternate in rounds so that a change of load on the machine weighs on
	// both alike.
	const rounds = 10
	var refWall, bareWall time.Duration
	for i := 0; i < rounds; i++ {
		n := b.N / rounds
		if i == 0 {
			n += b.N % rounds
		}
		refWall += load(b, ref.URL, refReq, prompt, n)
		bareWall += load(b, bare.URL, bareReq, prompt, n)
	}
	b.ReportMetric(float64(bareWall)/float64(refWall), "ref/bare")
	b.ReportMetric(float64(b.N)/refWall.Seconds(), "ref-req/s")
	b.ReportMetric(float64(b.N)/bareWall.Seconds(), "bare-req/s")
}

// load sends n requests from 32 clients on keep-alive connections and
// returns how long they took.
func load(b *testing.B, url string, req []byte, want string, n int) time.Duration {
	const clients = 32
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for i := 0; i < clients; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := newKeepAlive(b, url)
			defer c.Close()
			for next.Add(1) <= int64(n) {
				c.call(b, req, want)
			}
		}()
	}
	wg.Wait()
	return time.Since(start)
}

// rawRequest is the bytes of an echo invoke.
func rawRequest(url, path, key, prompt string) []byte {
	return []byte(fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n%s",
		path, strings.TrimPrefix(url, "http://"), key, len(prompt), prompt))
}

// keepAlive is a client on one keep-alive connection, as cheap as a client
// can be, so that the benchmark measures the servers.
type keepAlive struct {
	net.Conn
	r *bufio.Reader
}

func newKeepAlive(b *testing.B, url string) keepAlive {
	c, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		b.Fatal(err)
	}
	return keepAlive{Conn: c, r: bufio.NewReader(c)}
}

// call sends one request and reads its answer, which must be want.
func (k keepAlive) call(b *testing.B, req []byte, want string) time.Duration {
	start := time.Now()
	_ = k.SetDeadline(start.Add(10 * time.Second))
	if _, err := k.Write(req); err != nil {
		b.Fatal(err)
	}
	resp, err := http.ReadResponse(k.r, nil)
	if err != nil {
		b.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || string(body) != want {
		b.Fatalf("answer %q, %v", body, err)
	}
	return time.Since(start)
}

// BenchmarkIdleSSEMemory opens 1,000 SSE streams whose runs stay quiet and
// reports what each costs in heap and stacks, measured from a fresh start
// (the clients are raw connections in the same process, so their few
// hundred bytes each are counted too).
func BenchmarkIdleSSEMemory(b *testing.B) {
	const streams = 1000
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		p, err := fixtures.Reference()
		if err != nil {
			b.Fatal(err)
		}
		srv, err := Listen(Config{Profile: p}, "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		before := inUse()
		b.StartTimer()
		conns := openIdleStreams(b, srv.URL, p.Agents.Main.ID, p.Keys.Agent, streams)
		b.StopTimer()
		after := inUse()
		b.ReportMetric(float64(after-before)/streams, "B/stream")
		for _, c := range conns {
			c.Close()
		}
		srv.Close()
	}
}

// inUse is the heap and stack memory in use after a collection.
func inUse() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapInuse + m.StackInuse)
}

// openIdleStreams opens n SSE invokes of a quiet script and returns once
// each has its start frame.
func openIdleStreams(b *testing.B, url, agent, key string, n int) []net.Conn {
	host := strings.TrimPrefix(url, "http://")
	const script = "@pause 10m"
	req := fmt.Sprintf("POST /api/invoke/%s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nAccept: text/event-stream\r\nContent-Length: %d\r\n\r\n%s",
		agent, host, key, len(script), script)
	conns := make([]net.Conn, 0, n)
	buf := make([]byte, 512)
	for i := 0; i < n; i++ {
		c, err := net.Dial("tcp", host)
		if err != nil {
			b.Fatal(err)
		}
		conns = append(conns, c)
		if _, err := io.WriteString(c, req); err != nil {
			b.Fatal(err)
		}
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		got := ""
		for !strings.Contains(got, "event: start\ndata: {}\n\n") {
			k, err := c.Read(buf)
			if err != nil {
				b.Fatalf("stream %d: %v after %q", i, err, got)
			}
			got += string(buf[:k])
		}
	}
	return conns
}
