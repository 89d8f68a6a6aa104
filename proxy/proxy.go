// Package proxy is a recording reverse proxy for passive conformance: it
// forwards every request and response unchanged and unbuffered, and records
// each exchange (package traffic) with the arrival time of every response
// chunk.
//
// Transparency: each chunk the service sends is written to the client and
// flushed as soon as it is read, so the proxy does not change the flush or
// keepalive timing it is judging. Redirects are passed on, never followed;
// nothing is retried; status, headers (except the hop-by-hop ones a proxy
// must drop) and bodies pass byte for byte, compressed bodies included. A
// client that goes away cancels the request to the service at once, so the
// service sees the disconnect. The recording keeps at most MaxRecord bytes
// of each body, spilled to disk past the Recorder's SpillThreshold; the
// traffic passes whole. Each exchange is handed to Config.Done as it ends,
// so the caller need not keep it (har.Spool writes it out).
package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/invokeconf/invokeconf/internal/lateness"
	"github.com/invokeconf/invokeconf/traffic"
)

// Config configures a Proxy.
type Config struct {
	// Target is the service's base URL.
	Target *url.URL
	// Recorder makes the recording safe and bounded; nil means
	// traffic.NewRecorder(0, nil).
	Recorder *traffic.Recorder
	// Done is called with each exchange once it has ended. It may be
	// called from many goroutines at once.
	Done func(traffic.Exchange)
	// Transport reaches the service; nil means a Transport that never
	// compresses, never uses an environment proxy and keeps connections
	// alive.
	Transport http.RoundTripper
	// BodyIdle bounds how long the proxy waits for the next bytes of a
	// request body (0: DefaultBodyIdle). An upload that keeps sending is
	// never cut, however long it lasts; one that stalls is, as the client's
	// doing.
	BodyIdle time.Duration
}

// DefaultBodyIdle is the default Config.BodyIdle.
const DefaultBodyIdle = 30 * time.Second

// Proxy is an http.Handler that forwards to Config.Target and records.
type Proxy struct {
	cfg  Config
	rp   *httputil.ReverseProxy
	next atomic.Int64
	open sync.WaitGroup // exchanges not yet handed to Done
	bufs *bufPool
	// waiting: connections served again after a stream, waiting for
	// their next request (stream.go); shutdownHooks: the servers told
	// to close them on Shutdown.
	waiting       sync.Map
	shutdownHooks sync.Map
}

type ctxKey struct{}

// state is one exchange being recorded.
type state struct {
	mu   sync.Mutex
	x    traffic.Exchange
	req  *traffic.BodyRecorder
	resp *traffic.BodyRecorder
	eof  bool
	// err says why no answer came, as the proxy's doing (failed).
	err string
	// stalled says the client sent nothing of its request body for
	// Config.BodyIdle: the proxy stopped waiting.
	stalled atomic.Bool
	// reqBody is the request body the transport reads, nil without one.
	reqBody *recordingBody
	// out and body: the response whose body ServeHTTP copies itself,
	// once ReverseProxy has written the status and headers.
	out  *http.Response
	body io.ReadCloser
	// stream: the response is an event stream that may take its
	// connection over (see hijack); hijacked: it did, and the stream's
	// goroutine ends the exchange.
	stream   bool
	hijacked bool
	// h11: the client speaks HTTP/1.1 and the request is not a HEAD.
	h11 bool
	// ctx is the request to the service's; cancel cancels it, stop stops
	// net/http's client connection from cancelling it.
	ctx    context.Context
	cancel context.CancelFunc
	stop   func() bool
	// client is the client's request's own context: AfterFunc cancels ctx
	// from a goroutine of its own, so a request that had ended before it
	// came may fail at the service before ctx says so.
	client context.Context
}

// copyBufSize is the size of the copy buffers: the transport's read buffer,
// so a read takes what the service sent without a second copy, and an idle
// stream holds little (ReverseProxy's own are 32 KiB).
const copyBufSize = 1 << 10

// bufPool holds the copy buffers.
type bufPool struct{ p sync.Pool }

func (b *bufPool) Get() []byte {
	if v, ok := b.p.Get().(*[]byte); ok {
		return *v
	}
	return make([]byte, copyBufSize)
}

func (b *bufPool) Put(buf []byte) { b.p.Put(&buf) }

