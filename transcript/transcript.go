// Package transcript holds one HTTP exchange as a report shows it: a
// redacted view of the recorded exchange (traffic.Exchange), made by Of
// alone, whoever recorded it (a scenario's step, the proxy, a HAR file).
// Reports read transcripts without depending on the step definitions.
package transcript

import (
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/invokeconf/invokeconf/traffic"
)

// Exchange is one request and its response, as a report shows it: every
// string in it cleaned (keys hidden, bytes printable), each body and
// header set bounded. Its JSON is part of summary.json.
type Exchange struct {
	// ID numbers the run's exchanges from 1 (the run's judgement of every
	// exchange names them by it); 0 when not numbered.
	ID         int         `json:"id,omitempty"`
	Method     string      `json:"method"`
	URL        string      `json:"url"`
	Header     http.Header `json:"header"`
	Body       string      `json:"body,omitempty"`
	Status     int         `json:"status,omitempty"`
	RespHeader http.Header `json:"respHeader,omitempty"`
	RespBody   string      `json:"respBody,omitempty"`
	Elapsed    string      `json:"elapsed,omitempty"`
	Error      string      `json:"error,omitempty"`
}

// Options say how Of shows a recorded exchange.
type Options struct {
	// Cut hides every key in s, then cuts what is left to n bytes and adds
	// note when it cut (profile.Redactor.Cut): keys are hidden before the
	// cut, so a cut never leaves a piece of a key that a whole-key
	// redaction would not recognise.
	Cut func(s string, n int, note string) string
	// Printable makes target bytes safe to show (safetext.Clean).
	Printable func(string) string
	// MaxBody bounds the bytes of each body kept.
	MaxBody int
	// KeyLen is the length of the longest key Cut hides: a body is copied
	// up to MaxBody+2*KeyLen bytes for Cut, not whole.
	KeyLen int
}

// clean is a text with its keys hidden and its bytes printable.
func (o Options) clean(s string) string { return o.Printable(o.Cut(s, len(s), "")) }

// MaxHeaders bounds the bytes of one header set a transcript keeps: a
// target may flood its answer with headers.
const MaxHeaders = 16 << 10

// HeadersNotKept is the name under which a transcript says how many header
// lines it left out (no header has such a name).
const HeadersNotKept = "[invokeconf]"

// Of is x as a report shows it.
func Of(x *traffic.Exchange, o Options) Exchange {
	e := Exchange{ID: x.ID, Method: o.clean(x.Request.Method), URL: o.clean(x.Request.URL),
		Header: Header(o.clean, x.Request.Header), Body: o.body(&x.Request.Body), Error: o.clean(x.Error)}
	resp := x.Response
	if resp == nil {
		return e
	}
	e.Status, e.RespHeader, e.RespBody = resp.Status, Header(o.clean, resp.Header), o.body(&resp.Body)
	if n := len(resp.Body.Chunks); n > 0 && resp.Body.Timed {
		e.Elapsed = resp.Body.Chunks[n-1].At.Round(time.Millisecond).String()
	} else if resp.HeaderAt > 0 {
		e.Elapsed = resp.HeaderAt.Round(time.Millisecond).String()
	}
	if resp.End != traffic.EndComplete && resp.End != traffic.EndUnknown && e.Error == "" {
		e.Error = "the body ended: " + string(resp.End)
	}
	return e
}

// body is a body's text: keys hidden, cut to MaxBody bytes, printable.
func (o Options) body(b *traffic.Body) string {
	if b.Redacted {
		if b.Size == 0 {
			return ""
		}
		return fmt.Sprintf("[%d bytes, not recorded (--redact-bodies)]", b.Size)
	}
	data := b.Bytes()
	size := max(b.Size, int64(len(data)))
	s := o.Cut(string(data[:min(len(data), o.MaxBody+2*o.KeyLen)]), o.MaxBody, fmt.Sprintf("\n[... cut: the body has %d bytes]", size))
	if b.Truncated && len(data) <= o.MaxBody {
		s += fmt.Sprintf("\n[... the recording holds %d of %d bytes]", len(data), b.Size)
	}
	return o.Printable(s)
}

// Header applies clean to a header set's names and values, keeping the
// first MaxHeaders bytes of them (in name order) and saying how many lines
// it left out.
func Header(clean func(string) string, h http.Header) http.Header {
	if h == nil {
		return nil
	}
	out := http.Header{}
	names := make([]string, 0, len(h))
	for k := range h {
		names = append(names, k)
	}
	slices.Sort(names)
	kept, left := 0, 0
	for _, k := range names {
		for _, v := range h[k] {
			if kept += len(k) + len(v); kept > MaxHeaders {
				left++
				continue
			}
			out[clean(k)] = append(out[clean(k)], clean(v))
		}
	}
	if left > 0 {
		out[HeadersNotKept] = []string{fmt.Sprintf("%d more header lines not kept (a transcript keeps %d KiB of headers)", left, MaxHeaders>>10)}
	}
	return out
}
