package checks

import (
	"encoding/json"
	"strings"
	"time"
)

// Content at any granularity. "Concatenating content across events gives
// the answer": a service may split the agent's text into events anywhere,
// inside a word or a character (a JSON string may end on the first half of
// a UTF-16 surrogate pair, written \ud83d, and the next event's begin with
// the second), and join what the agent produced at once. The answer is read
// by joining the events' content as JSON text and decoding it once, so a
// character split across events is whole again; nothing reads one event's
// content as a unit of the agent's text.

// JoinContent returns the answer events carry, from their content members
// as written (JSON strings; null or missing count as empty): their text
// joined, then decoded, so a character split across events is whole again.
func JoinContent(raws []json.RawMessage) string { return joinContent(raws) }

// Joiner joins content members one event at a time, for a client that
// reads a stream as it arrives. The zero value is empty and ready.
type Joiner struct{ j joiner }

// Add adds the next event's content member as written.
func (j *Joiner) Add(raw json.RawMessage) { j.j.add(raw) }

// Text returns the answer so far: a character whose first part arrived
// waits for the rest.
func (j *Joiner) Text() string { return j.j.out.String() }

// joinContent returns the answer of events' content members (JSON strings;
// null or missing count as empty): their text joined, then decoded.
func joinContent(raws []json.RawMessage) string {
	var j joiner
	for _, raw := range raws {
		j.add(raw)
	}
	return j.text()
}

// joiner decodes content members one after another as one JSON string: a
// member's text that ends inside a character (the first half of an
// escaped surrogate pair, or the first bytes of a UTF-8 sequence) waits for
// the next member's.
type joiner struct {
	out   strings.Builder
	carry []byte // the undecoded end of the members so far
}

// add decodes one member's text onto the answer.
func (j *joiner) add(raw json.RawMessage) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		if len(raw) > 0 && string(raw) != "null" {
			var one string // not a string: decoded alone, as far as it goes
			_ = json.Unmarshal(raw, &one)
			j.flush()
			j.out.WriteString(one)
		}
		return
	}
	j.carry = append(j.carry, raw[1:len(raw)-1]...)
	cut := safeEnd(j.carry)
	j.decode(j.carry[:cut])
	j.carry = append(j.carry[:0], j.carry[cut:]...)
}

// text returns the answer, what waits decoded as it is.
func (j *joiner) text() string {
	j.flush()
	return j.out.String()
}

func (j *joiner) flush() {
	j.decode(j.carry)
	j.carry = j.carry[:0]
}

// decode appends the JSON string text inner (without quotes) decoded.
func (j *joiner) decode(inner []byte) {
	if len(inner) == 0 {
		return
	}
	var s string
	if json.Unmarshal(append(append([]byte{'"'}, inner...), '"'), &s) == nil {
		j.out.WriteString(s)
	}
}

// safeEnd returns how much of a JSON string's inner text can be decoded
// now: all but a trailing escaped high surrogate (\uD800-\uDBFF) or a
// trailing incomplete UTF-8 sequence.
func safeEnd(b []byte) int {
	n := len(b)
	if n >= 6 && b[n-6] == '\\' && (b[n-5] == 'u' || b[n-5] == 'U') && !escaped(b, n-6) {
		if h := strings.ToLower(string(b[n-4 : n-2])); h >= "d8" && h <= "db" {
			return n - 6
		}
	}
	// A UTF-8 sequence cut short: its lead byte within the last 3.
	for k := 1; k <= 3 && k <= n; k++ {
		c := b[n-k]
		if c < 0x80 {
			break
		}
		if c >= 0xC0 { // a lead byte
			need := 2
			switch {
			case c >= 0xF0:
				need = 4
			case c >= 0xE0:
				need = 3
			}
			if k < need {
				return n - k
			}
			break
		}
	}
	return n
}

// escaped reports whether the backslash at i is itself escaped (an odd run
// of backslashes before it).
func escaped(b []byte, i int) bool {
	n := 0
	for k := i - 1; k >= 0 && b[k] == '\\'; k-- {
		n++
	}
	return n%2 == 1
}

// Piece is a part of an answer as it arrived: the text one event (or one
// read of a plain-text body) added, and when.
type Piece struct {
	// Start and End are its byte offsets in the answer.
	Start, End int
	// At is when it arrived, from the request's start; -1 when untimed.
	At time.Duration
}

// answerParse is a View's answer.
type answerParse struct {
	text   string
	pieces []Piece
	ok     bool
}

// Answer returns the agent's answer the response carries, as a client reads
// it: the content of an SSE stream's complete event frames, or of an
// envelope's items, joined (joinContent); a plain-text body as it is. Each
// piece says where in the answer an event (or a read of plain text) put its
// text and when it arrived. ok is false for an answer that is none of these
// (an async acknowledgement, an error).
func (v *View) Answer() (text string, pieces []Piece, ok bool) {
	p := v.answer.get(v, "answer", func() answerParse { return parseAnswer(v) })
	return p.text, p.pieces, p.ok
}

func parseAnswer(v *View) answerParse {
	if v.Response == nil {
		return answerParse{}
	}
	var raws []json.RawMessage
	var ats []time.Duration
	switch {
	case looksSSE(v):
		for _, f := range v.Frames() {
			if !f.Terminated || !isEventFrame(f.Frame) || f.obj == nil {
				continue
			}
			raws, ats = append(raws, f.obj["content"]), append(ats, f.At)
		}
	case surelyEnvelope(v) || FormOf(v) == FormJSON:
		items, ok := v.envelopeItems()
		if !ok {
			return answerParse{}
		}
		for _, it := range items {
			if it.obj != nil {
				raws, ats = append(raws, it.obj["content"]), append(ats, -1)
			}
		}
	default:
		if v.Response.Status/100 != 2 {
			return answerParse{}
		}
		if inv, ok := InvokeOf(v); ok && inv.Async {
			return answerParse{}
		}
		// Plain text: the body is the answer; each chunk a piece.
		out := answerParse{text: string(v.Body()), ok: true}
		off := 0
		for _, c := range v.Response.Body.Chunks {
			at := c.At
			if !v.Response.Body.Timed {
				at = -1
			}
			out.pieces = append(out.pieces, Piece{Start: off, End: off + len(c.Data), At: at})
			off += len(c.Data)
		}
		return out
	}
	// Each piece ends where the answer of the events up to it ends.
	var j joiner
	prev := 0
	var pieces []Piece
	for i, raw := range raws {
		j.add(raw)
		if end := j.out.Len(); end > prev {
			pieces = append(pieces, Piece{Start: prev, End: end, At: ats[i]})
			prev = end
		}
	}
	text := j.text()
	if len(text) > prev && len(ats) > 0 {
		pieces = append(pieces, Piece{Start: prev, End: len(text), At: ats[len(ats)-1]})
	}
	return answerParse{text: text, pieces: pieces, ok: true}
}

// ArrivalOf returns when the answer's text up to byte end had arrived (the
// piece that completed it); ok is false when it never did or is untimed.
func ArrivalOf(pieces []Piece, end int) (time.Duration, bool) {
	for _, p := range pieces {
		if p.End >= end {
			return p.At, p.At >= 0
		}
	}
	return 0, false
}

// BeganAt returns when the answer's byte at offset start arrived (the piece
// holding it).
func BeganAt(pieces []Piece, start int) (time.Duration, bool) {
	for _, p := range pieces {
		if p.Start <= start && start < p.End {
			return p.At, p.At >= 0
		}
	}
	return 0, false
}
