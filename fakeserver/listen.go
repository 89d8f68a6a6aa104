package fakeserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// Running is a Server listening on a loopback port.
type Running struct {
	*Server
	// URL is the base URL, http://127.0.0.1:<port>.
	URL  string
	http *http.Server
	done chan struct{} // closed when Serve returns
	err  error         // Serve's error, nil after a Close
}

// Listen starts a Server on addr ("127.0.0.1:0" picks a free port).
func Listen(cfg Config, addr string) (*Running, error) {
	s, err := New(cfg)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("fakeserver: listen on %s: %w", addr, err)
	}
	hs := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	r := &Running{Server: s, URL: "http://" + ln.Addr().String(), http: hs, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			r.err = err
		}
	}()
	return r, nil
}

// Close stops the server: runs are cancelled and connections closed.
func (r *Running) Close() error {
	r.Server.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := r.http.Shutdown(ctx); err != nil {
		_ = r.http.Close()
	}
	<-r.done
	return r.err
}

// Done is closed when the server stops serving; Err then says why.
func (r *Running) Done() <-chan struct{} { return r.done }

// Err is the error that stopped the server, nil after Close.
func (r *Running) Err() error {
	<-r.done
	return r.err
}