// New returns a Proxy.
func New(cfg Config) *Proxy {
	if cfg.Recorder == nil {
		cfg.Recorder = traffic.NewRecorder(0, nil)
	}
	if cfg.BodyIdle <= 0 {
		cfg.BodyIdle = DefaultBodyIdle
	}
	if cfg.Transport == nil {
		cfg.Transport = &http.Transport{
			DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			DisableCompression:  true,
			MaxIdleConnsPerHost: 64,
			WriteBufferSize:     256, // requests only; a longer head takes a few writes
			ReadBufferSize:      copyBufSize,
			IdleConnTimeout:     90 * time.Second,
		}
	}
	// The times the proxy records are its own reads: a delay its own
	// process's lateness could explain is not the service's (timing
	// checks read Exchange.Stalls).
	lateness.Start()
	p := &Proxy{cfg: cfg, bufs: &bufPool{}}
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(cfg.Target)
			pr.Out.Host = pr.Out.URL.Host
			if st, _ := pr.In.Context().Value(ctxKey{}).(*state); st != nil && st.reqBody != nil && pr.Out.Body != nil {
				// ReverseProxy's own wrapper fails every read once
				// ReverseProxy returns, which it now does before the
				// response body is passed on: the transport's last read
				// of the request body may come later. Ours does the same
				// once ServeHTTP returns.
				pr.Out.Body = st.reqBody
			}
		},
		Transport:      cfg.Transport,
		FlushInterval:  -1,
		BufferPool:     p.bufs,
		ModifyResponse: p.response,
		ErrorHandler:   p.failed,
		ErrorLog:       nil,
	}
	return p
}

// ServeHTTP forwards r and records the exchange. Its frame and copyBody's
// are kept small: an idle stream waits below them, and the runtime halves a
// goroutine's stack only while it uses less than a quarter of it.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	st := p.begin(r)
	if st.reqBody != nil {
		st.reqBody.idle, st.reqBody.conn = p.cfg.BodyIdle, http.NewResponseController(w)
	}
	// The request to the service has a context of its own, cancelled when
	// the client goes: by net/http while it serves the connection, by the
	// stream's reader once the stream has taken the connection over.
	ctx, cancel := context.WithCancel(context.WithValue(context.WithoutCancel(r.Context()), ctxKey{}, st))
	st.ctx, st.cancel, st.client = ctx, cancel, r.Context()
	st.stop = context.AfterFunc(r.Context(), cancel)
	defer p.end(st, r)
	p.rp.ServeHTTP(w, r.WithContext(ctx))
	if st.body != nil && !(st.stream && p.hijack(w, r, st)) {
		st.copyBody(w, p.bufs)
	}
}

// begin starts recording r.
func (p *Proxy) begin(r *http.Request) *state {
	p.open.Add(1)
	start := time.Now()
	rc := p.cfg.Recorder
	st := &state{}
	st.x = traffic.Exchange{ID: int(p.next.Add(1)), Start: start}
	target := p.cfg.Target.JoinPath(r.URL.Path)
	target.RawQuery = r.URL.RawQuery
	// The headers first: the request's own key is learnt before its URL
	// is recorded.
	st.x.Request.Header = rc.Header(r.Header)
	st.x.Request.Method, st.x.Request.URL = rc.Method(r.Method), rc.URL(target.String())
	st.req = rc.Body(start)
	st.h11 = r.ProtoMajor == 1 && r.ProtoMinor == 1 && r.Method != http.MethodHead
	if r.Body != nil && r.Body != http.NoBody {
		st.reqBody = &recordingBody{ReadCloser: r.Body, rec: st.req, st: st, request: true, remaining: r.ContentLength}
		r.Body = st.reqBody
	}
	return st
}

// end ends the recording and hands the exchange on.
func (p *Proxy) end(st *state, r *http.Request) {
	if st.hijacked {
		return // the stream's goroutine ends it
	}
	defer p.open.Done()
	defer st.cancel()
	st.stop()
	if st.reqBody != nil {
		st.reqBody.ended.Store(true)
	}
	p.finish(st, r.Context())
	if v := recover(); v != nil {
		panic(v) // http.ErrAbortHandler: the client went away mid-body, or the service
	}
}

