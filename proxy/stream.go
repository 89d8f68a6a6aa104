package proxy

import (
	"io"
	"mime"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/invokeconf/invokeconf/internal/httpserve"
)

// An event stream spends most of its life idle. Served through net/http it
// keeps the client connection's goroutine and about 10 KiB of buffers for as
// long as it lasts; so, on HTTP/1.1, once the service's status and headers
// are in, the stream takes its client connection over (http.Hijacker):
// net/http writes the status line and headers itself as the connection is
// handed over (chunked, with Connection: close), the handler returns, and
// what is left of the stream while idle is a goroutine copying the body
// (waiting on the service), one reading the client connection (to notice at
// once a client that goes away) and the connection to the service.

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

// stream is an event stream on a hijacked client connection.
type stream struct {
	p       *Proxy
	st      *state
	conn    net.Conn
	release func() // forgets the connection for shutdown (httpserve.Track)
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
	// net/http's buffers are dropped: the request was read whole and each
	// chunk is written whole.
	_ = buf
	// The request body is at its end, but the transport may read it once
	// more: it fails reads only once the stream has ended (copy).
	st.hijacked = true
	// From here the stream's reader notices a client that goes away.
	st.stop()
	s := &stream{p: p, st: st, conn: conn, release: httpserve.Track(r, conn)}
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
	if complete {
		s.release()
		if tc, ok := s.conn.(interface{ CloseWrite() error }); ok && tc.CloseWrite() == nil {
			_ = s.conn.SetReadDeadline(time.Now().Add(streamLinger))
			return // read closes it
		}
	}
	s.hangUp()
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

// read waits for the client to go away, doing nothing else (its stack stays
// small), and then cancels the request to the service (FMT-08). It lasts no
// longer than the stream: copy closes the connection as the stream ends
// (or, once it is complete, gives the client streamLinger to close it).
func (s *stream) read() {
	buf := make([]byte, 64)
	for {
		if _, err := s.conn.Read(buf); err != nil {
			break
		}
	}
	s.st.cancel()
	s.hangUp()
}

// hangUp closes the connection.
func (s *stream) hangUp() {
	_ = s.conn.Close()
	s.release()
}
