package fakeserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/invokeconf/invokeconf/fixtures"
	"github.com/invokeconf/invokeconf/internal/httpserve"
)

// benchForm is a response form BenchmarkVersusBare measures: the Accept
// header that asks for it, and what every answer must start and end with.
type benchForm struct {
	name, accept   string
	prefix, suffix string
}

// benchForms are the synchronous forms of an echo invoke ("Hello, agent").
var benchForms = []benchForm{
	{name: "json", accept: "application/json", prefix: `{"items":[`, suffix: "]}\n"},
	{name: "sse", accept: "text/event-stream", prefix: "event: start\ndata: {}\n\n", suffix: "event: close\ndata: {}\n\n"},
	{name: "plain", prefix: benchPrompt, suffix: ""},
}

const benchPrompt = "Hello, agent"

// BenchmarkVersusBare measures the reference server's synchronous echo
// invoke in each response form (json: the JSON envelope, sse, plain) against
// a bare net/http handler that writes the same bytes: an answer the
// reference gave, with its status and header. Both listen on loopback in
// this process; the load comes from another process (this test binary
// re-run as TestLoadClient): 32 clients on keep-alive connections, each
// sending its next request when its answer has been read whole. The clients
// are of two kinds: nethttp, net/http's own (an http.Client, as a client's
// test suite sends), and raw, a reader of answers that does no more than it
// must, so that the servers' share of the machine is larger and a gap
// between them shows more. The two servers take turns, in twenty rounds of
// b.N/20 requests each, so that other load on the machine weighs on both
// alike. It reports
//
//   - ref/bare: the reference's requests per second as a fraction of the
//     bare handler's (1 = as fast);
//   - cpu-ref/bare: the same fraction for the CPU time this process (the
//     servers, not the clients) spends per request, which other load on the
//     machine moves less;
//   - ref-req/s, bare-req/s, and ref-allocs/req, bare-allocs/req (heap
//     allocations per request in this process).
//
// Profile the reference alone with -cpuprofile and -tagfocus server=ref:
// the clients are not in this process, and each server's goroutines carry
// a label.
func BenchmarkVersusBare(b *testing.B) {
	lc := startLoadClient(b)
	defer lc.close()
	for _, f := range benchForms {
		for _, client := range []string{"nethttp", "raw"} {
			b.Run(f.name+"/"+client, func(b *testing.B) { versusBare(b, lc, f, client) })
		}
	}
}

func versusBare(b *testing.B, lc *loadClient, f benchForm, client string) {
	p, err := fixtures.Reference()
	if err != nil {
		b.Fatal(err)
	}
	// The servers' goroutines carry a label, so that a profile tells them
	// apart: -tagfocus server=ref.
	var ref *Running
	pprof.Do(context.Background(), pprof.Labels("server", "ref"), func(context.Context) {
		ref, err = Listen(Config{Profile: p}, "127.0.0.1:0")
	})
	if err != nil {
		b.Fatal(err)
	}
	defer ref.Close()
	req := []byte(fmt.Sprintf("POST /api/invoke/%s HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n", p.Agents.Main.ID, p.Keys.Agent))
	if f.accept != "" {
		req = fmt.Appendf(req, "Accept: %s\r\n", f.accept)
	}
	req = fmt.Appendf(req, "Content-Type: text/plain\r\nContent-Length: %d\r\n\r\n%s", len(benchPrompt), benchPrompt)
	var bare *httpserve.Listener
	pprof.Do(context.Background(), pprof.Labels("server", "bare"), func(context.Context) {
		bare, err = httpserve.Start(bareLike(b, ref.URL, req, f), "127.0.0.1:0")
	})
	if err != nil {
		b.Fatal(err)
	}
	defer bare.Stop(time.Second)
	job := loadJob{client: client, req: req, prefix: f.prefix, suffix: f.suffix}
	b.ResetTimer()
	// Each round runs both servers, in turns that alternate which goes
	// first; a round's ratio compares two runs a few milliseconds apart, and
	// the median round's ratio is reported, so that a burst of other load
	// on the machine weighs on one round at most.
	const rounds = 20
	var refWall, bareWall time.Duration
	var wallRatios, cpuRatios []float64
	var refAllocs, bareAllocs uint64
	for i := 0; i < rounds; i++ {
		n := b.N / rounds
		if i == 0 {
			n += b.N % rounds
		}
		if n == 0 {
			continue
		}
		var wall, cpu [2]time.Duration
		var allocs [2]uint64
		for j := range 2 {
			server := (i + j) % 2 // 0: the reference, 1: bare
			url := ref.URL
			if server == 1 {
				url = bare.URL
			}
			m0, c0 := mallocs(), processCPU()
			wall[server] = lc.run(b, url, n, job)
			cpu[server], allocs[server] = processCPU()-c0, mallocs()-m0
		}
		refWall, bareWall = refWall+wall[0], bareWall+wall[1]
		refAllocs, bareAllocs = refAllocs+allocs[0], bareAllocs+allocs[1]
		wallRatios = append(wallRatios, float64(wall[1])/float64(wall[0]))
		if cpu[0] > 0 {
			cpuRatios = append(cpuRatios, float64(cpu[1])/float64(cpu[0]))
		}
	}
	b.ReportMetric(median(wallRatios), "ref/bare")
	if len(cpuRatios) > 0 {
		b.ReportMetric(median(cpuRatios), "cpu-ref/bare")
	}
	b.ReportMetric(float64(b.N)/refWall.Seconds(), "ref-req/s")
	b.ReportMetric(float64(b.N)/bareWall.Seconds(), "bare-req/s")
	b.ReportMetric(float64(refAllocs)/float64(b.N), "ref-allocs/req")
	b.ReportMetric(float64(bareAllocs)/float64(b.N), "bare-allocs/req")
}

