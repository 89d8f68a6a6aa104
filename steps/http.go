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
	"sync"
	"time"

	"github.com/gavv/httpexpect/v2"

	"github.com/invokeconf/invokeconf/checks"
	"github.com/invokeconf/invokeconf/internal/lateness"
	"github.com/invokeconf/invokeconf/outcome"
	"github.com/invokeconf/invokeconf/traffic"
)

// Response is one exchange the scenario made: the recorded exchange,
// parsed once (checks.View: what the checks read, and the steps too), with
// what only the client knows beside it: how reading ended and which key
// role the request carried.
type Response struct {
	*checks.View
	// Complete is true when the body was read to its end.
	Complete bool
	// Err says why the body was not read to its end.
	Err error
	// Role is the key role the request carried ("" for none, or for an
	// Authorization value given literally): which rule a refusal breaks
	// depends on the scopes the role stands for (rests.go).
	Role string

	cutOnce sync.Once
	cut     *checks.View // judged
}

// Method and URL are the request's.
func (r *Response) Method() string { return r.Request.Method }

// URL is the absolute URL the request went to.
func (r *Response) URL() string { return r.Request.URL }

// Sent is when the request was sent; the times of the answer count from it.
func (r *Response) Sent() time.Time { return r.Start }

// HeadersAt is when the status and headers arrived.
func (r *Response) HeadersAt() time.Duration {
	if r.Response == nil {
		return 0
	}
	return r.Response.HeaderAt
}

// Prompt returns the request's body as text.
func (r *Response) Prompt() string { return string(r.Request.Body.Bytes()) }

// ArrivalOf returns when the byte at offset off-1 had arrived (the time of
// the first read whose end reached off).
func (r *Response) ArrivalOf(off int) time.Duration {
	if r.Response == nil {
		return 0
	}
	end := 0
	chunks := r.Response.Body.Chunks
	for _, c := range chunks {
		end += len(c.Data)
		if end >= off {
			return c.At
		}
	}
	if len(chunks) > 0 {
		return chunks[len(chunks)-1].At
	}
	return r.HeadersAt()
}

// End returns when the last byte arrived.
func (r *Response) End() time.Duration { return r.ArrivalOf(len(r.Body())) }

