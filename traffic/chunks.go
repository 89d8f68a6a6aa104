package traffic

import (
	"strings"

	"github.com/invokeconf/invokeconf/profile"
)

// A body arrives in chunks, and a key can arrive in as many: a service that
// writes it a byte at a time, a read that ends inside it, a cut at
// MaxRecord, a spill. Each chunk redacted on its own would keep every piece
// shorter than profile.FragmentMin, and those pieces, joined, the key.
// So keys are hidden in the body's text as a whole, and the spans hidden
// are mapped back to the chunks.

// minHeldTail is the least a spill keeps in memory at the end of a body
// (holdTail), beside the longest key and a piece of a secret.
const minHeldTail = 16

// Chunks returns chunks with keys hidden in their data joined (chunks
// without data are left as they are): each hidden span's marker goes to the
// chunk where the span starts, and its bytes in later chunks are dropped
// from them, so the chunks' data joined is the redacted text.
func (r *Redactor) Chunks(chunks []Chunk) []Chunk {
	text := joinData(chunks)
	spans, _ := r.spans(text)
	return applyToChunks(chunks, spans)
}

// release returns how many of the leading chunks can be redacted now, for
// good, those chunks redacted, and how many bytes of the chunks after them
// a span released with them hides (the caller drops those bytes): all the
// chunks when final (no byte will follow), else those before the tail that
// must stay (holdTail). It changes nothing in chunks.
func (r *Redactor) release(chunks []Chunk, final bool) (n int, done []Chunk, skip int) {
	if final {
		return len(chunks), r.Chunks(chunks), 0
	}
	text := joinData(chunks)
	spans, hold := r.spans(text)
	cut := r.holdTail(text, spans, hold)
	// Back to a chunk boundary that leaves the text before it whole: not
	// right after a backslash, nor between a span and what decided it (a
	// span it falls inside goes with the chunks before, whole).
	off := 0
	for {
		n, off = 0, 0
		for n < len(chunks) && off+len(chunks[n].Data) <= cut {
			off += len(chunks[n].Data)
			n++
		}
		back := off
		if off > 0 && text[off-1] == '\\' {
			back = off - 1
		}
		for _, sp := range spans {
			if sp.From < off && off <= sp.Start {
				back = min(back, sp.From)
			}
		}
		if back == off {
			break
		}
		cut = back
	}
	if n == 0 {
		return 0, nil, 0
	}
	var before []profile.Span
	for _, sp := range spans {
		if sp.Start >= off {
			break
		}
		before = append(before, sp)
		skip = max(sp.End-off, 0) // a span the cut does not cut ends before it
	}
	return n, applyToChunks(chunks[:n], before), skip
}

// holdTail returns where the tail of text begins that must stay unredacted
// in memory, because bytes that follow could change how it is redacted: the
// longest key's bytes and a piece's (so a key, or a key's public part and
// its secret's length, that starts before it ends in text), or from hold
// (a hidden value may follow), moved back out of any span it cuts (and
// what decided it: Span.From) and before the backslashes it follows. Spans that end before it are what they
// would be with every byte that follows.
func (r *Redactor) holdTail(text string, spans []profile.Span, hold int) int {
	r.mu.Lock()
	pr := r.r
	r.mu.Unlock()
	cut := min(len(text)-max(minHeldTail, pr.MaxLen())-profile.FragmentMin, hold)
	for moved := true; moved && cut > 0; {
		moved = false
		for _, sp := range spans {
			if sp.From < cut && cut < sp.End {
				cut, moved = sp.From, true
			}
		}
		// A backslash says how a quote after it reads (fieldSpans): it
		// stays with what follows.
		for cut > 0 && text[cut-1] == '\\' {
			cut, moved = cut-1, true
		}
	}
	return max(cut, 0)
}

// joinData returns the data of chunks joined.
func joinData(chunks []Chunk) string {
	var b strings.Builder
	for _, c := range chunks {
		b.Write(c.Data)
	}
	return b.String()
}

// applyToChunks replaces the spans (of the chunks' data joined; in order,
// apart, none empty) chunk by chunk: a span's marker in the chunk where it
// starts, its bytes dropped wherever they are. A chunk a span does not touch
// keeps its data.
func applyToChunks(chunks []Chunk, spans []profile.Span) []Chunk {
	out := make([]Chunk, len(chunks))
	copy(out, chunks)
	if len(spans) == 0 {
		return out
	}
	si, off := 0, 0
	for i, c := range chunks {
		if c.Data == nil {
			continue
		}
		end := off + len(c.Data)
		for si < len(spans) && spans[si].End <= off {
			si++
		}
		if si == len(spans) || spans[si].Start >= end {
			off = end
			continue
		}
		d := []byte{}
		pos := off
		for j := si; j < len(spans) && spans[j].Start < end; j++ {
			sp := spans[j]
			if sp.Start > pos {
				d = append(d, c.Data[pos-off:sp.Start-off]...)
			}
			if sp.Start >= off {
				d = append(d, sp.With...)
			}
			pos = max(pos, min(sp.End, end))
		}
		if pos < end {
			d = append(d, c.Data[pos-off:]...)
		}
		out[i].Data = d
		off = end
	}
	return out
}