// median is the middle value of xs (the mean of the two middle ones).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return (s[(len(s)-1)/2] + s[len(s)/2]) / 2
}

// mallocs is the number of heap allocations this process has made.
func mallocs() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.Mallocs
}

// bareLike returns the bare handler of a form: it reads the request body
// and answers with the status, the header fields and the body of one answer
// of the reference at url to req, in one write, as the reference writes the
// answer of a run that is over.
func bareLike(b *testing.B, url string, req []byte, f benchForm) http.Handler {
	c, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write(req); err != nil {
		b.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		b.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil || !bytes.HasPrefix(body, []byte(f.prefix)) || !bytes.HasSuffix(body, []byte(f.suffix)) {
		b.Fatalf("the reference answered %d %q, %v", resp.StatusCode, body, err)
	}
	header := http.Header{}
	for _, k := range []string{"Content-Type", "Cache-Control", "X-Accel-Buffering", hdrThreadID} {
		if v := resp.Header.Get(k); v != "" {
			header.Set(k, v)
		}
	}
	status := resp.StatusCode
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		h := w.Header()
		for k, v := range header {
			h[k] = v
		}
		w.WriteHeader(status)
		_, _ = w.Write(body)
	})
}

// loadJob is what a load client sends, with which kind of client (nethttp
// or raw), and what every answer must be: a 2xx whose body starts with
// prefix and ends with suffix.
type loadJob struct {
	client         string
	req            []byte
	prefix, suffix string
}

// loadClientEnv makes this test binary the load client of
// BenchmarkVersusBare (TestLoadClient).
const loadClientEnv = "INVOKECONF_LOAD_CLIENT"

// loadClient is the load client process.
type loadClient struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
}

func startLoadClient(b *testing.B) *loadClient {
	cmd := exec.Command(os.Args[0], "-test.run=^TestLoadClient$", "-test.count=1")
	cmd.Env = append(os.Environ(), loadClientEnv+"=1")
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
	return &loadClient{cmd: cmd, in: in, out: bufio.NewScanner(out)}
}

func (lc *loadClient) close() {
	lc.in.Close() // the client ends when its input does
	_ = lc.cmd.Wait()
}

// run has the load client send n requests to url and returns how long they
// took.
func (lc *loadClient) run(b *testing.B, url string, n int, job loadJob) time.Duration {
	// Each field is marked with a leading '=' so that an empty one is a field too.
	enc := func(b []byte) string { return "=" + base64.StdEncoding.EncodeToString(b) }
	if _, err := fmt.Fprintln(lc.in, strings.TrimPrefix(url, "http://"), n, job.client, enc(job.req), enc([]byte(job.prefix)), enc([]byte(job.suffix))); err != nil {
		b.Fatal(err)
	}
	for lc.out.Scan() {
		line := lc.out.Text()
		if rest, ok := strings.CutPrefix(line, "load-error: "); ok {
			b.Fatal(rest)
		}
		if rest, ok := strings.CutPrefix(line, "load: "); ok {
			ns, err := strconv.ParseInt(rest, 10, 64)
			if err != nil {
				b.Fatalf("load client answered %q", line)
			}
			return time.Duration(ns)
		}
	}
	b.Fatalf("load client: %v", lc.out.Err())
	return 0
}

