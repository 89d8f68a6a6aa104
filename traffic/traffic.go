// Package traffic holds recorded HTTP exchanges: what a client sent, what the
// service answered, and when each piece of the answer arrived. Rule checks
// (package checks) are functions of these values, so the passive proxy, the
// offline judge of a HAR file and the active suite can share them.
//
// A recording is safe to keep: an Authorization header is recorded as the
// key's <user>-<key> ID only (see AuthValue), and every key or piece of a
// key's secret in a body or header is redacted (see Redactor). It is bounded:
// a Recorder keeps at most MaxRecord bytes of each body (what it drops it
// still counts), and with SpillDir set an open body holds at most
// SpillThreshold of them in memory, the rest in a temporary file.
package traffic

import (
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Exchange is one request and its response.
type Exchange struct {
	// ID numbers the exchanges of a recording from 1, in the order their
	// requests started.
	ID int
	// Start is when the request started.
	Start    time.Time
	Request  Request
	Response *Response // nil when no response arrived
	// Error says why the exchange did not complete (the service was
	// unreachable); "" otherwise.
	Error string
	// Stalls are the times, counted from Start, when the recording process
	// itself ran late: a lateness probe in it woke up late
	// (internal/lateness). Timing checks do not blame the service for a
	// delay the recorder's own lateness could explain.
	Stalls []Stall
	// Probed is true when a probe watched the whole exchange, so Stalls
	// holds every stall; false when the recording does not say.
	Probed bool
	// Precision is how far Start and the response's times may be off: 0
	// for this harness's own recordings; a HAR file of another program
	// states its times to the millisecond, say.
	Precision time.Duration
}

// Stall is a time the recording process ran late, counted from the
// exchange's start.
type Stall struct{ From, To time.Duration }

// Request is what the client sent.
type Request struct {
	Method string
	// URL is the absolute URL the request was sent to.
	URL    string
	Header http.Header
	// Gaps says which of Header's values the recording cannot vouch for.
	Gaps HeaderGaps
	Body Body
}

// HeaderGaps says, by canonical header name, why a recording cannot tell
// what a header held: a recorder of another program listed it twice with
// different values (was it sent twice, or is one the page's and the other
// the wire's?). The name "" stands for every header: the recording has no
// header list at all. A nil HeaderGaps has none.
type HeaderGaps map[string]string

// Of returns why the recording cannot tell what the header name held, or
// "" when it can.
func (g HeaderGaps) Of(name string) string {
	if r := g[""]; r != "" {
		return r
	}
	return g[http.CanonicalHeaderKey(name)]
}

// Response is what the service answered.
type Response struct {
	Status int
	Header http.Header
	// Gaps says which of Header's values the recording cannot vouch for.
	Gaps HeaderGaps
	// HeaderAt is when the status and headers arrived, from the request's
	// start; -1 when unknown.
	HeaderAt time.Duration
	Body     Body
	// End says how the body ended.
	End End
	// EndAt is when the body's last byte arrived, from the request's
	// start, when the recording says so but has no chunk timings (a HAR
	// file's time and timings); 0 when unknown. Body.Timed bodies say it
	// with their last chunk (see LastByte).
	EndAt time.Duration
}

// LastByte returns when the body's last byte arrived, from the request's
// start, and whether the recording says: the last chunk of a timed body,
// else EndAt.
func (r *Response) LastByte() (time.Duration, bool) {
	if n := len(r.Body.Chunks); n > 0 && r.Body.Timed {
		return r.Body.Chunks[n-1].At, true
	}
	if r.EndAt > 0 {
		return r.EndAt, true
	}
	return 0, false
}

// End says how a response body ended.
type End string

// The ways a body ends.
const (
	// EndComplete: the service ended the body.
	EndComplete End = "complete"
	// EndClientGone: the client went away before the body ended.
	EndClientGone End = "client-gone"
	// EndError: the connection to the service failed mid-body.
	EndError End = "error"
	// EndUnknown: the recording does not say (a foreign HAR file).
	EndUnknown End = ""
)

// Body is a recorded body: its chunks in the order they arrived.
type Body struct {
	Chunks []Chunk
	// Size counts every byte that passed, recorded or not.
	Size int64
	// Truncated is true when the recording holds only the start of the
	// body: bytes were dropped (MaxRecord), or the recorder kept fewer
	// than passed (Gap says so).
	Truncated bool
	// Missing is true when the recording holds none of the body's bytes
	// though it had some, or may have had: a recorder that could not
	// fetch a body writes its size without its text; Gap says why. No
	// rule is judged on its bytes: it is not an empty body.
	Missing bool
	// Gap says, in words, what the recording lacks of the body when
	// Truncated or Missing is the recorder's doing rather than this
	// harness's MaxRecord ("content.text holds 120 of the 786 bytes of
	// content.size"); "" otherwise.
	Gap string
	// Timed is true when each chunk's arrival time is known.
	Timed bool
	// Redacted is true when only lengths, timings and a hash were kept
	// (--redact-bodies): the chunks hold no data.
	Redacted bool
	// SHA256 is the hex hash of the whole body as it passed, when kept.
	SHA256 string
}

// Chunk is one piece of a body as it arrived.
type Chunk struct {
	// At is the arrival time from the request's start.
	At time.Duration
	// Size is the number of bytes that arrived.
	Size int
	// Data holds the recorded bytes: all of them, fewer past MaxRecord, or
	// none in a body with Redacted set.
	Data []byte
}

// Bytes returns the recorded bytes of the body, chunks joined. When the
// chunks' bytes lie end to end in one array, as a BodyRecorder leaves them,
// it returns that buffer without copying: the caller must not modify it.
func (b *Body) Bytes() []byte {
	n := 0
	for _, c := range b.Chunks {
		n += len(c.Data)
	}
	if whole, ok := contiguous(b.Chunks, n); ok {
		return whole
	}
	out := make([]byte, 0, n)
	for _, c := range b.Chunks {
		out = append(out, c.Data...)
	}
	return out
}

// contiguous returns the n bytes of chunks as one slice when they are
// pieces of one array, end to end: each chunk's data starts where the one
// before it ends, within the capacity of the first chunk's data (so within
// its array: two arrays that merely lie side by side are not joined).
func contiguous(chunks []Chunk, n int) ([]byte, bool) {
	var first []byte
	off := 0
	for _, c := range chunks {
		if len(c.Data) == 0 {
			continue
		}
		if first == nil {
			first = c.Data
		} else if off+len(c.Data) > cap(first) || &first[:off+1][off] != &c.Data[0] {
			return nil, false
		}
		off += len(c.Data)
	}
	if first == nil {
		return nil, false
	}
	return first[:n:n], true
}

// Cut returns b holding only its first n recorded bytes, marked Truncated
// (when it held more): what a recorder with MaxRecord n would have kept. The
// chunks' data is shared with b.
func Cut(b Body, n int) Body {
	kept, all := 0, 0
	var chunks []Chunk
	for _, c := range b.Chunks {
		all += len(c.Data)
		if kept >= n {
			continue
		}
		if len(c.Data) > n-kept {
			c.Data = c.Data[:n-kept]
		}
		kept += len(c.Data)
		chunks = append(chunks, c)
	}
	if kept < all {
		b.Truncated = true
	}
	b.Chunks = chunks
	return b
}

// Complete reports whether the recording holds the whole body.
func (b *Body) Complete() bool { return !b.Truncated && !b.Redacted && !b.Missing }

// TimeAt returns the arrival time of the byte at offset off of the recorded
// bytes, and false when the body is not timed or off is past its end.
func (b *Body) TimeAt(off int) (time.Duration, bool) {
	if !b.Timed {
		return 0, false
	}
	for _, c := range b.Chunks {
		if off < len(c.Data) {
			return c.At, true
		}
		off -= len(c.Data)
	}
	return 0, false
}

// Path returns the request's URL path ("" when the URL does not parse).
func (r *Request) Path() string {
	u, err := url.Parse(r.URL)
	if err != nil {
		return ""
	}
	return u.Path
}

// Query returns the request's query parameters.
func (r *Request) Query() url.Values {
	u, err := url.Parse(r.URL)
	if err != nil {
		return url.Values{}
	}
	return u.Query()
}

// MediaType returns the media type of a Content-Type value, lower-cased and
// without parameters.
func MediaType(contentType string) string {
	mt, _, _ := strings.Cut(contentType, ";")
	return strings.ToLower(strings.TrimSpace(mt))
}
