package traffic

import (
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"net/http"
	"net/url"
	"slices"
	"time"
)

// DefaultMaxRecord is the default cap on the recorded bytes of one body.
const DefaultMaxRecord = 1 << 20

// maxChunks caps the chunk entries of one body past MaxRecord: an endless
// stream still passes whole, but its recording stops growing. Reads past
// the cap join the last entry, which takes their time: the body's last
// byte keeps its arrival.
const maxChunks = 4096

// Recorder makes the parts of an exchange safe and bounded.
type Recorder struct {
	// MaxRecord caps the recorded bytes of each body; 0 means
	// DefaultMaxRecord.
	MaxRecord int64
	// Redactor hides keys; nil means a Redactor that knows no key in
	// advance (it still learns every key it sees in an Authorization
	// header).
	Redactor *Redactor
	// SpillDir, when set, is the directory where a body past
	// SpillThreshold recorded bytes spills (keys hidden first): the caller
	// creates it and removes it at the end. "" keeps bodies in memory.
	SpillDir string
	// SpillThreshold is the recorded bytes of a body held in memory before
	// it spills; 0 means DefaultSpillThreshold.
	SpillThreshold int64
}

// DefaultSpillThreshold is the default SpillThreshold.
const DefaultSpillThreshold = 64 << 10

// spillChunks caps the chunk entries a body holds in memory before it
// spills, so a stream of tiny chunks is bounded too.
const spillChunks = 1024

func (rc *Recorder) spillThreshold() int64 {
	if rc.SpillThreshold <= 0 {
		return DefaultSpillThreshold
	}
	return rc.SpillThreshold
}

// NewRecorder returns a Recorder.
func NewRecorder(maxRecord int64, r *Redactor) *Recorder {
	if maxRecord <= 0 {
		maxRecord = DefaultMaxRecord
	}
	if r == nil {
		r = NewRedactor()
	}
	return &Recorder{MaxRecord: maxRecord, Redactor: r}
}

// Header returns a copy of h as a recording keeps it: Authorization as the
// key's ID or shape, cookies dropped, the values of hidden headers
// (DefaultHidden, Redactor.Hide) as Hidden, keys hidden in every other
// value and name. The keys of Authorization headers and the values of
// hidden ones are learnt first, so what is recorded later in the exchange
// has them hidden too.
func (rc *Recorder) Header(h http.Header) http.Header {
	out := make(http.Header, len(h))
	for name, vs := range h {
		switch {
		case http.CanonicalHeaderKey(name) == "Authorization", http.CanonicalHeaderKey(name) == "Proxy-Authorization":
			for _, v := range vs {
				rc.Redactor.Learn(v)
			}
		case rc.Redactor.hides(name):
			for _, v := range vs {
				rc.Redactor.learnCredential(v)
			}
		}
	}
	for name, vs := range h {
		switch {
		case http.CanonicalHeaderKey(name) == "Authorization", http.CanonicalHeaderKey(name) == "Proxy-Authorization":
			out[name] = []string{AuthValue(vs)}
		case http.CanonicalHeaderKey(name) == "Cookie", http.CanonicalHeaderKey(name) == "Set-Cookie":
			out[name] = []string{"[cookie not recorded]"}
		case rc.Redactor.hides(name):
			cp := make([]string, len(vs))
			for i, v := range vs {
				cp[i] = Hidden
				if a, id := ClassifyAuth([]string{v}); a == AuthWellFormed {
					cp[i] = authKeyPrefix + id + "]"
				}
			}
			out[name] = cp
		default:
			cp := make([]string, len(vs))
			for i, v := range vs {
				cp[i] = rc.Redactor.RedactString(v)
			}
			name = rc.Redactor.RedactString(name)
			out[name] = append(out[name], cp...)
		}
	}
	return out
}

// Method returns a request's method with keys hidden (a method is any
// token, a key's shape included).
func (rc *Recorder) Method(m string) string { return rc.Redactor.RedactString(m) }

// URL returns u with keys hidden, as it stands and once decoded (a key
// percent-encoded in a query value or a path), the values of hidden query
// parameters as Hidden and the password of its user information dropped.
// Call it after Header, so the request's own key is known. A URL that
// holds nothing to hide is returned byte for byte.
func (rc *Recorder) URL(raw string) string {
	s := rc.Redactor.RedactString(raw)
	u, err := url.Parse(s)
	if err != nil {
		return s
	}
	changed := false
	if _, has := u.User.Password(); has {
		u.User, changed = url.UserPassword(u.User.Username(), Hidden), true
	}
	if p := rc.Redactor.RedactString(u.Path); p != u.Path {
		u.Path, u.RawPath, changed = p, "", true
	}
	if q := rc.Redactor.hiddenQuery(u.RawQuery); q != u.RawQuery {
		u.RawQuery, changed = q, true
	}
	if !changed {
		return s
	}
	return u.String()
}

