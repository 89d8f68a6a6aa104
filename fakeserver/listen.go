package fakeserver

import (
	"fmt"
	"time"

	"github.com/invokeconf/invokeconf/internal/httpserve"
)

// Running is a Server listening on a loopback port.
type Running struct {
	*Server
	// URL is the base URL, http://127.0.0.1:<port>.
	URL string
	l   *httpserve.Listener
}

// Listen starts a Server on addr ("127.0.0.1:0" picks a free port).
func Listen(cfg Config, addr string) (*Running, error) {
	s, err := New(cfg)
	if err != nil {
		return nil, err
	}
	l, err := httpserve.StartWith(s, addr, httpserve.Timeouts{Read: cfg.ReadTimeout, Idle: cfg.IdleTimeout})
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("fakeserver: %w", err)
	}
	return &Running{Server: s, URL: l.URL, l: l}, nil
}

// Close stops the server: runs are cancelled first, so open streams end and
// connections close.
func (r *Running) Close() error {
	r.Server.Close()
	return r.l.Stop(5 * time.Second)
}

// Done is closed when the server stops serving; Err then says why.
func (r *Running) Done() <-chan struct{} { return r.l.Done() }

// Err is the error that stopped the server, nil after Close.
func (r *Running) Err() error { return r.l.Err() }
