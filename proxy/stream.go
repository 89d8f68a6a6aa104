package proxy

import (
	"errors"
	"io"
	"mime"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/invokeconf/invokeconf/internal/httpserve"
)

// An event stream spends most of its life idle. Served through net/http it
// keeps the client connection's goroutine and about 10 KiB of buffers for as
// long as it lasts; so, on HTTP/1.1, once the service's status and headers
// are in, the stream takes its client connection over (http.Hijacker):
// net/http writes the status line and headers itself as the connection is
// handed over (chunked), the handler returns, and what is left of the stream
// while idle is a goroutine copying the body (waiting on the service), one
// reading the client connection (to notice at once a client that goes away)
// and the connection to the service. Once the stream is complete, the
// connection goes back to net/http's server for the requests that follow on
// it, so keep-alive is as without the proxy.

// streamWriteTimeout bounds each write to a hijacked stream: a client that
// stops reading cannot hold it for longer.
const streamWriteTimeout = 30 * time.Second

// streamLinger is how long a hijacked stream, once complete, waits for its
// client to close the connection before closing it itself.
const streamLinger = 5 * time.Second

// chunkHead is the room kept before the data for a chunk's size line: four
// hex digits (copyBufSize is at most 0xffff) and CRLF.
const chunkHead = 6

// isEventStream reports whether h announces an SSE body.
func isEventStream(h http.Header) bool {
	mt, _, err := mime.ParseMediaType(h.Get("Content-Type"))
	return err == nil && mt == "text/event-stream"
}

// bodyRead reports whether a request body (nil: none) was read to its end:
// only then may the connection be taken over.
func bodyRead(b *recordingBody) bool { return b == nil || b.eof.Load() }

// maxPending bounds what a client may send during its stream (a pipelined
// request) and still have its connection served afterwards.
const maxPending = 4 << 10

// stream is an event stream on a hijacked client connection.
type stream struct {
	p       *Proxy
	st      *state
	conn    net.Conn
	release func()       // forgets the connection for shutdown (httpserve.Track)
	srv     *http.Server // serves the connection again once the stream is complete; nil: it is closed
	quit    atomic.Bool  // copy stops read (to hand the connection back)
	readEnd chan error   // read's last error, once it is done
	pending []byte       // what the client sent during the stream
}

// hijack takes the client connection over for st's body, which a goroutine
// of its own then copies. It reports false, having changed nothing, when the
// connection cannot be taken over (a writer without Hijack): the caller
// then copies the body through w.
func (p *Proxy) hijack(w http.ResponseWriter, r *http.Request, st *state) bool {
	if st.reqBody != nil {
		// A body of declared length was read to that length: one more
		// read tells the body below it is over (it returns at once), so
		// that nothing (httpserve's guard) sets a read deadline on the
		// connection as for a body left unread.
		_, _ = st.reqBody.ReadCloser.Read(make([]byte, 1))
	}
	// Hijack writes the status line and headers ReverseProxy set, as net/http
	// writes them, and flushes them: they go at once, as with Flush.
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return false
	}
	// net/http's buffers are dropped (the request was read whole and each
	// chunk is written whole), but for what the client sent after the
	// request (the next request, pipelined).
	var pending []byte
	if n := buf.Reader.Buffered(); n > 0 {
		b, _ := buf.Reader.Peek(n)
		pending = append(pending, b...)
	}
	// The request body is at its end, but the transport may read it once
	// more: it fails reads only once the stream has ended (copy).
	st.hijacked = true
	// From here the stream's reader notices a client that goes away.
	st.stop()
	s := &stream{p: p, st: st, conn: conn, release: httpserve.Track(r, conn), readEnd: make(chan error, 1), pending: pending}
	if !r.Close {
		s.srv, _ = r.Context().Value(http.ServerContextKey).(*http.Server)
	}
	go s.read()
	go s.copy()
	return true
}

// copy passes the body on as chunks, each read written at once, and ends
// the exchange: the chunked body's end (and the trailers the service sent)
// once the service's body ended, the connection closed without it when the
// body broke off, as net/http does.
func (s *stream) copy() {
	st := s.st
	buf := make([]byte, chunkHead+copyBufSize+2)
	var err error
	clientGone := false
	for err == nil {
		var n int
		n, err = st.body.Read(buf[chunkHead : chunkHead+copyBufSize])
		if n > 0 {
			if werr := s.write(chunk(buf, n)); werr != nil {
				err, clientGone = werr, true
			}
		}
	}
	_ = st.body.Close() // fills Trailer when the service sent trailers unannounced
	complete := err == io.EOF && s.write(lastChunk(st.out.Trailer)) == nil
	if clientGone || err == io.EOF && !complete {
		st.cancel() // the client is gone: the recording says so
	}
	if st.reqBody != nil {
		st.reqBody.ended.Store(true)
	}
	s.p.finish(st, st.ctx)
	st.cancel()
	s.p.open.Done()
	if complete && s.srv != nil {
		s.serveAgain()
		return
	}
	if complete {
		s.release()
		if tc, ok := s.conn.(interface{ CloseWrite() error }); ok && tc.CloseWrite() == nil {
			_ = s.conn.SetReadDeadline(time.Now().Add(streamLinger))
			return // read closes it
		}
	}
	s.hangUp()
}