// BodyRecorder records one body as it passes. It is not safe for concurrent
// use: one goroutine reads a body.
//
// Keys are hidden in the body's text as a whole, across its chunks: a key
// that arrives a byte at a time is hidden as one sent whole (Finish).
//
// With Recorder.SpillDir set, a body holds at most SpillThreshold recorded
// bytes (and spillChunks chunk entries) in memory, beside the tail whose
// redaction what comes next could change (Redactor.holdTail): past that its chunks,
// keys already hidden, go to a temporary file in SpillDir, read back by
// Finish.
type BodyRecorder struct {
	rc    *Recorder
	start time.Time
	body  Body // body.Chunks holds the chunks not spilled, keys not yet hidden
	kept  int64
	held  int64 // recorded bytes in body.Chunks
	hash  hash.Hash
	spill *spillFile
	// retry is the held bytes from which a spill is tried again after one
	// that could move nothing out (a tail that may still be a key).
	retry int64
	done  bool // Finish was called: Add records nothing more
}

// Body returns a recorder for a body of the exchange that started at start.
func (rc *Recorder) Body(start time.Time) *BodyRecorder {
	return &BodyRecorder{rc: rc, start: start, body: Body{Timed: true}, hash: sha256.New()}
}

// Add records p, which arrived at t. It copies what it keeps; after Finish
// it records nothing.
func (br *BodyRecorder) Add(p []byte, t time.Time) {
	if len(p) == 0 || br.done {
		return
	}
	br.body.Size += int64(len(p))
	br.hash.Write(p)
	keep := min(int64(len(p)), br.rc.MaxRecord-br.kept)
	if keep < int64(len(p)) {
		br.body.Truncated = true
	}
	if keep <= 0 && br.chunks() >= maxChunks {
		if n := len(br.body.Chunks); n > 0 {
			last := &br.body.Chunks[n-1]
			last.At, last.Size = t.Sub(br.start), last.Size+len(p)
			return
		}
	}
	c := Chunk{At: t.Sub(br.start), Size: len(p)}
	if keep > 0 {
		c.Data = append([]byte(nil), p[:keep]...)
		br.kept += keep
		br.held += keep
	}
	br.body.Chunks = append(br.body.Chunks, c)
	if br.rc.SpillDir != "" && (br.held > max(br.rc.spillThreshold(), br.retry) || len(br.body.Chunks) >= spillChunks) {
		br.spillHeld()
	}
}

// chunks counts the chunk entries recorded so far, spilled or not.
func (br *BodyRecorder) chunks() int {
	n := len(br.body.Chunks)
	if br.spill != nil {
		n += br.spill.n
	}
	return n
}

// spillHeld moves the chunks held in memory to the spill file, keys hidden
// first, but for the tail whose redaction what comes next could change
// (holdTail). When the file cannot be written the body keeps what it holds
// and records no more bytes (it is marked truncated), so memory stays
// bounded.
func (br *BodyRecorder) spillHeld() {
	if br.spill == nil {
		br.spill = &spillFile{}
	}
	if br.spill.err == nil {
		final := br.kept >= br.rc.MaxRecord // no more bytes will be recorded
		n, chunks, skip := br.rc.Redactor.release(br.body.Chunks, final)
		if final && n > 1 && chunks[n-1].Data == nil {
			// The last entry stays for the reads past maxChunks to join.
			n--
			chunks = chunks[:n]
		}
		if n == 0 {
			// Nothing can go yet: try again once the threshold's worth
			// more is held (or the chunk entries are many).
			br.retry = br.held + br.rc.spillThreshold()
			return
		}
		br.spill.write(br.rc.SpillDir, chunks)
		if br.spill.err == nil {
			br.body.Chunks = dropData(slices.Clone(br.body.Chunks[n:]), skip)
			br.held, br.retry = dataLen(br.body.Chunks), 0
			return
		}
	}
	br.kept = br.rc.MaxRecord // record times and sizes only from now on
}

// dropData drops the first n bytes of the chunks' data (a span hidden in
// the chunks before them covers them).
func dropData(chunks []Chunk, n int) []Chunk {
	for i := 0; n > 0 && i < len(chunks); i++ {
		d := min(n, len(chunks[i].Data))
		if chunks[i].Data != nil {
			chunks[i].Data = chunks[i].Data[d:]
		}
		n -= d
	}
	return chunks
}

// dataLen is the recorded bytes of chunks.
func dataLen(chunks []Chunk) int64 {
	var n int64
	for _, c := range chunks {
		n += int64(len(c.Data))
	}
	return n
}

// Finish returns the recorded body, keys hidden in its text as a whole
// (Redactor.Chunks), and removes its spill file.
func (br *BodyRecorder) Finish() Body {
	b := br.body
	b.SHA256 = hex.EncodeToString(br.hash.Sum(nil))
	b.Chunks = br.rc.Redactor.Chunks(b.Chunks)
	if br.spill != nil {
		spilled, err := br.spill.readAll()
		if err != nil {
			b.Truncated = true // what the file held is lost; what passed is still counted
		}
		b.Chunks = append(spilled, b.Chunks...)
		br.spill = nil
	}
	br.body, br.done = Body{}, true
	return b
}

// StripBodies returns x with every body reduced to lengths, chunk timings and
// hashes (--redact-bodies).
func StripBodies(x Exchange) Exchange {
	x.Request.Body = stripBody(x.Request.Body)
	if x.Response != nil {
		r := *x.Response
		r.Body = stripBody(r.Body)
		x.Response = &r
	}
	return x
}

func stripBody(b Body) Body {
	b.Redacted = true
	cs := make([]Chunk, len(b.Chunks))
	for i, c := range b.Chunks {
		cs[i] = Chunk{At: c.At, Size: c.Size}
	}
	b.Chunks = cs
	return b
}