// copyBody passes the response body on as ReverseProxy would (each read
// written and flushed at once; a failed copy aborts the response to the
// client), from a shallower frame.
func (st *state) copyBody(w http.ResponseWriter, bufs *bufPool) {
	rc := http.NewResponseController(w)
	buf := bufs.Get()
	err := rc.Flush() // the headers go at once, as with ReverseProxy's FlushInterval -1
	for err == nil {
		var n int
		n, err = st.body.Read(buf)
		if n > 0 {
			err = writeFlush(w, rc, buf[:n], err)
		}
	}
	bufs.Put(buf)
	st.body.Close() // fills Trailer when the service sent trailers unannounced
	if err != io.EOF {
		panic(http.ErrAbortHandler)
	}
	trailers(w, st.out.Trailer)
}

// trailers sends the trailers the service sent unannounced, as ReverseProxy
// does.
func trailers(w http.ResponseWriter, t http.Header) {
	for k, vv := range t {
		for _, v := range vv {
			w.Header().Add(http.TrailerPrefix+k, v)
		}
	}
}

// writeFlush writes b and flushes it, and returns the first error of the
// read that gave b (rerr), the write and the flush.
func writeFlush(w http.ResponseWriter, rc *http.ResponseController, b []byte, rerr error) error {
	if _, err := w.Write(b); err != nil {
		return err
	}
	if err := rc.Flush(); err != nil {
		return err
	}
	return rerr
}

// Wait waits up to timeout for every exchange under way to end and be
// handed to Config.Done (after the server stopped, so that the streams it
// cut are recorded too), and reports whether they all were.
func (p *Proxy) Wait(timeout time.Duration) bool {
	done := make(chan struct{})
	go func() {
		p.open.Wait()
		close(done)
	}()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}

// response records the status and headers and wraps the body.
func (p *Proxy) response(resp *http.Response) error {
	st, _ := resp.Request.Context().Value(ctxKey{}).(*state)
	if st == nil {
		return nil
	}
	now := time.Now()
	st.mu.Lock()
	st.x.Response = &traffic.Response{Status: resp.StatusCode, Header: p.cfg.Recorder.Header(resp.Header),
		HeaderAt: now.Sub(st.x.Start)}
	st.resp = p.cfg.Recorder.Body(st.x.Start)
	st.mu.Unlock()
	if !bodyRead(st.reqBody) {
		// The service answered before the request body was read to its
		// end: the client's connection closes after this answer (as a
		// service's own server closes it), so that net/http does not
		// read the rest of the body itself, taking it from the
		// transport, and nothing on the connection outlives the answer.
		resp.Header.Set("Connection", "close")
	}
	empty := resp.Body == http.NoBody
	resp.Body = &recordingBody{ReadCloser: resp.Body, rec: st.resp, st: st}
	if !empty && resp.StatusCode != http.StatusSwitchingProtocols && len(resp.Trailer) == 0 {
		// ServeHTTP copies the body. (ReverseProxy writes announced
		// trailers after the body, so it keeps those bodies.)
		st.out, st.body = resp, resp.Body
		resp.Body = http.NoBody
		if st.h11 && resp.ContentLength < 0 && isEventStream(resp.Header) && bodyRead(st.reqBody) &&
			resp.StatusCode >= 200 && resp.StatusCode != http.StatusNoContent && resp.StatusCode != http.StatusNotModified {
			st.stream = true // it takes its connection over (hijack)
		}
	}
	return nil
}

// failed is called when no answer came from the service. The proxy never
// answers in the service's place: when the client's request has ended it
// drops the connection; otherwise it answers 502 (504 when the service
// took too long), with a Proxy-Status header (RFC 9209) and a body that
// name the proxy. The recording says which, as the proxy's doing, and
// judges nothing.
func (p *Proxy) failed(w http.ResponseWriter, r *http.Request, err error) {
	st, _ := r.Context().Value(ctxKey{}).(*state)
	reason := p.cfg.Recorder.Redactor.RedactString(err.Error())
	if st != nil && st.stalled.Load() {
		st.setError(fmt.Sprintf("the proxy dropped the client's connection: the client sent nothing of its request body for %s (%s)",
			p.cfg.BodyIdle, reason))
		panic(http.ErrAbortHandler)
	}
	if r.Context().Err() != nil || st != nil && st.client.Err() != nil {
		if st != nil {
			st.setError("the proxy dropped the client's connection: the client's request ended before the service answered (" + reason + ")")
		}
		panic(http.ErrAbortHandler)
	}
	status, kind := http.StatusBadGateway, "destination_unavailable"
	var ne net.Error
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		status, kind = http.StatusGatewayTimeout, "connection_timeout"
	case errors.Is(err, syscall.ECONNREFUSED):
		kind = "connection_refused"
	}
	if st != nil {
		st.setError(fmt.Sprintf("the proxy answered %d %s: no answer from the service (%s)", status, http.StatusText(status), reason))
	}
	h := w.Header()
	for k := range h {
		delete(h, k)
	}
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Proxy-Status", fmt.Sprintf("invokeconf; error=%s; details=%s", kind, strconv.Quote(reason)))
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	fmt.Fprintf(w, "invokeconf proxy: no answer from the service at %s: %s\n", p.cfg.Target.Redacted(), reason)
}

