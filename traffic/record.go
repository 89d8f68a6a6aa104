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
// key's ID or shape, cookies dropped, keys hidden in every other value. The
// keys of Authorization headers are learnt first, so a body recorded later
// in the exchange has them hidden too.
func (rc *Recorder) Header(h http.Header) http.Header {
	out := make(http.Header, len(h))
	for name, vs := range h {
		switch http.CanonicalHeaderKey(name) {
		case "Authorization", "Proxy-Authorization":
			for _, v := range vs {
				rc.Redactor.Learn(v)
			}
			out[name] = []string{AuthValue(vs)}
		case "Cookie", "Set-Cookie":
			out[name] = []string{"[cookie not recorded]"}
		default:
			cp := make([]string, len(vs))
			for i, v := range vs {
				cp[i] = rc.Redactor.RedactString(v)
			}
			out[name] = cp
		}
	}
	return out
}

// URL returns u with keys hidden.
func (rc *Recorder) URL(u string) string { return rc.Redactor.RedactString(u) }

// BodyRecorder records one body as it passes. It is not safe for concurrent
// use: one goroutine reads a body.
//
// With Recorder.SpillDir set, a body holds at most SpillThreshold recorded
// bytes (and spillChunks chunk entries) in memory: past that its chunks, keys
// already hidden, go to a temporary file in SpillDir, read back by Finish.
type BodyRecorder struct {
	rc    *Recorder
	start time.Time
	body  Body // body.Chunks holds the chunks not spilled
	kept  int64
	held  int64 // recorded bytes in body.Chunks
	hash  hash.Hash
	spill *spillFile
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
		return
	}
	c := Chunk{At: t.Sub(br.start), Size: len(p)}
	if keep > 0 {
		c.Data = append([]byte(nil), p[:keep]...)
		br.kept += keep
		br.held += keep
	}
	br.body.Chunks = append(br.body.Chunks, c)
	if br.rc.SpillDir != "" && (br.held > br.rc.spillThreshold() || len(br.body.Chunks) >= spillChunks) {
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
// first. When the file cannot be written the body keeps what it holds and
// records no more bytes (it is marked truncated), so memory stays bounded.
func (br *BodyRecorder) spillHeld() {
	if br.spill == nil {
		br.spill = &spillFile{}
	}
	if br.spill.err == nil {
		for i := range br.body.Chunks {
			if br.body.Chunks[i].Data != nil {
				br.body.Chunks[i].Data = br.rc.Redactor.Redact(br.body.Chunks[i].Data)
			}
		}
		br.spill.write(br.rc.SpillDir, br.body.Chunks)
	}
	if br.spill.err != nil {
		br.kept = br.rc.MaxRecord // record times and sizes only from now on
		return
	}
	br.body.Chunks, br.held = nil, 0
}

// Finish returns the recorded body, keys hidden chunk by chunk, and removes
// its spill file. A key split across two chunks loses its whole form but not
// its pieces: each piece of its secret from profile.FragmentMin characters
// on is still hidden.
func (br *BodyRecorder) Finish() Body {
	b := br.body
	b.SHA256 = hex.EncodeToString(br.hash.Sum(nil))
	for i := range b.Chunks {
		if b.Chunks[i].Data != nil {
			b.Chunks[i].Data = br.rc.Redactor.Redact(b.Chunks[i].Data)
		}
	}
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
