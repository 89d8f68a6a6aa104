// Package sseframe splits a server-sent event stream into raw frames, byte for
// byte, so that framing rules can be checked that a conformant SSE parser hides:
// comment lines, the order of fields, the blank line that ends a frame, and
// frames without an id.
//
// A frame is the run of lines up to a blank line. Lines may end in "\n",
// "\r\n" or "\r", as the SSE grammar allows.
package sseframe

import (
	"bufio"
	"bytes"
	"fmt"
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
}

// IsComment reports whether the line is a comment line.
func (l Line) IsComment() bool { return strings.HasPrefix(l.Raw, ":") }

// Frame is the run of lines up to a blank line.
type Frame struct {
	Lines []Line
	// Terminated is false for a last frame that the stream ended without a
	// blank line after.
	Terminated bool
	// End is the byte offset just after the frame's blank line (or after its
	// last line when not terminated), so a caller that timed the arrival of
	// bytes can tell when the frame arrived.
	End int
}

// Field returns the value of the first line with that field name.
func (f Frame) Field(name string) (string, bool) {
	for _, l := range f.Lines {
		if !l.IsComment() && l.Name == name {
			return l.Value, true
		}
	}
	return "", false
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

// Reader reads frames from a stream.
type Reader struct {
	r      *bufio.Reader
	offset int
	err    error
}

// NewReader returns a Reader that reads frames from r.
func NewReader(r io.Reader) *Reader { return &Reader{r: bufio.NewReader(r)} }

// Next returns the next frame. At the end of the stream it returns io.EOF; a
// partial last frame is returned first with Terminated false. Comment lines
// that stand alone between frames are returned as frames of their own.
func (r *Reader) Next() (Frame, error) {
	if r.err != nil {
		return Frame{}, r.err
	}
	var f Frame
	for {
		raw, err := r.readLine()
		if err != nil {
			r.err = err
			f.End = r.offset
			if len(f.Lines) > 0 {
				return f, nil
			}
			return Frame{}, err
		}
		if raw == "" {
			if len(f.Lines) == 0 {
				continue // stray blank line between frames
			}
			f.Terminated = true
			f.End = r.offset
			return f, nil
		}
		f.Lines = append(f.Lines, parseLine(raw))
	}
}

// readLine reads one line, accepting "\n", "\r\n" and "\r" as endings.
func (r *Reader) readLine() (string, error) {
	var b bytes.Buffer
	for {
		c, err := r.r.ReadByte()
		if err != nil {
			if err == io.EOF && b.Len() > 0 {
				return b.String(), nil
			}
			return "", err
		}
		r.offset++
		switch c {
		case '\n':
			return b.String(), nil
		case '\r':
			if next, err := r.r.Peek(1); err == nil && next[0] == '\n' {
				_, _ = r.r.ReadByte()
				r.offset++
			}
			return b.String(), nil
		}
		b.WriteByte(c)
	}
}

func parseLine(raw string) Line {
	name, value, found := strings.Cut(raw, ":")
	if !found {
		return Line{Raw: raw, Name: raw}
	}
	return Line{Raw: raw, Name: name, Value: strings.TrimPrefix(value, " ")}
}

// ReadAll splits a whole stream into frames.
func ReadAll(b []byte) ([]Frame, error) {
	r := NewReader(bytes.NewReader(b))
	var frames []Frame
	for {
		f, err := r.Next()
		if err == io.EOF {
			return frames, nil
		}
		if err != nil {
			return frames, fmt.Errorf("read SSE frame: %w", err)
		}
		frames = append(frames, f)
	}
}
