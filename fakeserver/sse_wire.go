package fakeserver

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
)

// Spec: Events (SSE framing). The bytes of an SSE stream: the variants
// write every shape the SSE grammar (HTML Living Standard, "Interpreting an
// event stream") allows a conforming client to read alike.

// sseWire writes one stream's frames as the variants ask: the line ending
// (sse-crlf, sse-cr, sse-mixed-endings), the separator after a field's colon
// (sse-no-space), a byte order mark (sse-bom), data over several lines
// (sse-data-lines) and lines and frames a parser ignores
// (sse-ignored-fields).
type sseWire struct {
	sep  string
	eols []string // the line endings, taken in turn

	bom, dataLines, ignored, eventMessage bool
	// plain: none of the variants is on, so a frame is its lines in LF.
	plain bool

	mu   sync.Mutex
	next int // the next entry of eols
	seq  int // numbers the ignored x-seq fields
}

func (s *view) sseWire() *sseWire {
	if !anyVariant(s.sw, wireVariants) {
		return plainWire
	}
	w := &sseWire{sep: ": ", eols: []string{"\n"}}
	switch {
	case s.variant(varSseCRLF):
		w.eols = []string{"\r\n"}
	case s.variant(varSseCR):
		w.eols = []string{"\r"}
	case s.variant(varSseMixedEndings):
		w.eols = []string{"\r\n", "\n", "\r", "\n", "\r\n", "\r"}
	}
	if s.variant(varSseNoSpace) {
		w.sep = ":"
	}
	w.bom, w.dataLines, w.ignored = s.variant(varSseBOM), s.variant(varSseDataLines), s.variant(varSseIgnoredFields)
	w.eventMessage = s.variant(varSseEventMessage)
	return w
}

// wireVariants are the variants that change a stream's bytes (sseWire).
var wireVariants = []variantID{varSseCRLF, varSseCR, varSseMixedEndings, varSseNoSpace, varSseBOM, varSseDataLines,
	varSseIgnoredFields, varSseEventMessage}

func anyVariant(set *switchSet, ids []variantID) bool {
	for _, id := range ids {
		if set.variants[id] {
			return true
		}
	}
	return false
}

// plainWire is the wire of a stream no variant changes: its frames are
// lines ended by LF, with ": " after each field's name. Its frames are
// written without a frame builder (see its methods), so it changes nothing
// of itself and every such stream shares it.
var plainWire = &sseWire{sep: ": ", eols: []string{"\n"}, plain: true}

// fixed returns the bytes of a frame that never changes, with no room
// after them, so that appending to them copies them first.
func fixed(s string) []byte {
	b := []byte(s)
	return b[:len(b):len(b)]
}

// The frames of the plain wire that never change.
var (
	plainStart = fixed("event: start\ndata: {}\n\n")
	plainClose = fixed("event: close\ndata: {}\n\n")
	plainPing  = fixed(": ping\n\n")
)

// sseFrame builds one frame (or comment line) of a stream.
type sseFrame struct {
	w      *sseWire
	b      bytes.Buffer
	prevCR bool // the last line ended in a lone CR
}

func (w *sseWire) frame() *sseFrame { return &sseFrame{w: w} }

// line writes a line and its ending. A blank line never ends in a lone LF
// after a line that ended in a lone CR: the two would read as one CRLF.
func (f *sseFrame) line(s string) {
	f.w.mu.Lock()
	eol := f.w.eols[f.w.next%len(f.w.eols)]
	f.w.next++
	f.w.mu.Unlock()
	if s == "" && f.prevCR && eol == "\n" {
		eol = "\r\n"
	}
	f.prevCR = eol == "\r"
	f.b.WriteString(s)
	f.b.WriteString(eol)
}

func (f *sseFrame) field(name, value string) { f.line(name + f.w.sep + value) }

