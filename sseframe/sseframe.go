// Package sseframe splits a server-sent event stream into raw frames, byte for
// byte, so that framing rules can be checked that a conformant SSE parser hides:
// comment lines, the order of fields, the blank line that ends a frame, and
// frames without an id.
//
// A frame is the run of field lines up to a blank line. A comment line is an
// item of its own, wherever it stands, with the offset at which its line
// ended: a keepalive written alone at 20 s is seen at 20 s, not when the next
// frame's blank line arrives. Lines may end in "\n", "\r\n" or "\r", as the
// SSE grammar allows.
//
// Parser reads a stream as its bytes arrive, each byte once, so a caller that
// watches a growing body pays for each new byte only.
package sseframe

import (
	"bytes"
	"io"
	"strings"
)

// Line is one line of a frame, split into field name and value as the SSE
// grammar does: a line starting with ":" is a comment (Name is empty, Value is
// the text after the colon), a line without a colon is a field with an empty
// value, and one space after the colon is dropped.
type Line struct {
	Raw   string
	Name  string
	Value string
	// End is the byte offset just after the line's ending (or after its last
	// byte when the stream ended inside it).
	End int
}

// IsComment reports whether the line is a comment line.
func (l Line) IsComment() bool { return strings.HasPrefix(l.Raw, ":") }

// Frame is the run of field lines up to a blank line, or one comment line.
type Frame struct {
	Lines []Line
	// Terminated is false for a last frame that the stream ended without a
	// blank line after (for a comment: without a line ending).
	Terminated bool
	// End is the byte offset just after the frame's blank line (a comment:
	// after its line; not terminated: after its last byte), so a caller that
	// timed the arrival of bytes can tell when the frame arrived.
	End int
}

// Field returns the frame's value of a field as a conforming parser reads
// it: the data lines joined with LF ("append the field value to the data
// buffer, then append a single U+000A LINE FEED"), for every other field the
// last line's value ("set the event type buffer to the field value" and the
// like overwrite), an id line whose value contains U+0000 being ignored
// ("Otherwise, ignore the field"). ok is false when no line sets it.
func (f Frame) Field(name string) (string, bool) {
	if name == "data" {
		return f.Data()
	}
	v, ok := "", false
	for _, l := range f.Lines {
		if l.IsComment() || l.Name != name || (name == "id" && strings.IndexByte(l.Value, 0) >= 0) {
			continue
		}
		v, ok = l.Value, true
	}
	return v, ok
}

// Data returns the frame's data lines joined with LF, as a conforming parser
// builds its data buffer (the trailing LF removed); ok is false for a frame
// with no data line, which a conforming client dispatches no event for ("If
// the data buffer is an empty string, ... return"). A data line without a
// colon counts: "using the whole line as the field name, and the empty string
// as the field value".
func (f Frame) Data() (string, bool) {
	// One data line (the usual frame) is its own value: no copy of what may
	// be megabytes.
	var one *Line
	for i, l := range f.Lines {
		if l.IsComment() || l.Name != "data" {
			continue
		}
		if one != nil {
			one = nil
			break
		}
		one = &f.Lines[i]
	}
	if one != nil {
		return one.Value, true
	}
	var b strings.Builder
	ok := false
	for _, l := range f.Lines {
		if l.IsComment() || l.Name != "data" {
			continue
		}
		if ok {
			b.WriteByte('\n')
		}
		b.WriteString(l.Value)
		ok = true
	}
	return b.String(), ok
}

// ID returns the frame's last id line without U+0000, the last event ID a
// conforming client keeps for it; ok is false when it has none.
func (f Frame) ID() (string, bool) { return f.Field("id") }

// Type returns the type a conforming client gives the frame's event: its last
// event line's value, or "message" when it has none or that value is empty
// ("If the event type buffer has a value other than the empty string ...
// otherwise message").
func (f Frame) Type() string {
	if t, _ := f.Field("event"); t != "" {
		return t
	}
	return DefaultType
}

