package steps

import (
	"net/http"
	"time"

	"github.com/invokeconf/invokeconf/checks"
	"github.com/invokeconf/invokeconf/traffic"
)

// fake is a response as a test states it; response records it as do would.
type fake struct {
	Method, URL       string
	Status            int
	ReqHeader, Header http.Header
	ReqBody, Body     []byte
	HeadersAt         time.Duration
	Sent              time.Time
	// Reads are the body's reads: when each returned and the body's length
	// after it. None: the body arrived in one read at HeadersAt.
	Reads    []Read
	Complete bool
	Err      error
	Role     string
}

// Read is one read of a body in a fake: when it returned and the body's
// length after it.
type Read struct {
	At  time.Duration
	End int
}

func (f fake) response() *Response {
	x := &traffic.Exchange{ID: 1, Start: f.Sent, Request: traffic.Request{Method: f.Method, URL: f.URL, Header: f.ReqHeader}}
	if x.Request.Header == nil {
		x.Request.Header = http.Header{}
	}
	if len(f.ReqBody) > 0 {
		x.Request.Body = traffic.Body{Size: int64(len(f.ReqBody)), Chunks: []traffic.Chunk{{Size: len(f.ReqBody), Data: f.ReqBody}}}
	}
	r := &traffic.Response{Status: f.Status, Header: f.Header, HeaderAt: f.HeadersAt, Body: traffic.Body{Timed: true}}
	if r.Header == nil {
		r.Header = http.Header{}
	}
	reads := f.Reads
	if len(reads) == 0 && len(f.Body) > 0 {
		reads = []Read{{At: f.HeadersAt, End: len(f.Body)}}
	}
	from := 0
	for _, rd := range reads {
		r.Body.Chunks = append(r.Body.Chunks, traffic.Chunk{At: rd.At, Size: rd.End - from, Data: f.Body[from:rd.End]})
		from = rd.End
	}
	r.Body.Size = int64(len(f.Body))
	switch {
	case f.Err == errStopped:
		r.End = traffic.EndClientGone
	case !f.Complete:
		r.End = traffic.EndError
	default:
		r.End = traffic.EndComplete
	}
	x.Response = r
	return &Response{View: checks.NewView(x), Complete: f.Complete, Err: f.Err, Role: f.Role}
}