// data writes a data field: with sse-data-lines, an empty data line and a
// nameless one first, then the JSON value indented over several lines (the
// parser joins them with LF, which JSON reads as whitespace; indenting
// never breaks a string).
func (f *sseFrame) data(value string) {
	if strings.Contains(value, "\n") {
		// An event's JSON holds no raw line break: only a defect's cut
		// (data-split-in-string) writes one, as a data line each.
		for _, l := range strings.Split(value, "\n") {
			f.field("data", l)
		}
		return
	}
	var ind bytes.Buffer
	if !f.w.dataLines || json.Indent(&ind, []byte(value), "", " ") != nil {
		f.field("data", value)
		return
	}
	f.line("data")
	f.field("data", "")
	for _, l := range bytes.Split(ind.Bytes(), []byte("\n")) {
		f.field("data", string(l))
	}
}

// ignoredLines writes, with sse-ignored-fields, what a conforming parser
// ignores: a field it does not know, a nameless unknown field and a comment
// inside the frame.
func (f *sseFrame) ignoredLines() {
	if !f.w.ignored {
		return
	}
	f.w.mu.Lock()
	f.w.seq++
	n := f.w.seq
	f.w.mu.Unlock()
	f.field("x-seq", strconv.Itoa(n))
	f.line("flag")
	f.line(": inside a frame")
}

// end writes the blank line that ends the frame.
func (f *sseFrame) end() []byte {
	f.line("")
	return f.b.Bytes()
}

// noDispatch is, with sse-ignored-fields, a frame without a data line that
// a conforming client dispatches nothing for; nil otherwise.
func (w *sseWire) noDispatch() []byte {
	if !w.ignored {
		return nil
	}
	f := w.frame()
	f.field("event", "progress")
	f.line("id")
	f.field("retry", "soon")
	return f.end()
}

// open is the stream's first bytes: the byte order mark (sse-bom) and the
// start frame.
func (w *sseWire) open() []byte {
	if w.plain {
		return plainStart
	}
	var b []byte
	if w.bom {
		b = append(b, "\xEF\xBB\xBF"...)
	}
	return append(append(b, w.noDispatch()...), w.control("start")...)
}

// control is a named frame with data {} (start, close).
func (w *sseWire) control(event string) []byte {
	switch {
	case w.plain && event == "start":
		return plainStart
	case w.plain && event == "close":
		return plainClose
	}
	f := w.frame()
	f.ignoredLines()
	f.field("event", event)
	f.data("{}")
	return f.end()
}

// ping is the keepalive comment, alone or ended by a blank line.
func (w *sseWire) ping(lone bool) []byte { return w.comment("ping", !lone) }

// comment is a comment line, ended by a blank line when framed.
func (w *sseWire) comment(text string, framed bool) []byte {
	if w.plain && text == "ping" && framed {
		return plainPing
	}
	f := w.frame()
	if text == "" {
		f.line(":")
	} else {
		f.line(": " + text)
	}
	if framed {
		f.line("")
	}
	return f.b.Bytes()
}

// event is an event frame: an id line (unless noID), then the data; with
// sse-event-message an event: message and a retry line between them, with
// sse-ignored-fields a frame that dispatches nothing before it, and inside
// it an id holding U+0000 before the real one and an empty event line (the
// default type).
func (w *sseWire) event(id string, noID bool, data string) []byte {
	f := w.frame()
	f.ignoredLines()
	if w.ignored {
		f.field("id", "\x00ignored")
	}
	if !noID {
		f.field("id", id)
	}
	if w.ignored {
		f.field("event", "")
	}
	if w.eventMessage {
		f.field("event", "message")
		f.field("retry", "3000")
	}
	f.data(data)
	return append(w.noDispatch(), f.end()...)
}

// cutBlankLine drops the line ending of a frame's blank line, as a stream
// cut before it would (the stream-cut-mid-frame defect).
func cutBlankLine(b []byte) []byte {
	switch {
	case bytes.HasSuffix(b, []byte("\r\n")):
		return b[:len(b)-2]
	case len(b) > 0:
		return b[:len(b)-1]
	}
	return b
}
