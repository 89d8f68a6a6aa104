package modelserver

import (
	"fmt"
	"time"

	"github.com/invokeconf/invokeconf/internal/httpserve"
)

// Running is a Server listening on a port.
type Running struct {
	*Server
	// URL is the server's root, http://127.0.0.1:<port>.
	URL string
	// BaseURL is what an OpenAI client is given: URL + "/v1".
	BaseURL string
	l       *httpserve.Listener
}

// Listen starts a Server on addr ("127.0.0.1:0" picks a free port).
func Listen(cfg Config, addr string) (*Running, error) {
	s := New(cfg)
	l, err := httpserve.Start(s, addr)
	if err != nil {
		return nil, fmt.Errorf("modelserver: %w", err)
	}
	return &Running{Server: s, URL: l.URL, BaseURL: l.URL + "/v1", l: l}, nil
}

// Close stops the server; responses still streaming are cut.
func (r *Running) Close() error { return r.l.Stop(2 * time.Second) }

// Done is closed when the server stops serving; Err then says why.
func (r *Running) Done() <-chan struct{} { return r.l.Done() }

// Err is the error that stopped the server, nil after Close.
func (r *Running) Err() error { return r.l.Err() }
