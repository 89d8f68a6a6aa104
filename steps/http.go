package steps

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gavv/httpexpect/v2"

	"github.com/invokeconf/invokeconf/outcome"
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

	// ReqHeader and ReqBody are what the request sent (Exchange reads them).
	ReqHeader http.Header
	ReqBody   []byte
}

// Read is one read of the body: when it arrived and the body length after
// it. Reads less than readGrain apart are kept as one, at the first one's
// time.
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

// MaxBody is the most the harness reads of one response body, a stream's
// whole body included: whatever a target sends, the harness's memory stays
// bounded.
const MaxBody = 8 << 20

// BodyTooLargeError says that a response body went past the limit.
type BodyTooLargeError struct{ Limit int64 }

func (e *BodyTooLargeError) Error() string {
	return fmt.Sprintf("the body exceeded %s, the most the harness reads of one response", sizeText(e.Limit))
}

// Client returns c as the harness uses it against a target, c itself
// unchanged (nil stands for http.DefaultClient). It follows no redirect: a
// 3xx is an answer to judge, and following one would send the key and the
// body wherever the target names. It reads at most MaxBody of a response
// body; past that, a read fails with a *BodyTooLargeError.
func Client(c *http.Client) *http.Client {
	if c == nil {
		c = http.DefaultClient
	}
	cc := *c
	cc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	cc.Transport = &limitTransport{base: base, limit: MaxBody}
	return &cc
}

// limitTransport bounds the body of every response.
type limitTransport struct {
	base  http.RoundTripper
	limit int64
}

func (t *limitTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err == nil && resp.Body != nil {
		resp.Body = &limitedBody{rc: resp.Body, left: t.limit, limit: t.limit}
	}
	return resp, err
}