// DefaultType is the type of an event whose frame names none.
const DefaultType = "message"

// Dispatches reports whether a conforming client dispatches an event for the
// frame once its blank line arrives: it has a data line. A frame of comments,
// or of id, event, retry or unknown fields only, dispatches nothing.
func (f Frame) Dispatches() bool {
	_, ok := f.Data()
	return ok
}

// IsMessage reports whether the frame dispatches an event of the default type
// (no event line, an empty one, or event: message): the frames that carry the
// service's event objects, as opposed to named ones (start, close).
func (f Frame) IsMessage() bool { return f.Dispatches() && f.Type() == DefaultType }

// KnownField reports whether the SSE grammar gives a field name a meaning:
// event, data, id and retry. "Otherwise: The field is ignored."
func KnownField(name string) bool {
	switch name {
	case "event", "data", "id", "retry":
		return true
	}
	return false
}

// Fields returns the field names of the frame's non-comment lines, in order.
func (f Frame) Fields() []string {
	var names []string
	for _, l := range f.Lines {
		if !l.IsComment() {
			names = append(names, l.Name)
		}
	}
	return names
}

// IsComment reports whether every line of the frame is a comment.
func (f Frame) IsComment() bool {
	for _, l := range f.Lines {
		if !l.IsComment() {
			return false
		}
	}
	return len(f.Lines) > 0
}

// String renders the frame's lines as sent, each followed by "\n".
func (f Frame) String() string {
	var b strings.Builder
	for _, l := range f.Lines {
		b.WriteString(l.Raw)
		b.WriteByte('\n')
	}
	return b.String()
}

// Parser splits a stream into frames as its bytes are fed in.
type Parser struct {
	offset int    // bytes fed so far
	line   []byte // the line being read
	cr     bool   // the last byte ended a line with '\r': a '\n' next belongs to it
	frame  Frame  // the frame being built
	closed bool
	// head holds the stream's first bytes while they may still be a byte
	// order mark; bomDone is set once they are known.
	head    []byte
	bomDone bool
}

// bom is U+FEFF in UTF-8: "One leading U+FEFF BYTE ORDER MARK character
// must be ignored if any are present."
const bom = "\xEF\xBB\xBF"

// Feed parses the next bytes of the stream and calls emit with every frame
// and comment line they complete, in stream order.
func (p *Parser) Feed(b []byte, emit func(Frame)) {
	if !p.bomDone {
		need := bom[len(p.head):]
		n := min(len(need), len(b))
		if string(b[:n]) != need[:n] {
			p.bomDone = true
			held := p.head
			p.head = nil
			p.feed(held, emit) // a proper prefix of the mark: no line ending in it
		} else {
			p.head = append(p.head, b[:n]...)
			b = b[n:]
			if len(p.head) < len(bom) {
				return
			}
			p.bomDone, p.head = true, nil
			p.offset += len(bom)
		}
	}
	p.feed(b, emit)
}

func (p *Parser) feed(b []byte, emit func(Frame)) {
	for len(b) > 0 {
		if p.cr && b[0] == '\n' {
			p.cr = false
			p.offset++
			b = b[1:]
			continue
		}
		p.cr = false
		i := bytes.IndexAny(b, "\r\n")
		if i < 0 {
			p.line = append(p.line, b...)
			p.offset += len(b)
			return
		}
		p.line = append(p.line, b[:i]...)
		p.offset += i + 1
		p.cr = b[i] == '\r'
		b = b[i+1:]
		p.endLine(emit)
	}
}

