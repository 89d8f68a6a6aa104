package traffic

import (
	"net/http"
	"time"
)

// Timed is a piece of a body with its arrival time from the request's
// start, as a client that reads a response in a loop sees it.
type Timed struct {
	At   time.Duration
	Data []byte
}

// FromHTTP builds an Exchange from a request a client made and the response
// it read, so a caller that drives a service itself (the active suite) can
// judge it with the same checks as recorded traffic. Nothing is redacted
// or cut: the caller owns what it read. pieces nil means an untimed body
// (whole holds it); end says how reading ended.
func FromHTTP(start time.Time, req *http.Request, reqBody []byte, resp *http.Response, pieces []Timed, whole []byte, end End) *Exchange {
	x := &Exchange{ID: 1, Start: start, Request: Request{Method: req.Method, URL: req.URL.String(),
		Header: req.Header.Clone()}}
	if req.Header == nil {
		x.Request.Header = http.Header{}
	}
	if len(reqBody) > 0 {
		x.Request.Body = Body{Size: int64(len(reqBody)), Chunks: []Chunk{{At: 0, Size: len(reqBody), Data: reqBody}}}
	}
	if resp == nil {
		return x
	}
	r := &Response{Status: resp.StatusCode, Header: resp.Header.Clone(), HeaderAt: -1, End: end}
	if pieces != nil {
		r.Body.Timed = true
		for _, p := range pieces {
			r.Body.Chunks = append(r.Body.Chunks, Chunk{At: p.At, Size: len(p.Data), Data: p.Data})
			r.Body.Size += int64(len(p.Data))
		}
	} else if len(whole) > 0 {
		r.Body = Body{Size: int64(len(whole)), Chunks: []Chunk{{At: -1, Size: len(whole), Data: whole}}}
	}
	x.Response = r
	return x
}