// setError records why the exchange has no response.
func (st *state) setError(msg string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.err = msg
}

// finish ends the recording and hands the exchange on.
func (p *Proxy) finish(st *state, ctx context.Context) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.x.Request.Body = st.req.Finish()
	switch {
	case st.x.Response == nil:
		st.x.Error = st.err
		if st.x.Error == "" {
			st.x.Error = "the proxy got no answer from the service"
		}
	case st.x.Response != nil:
		st.x.Response.Body = st.resp.Finish()
		switch {
		case st.eof:
			st.x.Response.End = traffic.EndComplete
		case ctx.Err() != nil:
			st.x.Response.End = traffic.EndClientGone
		default:
			st.x.Response.End = traffic.EndError
		}
	}
	st.x.Stalls, st.x.Probed = lateness.During(st.x.Start, time.Since(st.x.Start))
	if p.cfg.Done != nil {
		p.cfg.Done(st.x)
	}
}

// recordingBody records what is read through it, with the time each read
// returned.
//
// A request body of declared length ends by itself once that many bytes
// were read. The transport reads once more to check that a body is not
// longer than declared, and that read can land after net/http's server
// closed the inbound body (it does when the response headers are written):
// the "invalid Read on closed Body" would make the transport drop the
// connection to the service and cut the answer on its way.
//
// As the transport's request body, it is not closed by the transport
// (net/http's server closes the inbound body), and it fails every read once
// the exchange ended (the handler returned), as ReverseProxy's own wrapper
// does.
type recordingBody struct {
	io.ReadCloser
	rec       *traffic.BodyRecorder
	st        *state
	request   bool
	remaining int64 // bytes of a request body still to come; -1 unknown
	ended     atomic.Bool
	eof       atomic.Bool // the body was read to its end
	// idle bounds each read of a request body, on conn, the client's
	// connection: a slow upload that keeps sending is not cut by the
	// server's whole-request read timeout.
	idle time.Duration
	conn *http.ResponseController
}

// errEnded is a read of a request body after its exchange ended.
var errEnded = errors.New("proxy: read of a request body after its exchange ended")

// Close implements io.Closer: a request body is left to net/http's server.
func (b *recordingBody) Close() error {
	if b.request {
		return nil
	}
	return b.ReadCloser.Close()
}

// Read implements io.Reader.
func (b *recordingBody) Read(p []byte) (int, error) {
	if b.request && b.ended.Load() {
		return 0, errEnded
	}
	if b.request && b.remaining == 0 {
		b.eof.Store(true)
		return 0, io.EOF
	}
	if b.request && b.remaining > 0 && int64(len(p)) > b.remaining {
		p = p[:b.remaining]
	}
	if b.conn != nil {
		_ = b.conn.SetReadDeadline(time.Now().Add(b.idle))
	}
	n, err := b.ReadCloser.Read(p)
	var ne net.Error
	if b.request && errors.As(err, &ne) && ne.Timeout() {
		b.st.stalled.Store(true)
	}
	if b.request && b.remaining > 0 {
		b.remaining -= int64(n)
		if b.remaining == 0 && err == nil {
			err = io.EOF
		}
	}
	if errors.Is(err, io.EOF) {
		b.eof.Store(true)
		if b.conn != nil {
			// The body is over: no bound of its own on what follows.
			_ = b.conn.SetReadDeadline(time.Time{})
		}
	}
	if n > 0 || err != nil {
		b.st.mu.Lock()
		b.rec.Add(p[:n], time.Now())
		if errors.Is(err, io.EOF) && !b.request {
			b.st.eof = true
		}
		b.st.mu.Unlock()
	}
	return n, err
}
