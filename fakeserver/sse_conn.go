package fakeserver

import (
	"errors"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/invokeconf/invokeconf/agentscript"
	"github.com/invokeconf/invokeconf/internal/httpserve"
)

// An SSE stream spends most of its life idle. Served through net/http it
// keeps the connection's goroutine (its stack grown to 8 KiB) and about
// 10 KiB of buffers for as long as it lasts; so, on HTTP/1.1, the stream
// takes its connection over (http.Hijacker) as the response starts, and what
// is left of it while idle is its connection, one goroutine blocked reading
// it (to notice at once a client that goes away, FMT-08), and the run's
// callbacks, which write what the run appends on a goroutine of their own.

// sseWriteTimeout bounds each write to a hijacked stream: a client that
// stops reading cannot hold it for longer.
const sseWriteTimeout = 30 * time.Second

// sseMaxLife bounds how long a hijacked stream lasts: the pauses of one
// script add up to at most agentscript.MaxScriptPause.
const sseMaxLife = agentscript.MaxScriptPause + time.Minute

// sseLinger is how long a hijacked stream, once complete, waits for its
// client to close the connection before closing it itself.
const sseLinger = 5 * time.Second

// hijackSSE takes the connection of an SSE response over, and writes the
// status line and header (w's, as the header variants leave it) along with
// first, the first frame. It reports false, having written nothing, when
// the connection cannot be taken over (HTTP/2, HTTP/1.0, a writer without
// Hijack): the caller then streams through w. The stream is nil when the
// client is gone already (the run is then abandoned).
func (s *view) hijackSSE(w http.ResponseWriter, r *http.Request, run *run, status int, first []byte) (*sseConn, bool) {
	if r.ProtoMajor != 1 || r.ProtoMinor != 1 {
		return nil, false // chunked needs HTTP/1.1
	}
	head := responseHead(w, status)
	rc := http.NewResponseController(w)
	conn, buf, err := rc.Hijack()
	if err != nil {
		return nil, false
	}
	// The buffers net/http hands over are dropped: nothing of the request
	// is left to read and each frame is written whole.
	_ = buf
	c := &sseConn{s: s, run: run, conn: conn}
	c.release = httpserve.Track(r, conn)
	logNow(w, r, status)
	if err := c.write(append(head, chunk(first)...)); err != nil {
		s.abandon(run)
		c.hangUp()
		return nil, true
	}
	go c.read()
	return c, true
}

// responseHead is the status line and header of an SSE response, with the
// header variants applied and the status recorded for the request log, as
// net/http would have done on WriteHeader.
func responseHead(w http.ResponseWriter, status int) []byte {
	h := w.Header()
	for u := w; u != nil; {
		// Each wrapper's WriteHeader work, outermost first as net/http
		// would call them.
		switch x := u.(type) {
		case *headerWriter:
			x.fix()
		case *variantWriter:
			x.apply()
		case *exchange:
			if x.status == 0 {
				x.status = status
			}
		}
		uw, ok := u.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			break
		}
		u = uw.Unwrap()
	}
	b := make([]byte, 0, 256)
	b = append(b, "HTTP/1.1 "...)
	b = strconv.AppendInt(b, int64(status), 10)
	b = append(b, ' ')
	b = append(b, http.StatusText(status)...)
	b = append(b, "\r\n"...)
	hb := headerBuffer{b: b}
	_ = h.Write(&hb)
	b = hb.b
	b = append(b, "Date: "...)
	b = time.Now().UTC().AppendFormat(b, http.TimeFormat)
	// The connection ends with the stream: net/http no longer serves it.
	b = append(b, "\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"...)
	return b
}

// headerBuffer collects http.Header.Write's output.
type headerBuffer struct{ b []byte }

func (h *headerBuffer) Write(p []byte) (int, error) {
	h.b = append(h.b, p...)
	return len(p), nil
}

func (h *headerBuffer) WriteString(p string) (int, error) {
	h.b = append(h.b, p...)
	return len(p), nil
}

// chunk frames b as one chunk of a chunked body; b is never empty.
func chunk(b []byte) []byte {
	out := make([]byte, 0, len(b)+12)
	out = strconv.AppendInt(out, int64(len(b)), 16)
	out = append(out, "\r\n"...)
	out = append(out, b...)
	return append(out, "\r\n"...)
}

// sseConn is an SSE stream on a hijacked connection.
type sseConn struct {
	s       *view
	run     *run
	conn    net.Conn
	release func() // forgets the connection for shutdown (httpserve.Track)

	// Set by serve, used by the writing goroutine only.
	event     func(Event) error
	ping      func() error
	end       func()
	next      int
	keepalive *time.Timer

	mu      sync.Mutex
	writing bool // a goroutine is writing (pump)
	kicked  bool // something happened while it was
	pingDue bool // the keepalive timer fired
	gone    bool // the client went away, or the stream is broken
	ended   bool // the stream is over (stop): its client leaving abandons nothing
}

