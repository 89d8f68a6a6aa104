package steps

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/gavv/httpexpect/v2"
)

// Response is a response read to its end (or to a deadline), with the time
// each read arrived, so that timing rules can be judged after the fact.
type Response struct {
	Method, URL string
	Status      int
	Header      http.Header
	Body        []byte
	// Sent is when the request was sent; the durations below count from it.
	Sent      time.Time
	HeadersAt time.Duration
	Reads     []Read
	// Complete is true when the body was read to its end.
	Complete bool
	// Err says why the body was not read to its end.
	Err error
}

// Read is one read of the body: when it arrived and the body length after it.
type Read struct {
	At  time.Duration
	End int
}

// ArrivalOf returns when the byte at offset off-1 had arrived (the time of
// the first read whose end reached off).
func (r *Response) ArrivalOf(off int) time.Duration {
	for _, rd := range r.Reads {
		if rd.End >= off {
			return rd.At
		}
	}
	if len(r.Reads) > 0 {
		return r.Reads[len(r.Reads)-1].At
	}
	return r.HeadersAt
}

// End returns when the last byte arrived.
func (r *Response) End() time.Duration { return r.ArrivalOf(len(r.Body)) }

// request describes one HTTP call.
type request struct {
	method, path string
	body         *string
	// stop, when set, is asked after every read with the response so far;
	// when it returns true the client stops reading and closes the
	// connection (a disconnect).
	stop func(r *Response) bool
}

// do sends a request with the scenario's key and headers and reads the whole
// response under the scenario's deadline. A deadline or a read error is kept
// in Response.Err, not returned: steps judge it.
func (w *World) do(rq request) (*Response, error) {
	auth, err := w.authorization()
	if err != nil {
		return nil, err
	}
	path, err := w.expand(rq.path)
	if err != nil {
		return nil, need(err)
	}
	url := strings.TrimRight(w.P.BaseURL, "/") + path
	ctx, cancel := context.WithTimeout(w.ctx, w.deadline)
	defer cancel()
	var body io.Reader
	if rq.body != nil {
		body = strings.NewReader(*rq.body)
	}
	req, err := http.NewRequestWithContext(ctx, rq.method, url, body)
	if err != nil {
		return nil, fmt.Errorf("build request %s %s: %w", rq.method, url, err)
	}
	if rq.body != nil && !w.noHeaders["Content-Type"] {
		req.Header.Set("Content-Type", "text/plain")
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	for k, v := range w.headers {
		req.Header.Set(k, v)
	}
	for k := range w.noHeaders {
		req.Header.Del(k)
	}
	ex := Exchange{Method: rq.method, URL: url, Header: req.Header.Clone()}
	if rq.body != nil {
		ex.Body = *rq.body
	}

	resp := &Response{Method: rq.method, URL: url, Sent: time.Now()}
	hr, err := w.client.Do(req)
	if err != nil {
		ex.Error = err.Error()
		w.record(ex)
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s %s: no response within %s", rq.method, path, w.deadline)
		}
		return nil, fmt.Errorf("%s %s: %w", rq.method, path, err)
	}
	defer hr.Body.Close()
	resp.HeadersAt = time.Since(resp.Sent)
	resp.Status, resp.Header = hr.StatusCode, hr.Header

	buf := make([]byte, 32<<10)
	for {
		n, rerr := hr.Body.Read(buf)
		if n > 0 {
			resp.Body = append(resp.Body, buf[:n]...)
			resp.Reads = append(resp.Reads, Read{At: time.Since(resp.Sent), End: len(resp.Body)})
			if rq.stop != nil && rq.stop(resp) {
				cancel() // close the connection: the client goes away
				resp.Err = errStopped
				break
			}
		}
		if rerr == io.EOF {
			resp.Complete = true
			break
		}
		if rerr != nil {
			resp.Err = rerr
			if ctx.Err() == context.DeadlineExceeded {
				resp.Err = fmt.Errorf("the response did not end within %s", w.deadline)
			}
			break
		}
	}
	ex.Status, ex.RespHeader, ex.RespBody = resp.Status, resp.Header, string(resp.Body)
	ex.Elapsed = resp.End().Round(time.Millisecond).String()
	if resp.Err != nil && resp.Err != errStopped {
		ex.Error = resp.Err.Error()
	}
	w.record(ex)
	w.resp = resp
	return resp, nil
}

var errStopped = errors.New("the client stopped reading")

// complete returns an error unless the last response was read to its end.
func (w *World) complete() error {
	if w.resp == nil {
		return errors.New("no response yet")
	}
	if !w.resp.Complete {
		return fmt.Errorf("%s %s: %v", w.resp.Method, w.resp.URL, w.resp.Err)
	}
	return nil
}

// expect returns an httpexpect client for plain request/response calls
// (follow-up routes), bound to the scenario's deadline. Its failures are
// collected by the returned reporter.
func (w *World) expect() (*httpexpect.Expect, *reporter) {
	rep := &reporter{}
	e := httpexpect.WithConfig(httpexpect.Config{
		BaseURL:  strings.TrimRight(w.P.BaseURL, "/"),
		Client:   w.client,
		Reporter: rep,
		Context:  w.ctx,
		Printers: []httpexpect.Printer{&transcriptPrinter{w: w}},
	})
	return e, rep
}

// reporter collects httpexpect failures.
type reporter struct{ msgs []string }

func (r *reporter) Errorf(format string, args ...interface{}) {
	r.msgs = append(r.msgs, fmt.Sprintf(format, args...))
}

// err returns the collected failures as one error.
func (r *reporter) err() error {
	if len(r.msgs) == 0 {
		return nil
	}
	return errors.New(strings.Join(r.msgs, "\n"))
}

// transcriptPrinter records httpexpect's exchanges in the transcript.
type transcriptPrinter struct {
	w       *World
	pending *Exchange
}

func (p *transcriptPrinter) Request(req *http.Request) {
	ex := &Exchange{Method: req.Method, URL: req.URL.String(), Header: req.Header.Clone()}
	if req.GetBody != nil {
		if rc, err := req.GetBody(); err == nil {
			b, _ := io.ReadAll(io.LimitReader(rc, maxTranscriptBody))
			rc.Close()
			ex.Body = string(b)
		}
	}
	p.pending = ex
}

func (p *transcriptPrinter) Response(resp *http.Response, rtt time.Duration) {
	ex := p.pending
	p.pending = nil
	if ex == nil || resp == nil {
		return
	}
	ex.Status, ex.RespHeader, ex.Elapsed = resp.StatusCode, resp.Header.Clone(), rtt.Round(time.Millisecond).String()
	if resp.Body != nil {
		// httpexpect rewinds the body after each printer.
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			ex.Error = err.Error()
		}
		ex.RespBody = string(b)
	}
	p.w.record(*ex)
}

// withAuth adds the scenario's key to an httpexpect request.
func (w *World) withAuth(r *httpexpect.Request) (*httpexpect.Request, error) {
	auth, err := w.authorization()
	if err != nil {
		return nil, err
	}
	if auth != "" {
		r = r.WithHeader("Authorization", auth)
	}
	ctx, cancel := context.WithTimeout(w.ctx, w.deadline)
	w.cancels = append(w.cancels, cancel)
	return r.WithContext(ctx), nil
}
