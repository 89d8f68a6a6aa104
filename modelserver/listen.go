package modelserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// Running is a Server listening on a port.
type Running struct {
	*Server
	// URL is the server's root, http://127.0.0.1:<port>.
	URL string
	// BaseURL is what an OpenAI client is given: URL + "/v1".
	BaseURL string
	http    *http.Server
	done    chan struct{}
	err     error
}

// Listen starts a Server on addr ("127.0.0.1:0" picks a free port).
func Listen(cfg Config, addr string) (*Running, error) {
	s := New(cfg)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("modelserver: listen on %s: %w", addr, err)
	}
	hs := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	url := "http://" + ln.Addr().String()
	r := &Running{Server: s, URL: url, BaseURL: url + "/v1", http: hs, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			r.err = err
		}
	}()
	return r, nil
}

// Close stops the server; responses still streaming are cut.
func (r *Running) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
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
