package fakeserver

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/invokeconf/invokeconf/fixtures"
	"github.com/invokeconf/invokeconf/internal/httpserve"
)

// BenchmarkIdleSSEMemory measures what an idle SSE stream costs the
// reference server. A fresh server process (this test binary, re-run as
// TestIdleSSEServer) takes 10,000 SSE invokes of a script that pauses for ten
// minutes; once each has its start frame, the benchmark reports per stream
// the growth, from just after the server started listening, of
//
//   - B/stream: heap and goroutine stacks in use (runtime.MemStats HeapInuse
//     plus StackInuse) after a collection: the connection, its goroutines and
//     buffers, the request, the run and its timers, the thread in the store;
//   - sys-B/stream: all the memory the Go runtime holds from the OS (Sys),
//     free heap not yet returned and the runtime's own structures included;
//   - rss-B/stream: the resident set of the process after a collection that
//     returns free memory to the OS (debug.FreeOSMemory);
//   - floor-B/stream: B/stream of a bare net/http handler (bareSSE) in the
//     same kind of process: the least an idle SSE stream costs while
//     net/http serves it (its connection goroutine, whose stack has grown to
//     8 KiB, its background read goroutine, its 4 KiB read and 4+2 KiB write
//     buffers). The reference takes its streams' connections over
//     (sse_conn.go), so it can go below it.
//
// The clients are in the benchmark's own process, so none of their memory is
// counted; nor is the kernel's memory for the sockets.
//
// Figures (2 shared cores, Go 1.26, -count 3): B/stream 33.8-34.0 KB before
// the idle-stream work (rss 35.2-35.4, sys 35.7-36.6), 29.5-29.6 KB after it
// (rss 30.8-30.9, sys 31.9), 6.2-6.3 KB once streams hijack their
// connections (rss 7.0-7.2, sys 8.4-9.3), against a floor of 25.7 KB.
func BenchmarkIdleSSEMemory(b *testing.B) {
	const streams = 10000
	var ref, floor [3]float64
	for i := 0; i < b.N; i++ {
		m := idleStreamsCost(b, "ref", streams)
		f := idleStreamsCost(b, "bare", streams)
		for j := range m {
			ref[j] += m[j] / streams / float64(b.N)
			floor[j] += f[j] / streams / float64(b.N)
		}
	}
	b.ReportMetric(ref[0], "B/stream")
	b.ReportMetric(ref[1], "sys-B/stream")
	b.ReportMetric(ref[2], "rss-B/stream")
	b.ReportMetric(floor[0], "floor-B/stream")
}

// bareSSE is the least a server can do for an SSE invoke: read the body,
// send the headers and the start frame, and wait for the client to go.
func bareSSE(w http.ResponseWriter, r *http.Request) {
	_, _ = io.ReadAll(r.Body)
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, "event: start\ndata: {}\n\n")
	_ = http.NewResponseController(w).Flush()
	<-r.Context().Done()
}

// idleServerEnv makes this test binary a server for BenchmarkIdleSSEMemory
// (TestIdleSSEServer): "ref" the reference server, "bare" bareSSE.
const idleServerEnv = "INVOKECONF_IDLE_SSE_SERVER"

// idleStreamsCost starts a server process of the kind given, opens n idle
// streams on it and returns the growth of its heap and stacks in use, Sys
// and resident set.
func idleStreamsCost(b *testing.B, kind string, n int) [3]float64 {
	b.StopTimer()
	defer b.StartTimer()
	cmd := exec.Command(os.Args[0], "-test.run=^TestIdleSSEServer$", "-test.count=1")
	cmd.Env = append(os.Environ(), idleServerEnv+"="+kind)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		in.Close() // the server ends when its input does
		_ = cmd.Wait()
	}()
	lines := bufio.NewScanner(out)
	next := func() []string {
		for lines.Scan() {
			if f, ok := strings.CutPrefix(lines.Text(), "idle-sse: "); ok {
				return strings.Fields(f)
			}
		}
		b.Fatalf("server process: %v", lines.Err())
		return nil
	}
	url := next()[0]
	p, err := fixtures.Reference()
	if err != nil {
		b.Fatal(err)
	}
	b.StartTimer()
	conns := openIdleStreams(b, url, p.Agents.Main.ID, p.Keys.Agent, n)
	b.StopTimer()
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	if _, err := io.WriteString(in, "measure\n"); err != nil {
		b.Fatal(err)
	}
	var m [3]float64
	got := next()
	if len(got) != len(m) {
		b.Fatalf("server process answered %q", got)
	}
	for i, f := range got {
		if _, err := fmt.Sscan(f, &m[i]); err != nil {
			b.Fatalf("server process answered %q", got)
		}
	}
	return m
}

// TestIdleSSEServer is the server process of BenchmarkIdleSSEMemory; it
// does nothing unless idleServerEnv is set. It prints its URL, then, for
// each line on its input, the growth of its memory since it started
// listening (see memNow); it ends with its input.
func TestIdleSSEServer(t *testing.T) {
	var h http.Handler
	closeRuns := func() {}
	switch os.Getenv(idleServerEnv) {
	case "":
		t.Skip("the server process of BenchmarkIdleSSEMemory")
	case "bare":
		h = http.HandlerFunc(bareSSE)
	default:
		p, err := fixtures.Reference()
		if err != nil {
			t.Fatal(err)
		}
		s, err := New(Config{Profile: p})
		if err != nil {
			t.Fatal(err)
		}
		h, closeRuns = s, s.Close
	}
	l, err := httpserve.Start(h, "127.0.0.1:0") // as Listen does
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		closeRuns() // first, so that open streams end (as Running.Close)
		_ = l.Stop(time.Second)
	}()
	before := memNow()
	fmt.Println("idle-sse:", l.URL)
	lines := bufio.NewScanner(os.Stdin)
	for lines.Scan() {
		after := memNow()
		fmt.Println("idle-sse:", after[0]-before[0], after[1]-before[1], after[2]-before[2])
	}
}

// memNow is, after a collection, the heap and stacks in use, the memory the
// runtime holds from the OS, and the resident set once free memory is
// returned to the OS.
func memNow() [3]int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	debug.FreeOSMemory()
	return [3]int64{int64(m.HeapInuse + m.StackInuse), int64(m.Sys), residentBytes()}
}

// residentBytes is the resident set of this process (Linux), 0 if unknown.
func residentBytes() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	var size, resident int64
	if _, err := fmt.Sscan(string(b), &size, &resident); err != nil {
		return 0
	}
	return resident * int64(os.Getpagesize())
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