// serveAgain stops read and hands the connection back to the server, with
// what the client sent meanwhile, as a new connection: the client may send
// its next request on it, as without the proxy. A client that has closed it
// meanwhile, or sent too much, has it closed.
func (s *stream) serveAgain() {
	s.quit.Store(true)
	_ = s.conn.SetReadDeadline(time.Unix(1, 0)) // read returns at once
	err := <-s.readEnd
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() || len(s.pending) > maxPending {
		s.hangUp()
		return
	}
	_ = s.conn.SetDeadline(time.Time{})
	c, ok := s.conn.(*servedConn) // a connection served again before
	if !ok {
		c = &servedConn{Conn: s.conn, p: s.p}
	}
	c.mu.Lock()
	c.pending, c.waiting = s.pending, len(s.pending) == 0
	c.mu.Unlock()
	if c.waiting {
		s.p.waitFor(s.srv, c)
	}
	s.release()
	// Serve returns once it has started the connection's goroutine; after
	// Shutdown it returns at once, and oneConn closes the connection.
	_ = s.srv.Serve(&oneConn{c: c})
}

// waitFor records c as waiting for its next request on srv. net/http's
// Shutdown closes an idle connection at once, but takes one served anew for
// a new one, and waits for it for up to 5 s: the Proxy closes those that
// still wait when srv shuts down.
func (p *Proxy) waitFor(srv *http.Server, c *servedConn) {
	p.waiting.Store(c, struct{}{})
	if _, loaded := p.shutdownHooks.LoadOrStore(srv, struct{}{}); !loaded {
		srv.RegisterOnShutdown(func() {
			p.waiting.Range(func(k, _ any) bool {
				if c := k.(*servedConn); c.stillWaiting() {
					_ = c.Close()
				}
				return true
			})
		})
	}
}

// servedConn is a connection served again after a stream: its first bytes
// read may be pending (sent during the stream), and until its next request
// starts it is waiting.
type servedConn struct {
	net.Conn
	p       *Proxy
	mu      sync.Mutex
	pending []byte
	waiting bool
}

func (c *servedConn) Read(p []byte) (int, error) {
	c.mu.Lock()
	if len(c.pending) > 0 {
		n := copy(p, c.pending)
		c.pending = c.pending[n:]
		c.mu.Unlock()
		return n, nil
	}
	c.mu.Unlock()
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.mu.Lock()
		c.waiting = false
		c.mu.Unlock()
		c.p.waiting.Delete(c)
	}
	return n, err
}

// stillWaiting reports whether c still waits for its next request.
func (c *servedConn) stillWaiting() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.waiting
}

// Close implements net.Conn.
func (c *servedConn) Close() error {
	c.p.waiting.Delete(c)
	return c.Conn.Close()
}

// CloseWrite lets net/http half-close the connection as it does a TCP one.
func (c *servedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return c.Conn.Close()
}

// read waits for the client to go away, doing nothing else (its stack stays
// small), and then cancels the request to the service (FMT-08). It lasts no
// longer than the stream: copy closes the connection as the stream ends
// (or, once it is complete, gives the client streamLinger to close it).
func (s *stream) read() {
	buf := make([]byte, 64)
	var err error
	for err == nil {
		var n int
		n, err = s.conn.Read(buf)
		if len(s.pending) <= maxPending {
			s.pending = append(s.pending, buf[:n]...)
		}
	}
	if s.quit.Load() {
		s.readEnd <- err // serveAgain takes it from here
		return
	}
	s.st.cancel()
	s.hangUp()
	s.readEnd <- err
}

// oneConn is a listener that accepts one connection, to have an
// http.Server serve it.
type oneConn struct {
	mu sync.Mutex
	c  net.Conn // nil once accepted
}

var errOneConn = errors.New("proxy: one connection only")

func (l *oneConn) Accept() (net.Conn, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.c
	l.c = nil
	if c == nil {
		return nil, errOneConn
	}
	return c, nil
}

// Close closes the connection if it was not accepted.
func (l *oneConn) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.c != nil {
		_ = l.c.Close()
		l.c = nil
	}
	return nil
}

func (l *oneConn) Addr() net.Addr {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.c == nil {
		return &net.TCPAddr{}
	}
	return l.c.LocalAddr()
}

// hangUp closes the connection.
func (s *stream) hangUp() {
	_ = s.conn.Close()
	s.release()
}

// chunk frames buf[chunkHead:chunkHead+n] as one chunk in place and returns
// it.
func chunk(buf []byte, n int) []byte {
	var head [chunkHead]byte
	h := strconv.AppendInt(head[:0], int64(n), 16)
	h = append(h, "\r\n"...)
	start := chunkHead - len(h)
	copy(buf[start:], h)
	end := chunkHead + n
	buf[end], buf[end+1] = '\r', '\n'
	return buf[start : end+2]
}

// lastChunk is the end of a chunked body with trailers t, as net/http
// writes it.
func lastChunk(t http.Header) []byte {
	b := &headerBuffer{b: []byte("0\r\n")}
	_ = t.Write(b)
	return append(b.b, "\r\n"...)
}

// headerBuffer collects http.Header.Write's output.
type headerBuffer struct{ b []byte }

func (h *headerBuffer) Write(p []byte) (int, error) {
	h.b = append(h.b, p...)
	return len(p), nil
}

// write writes b with a deadline.
func (s *stream) write(b []byte) error {
	_ = s.conn.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
	_, err := s.conn.Write(b)
	return err
}
