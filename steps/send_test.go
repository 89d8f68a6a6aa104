package steps

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestDoSendsTheRequestAsGiven: httpexpect builds and sends each request
// exactly as the step gave it (its path and query bytes, its headers and
// body, a body's Content-Type text/plain unless set or left out, no body
// as none), and the recording holds what went on the wire.
func TestDoSendsTheRequestAsGiven(t *testing.T) {
	type seen struct {
		uri, body, host string
		header          http.Header
		length          int64
		chunked         bool
	}
	got := make(chan seen, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := new(strings.Builder)
		_, _ = io.Copy(b, r.Body)
		got <- seen{uri: r.RequestURI, body: b.String(), host: r.Host, header: r.Header.Clone(), length: r.ContentLength,
			chunked: len(r.TransferEncoding) > 0}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{}`))
	}))
	t.Cleanup(srv.Close)
	text := func(s string) *string { return &s }
	cases := []struct {
		name   string
		rq     request
		uri    string
		body   string
		header map[string]string // "" for absent
	}{
		{name: "a prompt", rq: request{method: "POST", path: "/api/invoke/agt_1", body: text("hi"),
			header: http.Header{"Accept": {"text/event-stream, */*"}}},
			uri: "/api/invoke/agt_1", body: "hi", header: map[string]string{"Content-Type": "text/plain", "Accept": "text/event-stream, */*"}},
		{name: "the step's Content-Type", rq: request{method: "POST", path: "/api/invoke/agt_1", body: text("hi"),
			header: http.Header{"content-type": {"application/json"}}},
			uri: "/api/invoke/agt_1", body: "hi", header: map[string]string{"Content-Type": "application/json"}},
		{name: "no Content-Type", rq: request{method: "POST", path: "/api/invoke/agt_1", body: text("hi"), omit: []string{"Content-Type"}},
			uri: "/api/invoke/agt_1", body: "hi", header: map[string]string{"Content-Type": ""}},
		{name: "an empty prompt", rq: request{method: "POST", path: "/api/invoke/agt_1", body: text("")},
			uri: "/api/invoke/agt_1", header: map[string]string{"Content-Type": "text/plain"}},
		{name: "escaped path and query", rq: request{method: "GET", path: "/api/runs/a%2Fb/events", query: "after=x%20y"},
			uri: "/api/runs/a%2Fb/events?after=x%20y", header: map[string]string{"Content-Type": ""}},
		{name: "repeated values", rq: request{method: "GET", path: "/api/threads/t", header: http.Header{"Accept": {"application/json", "text/plain"}}},
			uri: "/api/threads/t", header: map[string]string{"Accept": "application/json"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := testWorld(t)
			w.P.BaseURL = srv.URL
			r, err := w.do(c.rq)
			if err != nil {
				t.Fatal(err)
			}
			s := <-got
			if s.uri != c.uri || s.body != c.body {
				t.Errorf("sent %s with body %q, want %s with %q", s.uri, s.body, c.uri, c.body)
			}
			if s.chunked || s.length != int64(len(c.body)) {
				t.Errorf("Content-Length %d (chunked %v), want %d", s.length, s.chunked, len(c.body))
			}
			for k, v := range c.header {
				if g := s.header.Get(k); g != v {
					t.Errorf("%s: %q, want %q", k, g, v)
				}
			}
			if vs := c.rq.header["Accept"]; len(vs) > 1 && len(s.header.Values("Accept")) != len(vs) {
				t.Errorf("Accept lines %q, want %q", s.header.Values("Accept"), vs)
			}
			if r.URL() != srv.URL+c.uri || r.Prompt() != c.body || r.Status() != 200 || string(r.Body()) != "{}" {
				t.Errorf("recorded %s %q -> %d %q", r.URL(), r.Prompt(), r.Status(), r.Body())
			}
		})
	}
}