// TestLoadClient is the load client of BenchmarkVersusBare; it does nothing
// unless loadClientEnv is set. For each line on its input (host, count, the
// kind of client, and the request, prefix and suffix in base64) it sends the
// request count times from 32 clients on keep-alive connections, checks
// every answer, and prints how long they took; it ends with its input.
func TestLoadClient(t *testing.T) {
	if os.Getenv(loadClientEnv) == "" {
		t.Skip("the load client of BenchmarkVersusBare")
	}
	lines := bufio.NewScanner(os.Stdin)
	lines.Buffer(nil, 1<<20)
	for lines.Scan() {
		elapsed, err := loadRound(strings.Fields(lines.Text()))
		if err != nil {
			fmt.Println("load-error:", err)
			continue
		}
		fmt.Println("load:", elapsed.Nanoseconds())
	}
}

// loadRound runs one line of TestLoadClient's input.
func loadRound(f []string) (time.Duration, error) {
	if len(f) != 6 {
		return 0, fmt.Errorf("want 6 fields, got %d", len(f))
	}
	n, err := strconv.Atoi(f[1])
	if err != nil {
		return 0, err
	}
	job := loadJob{client: f[2]}
	var raw [3][]byte
	for i := range raw {
		// Each field is marked with a leading '=' (loadClient.run).
		if raw[i], err = base64.StdEncoding.DecodeString(strings.TrimPrefix(f[3+i], "=")); err != nil {
			return 0, err
		}
	}
	job.req, job.prefix, job.suffix = raw[0], string(raw[1]), string(raw[2])
	newCaller := func() caller { return &loadConn{host: f[0]} }
	if job.client == "nethttp" {
		hc, err := newHTTPCaller(f[0], job.req)
		if err != nil {
			return 0, err
		}
		newCaller = func() caller { return hc }
	}
	const clients = 32
	var next atomic.Int64
	var wg sync.WaitGroup
	var firstErr atomic.Pointer[error]
	start := time.Now()
	for i := 0; i < clients; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := newCaller()
			defer c.close()
			for next.Add(1) <= int64(n) {
				if err := c.call(job); err != nil {
					firstErr.CompareAndSwap(nil, &err)
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err := firstErr.Load(); err != nil {
		return 0, *err
	}
	return elapsed, nil
}

// caller is a client of the load: it sends a job's request and checks its
// answer.
type caller interface {
	call(loadJob) error
	close()
}

// httpCaller is the nethttp client: net/http's, as a client's test suite
// sends, its connections kept alive in its transport's pool (32 of them,
// one per client).
type httpCaller struct {
	c      *http.Client
	method string
	url    string
	header http.Header
	body   []byte
}

// newHTTPCaller reads the request the callers send to host.
func newHTTPCaller(host string, raw []byte) (*httpCaller, error) {
	rq, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(raw)))
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(rq.Body)
	if err != nil {
		return nil, err
	}
	rq.Header.Del("Content-Length")
	tr := &http.Transport{MaxIdleConnsPerHost: 32, DisableCompression: true}
	return &httpCaller{c: &http.Client{Transport: tr, Timeout: 10 * time.Second}, method: rq.Method,
		url: "http://" + host + rq.URL.RequestURI(), header: rq.Header, body: body}, nil
}

func (h *httpCaller) close() { h.c.CloseIdleConnections() }

