package traffic

import (
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"net/http"
	"net/url"
	"time"
)

// DefaultMaxRecord is the default cap on the recorded bytes of one body.
const DefaultMaxRecord = 1 << 20

// maxChunks caps the chunk entries of one body past MaxRecord: an endless
// stream still passes whole, but its recording stops growing. Reads past
// the cap join the last entry, which takes their time: the body's last
// byte keeps its arrival.
const maxChunks = 4096

// Recorder makes the parts of an exchange safe and bounded. The proxy
// records its clients' traffic with one, and the active suite its own (with
// KeepKeys): one way to record an exchange.
type Recorder struct {
	// MaxRecord caps the recorded bytes of each body; 0 means
	// DefaultMaxRecord.
	MaxRecord int64
	// Redactor hides keys; nil means a Redactor that knows no key in
	// advance (it still learns every key it sees in an Authorization
	// header).
	Redactor *Redactor
	// KeepKeys records headers, URLs and bodies as they passed, keys
	// included: for a harness that judges its own traffic in memory and
	// redacts whatever it writes out (reports, evidence). Hiding a piece of
	// a secret could change what a check reads.
	KeepKeys bool
	// Grain, when set, joins a piece of a body that arrives less than Grain
	// after the chunk before it to that chunk, so a service that sends a
	// byte at a time cannot grow a recording's chunk list without bound:
	// timing rules have tolerances of tens of milliseconds. 0 keeps every
	// piece a chunk of its own.
	Grain time.Duration
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

// maxRecord is MaxRecord, DefaultMaxRecord when unset.
func (rc *Recorder) maxRecord() int64 {
	if rc.MaxRecord <= 0 {
		return DefaultMaxRecord
	}
	return rc.MaxRecord
}

// redactor is Redactor, a new one when unset.
func (rc *Recorder) redactor() *Redactor {
	if rc.Redactor == nil {
		rc.Redactor = NewRedactor()
	}
	return rc.Redactor
}

// Header returns a copy of h as a recording keeps it: Authorization as the
// key's ID or shape, cookies dropped, the values of hidden headers
// (DefaultHidden, Redactor.Hide) as Hidden, keys hidden in every other
// value and name. The keys of Authorization headers and the values of
// hidden ones are learnt first, so what is recorded later in the exchange
// has them hidden too. With KeepKeys it is a copy of h.
func (rc *Recorder) Header(h http.Header) http.Header {
	if rc.KeepKeys {
		if h == nil {
			return http.Header{}
		}
		return h.Clone()
	}
	red := rc.redactor()
	out := make(http.Header, len(h))
	for name, vs := range h {
		switch {
		case http.CanonicalHeaderKey(name) == "Authorization", http.CanonicalHeaderKey(name) == "Proxy-Authorization":
			for _, v := range vs {
				red.Learn(v)
			}
		case red.hides(name):
			for _, v := range vs {
				red.learnCredential(v)
			}
		}
	}
	for name, vs := range h {
		switch {
		case http.CanonicalHeaderKey(name) == "Authorization", http.CanonicalHeaderKey(name) == "Proxy-Authorization":
			out[name] = []string{AuthValue(vs)}
		case http.CanonicalHeaderKey(name) == "Cookie", http.CanonicalHeaderKey(name) == "Set-Cookie":
			out[name] = []string{"[cookie not recorded]"}
		case red.hides(name):
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
				cp[i] = red.RedactString(v)
			}
			name = red.RedactString(name)
			out[name] = append(out[name], cp...)
		}
	}
	return out
}

// Method returns a request's method with keys hidden (a method is any
// token, a key's shape included); m itself with KeepKeys.
func (rc *Recorder) Method(m string) string {
	if rc.KeepKeys {
		return m
	}
	return rc.redactor().RedactString(m)
}

