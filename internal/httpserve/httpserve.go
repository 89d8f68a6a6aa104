// Package httpserve runs the harness's own servers (the reference server and
// the scripted model server) on a listener, and records response statuses for
// their request logs.
package httpserve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Timeouts bound how long a client may hold a connection without making
// progress. A zero field takes its default.
type Timeouts struct {
	// ReadHeader bounds reading a request's line and headers (default 10 s,
	// never more than Read).
	ReadHeader time.Duration
	// Read bounds reading a whole request, body included (default 30 s).
	// Once the body is read net/http lifts the bound, so a long response (an
	// SSE stream) is never cut by it.
	Read time.Duration
	// Idle bounds how long a keep-alive connection waits for its next
	// request (default 60 s).
	Idle time.Duration
}

// Default timeouts.
const (
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultReadTimeout       = 30 * time.Second
	DefaultIdleTimeout       = 60 * time.Second
)

func (t Timeouts) withDefaults() Timeouts {
	if t.Read <= 0 {
		t.Read = DefaultReadTimeout
	}
	if t.ReadHeader <= 0 {
		t.ReadHeader = DefaultReadHeaderTimeout
	}
	t.ReadHeader = min(t.ReadHeader, t.Read)
	if t.Idle <= 0 {
		t.Idle = DefaultIdleTimeout
	}
	return t
}

// Listener is an http.Handler being served on a TCP address.
type Listener struct {
	// URL is http://<host>:<port> of the listener.
	URL  string
	srv  *http.Server
	done chan struct{} // closed when Serve returns
	err  error         // Serve's error, nil after Stop
	hj   *hijacked     // connections taken over from net/http (Track)
}

// Start serves h on addr ("127.0.0.1:0" picks a free port) with the default
// timeouts.
func Start(h http.Handler, addr string) (*Listener, error) {
	return StartWith(h, addr, Timeouts{})
}

// StartWith serves h on addr with the given timeouts.
func StartWith(h http.Handler, addr string, t Timeouts) (*Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	t = t.withDefaults()
	hj := &hijacked{set: map[io.Closer]struct{}{}}
	base := context.WithValue(context.Background(), hijackedKey{}, hj)
	l := &Listener{
		URL: "http://" + ln.Addr().String(),
		srv: &http.Server{Handler: guard(h), ReadHeaderTimeout: t.ReadHeader, ReadTimeout: t.Read,
			IdleTimeout: t.Idle, BaseContext: func(net.Listener) context.Context { return base }},
		done: make(chan struct{}),
		hj:   hj,
	}
	go func() {
		defer close(l.done)
		if err := l.srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			l.err = err
		}
	}()
	return l, nil
}

// Stop shuts the server down, waiting up to grace for open responses to end
// before it cuts them, those on hijacked connections (Track) included.
func (l *Listener) Stop(grace time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := l.srv.Shutdown(ctx); err != nil {
		_ = l.srv.Close()
	}
	l.hj.drain(ctx)
	<-l.done
	return l.err
}

// Track records a connection a handler has hijacked from a request served
// by a Listener, so that Stop waits for it and closes it if it outlasts the
// grace period (net/http forgets hijacked connections). release, to be
// called once the response on it is complete, forgets it again. A request
// not served by a Listener tracks nothing.
func Track(r *http.Request, c io.Closer) (release func()) {
	hj, _ := r.Context().Value(hijackedKey{}).(*hijacked)
	if hj == nil {
		return func() {}
	}
	hj.mu.Lock()
	hj.set[c] = struct{}{}
	hj.mu.Unlock()
	var once sync.Once
	return func() { once.Do(func() { hj.forget(c) }) }
}

type hijackedKey struct{}

// hijacked is the set of a Listener's hijacked connections in use.
type hijacked struct {
	mu      sync.Mutex
	set     map[io.Closer]struct{}
	changed chan struct{} // closed when one is forgotten; made by drain
}

