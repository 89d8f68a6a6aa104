package traffic

import (
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"net/http"
	"time"
)

// DefaultMaxRecord is the default cap on the recorded bytes of one body.
const DefaultMaxRecord = 1 << 20

// maxChunks caps the chunk entries of one body past MaxRecord: an endless
// stream still passes whole, but its recording stops growing.
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
// key's ID or shape, cookies dropped, keys hidden in every other value. The
// keys of Authorization headers are learnt first, so a body recorded later
// in the exchange has them hidden too. With KeepKeys it is a copy of h.
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
		switch http.CanonicalHeaderKey(name) {
		case "Authorization", "Proxy-Authorization":
			for _, v := range vs {
				red.Learn(v)
			}
			out[name] = []string{AuthValue(vs)}
		case "Cookie", "Set-Cookie":
			out[name] = []string{"[cookie not recorded]"}
		default:
			cp := make([]string, len(vs))
			for i, v := range vs {
				cp[i] = red.RedactString(v)
			}
			out[name] = cp
		}
	}
	return out
}

// URL returns u with keys hidden (u itself with KeepKeys).
func (rc *Recorder) URL(u string) string {
	if rc.KeepKeys {
		return u
	}
	return rc.redactor().RedactString(u)
}

// BodyRecorder records one body as it passes. It is not safe for concurrent
// use: one goroutine reads a body.
//
// The bytes it keeps in memory lie end to end in one buffer, and the chunks
// it returns are pieces of that buffer, so a recorded body costs its bytes
// once (Body.Bytes returns the buffer itself).
//
// With Recorder.SpillDir set, a body holds at most SpillThreshold recorded
// bytes (and spillChunks chunk entries) in memory: past that its chunks, keys
// already hidden, go to a temporary file in SpillDir, read back by Finish.
type BodyRecorder struct {
	rc    *Recorder
	start time.Time
	body  Body        // the body's facts; body.Chunks is unused until Finish
	held  []heldChunk // the chunks held in memory, not spilled
	buf   []byte      // the recorded bytes of held, end to end
	kept  int64
	hash  hash.Hash
	spill *spillFile
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
	if keep <= 0 && br.chunks() >= maxChunks {
		return
	}
	c := heldChunk{at: at, size: len(p), off: -1}
	if keep > 0 {
		c.off, c.n = len(br.buf), int(keep)
		br.buf = append(br.buf, p[:keep]...)
		br.kept += keep
	}
	br.held = append(br.held, c)
	if br.rc.SpillDir != "" && (int64(len(br.buf)) > br.rc.spillThreshold() || len(br.held) >= spillChunks) {
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

// hideKeys returns chunks with keys hidden chunk by chunk (a chunk that held
// none is left as it is), unless the Recorder keeps keys.
func (br *BodyRecorder) hideKeys(chunks []Chunk) []Chunk {
	if br.rc.KeepKeys {
		return chunks
	}
	red := br.rc.redactor()
	for i := range chunks {
		if chunks[i].Data != nil {
			chunks[i].Data = red.Redact(chunks[i].Data)
		}
	}
	return chunks
}

// spillHeld moves the chunks held in memory to the spill file, keys hidden
// first. When the file cannot be written the body keeps what it holds and
// records no more bytes (it is marked truncated), so memory stays bounded.
func (br *BodyRecorder) spillHeld() {
	if br.spill == nil {
		br.spill = &spillFile{}
	}
	if br.spill.err == nil {
		br.spill.write(br.rc.SpillDir, br.hideKeys(br.chunksHeld()))
	}
	if br.spill.err != nil {
		br.kept = br.rc.maxRecord() // record times and sizes only from now on
		return
	}
	br.held, br.buf = nil, nil
}

// Finish returns the recorded body, keys hidden chunk by chunk, and removes
// its spill file. A key split across two chunks loses its whole form but not
// its pieces: each piece of its secret from profile.FragmentMin characters
// on is still hidden.
func (br *BodyRecorder) Finish() Body {
	b := br.body
	b.SHA256 = hex.EncodeToString(br.hash.Sum(nil))
	b.Chunks = br.hideKeys(br.chunksHeld())
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