// endLine handles a line that ended at the current offset.
func (p *Parser) endLine(emit func(Frame)) {
	raw := string(p.line)
	p.line = p.line[:0]
	if raw == "" {
		if len(p.frame.Lines) == 0 {
			return // stray blank line between frames
		}
		p.frame.Terminated, p.frame.End = true, p.offset
		emit(p.frame)
		p.frame = Frame{}
		return
	}
	l := parseLine(raw, p.offset)
	if l.IsComment() {
		emit(Frame{Lines: []Line{l}, Terminated: true, End: p.offset})
		return
	}
	p.frame.Lines = append(p.frame.Lines, l)
}

// Close ends the stream: a line or frame it cut short is emitted with
// Terminated false.
func (p *Parser) Close(emit func(Frame)) {
	if p.closed {
		return
	}
	p.closed = true
	if !p.bomDone {
		p.bomDone = true
		held := p.head
		p.head = nil
		p.feed(held, emit)
	}
	if len(p.line) > 0 {
		l := parseLine(string(p.line), p.offset)
		p.line = nil
		if l.IsComment() {
			emit(Frame{Lines: []Line{l}, End: p.offset})
		} else {
			p.frame.Lines = append(p.frame.Lines, l)
		}
	}
	if len(p.frame.Lines) > 0 {
		p.frame.End = p.offset
		emit(p.frame)
		p.frame = Frame{}
	}
}

// Offset returns the number of bytes fed so far.
func (p *Parser) Offset() int { return p.offset + len(p.head) }

func parseLine(raw string, end int) Line {
	name, value, found := strings.Cut(raw, ":")
	if !found {
		return Line{Raw: raw, Name: raw, End: end}
	}
	return Line{Raw: raw, Name: name, Value: strings.TrimPrefix(value, " "), End: end}
}

// Reader reads frames from a stream.
type Reader struct {
	r       io.Reader
	p       Parser
	pending []Frame
	buf     []byte
	err     error
}

// NewReader returns a Reader that reads frames from r.
func NewReader(r io.Reader) *Reader { return &Reader{r: r, buf: make([]byte, 32<<10)} }

// Next returns the next frame or comment line. At the end of the stream it
// returns io.EOF; a partial last frame is returned first with Terminated
// false.
func (r *Reader) Next() (Frame, error) {
	emit := func(f Frame) { r.pending = append(r.pending, f) }
	for len(r.pending) == 0 {
		if r.err != nil {
			return Frame{}, r.err
		}
		n, err := r.r.Read(r.buf)
		r.p.Feed(r.buf[:n], emit)
		if err != nil {
			r.p.Close(emit)
			r.err = err
		}
	}
	f := r.pending[0]
	r.pending = r.pending[1:]
	return f, nil
}

// ReadAll splits a whole stream into frames and comment lines.
func ReadAll(b []byte) ([]Frame, error) {
	var frames []Frame
	emit := func(f Frame) { frames = append(frames, f) }
	var p Parser
	p.Feed(b, emit)
	p.Close(emit)
	return frames, nil
}

// Event is an event a conforming client dispatches.
type Event struct {
	// Type is the event's type ("message" unless the frame names another).
	Type string
	// Data is the frame's data lines joined with LF.
	Data string
	// LastEventID is the client's last event ID when the event is
	// dispatched: the frame's own id, or one an earlier frame set.
	LastEventID string
	// Frame is the frame that dispatched it.
	Frame Frame
}

// Events returns the events a conforming client dispatches for a stream's
// frames, in order: a frame dispatches one when it ended with its blank line
// and has a data line ("If the file ends in the middle of an event, before
// the final empty line, the incomplete event is not dispatched"). An id line
// sets the last event ID for the frames after it too, whether its own frame
// dispatches or not.
func Events(frames []Frame) []Event {
	var out []Event
	last := ""
	for _, f := range frames {
		if f.IsComment() {
			continue
		}
		if id, ok := f.ID(); ok {
			last = id
		}
		if !f.Terminated || !f.Dispatches() {
			continue
		}
		d, _ := f.Data()
		out = append(out, Event{Type: f.Type(), Data: d, LastEventID: last, Frame: f})
	}
	return out
}