func (h *httpCaller) call(job loadJob) error {
	req, err := http.NewRequest(h.method, h.url, bytes.NewReader(h.body))
	if err != nil {
		return err
	}
	req.Header = h.header.Clone()
	resp, err := h.c.Do(req)
	if err != nil {
		return err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 || !bytes.HasPrefix(b, []byte(job.prefix)) || !bytes.HasSuffix(b, []byte(job.suffix)) {
		return fmt.Errorf("answer %d %q", resp.StatusCode, b)
	}
	return nil
}

// loadConn is one client of the load: a keep-alive connection (a new one
// when the server closes it) and a reader of answers that does no more than
// a client must, so that the load costs the machine little.
type loadConn struct {
	host string
	c    net.Conn
	r    *bufio.Reader
	body []byte
}

func (k *loadConn) close() {
	if k.c != nil {
		k.c.Close()
		k.c = nil
	}
}

// call sends the job's request and reads its answer.
func (k *loadConn) call(job loadJob) error {
	if k.c == nil {
		c, err := net.Dial("tcp", k.host)
		if err != nil {
			return err
		}
		k.c = c
		if k.r == nil {
			k.r = bufio.NewReaderSize(c, 8192)
		} else {
			k.r.Reset(c)
		}
	}
	_ = k.c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := k.c.Write(job.req); err != nil {
		return err
	}
	closing, err := k.readAnswer()
	if err != nil {
		return err
	}
	if !bytes.HasPrefix(k.body, []byte(job.prefix)) || !bytes.HasSuffix(k.body, []byte(job.suffix)) {
		return fmt.Errorf("answer %q", k.body)
	}
	if closing {
		k.close()
	}
	return nil
}

var errAnswer = errors.New("malformed answer")

// readAnswer reads one answer into k.body: its status line (a 2xx), its
// header, and a body of Content-Length, chunked, or up to the connection's
// end. closing says the server closes the connection after it.
func (k *loadConn) readAnswer() (closing bool, err error) {
	line, err := k.r.ReadSlice('\n')
	if err != nil {
		return false, err
	}
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.1 2")) {
		return false, fmt.Errorf("status line %q", line)
	}
	length, chunked := -1, false
	for {
		line, err = k.r.ReadSlice('\n')
		if err != nil {
			return false, err
		}
		if len(line) <= 2 {
			break
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			return false, errAnswer
		}
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			if length, err = strconv.Atoi(string(value)); err != nil {
				return false, err
			}
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			chunked = bytes.EqualFold(value, []byte("chunked"))
		case bytes.EqualFold(name, []byte("Connection")):
			closing = bytes.EqualFold(value, []byte("close"))
		}
	}
	k.body = k.body[:0]
	switch {
	case chunked:
		return closing, k.readChunked()
	case length >= 0:
		k.body = append(k.body, make([]byte, length)...)
		_, err = io.ReadFull(k.r, k.body)
		return closing, err
	}
	k.body, err = io.ReadAll(k.r)
	return true, err
}

// readChunked reads a chunked body into k.body.
func (k *loadConn) readChunked() error {
	for {
		line, err := k.r.ReadSlice('\n')
		if err != nil {
			return err
		}
		size, err := strconv.ParseInt(string(bytes.TrimSpace(line)), 16, 32)
		if err != nil {
			return err
		}
		if size == 0 {
			_, err = k.r.Discard(2) // no trailer: the last CRLF
			return err
		}
		at := len(k.body)
		k.body = append(k.body, make([]byte, size+2)...)
		if _, err := io.ReadFull(k.r, k.body[at:]); err != nil {
			return err
		}
		k.body = k.body[:len(k.body)-2]
	}
}

// BenchmarkHandler measures the reference server's handler alone for an
// echo invoke in each form: no connection, no net/http, a request and a
// header made once. Its cpu-ns/op (the process's CPU time, which other load
// on the machine sways less than ns/op) and allocs/op are what the handler
// adds to net/http's own work per request (BenchmarkVersusBare).
func BenchmarkHandler(b *testing.B) {
	for _, f := range benchForms {
		b.Run(f.name, func(b *testing.B) {
			s := testServer(b, Config{})
			p := s.cfg.Profile
			r, err := http.NewRequest("POST", "/api/invoke/"+p.Agents.Main.ID, nil)
			if err != nil {
				b.Fatal(err)
			}
			r.Header.Set("Authorization", "Bearer "+p.Keys.Agent)
			r.Header.Set("Content-Type", "text/plain")
			if f.accept != "" {
				r.Header.Set("Accept", f.accept)
			}
			r.ContentLength = int64(len(benchPrompt))
			r.Proto, r.ProtoMajor, r.ProtoMinor = "HTTP/1.1", 1, 1
			w := &discardWriter{h: http.Header{}}
			body := strings.NewReader(benchPrompt)
			b.ReportAllocs()
			b.ResetTimer()
			cpu := processCPU()
			for i := 0; i < b.N; i++ {
				body.Reset(benchPrompt)
				r.Body = io.NopCloser(body)
				clear(w.h)
				w.n = 0
				s.ServeHTTP(w, r)
				if w.n == 0 {
					b.Fatal("no answer")
				}
			}
			if cpu := processCPU() - cpu; cpu > 0 {
				b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
			}
		})
	}
}

// discardWriter is a ResponseWriter that keeps nothing but the length.
type discardWriter struct {
	h http.Header
	n int
}

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) WriteHeader(int)             {}
func (d *discardWriter) Write(p []byte) (int, error) { d.n += len(p); return len(p), nil }
func (d *discardWriter) Flush()                      {}