// limitedBody reads up to limit bytes, then fails if the body goes on.
type limitedBody struct {
	rc          io.ReadCloser
	left, limit int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		var one [1]byte
		n, err := b.rc.Read(one[:])
		if n > 0 {
			return 0, &BodyTooLargeError{Limit: b.limit}
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }

// request is one HTTP call as a value: it carries its key and headers, so
// sending it reads nothing of the World but the target and the deadline.
type request struct {
	method, path string // path expanded (no ${...} placeholders)
	body         *string
	// header is sent exactly as given, Authorization included when the
	// request carries a key. A body is sent as text/plain unless header
	// sets a Content-Type or omit names it.
	header http.Header
	// omit names headers to leave out.
	omit []string
	// query is added to the expanded path, encoded.
	query string
	// stop, when set, is asked after every read with the response so far;
	// when it returns true the client stops reading and closes the
	// connection (a disconnect).
	stop func(r *Response) bool
}

// prepared returns a request with the key and headers that the scenario's
// Given steps chose; path may hold placeholders.
func (w *World) prepared(method, path string, body *string) (request, error) {
	auth, err := w.authorization()
	if err != nil {
		return request{}, err
	}
	if path, err = w.expand(path); err != nil {
		return request{}, err
	}
	rq := request{method: method, path: path, body: body, header: http.Header{}}
	if auth != "" {
		rq.header.Set("Authorization", auth)
	}
	for k, v := range w.headers {
		rq.header.Set(k, v)
	}
	for k := range w.noHeaders {
		rq.omit = append(rq.omit, k)
	}
	return rq, nil
}

// keyed returns a request with the key of a role and the given headers
// (an empty value sends none), whatever the scenario chose for its own
// requests; path may hold placeholders.
func (w *World) keyed(role string, headers map[string]string, method, path string, body *string) (request, error) {
	k, err := w.P.Key(role)
	if err != nil {
		return request{}, need(err)
	}
	if path, err = w.expand(path); err != nil {
		return request{}, err
	}
	rq := request{method: method, path: path, body: body, header: http.Header{}}
	rq.header.Set("Authorization", "Bearer "+k)
	for name, v := range headers {
		if v != "" {
			rq.header.Set(name, v)
		}
	}
	return rq, nil
}

// invokeStopping sends an invoke (prepared with the scenario's key and
// headers), stops reading as soon as stop says so (a disconnect), and keeps
// the response as the scenario's last.
func (w *World) invokeStopping(path, prompt string, stop func(*Response) bool) (*Response, error) {
	rq, err := w.prepared("POST", path, &prompt)
	if err != nil {
		return nil, err
	}
	rq.stop = stop
	resp, err := w.do(rq)
	if err != nil {
		return nil, err
	}
	w.resp = resp
	return resp, nil
}

// do sends a request and reads the whole response under the scenario's
// deadline. A deadline or a read error is kept in Response.Err, not
// returned: steps judge it. It records the exchange in the transcript and
// changes nothing else: the When steps keep the response they judge.
func (w *World) do(rq request) (*Response, error) {
	path := rq.path
	url := strings.TrimRight(w.P.BaseURL, "/") + path
	if rq.query != "" {
		url += "?" + rq.query
	}
	ctx, cancel := context.WithTimeout(w.ctx, w.deadline)
	defer cancel()
	req, ex, err := rq.build(ctx, url)
	if err != nil {
		return nil, err
	}
	resp := &Response{Method: rq.method, URL: url, ReqHeader: req.Header.Clone(), Sent: time.Now()}
	if rq.body != nil {
		resp.ReqBody = []byte(*rq.body)
	}
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
	resp.read(hr.Body, rq.stop, cancel)
	if resp.Err != nil && ctx.Err() == context.DeadlineExceeded {
		resp.Err = fmt.Errorf("the response did not end within %s", w.deadline)
	}
	ex.Status, ex.RespHeader, ex.RespBody = resp.Status, resp.Header, transcriptCopy(resp.Body)
	ex.Elapsed = resp.End().Round(time.Millisecond).String()
	if resp.Err != nil && resp.Err != errStopped {
		ex.Error = resp.Err.Error()
	}
	w.record(ex)
	w.remember(resp)
	return resp, nil
}

// build returns the *http.Request and the exchange a transcript shows.
func (rq request) build(ctx context.Context, url string) (*http.Request, Exchange, error) {
	var body io.Reader
	if rq.body != nil {
		body = strings.NewReader(*rq.body)
	}
	req, err := http.NewRequestWithContext(ctx, rq.method, url, body)
	if err != nil {
		return nil, Exchange{}, fmt.Errorf("build request %s %s: %w", rq.method, url, err)
	}
	if rq.body != nil {
		req.Header.Set("Content-Type", "text/plain")
	}
	for k, vs := range rq.header {
		req.Header[http.CanonicalHeaderKey(k)] = append([]string(nil), vs...)
	}
	for _, k := range rq.omit {
		req.Header.Del(k)
	}
	ex := Exchange{Method: rq.method, URL: url, Header: req.Header.Clone()}
	if rq.body != nil {
		ex.Body = *rq.body
	}
	return req, ex, nil
}

// read reads the body to its end, to stop, to an error or to the body
// limit (see Client).
func (resp *Response) read(body io.Reader, stop func(*Response) bool, disconnect func()) {
	buf := make([]byte, 32<<10)
	for {
		n, rerr := body.Read(buf)
		if n > 0 {
			resp.Body = append(resp.Body, buf[:n]...)
			resp.noteRead(time.Since(resp.Sent))
			if stop != nil && stop(resp) {
				disconnect() // close the connection: the client goes away
				resp.Err = errStopped
				return
			}
		}
		if rerr == io.EOF {
			resp.Complete = true
			return
		}
		if rerr != nil {
			resp.Err = rerr
			return
		}
	}
}

// readGrain is the time under which two reads count as one, so that a
// target that sends a byte at a time cannot grow the list without bound:
// timing rules have tolerances of tens of milliseconds at least. maxReads
// is a safety net: at one read per readGrain, no deadline lasts long enough
// to reach it.
const (
	readGrain = time.Millisecond
	maxReads  = 1 << 16
)

// noteRead adds a read that ended at the body's current length.
func (resp *Response) noteRead(at time.Duration) {
	if n := len(resp.Reads); n > 0 && (at-resp.Reads[n-1].At < readGrain || n >= maxReads) {
		// The bytes of this read arrived at most readGrain later than
		// the read they join says, or the list is full.
		resp.Reads[n-1].End = len(resp.Body)
		return
	}
	resp.Reads = append(resp.Reads, Read{At: at, End: len(resp.Body)})
}

// transcriptCopy copies what a transcript can keep of a body (record cuts
// it), so a large body is not copied whole.
func transcriptCopy(b []byte) string {
	return string(b[:min(len(b), maxTranscriptBody+4<<10)])
}

var errStopped = errors.New("the client stopped reading")

// complete returns an error unless the response was read to its end.
func (r *Response) complete() error {
	if !r.Complete {
		return fmt.Errorf("%s %s: %v", r.Method, r.URL, r.Err)
	}
	return nil
}

// complete returns an error unless the last response was read to its end.
func (w *World) complete() error {
	r, err := w.last()
	if err != nil {
		return err
	}
	return r.complete()
}

// followUp returns a follow-up request (GET or POST without a body) with
// the scenario's key and an Accept header (none when empty); query holds
// name, value pairs, path may hold placeholders.
func (w *World) followUp(method, path, accept string, query ...string) (request, error) {
	auth, err := w.authorization()
	if err != nil {
		return request{}, err
	}
	if path, err = w.expand(path); err != nil {
		return request{}, err
	}
	rq := request{method: method, path: path, header: http.Header{}}
	if auth != "" {
		rq.header.Set("Authorization", auth)
	}
	if accept != "" {
		rq.header.Set("Accept", accept)
	}
	if len(query) > 0 {
		q := url.Values{}
		for i := 0; i+1 < len(query); i += 2 {
			q.Add(query[i], query[i+1])
		}
		rq.query = q.Encode()
	}
	return rq, nil
}

// fetch makes a plain request/response call (follow-up routes) with the
// scenario's key through httpexpect, read to its end, and returns the
// response; like do, it changes nothing of the World but the transcript.
// query holds name, value pairs.
func (w *World) fetch(method, path, accept string, query ...string) (*Response, error) {
	rq, err := w.followUp(method, path, accept, query...)
	if err != nil {
		return nil, err
	}
	call, err := w.expectDo(rq.method+" "+rq.path, rq)
	if err != nil {
		return nil, err
	}
	r, err := call.response()
	if err == nil {
		w.remember(r)
	}
	return r, err
}

// expectCall is one call made through httpexpect: its response to assert
// on, and the handler that keeps the first failed assertion.
type expectCall struct {
	*httpexpect.Response
	checks    *assertions
	method    string
	url       string
	reqHeader http.Header
	sent      time.Time
	end       time.Duration
}

// expectDo sends a request value through httpexpect, named check (failures
// name it), bounded by the scenario's deadline and by maxExpectBody, and
// records it in the transcript. The body is read before it returns: a
// failed read is the call's first failure.
func (w *World) expectDo(check string, rq request) (*expectCall, error) {
	u := strings.TrimRight(w.P.BaseURL, "/") + rq.path
	if rq.query != "" {
		u += "?" + rq.query
	}
	ctx, cancel := context.WithTimeout(w.ctx, w.deadline)
	defer cancel()
	checks := &assertions{}
	client := *w.client
	client.Transport = &limitTransport{base: w.client.Transport, limit: maxExpectBody}
	e := httpexpect.WithConfig(httpexpect.Config{
		Client:           &client,
		AssertionHandler: checks,
		Printers:         []httpexpect.Printer{&transcriptPrinter{w: w, checks: checks}},
	})
	// The URL is given whole: an ID from the target is not a path template.
	req := e.Request(rq.method, "").WithURL(u).WithName(check).WithContext(ctx)
	if rq.body != nil {
		req = req.WithHeader("Content-Type", "text/plain").WithText(*rq.body)
	}
	for k, vs := range rq.header {
		for _, v := range vs {
			req = req.WithHeader(k, v)
		}
	}
	call := &expectCall{checks: checks, method: rq.method, url: u, reqHeader: rq.header.Clone(), sent: time.Now()}
	call.Response = req.Expect()
	call.Body() // read it under the deadline
	call.end = time.Since(call.sent)
	if checks.first == nil && ctx.Err() == context.DeadlineExceeded {
		checks.first = outcome.Fail(check, fmt.Sprintf("a response within %s", w.deadline), "none")
	}
	return call, nil
}

// response returns the call as a Response read to its end, or the call's
// first failure.
func (c *expectCall) response() (*Response, error) {
	if err := c.err(); err != nil {
		return nil, err
	}
	raw := c.Raw()
	body := []byte(c.Body().Raw())
	return &Response{
		Method: c.method, URL: c.url, Status: raw.StatusCode, Header: raw.Header, Body: body,
		Sent: c.sent, HeadersAt: c.end, Reads: []Read{{At: c.end, End: len(body)}}, Complete: true,
		ReqHeader: c.reqHeader,
	}, nil
}

// err returns the call's first failed assertion, an *outcome.Failure.
func (c *expectCall) err() error {
	if c.checks.first == nil {
		return nil
	}
	return c.checks.first
}

// maxExpectBody bounds what httpexpect reads: it keeps a body in memory
// several times over, and the answers it reads (a run's events, a thread)
// are small objects.
const maxExpectBody = 512 << 10

// sizeText writes a byte count in MiB, or KiB below a whole MiB.
func sizeText(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d KiB", n>>10)
}

// assertions is the httpexpect AssertionHandler of one call. It keeps the
// first failure (httpexpect skips later assertions on a failed chain) as an
// outcome.Failure built from the failure's own values.
type assertions struct{ first *outcome.Failure }

func (a *assertions) Success(*httpexpect.AssertionContext) {}

func (a *assertions) Failure(ctx *httpexpect.AssertionContext, f *httpexpect.AssertionFailure) {
	if a.first == nil {
		a.first = assertionFailure(ctx, f)
	}
}

// assertionFailure: the check is the request's name and the assertion's
// path; expected and actual are httpexpect's own values, bounded.
func assertionFailure(ctx *httpexpect.AssertionContext, f *httpexpect.AssertionFailure) *outcome.Failure {
	check := ctx.RequestName
	if p := strings.Join(ctx.AliasedPath, "."); p != "" {
		check += ": " + p
	}
	want, got := f.Type.String(), "nothing"
	if f.Expected != nil {
		want = assertionValue(f.Expected.Value)
	}
	if f.Actual != nil {
		got = assertionValue(f.Actual.Value)
	} else if len(f.Errors) > 0 {
		got = f.Errors[len(f.Errors)-1].Error()
	}
	return outcome.Fail(check, want, got)
}

// assertionValue renders an httpexpect value; a list is its alternatives.
func assertionValue(v any) string {
	switch x := v.(type) {
	case string:
		return strconv.Quote(bounded(x))
	case httpexpect.AssertionList:
		alts := make([]string, len(x))
		for i, a := range x {
			alts[i] = fmt.Sprint(a)
		}
		return bounded(strings.Join(alts, " or "))
	}
	return bounded(fmt.Sprint(v))
}

// transcriptPrinter records httpexpect's exchanges in the transcript, and
// fails a call whose body it could not read (httpexpect itself may then
// judge an empty one).
type transcriptPrinter struct {
	w       *World
	checks  *assertions
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
			if p.checks.first == nil {
				p.checks.first = outcome.Fail(ex.Method+" "+ex.URL+": the body",
					"a body read to its end within "+sizeText(maxExpectBody), err.Error())
			}
		}
		ex.RespBody = transcriptCopy(b)
	}
	p.w.record(*ex)
}