func (h *hijacked) forget(c io.Closer) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.set, c)
	if h.changed != nil {
		close(h.changed)
		h.changed = nil
	}
}

// drain waits until no connection is tracked or ctx ends, then closes those
// that are left.
func (h *hijacked) drain(ctx context.Context) {
	for {
		h.mu.Lock()
		if len(h.set) == 0 {
			h.mu.Unlock()
			return
		}
		if h.changed == nil {
			h.changed = make(chan struct{})
		}
		ch := h.changed
		h.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			h.mu.Lock()
			left := make([]io.Closer, 0, len(h.set))
			for c := range h.set {
				left = append(left, c)
			}
			h.mu.Unlock()
			for _, c := range left {
				_ = c.Close()
			}
			return
		}
	}
}

// Done is closed when the server stops serving; Err then says why.
func (l *Listener) Done() <-chan struct{} { return l.done }

// Err waits until the server stops and returns the error that stopped it,
// nil after Stop.
func (l *Listener) Err() error {
	<-l.done
	return l.err
}

// guard stops reading a request's body as soon as the handler has answered
// without reading all of it (an answer refused before the body, such as a
// 401): net/http would otherwise read on, up to 256 KiB, before it sends the
// answer or closes the connection, and a body trickled in slowly would hold
// both for as long as the client liked. Once a body is read, net/http lifts
// the read deadline itself, so long answers (SSE streams) are not cut by
// Timeouts.Read.
//
// A body is at its end also when net/http read it itself (it reads what the
// handler left once the answer's header goes out, if the handler flushed it
// before returning): net/http then watches the connection for the client
// going away, and a read deadline would end that watch with an error, and
// with it the context of every later request on the kept-alive connection.
func guard(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			h.ServeHTTP(w, r)
			return
		}
		b := &eofBody{ReadCloser: r.Body}
		r.Body = b
		h.ServeHTTP(w, r)
		if !b.atEnd(r) {
			_ = http.NewResponseController(w).SetReadDeadline(time.Now())
		}
	})
}

// eofBody remembers whether a request body was read to its end. A handler
// may leave a goroutine reading it (a proxy's transport), so its fields are
// read and written atomically.
type eofBody struct {
	io.ReadCloser
	eof     atomic.Bool
	reading atomic.Int32 // reads under way
}

// Read implements io.Reader.
func (b *eofBody) Read(p []byte) (int, error) {
	b.reading.Add(1)
	defer b.reading.Add(-1)
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.eof.Store(true)
	}
	return n, err
}

// atEnd reports whether the body of r was read to its end, by the handler
// or by net/http itself. It asks net/http's body with an empty read, which
// returns at once for a body of declared length, unless a read is under
// way (it would wait for that read) or the client waits for "100 Continue"
// (an empty read would send it).
func (b *eofBody) atEnd(r *http.Request) bool {
	if b.eof.Load() {
		return true
	}
	if b.reading.Load() > 0 || r.ContentLength < 0 || r.Header.Get("Expect") != "" {
		return false
	}
	_, err := b.ReadCloser.Read(nil)
	// A body closed before its end needs no deadline either: net/http
	// reads no more of it and closes the connection.
	return err == io.EOF || errors.Is(err, http.ErrBodyReadAfterClose)
}

// StatusRecorder remembers the status of a response for the request log and
// lets http.ResponseController reach the writer underneath (for Flush).
type StatusRecorder struct {
	http.ResponseWriter
	Status int
}

// WriteHeader implements http.ResponseWriter.
func (r *StatusRecorder) WriteHeader(code int) {
	if r.Status == 0 {
		r.Status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

// Write implements http.ResponseWriter.
func (r *StatusRecorder) Write(b []byte) (int, error) {
	if r.Status == 0 {
		r.Status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (r *StatusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// WriteJSON writes v as a JSON response with the given status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "encode response: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}
