// Package httpserve runs the harness's own servers (the reference server and
// the scripted model server) on a listener, and records response statuses for
// their request logs.
package httpserve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// Listener is an http.Handler being served on a TCP address.
type Listener struct {
	// URL is http://<host>:<port> of the listener.
	URL  string
	srv  *http.Server
	done chan struct{} // closed when Serve returns
	err  error         // Serve's error, nil after Stop
}

// Start serves h on addr ("127.0.0.1:0" picks a free port).
func Start(h http.Handler, addr string) (*Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	l := &Listener{
		URL:  "http://" + ln.Addr().String(),
		srv:  &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second},
		done: make(chan struct{}),
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
// before it cuts them.
func (l *Listener) Stop(grace time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := l.srv.Shutdown(ctx); err != nil {
		_ = l.srv.Close()
	}
	<-l.done
	return l.err
}

// Done is closed when the server stops serving; Err then says why.
func (l *Listener) Done() <-chan struct{} { return l.done }

// Err waits until the server stops and returns the error that stopped it,
// nil after Stop.
func (l *Listener) Err() error {
	<-l.done
	return l.err
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