var errGone = errors.New("the client went away")

// frame writes one SSE frame as a chunk.
func (c *sseConn) frame(b []byte) error { return c.write(chunk(b)) }

// write writes b with a deadline.
func (c *sseConn) write(b []byte) error {
	if c.isGone() {
		return errGone
	}
	_ = c.conn.SetWriteDeadline(time.Now().Add(sseWriteTimeout))
	_, err := c.conn.Write(b)
	return err
}

func (c *sseConn) isGone() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gone
}

// serve streams the run's events from the first on with write, ping after
// each keepalive interval of quiet (nil: never), and end once the run is
// done. It returns at once: the run's changes and the keepalive timer drive
// the rest.
func (c *sseConn) serve(write func(Event) error, ping func() error, end func()) {
	c.event, c.ping, c.end = write, ping, end
	c.kick()
}

// kick has the stream catch up with its run, on a goroutine of its own
// unless one is at it already. It never blocks: the run calls it with its
// lock held.
func (c *sseConn) kick() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.writing {
		c.kicked = true
		return
	}
	c.writing = true
	go c.pump()
}

func (c *sseConn) pingNow() {
	c.mu.Lock()
	c.pingDue = true
	c.mu.Unlock()
	c.kick()
}

// pump writes until the stream has caught up with its run, then leaves a
// callback for the run's next change.
func (c *sseConn) pump() {
	for {
		c.mu.Lock()
		c.kicked = false
		ping, gone := c.pingDue, c.gone
		c.pingDue = false
		c.mu.Unlock()
		if gone {
			if c.keepalive != nil {
				c.keepalive.Stop()
			}
			return // writing stays set: nothing is written any more
		}
		if !c.step(ping) {
			return
		}
		c.mu.Lock()
		if !c.kicked {
			c.writing = false
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
	}
}

// step writes what the run has appended, and a ping if one is due and
// nothing else was written. It reports false when the stream is over.
func (c *sseConn) step(ping bool) bool {
	wrote := false
	for {
		evs, done := c.run.since(c.next)
		for _, ev := range evs {
			if err := c.event(ev); err != nil {
				c.s.abandon(c.run)
				c.stop(errors.Is(err, errCut))
				return false
			}
			c.next++
			wrote = true
		}
		if done && len(evs) == 0 {
			c.end()
			c.stop(true)
			return false
		}
		if !done && c.run.onChange(c.next, c.kick) {
			break
		}
	}
	if ping && !wrote && c.ping != nil {
		if err := c.ping(); err != nil {
			c.s.abandon(c.run)
			c.stop(false)
			return false
		}
		wrote = true
	}
	switch {
	case c.ping == nil:
	case c.keepalive == nil:
		c.keepalive = time.AfterFunc(c.s.cfg.Keepalive, c.pingNow)
	case wrote:
		c.keepalive.Reset(c.s.cfg.Keepalive)
	}
	return true
}

// stop ends the stream: complete (the chunked body's end is written, and
// the client is left to close the connection, for at most sseLinger), or
// broken (the connection is closed).
func (c *sseConn) stop(complete bool) {
	c.mu.Lock()
	c.ended = true
	c.mu.Unlock()
	if c.keepalive != nil {
		c.keepalive.Stop()
	}
	if complete && c.write([]byte("0\r\n\r\n")) == nil {
		c.release()
		if tc, ok := c.conn.(interface{ CloseWrite() error }); ok && tc.CloseWrite() == nil {
			_ = c.conn.SetReadDeadline(time.Now().Add(sseLinger))
			return // read closes it
		}
	}
	c.hangUp()
}

// read waits for the client to go away, doing nothing else (its stack stays
// small), then ends the stream: the run is abandoned unless the stream was
// complete (FMT-08).
func (c *sseConn) read() {
	// The read has a deadline like every other: no stream outlives its
	// script's time bound by more than a minute (a run waiting on input,
	// the prompt-waits variant, is cut there too).
	_ = c.conn.SetReadDeadline(time.Now().Add(sseMaxLife))
	buf := make([]byte, 64)
	for {
		if _, err := c.conn.Read(buf); err != nil {
			break
		}
	}
	c.mu.Lock()
	ended := c.ended
	c.mu.Unlock()
	if !ended {
		c.s.abandon(c.run)
	}
	c.hangUp()
}

// hangUp closes the connection; the stream writes nothing more.
func (c *sseConn) hangUp() {
	c.mu.Lock()
	c.gone = true
	c.mu.Unlock()
	_ = c.conn.Close()
	c.release()
}