// MaxBody is the most the harness reads of one response body, a stream's
// whole body included: whatever a target sends, the harness's memory stays
// bounded. A body read to it is held about four times while its scenario
// judges it (the recorded bytes, the parsed lines, each event's JSON members
// and its decoded content), so 16 scenarios at once hold at most 256 MiB of
// bodies: under runner.MemoryLimit with the run's own needs. The spec's
// answers are a few KiB: the largest a clean run of the whole suite reads
// against the reference server is 4 KiB.
const MaxBody = 4 << 20

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
	role         string // the key role it carries, "" for none
	body         *string
	// header is sent exactly as given, Authorization included when the
	// request carries a key. A body is sent as text/plain unless header
	// sets a Content-Type or omit names it.
	header http.Header
	// omit names headers to leave out.
	omit []string
	// query is added to the expanded path, encoded.
	query string
	// maxBody, when set, bounds the body below MaxBody: the follow-up
	// routes answer small objects.
	maxBody int64
	// stop, when set, is asked after every read with the response so far;
	// when it returns true the client stops reading and closes the
	// connection (a disconnect).
	stop stopFunc
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
	rq := request{method: method, path: path, body: body, header: http.Header{}, role: w.role()}
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
	rq := request{method: method, path: path, body: body, header: http.Header{}, role: role}
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
func (w *World) invokeStopping(path, prompt string, stop stopFunc) (*Response, error) {
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

// stopFunc is asked after every read of a body with the response so far.
type stopFunc func(rd *reading) bool

// reading is a response while its body is read: the exchange holds the
// request, the status and the headers; body is what arrived so far, at is
// when the last read returned (from the request's start).
type reading struct {
	x    *traffic.Exchange
	body []byte
	at   time.Duration
}

// do sends a request and reads the whole response under the scenario's
// deadline, recording it as the proxy records its clients' traffic
// (traffic.Recorder, keys kept: the reports redact). A deadline or a read
// error is kept in Response.Err, not returned: steps judge it. It records
// the exchange in the transcript and the scenario's history, hands it to
// the run (Suite.Exchanges) and changes nothing else: the When steps keep
// the response they judge.
func (w *World) do(rq request) (*Response, error) {
	url := strings.TrimRight(w.P.BaseURL, "/") + rq.path
	if rq.query != "" {
		url += "?" + rq.query
	}
	ctx, cancel := context.WithTimeout(w.ctx, w.deadline)
	defer cancel()
	sent := &sending{w: w, rq: rq, ctx: ctx, cancel: cancel, built: &assertions{check: "build the request"}}
	rq.expectation(url, sent).WithContext(ctx).Expect()
	switch {
	case sent.resp != nil:
		return sent.resp, nil
	case sent.err != nil:
		return nil, sent.err
	case sent.built.first != nil:
		return nil, fmt.Errorf("build request %s %s: %w", rq.method, url, sent.built.first)
	}
	return nil, fmt.Errorf("build request %s %s: httpexpect sent nothing", rq.method, url)
}

// expectation is rq as httpexpect builds it: its headers exactly as given
// (a body's Content-Type is text/plain unless header sets one or omit
// names it), its body, sent by c. httpexpect follows no redirect and
// retries nothing here: c is not an *http.Client, and no retry is asked.
func (rq request) expectation(url string, c *sending) *httpexpect.Request {
	e := httpexpect.NewRequestC(httpexpect.Config{BaseURL: url, Client: c, AssertionHandler: c.built}, rq.method, "")
	header := http.Header{}
	if rq.body != nil {
		header.Set("Content-Type", "text/plain")
	}
	for k, vs := range rq.header {
		header[http.CanonicalHeaderKey(k)] = vs
	}
	for _, k := range rq.omit {
		header.Del(k)
	}
	for k, vs := range header {
		for _, v := range vs {
			e.WithHeader(k, v)
		}
	}
	if rq.body != nil && *rq.body != "" {
		e.WithBytes([]byte(*rq.body))
	}
	return e
}

// sending is the httpexpect Client of one request: it sends what
// httpexpect built, reads the answer as it arrives (every read timed and
// bounded, stop asked after each), records the exchange as the proxy
// records its clients' traffic and keeps it (finish). httpexpect's own
// response carries the status and headers; the body is the recording's.
type sending struct {
	w      *World
	rq     request
	ctx    context.Context
	cancel context.CancelFunc
	built  *assertions // httpexpect's failures building the request

	resp *Response // the recorded exchange, once sent
	err  error     // why it could not be sent
}

// Do sends req and reads its answer.
func (c *sending) Do(req *http.Request) (*http.Response, error) {
	w, rq := c.w, c.rq
	rc := w.shared.recorder
	start := time.Now()
	x := &traffic.Exchange{ID: w.shared.nextID(), Start: start,
		Request: traffic.Request{Method: req.Method, URL: rc.URL(req.URL.String()), Header: rc.Header(req.Header)}}
	if rq.body != nil {
		br := rc.Body(start)
		br.Add([]byte(*rq.body), start)
		x.Request.Body = br.Finish()
	}
	// The cell is the request's: a view of it alone, before any answer.
	cell, inCell := w.cellOf(checks.NewView(x), w.aborting)
	resp := &Response{Role: rq.role}
	hr, err := w.client.Do(req)
	if err != nil {
		x.Error = err.Error()
		resp.View = checks.NewView(x)
		w.finish(resp, cell, inCell)
		if c.ctx.Err() != nil {
			err = fmt.Errorf("no response within %s", w.deadline)
		}
		c.err = w.sendFailure(rq.method, rq.path, err)
		return nil, c.err
	}
	defer hr.Body.Close()
	x.Response = &traffic.Response{Status: hr.StatusCode, Header: rc.Header(hr.Header), HeaderAt: time.Since(start)}
	if inCell {
		w.noteThreadCell(x, cell)
	}
	body := io.Reader(hr.Body)
	if rq.maxBody > 0 {
		body = &limitedBody{rc: hr.Body, left: rq.maxBody, limit: rq.maxBody}
	}
	br := rc.Body(start)
	resp.read(x, br, body, rq.stop, c.cancel)
	x.Response.Body = br.Finish()
	switch {
	case resp.Err == errStopped:
		x.Response.End = traffic.EndClientGone
	case !resp.Complete:
		x.Response.End = traffic.EndError
	default:
		x.Response.End = traffic.EndComplete
	}
	if resp.Err != nil && c.ctx.Err() == context.DeadlineExceeded {
		resp.Err = fmt.Errorf("the response did not end within %s", w.deadline)
	}
	if resp.Err != nil && resp.Err != errStopped {
		x.Error = resp.Err.Error()
	}
	if x.Response.End == traffic.EndClientGone && inCell {
		cell.Outcome = checks.OutcomeAborted // the client went away: FMT-08 cancels the run
	}
	resp.View = checks.NewView(x)
	w.finish(resp, cell, inCell)
	c.resp = resp
	return &http.Response{Status: hr.Status, StatusCode: hr.StatusCode, Proto: hr.Proto, ProtoMajor: hr.ProtoMajor,
		ProtoMinor: hr.ProtoMinor, Header: hr.Header, Body: http.NoBody, Request: req}, nil
}

// finish keeps a recorded exchange: the run's lateness probe's stalls while
// it lasted, the transcript, the scenario's history and the run's (with its
// cell, when it is in one).
func (w *World) finish(r *Response, cell checks.Cell, inCell bool) {
	x := r.Exchange
	x.Stalls, x.Probed = lateness.During(x.Start, r.End())
	w.record(r)
	if w.shared.exchanges != nil {
		w.shared.exchanges(w.scenario, r.judged(), cell, inCell)
	}
	if x.Response == nil {
		return
	}
	w.remember(r)
	if sel := w.selectionRules(r); len(sel) > 0 {
		w.histMu.Lock()
		w.lastSelection = sel
		w.histMu.Unlock()
	}
}

// read reads the body into br to its end, to stop, to an error or to the
// body limit (see Client).
func (resp *Response) read(x *traffic.Exchange, br *traffic.BodyRecorder, body io.Reader, stop stopFunc, disconnect func()) {
	buf := make([]byte, 32<<10)
	for {
		n, rerr := body.Read(buf)
		if n > 0 {
			now := time.Now()
			br.Add(buf[:n], now)
			if stop != nil && stop(&reading{x: x, body: br.Bytes(), at: now.Sub(x.Start)}) {
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

// readGrain is the time under which two reads count as one (the recorder's
// Grain), so that a target that sends a byte at a time cannot grow the
// recording without bound: timing rules have tolerances of tens of
// milliseconds at least.
const readGrain = time.Millisecond

var errStopped = errors.New("the client stopped reading")

// complete returns a failure unless the last response was read to its
// end (readWhole).
func (w *World) complete() error {
	r, err := w.last()
	if err != nil {
		return err
	}
	return w.readWhole(r)
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
	rq := request{method: method, path: path, header: http.Header{}, role: w.role(), maxBody: maxFollowUpBody}
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

// fetch makes a plain request/response call (the follow-up routes) with
// the scenario's key, read to its end, and returns the response; like do,
// it changes nothing of the World but the transcript and the history.
// query holds name, value pairs.
func (w *World) fetch(method, path, accept string, query ...string) (*Response, error) {
	rq, err := w.followUp(method, path, accept, query...)
	if err != nil {
		return nil, err
	}
	r, err := w.do(rq)
	if err != nil {
		return nil, err
	}
	return r, w.readWhole(r)
}

// maxFollowUpBody bounds what the harness reads of a follow-up route's
// answer (a run's events, a thread, an abort): small objects, so a target
// that streams without end there costs little.
const maxFollowUpBody = 512 << 10

// sizeText writes a byte count in MiB, or KiB below a whole MiB.
func sizeText(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d KiB", n>>10)
}

// assertions is the httpexpect AssertionHandler of one expectation. It
// keeps the first failure (httpexpect skips later assertions on a failed
// chain) as an outcome.Failure built from the failure's own values.
type assertions struct {
	check string
	first *outcome.Failure
}

func (a *assertions) Success(*httpexpect.AssertionContext) {}

func (a *assertions) Failure(ctx *httpexpect.AssertionContext, f *httpexpect.AssertionFailure) {
	if a.first == nil {
		a.first = assertionFailure(a.check, ctx, f)
	}
}

// assertionFailure: the check is the expectation's name and the
// assertion's path; expected and actual are httpexpect's own values,
// bounded.
func assertionFailure(check string, ctx *httpexpect.AssertionContext, f *httpexpect.AssertionFailure) *outcome.Failure {
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