// URL returns u with keys hidden, as it stands and once decoded (a key
// percent-encoded in a query value or a path), the values of hidden query
// parameters as Hidden and the password of its user information dropped
// (raw itself with KeepKeys). Call it after Header, so the request's own
// key is known. A URL that holds nothing to hide is returned byte for byte.
func (rc *Recorder) URL(raw string) string {
	if rc.KeepKeys {
		return raw
	}
	red := rc.redactor()
	s := red.RedactString(raw)
	u, err := url.Parse(s)
	if err != nil {
		return s
	}
	changed := false
	if _, has := u.User.Password(); has {
		u.User, changed = url.UserPassword(u.User.Username(), Hidden), true
	}
	if p := red.RedactString(u.Path); p != u.Path {
		u.Path, u.RawPath, changed = p, "", true
	}
	if q := red.hiddenQuery(u.RawQuery); q != u.RawQuery {
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
// The bytes it keeps in memory lie end to end in one buffer, and the chunks
// it returns are pieces of that buffer, so a recorded body costs its bytes
// once (Body.Bytes returns the buffer itself).
//
// Keys are hidden in the body's text as a whole, across its chunks: a key
// that arrives a byte at a time is hidden as one sent whole (Finish).
//
// With Recorder.SpillDir set, a body holds at most SpillThreshold recorded
// bytes (and spillChunks chunk entries) in memory, beside the tail whose
// redaction what comes next could change (Redactor.holdTail): past that its
// chunks, keys already hidden, go to a temporary file in SpillDir, read
// back by Finish.
type BodyRecorder struct {
	rc    *Recorder
	start time.Time
	body  Body        // the body's facts; body.Chunks is unused until Finish
	held  []heldChunk // the chunks held in memory, not spilled
	buf   []byte      // the recorded bytes of held, end to end
	kept  int64
	hash  hash.Hash
	spill *spillFile
	// retry is the held bytes from which a spill is tried again after one
	// that could move nothing out (a tail that may still be a key).
	retry int64
	done  bool // Finish was called: Add records nothing more
}

// heldChunk is a chunk held in memory: its data is buf[off:off+n], or none
// when off is -1.
type heldChunk struct {
	at     time.Duration
	size   int
	off, n int
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
	keep := min(int64(len(p)), br.rc.maxRecord()-br.kept)
	if keep < int64(len(p)) {
		br.body.Truncated = true
	}
	at := t.Sub(br.start)
	if br.join(at, p, keep) {
		return
	}
	if keep <= 0 && br.chunks() >= maxChunks && len(br.held) > 0 {
		last := &br.held[len(br.held)-1]
		last.at, last.size = at, last.size+len(p)
		return
	}
	c := heldChunk{at: at, size: len(p), off: -1}
	if keep > 0 {
		c.off, c.n = len(br.buf), int(keep)
		br.buf = append(br.buf, p[:keep]...)
		br.kept += keep
	}
	br.held = append(br.held, c)
	if br.rc.SpillDir != "" && (int64(len(br.buf)) > max(br.rc.spillThreshold(), br.retry) || len(br.held) >= spillChunks) {
		br.spillHeld()
	}
}

// join adds a piece to the last chunk held when it arrived within the
// Recorder's Grain of it and its kept bytes would follow the chunk's own.
func (br *BodyRecorder) join(at time.Duration, p []byte, keep int64) bool {
	if br.rc.Grain <= 0 || len(br.held) == 0 {
		return false
	}
	last := &br.held[len(br.held)-1]
	if at-last.at >= br.rc.Grain {
		return false
	}
	switch {
	case keep > 0 && last.off >= 0 && last.off+last.n == len(br.buf):
		br.buf = append(br.buf, p[:keep]...)
		last.n += int(keep)
		br.kept += keep
	case keep <= 0 && last.off < 0:
	default:
		return false
	}
	last.size += len(p)
	return true
}

// chunks counts the chunk entries recorded so far, spilled or not.
func (br *BodyRecorder) chunks() int {
	n := len(br.held)
	if br.spill != nil {
		n += br.spill.n
	}
	return n
}

// Bytes returns the recorded bytes held in memory, end to end: the whole
// recorded body so far when nothing spilled. The caller must not modify
// them; they are valid until the next Add.
func (br *BodyRecorder) Bytes() []byte { return br.buf }

// chunksHeld returns the chunks held in memory, their data pieces of buf
// (each with the rest of buf as its capacity: Body.Bytes finds them end to
// end in one array and joins them without copying).
func (br *BodyRecorder) chunksHeld() []Chunk {
	out := make([]Chunk, len(br.held))
	for i, c := range br.held {
		out[i] = Chunk{At: c.at, Size: c.size}
		if c.off >= 0 {
			out[i].Data = br.buf[c.off : c.off+c.n]
		}
	}
	return out
}

// redacted returns chunks with keys hidden in their data as a whole
// (Redactor.Chunks), unless the Recorder keeps keys.
func (br *BodyRecorder) redacted(chunks []Chunk) []Chunk {
	if br.rc.KeepKeys {
		return chunks
	}
	return br.rc.redactor().Chunks(chunks)
}

// spillHeld moves the chunks held in memory to the spill file, keys hidden
// first, but for the tail whose redaction what comes next could change
// (Redactor.holdTail). When the file cannot be written the body keeps what
// it holds and records no more bytes (it is marked truncated), so memory
// stays bounded.
func (br *BodyRecorder) spillHeld() {
	if br.spill == nil {
		br.spill = &spillFile{}
	}
	if br.spill.err == nil {
		final := br.kept >= br.rc.maxRecord() // no more bytes will be recorded
		held := br.chunksHeld()
		n, chunks, skip := len(held), held, 0
		if !br.rc.KeepKeys {
			n, chunks, skip = br.rc.redactor().release(held, final)
		}
		if final && n > 1 && chunks[n-1].Data == nil {
			// The last entry stays for the reads past maxChunks to join.
			n--
			chunks = chunks[:n]
		}
		if n == 0 {
			// Nothing can go yet: try again once the threshold's worth
			// more is held (or the chunk entries are many).
			br.retry = int64(len(br.buf)) + br.rc.spillThreshold()
			return
		}
		br.spill.write(br.rc.SpillDir, chunks)
		if br.spill.err == nil {
			br.keep(n, skip)
			return
		}
	}
	br.kept = br.rc.maxRecord() // record times and sizes only from now on
}

// keep drops the first n chunks held (spilled) and the first skip bytes of
// the data of those after them (a span hidden in the chunks spilled covers
// them), and holds the rest in a buffer of their own.
func (br *BodyRecorder) keep(n, skip int) {
	rest := br.held[n:]
	var buf []byte
	out := make([]heldChunk, len(rest))
	for i, c := range rest {
		out[i] = heldChunk{at: c.at, size: c.size, off: -1}
		if c.off < 0 {
			continue
		}
		d := br.buf[c.off : c.off+c.n]
		drop := min(skip, len(d))
		skip -= drop
		out[i].off, out[i].n = len(buf), len(d)-drop
		buf = append(buf, d[drop:]...)
	}
	br.held, br.buf, br.retry = out, buf, 0
}

// Finish returns the recorded body, keys hidden in its text as a whole
// (Redactor.Chunks), and removes its spill file.
func (br *BodyRecorder) Finish() Body {
	b := br.body
	b.SHA256 = hex.EncodeToString(br.hash.Sum(nil))
	b.Chunks = br.redacted(br.chunksHeld())
	if br.spill != nil {
		spilled, err := br.spill.readAll()
		if err != nil {
			b.Truncated = true // what the file held is lost; what passed is still counted
		}
		b.Chunks = append(spilled, b.Chunks...)
		br.spill = nil
	}
	br.body, br.held, br.buf, br.done = Body{}, nil, nil, true
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
