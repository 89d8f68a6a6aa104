package har

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// decoder reads JSON values one token at a time from a stream, keeping at
// most a caller's limit of each string: a HAR file's bodies are strings of
// any length, and the file may hold any number of entries, so nothing it
// reads grows with the file. It knows JSON as RFC 8259 writes it; what it
// does not keep (a string past its limit, a value skipped) it still checks.
type decoder struct {
	r     *bufio.Reader
	off   int64 // bytes read
	depth int
}

// maxDepth bounds the nesting of the values a decoder reads or skips.
const maxDepth = 256

func newDecoder(r io.Reader) *decoder { return &decoder{r: bufio.NewReaderSize(r, 64<<10)} }

// syntaxError is a file that is not JSON, with the byte offset where it
// stopped being so.
type syntaxError struct {
	off int64
	msg string
}

func (e *syntaxError) Error() string { return fmt.Sprintf("not JSON at byte %d: %s", e.off, e.msg) }

func (d *decoder) fail(format string, args ...any) error {
	return &syntaxError{off: d.off, msg: fmt.Sprintf(format, args...)}
}

func (d *decoder) readByte() (byte, error) {
	c, err := d.r.ReadByte()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return 0, d.fail("the file ends early")
		}
		return 0, err
	}
	d.off++
	return c, nil
}

// peek returns the next byte that is not white space, without reading it.
func (d *decoder) peek() (byte, error) {
	for {
		b, err := d.r.Peek(1)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return 0, d.fail("the file ends early")
			}
			return 0, err
		}
		switch b[0] {
		case ' ', '\t', '\n', '\r':
			_, _ = d.r.ReadByte()
			d.off++
			continue
		}
		return b[0], nil
	}
}

// atEnd reports whether nothing but white space is left.
func (d *decoder) atEnd() (bool, error) {
	_, err := d.peek()
	var se *syntaxError
	if errors.As(err, &se) {
		return true, nil
	}
	return false, err
}

// expect reads the next byte that is not white space and fails unless it
// is c.
func (d *decoder) expect(c byte) error {
	if _, err := d.peek(); err != nil {
		return err
	}
	got, err := d.readByte()
	if err != nil {
		return err
	}
	if got != c {
		return d.fail("%q where %q belongs", got, c)
	}
	return nil
}

// kind is the JSON type of the next value: '{', '[', '"', 'n' (null), 't'
// or 'f' (booleans), '0' (a number).
func (d *decoder) kind() (byte, error) {
	c, err := d.peek()
	if err != nil {
		return 0, err
	}
	switch {
	case c == '{' || c == '[' || c == '"' || c == 'n' || c == 't' || c == 'f':
		return c, nil
	case c == '-' || c >= '0' && c <= '9':
		return '0', nil
	}
	return 0, d.fail("%q where a value belongs", c)
}

// object reads an object, calling member for each of its members with the
// key (its first maxKey bytes); member reads or skips the value.
func (d *decoder) object(member func(key string) error) error {
	return d.container('{', '}', "an object member", func(int) error {
		if k, err := d.kind(); err != nil {
			return err
		} else if k != '"' {
			return d.fail("an object key that is no string")
		}
		key, err := d.str(maxKey)
		if err != nil {
			return err
		}
		if err := d.expect(':'); err != nil {
			return err
		}
		return member(string(key.kept))
	})
}

// maxKey bounds the bytes kept of an object key: longer keys are none this
// reader knows.
const maxKey = 64

// array reads an array, calling elem for each element; elem reads or
// skips it.
func (d *decoder) array(elem func(i int) error) error {
	return d.container('[', ']', "an array element", elem)
}

// container reads an object or an array between open and end, nested no
// deeper than maxDepth, calling item for each of its items; what names an
// item in the error for a bad separator after it.
func (d *decoder) container(open, end byte, what string, item func(i int) error) error {
	if err := d.expect(open); err != nil {
		return err
	}
	if d.depth++; d.depth > maxDepth {
		return d.fail("values nested more than %d deep", maxDepth)
	}
	defer func() { d.depth-- }()
	if c, err := d.peek(); err != nil {
		return err
	} else if c == end {
		_, err := d.readByte()
		return err
	}
	for i := 0; ; i++ {
		if err := item(i); err != nil {
			return err
		}
		c, err := d.peek()
		if err != nil {
			return err
		}
		if _, err := d.readByte(); err != nil {
			return err
		}
		switch c {
		case ',':
		case end:
			return nil
		default:
			return d.fail("%q after "+what, c)
		}
	}
}

// skip reads the next value and keeps nothing of it.
func (d *decoder) skip() error {
	k, err := d.kind()
	if err != nil {
		return err
	}
	switch k {
	case '{':
		return d.object(func(string) error { return d.skip() })
	case '[':
		return d.array(func(int) error { return d.skip() })
	case '"':
		_, err := d.str(0)
		return err
	case '0':
		_, err := d.number()
		return err
	}
	_, err = d.literal()
	return err
}

// literal reads null, true or false; it returns "null", "true" or "false".
func (d *decoder) literal() (string, error) {
	c, err := d.peek()
	if err != nil {
		return "", err
	}
	want := map[byte]string{'n': "null", 't': "true", 'f': "false"}[c]
	if want == "" {
		return "", d.fail("%q where a value belongs", c)
	}
	for i := 0; i < len(want); i++ {
		b, err := d.readByte()
		if err != nil {
			return "", err
		}
		if b != want[i] {
			return "", d.fail("%q in %s", b, want)
		}
	}
	return want, nil
}

// maxNumber bounds the length of a number.
const maxNumber = 64

// number reads a number.
func (d *decoder) number() (float64, error) {
	if _, err := d.peek(); err != nil {
		return 0, err
	}
	var buf [maxNumber]byte
	n := 0
	for {
		b, err := d.r.Peek(1)
		if err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		if len(b) == 0 || !(b[0] == '-' || b[0] == '+' || b[0] == '.' || b[0] == 'e' || b[0] == 'E' || b[0] >= '0' && b[0] <= '9') {
			break
		}
		if n == len(buf) {
			return 0, d.fail("a number longer than %d bytes", maxNumber)
		}
		buf[n] = b[0]
		n++
		_, _ = d.r.ReadByte()
		d.off++
	}
	f, err := strconv.ParseFloat(string(buf[:n]), 64)
	if err != nil || !validNumber(buf[:n]) {
		return 0, d.fail("bad number %q", buf[:n])
	}
	return f, nil
}

// validNumber reports whether b is a number as JSON writes it (ParseFloat
// takes more: "+1", ".5", "0x1p3", "Inf").
func validNumber(b []byte) bool {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i == len(b) || b[i] < '0' || b[i] > '9' {
			return false
		}
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i == len(b) || b[i] < '0' || b[i] > '9' {
			return false
		}
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	}
	return i == len(b)
}

// text is a string as a decoder kept it.
type text struct {
	// kept holds its first bytes (UTF-8, escapes decoded), at most the
	// limit str was given.
	kept []byte
	// total counts all of its bytes.
	total int64
	// tail holds its last two bytes (base64 padding).
	tail [2]byte
	// units counts its UTF-16 code units (JavaScript's length of it).
	units int64
}

// whole reports whether kept holds the whole string.
func (t text) whole() bool { return int64(len(t.kept)) == t.total }

// str reads a string, keeping its first limit bytes.
func (d *decoder) str(limit int) (text, error) {
	var t text
	if err := d.expect('"'); err != nil {
		return t, err
	}
	add := func(p []byte) {
		if room := limit - len(t.kept); room > 0 {
			t.kept = append(t.kept, p[:min(room, len(p))]...)
		}
		t.total += int64(len(p))
		for _, c := range p {
			if c&0xC0 != 0x80 { // a character starts
				t.units++
				if c >= 0xF0 { // outside the BMP: a surrogate pair
					t.units++
				}
			}
		}
		switch {
		case len(p) >= 2:
			t.tail = [2]byte{p[len(p)-2], p[len(p)-1]}
		case len(p) == 1:
			t.tail = [2]byte{t.tail[1], p[0]}
		}
	}
	var u [utf8.UTFMax]byte
	for {
		// Runs of plain bytes are taken straight from the buffer.
		buf, err := d.r.Peek(min(d.r.Buffered(), d.r.Size()))
		if len(buf) == 0 {
			buf, err = d.r.Peek(1)
		}
		if len(buf) == 0 {
			if errors.Is(err, io.EOF) {
				return t, d.fail("the file ends inside a string")
			}
			return t, err
		}
		n := 0
		for n < len(buf) && buf[n] != '"' && buf[n] != '\\' && buf[n] >= 0x20 {
			n++
		}
		if n > 0 {
			add(buf[:n])
			_, _ = d.r.Discard(n)
			d.off += int64(n)
			continue
		}
		c, err := d.readByte()
		if err != nil {
			return t, err
		}
		switch {
		case c == '"':
			if !t.whole() {
				t.kept = trimRune(t.kept) // the cut may split a character
			}
			if !utf8.Valid(t.kept) {
				whole := t.whole()
				t.kept = []byte(string([]rune(string(t.kept)))) // each invalid byte U+FFFD, as encoding/json reads it
				if whole {
					t.total = int64(len(t.kept))
				}
			}
			return t, nil
		case c < 0x20:
			return t, d.fail("a control character in a string")
		}
		e, err := d.readByte()
		if err != nil {
			return t, err
		}
		switch e {
		case '"', '\\', '/':
			add([]byte{e})
		case 'b':
			add([]byte{'\b'})
		case 'f':
			add([]byte{'\f'})
		case 'n':
			add([]byte{'\n'})
		case 'r':
			add([]byte{'\r'})
		case 't':
			add([]byte{'\t'})
		case 'u':
			r, err := d.hex4()
			if err != nil {
				return t, err
			}
			if utf16.IsSurrogate(r) {
				// A pair takes the next escape too; anything else is
				// U+FFFD, and what follows is read as it is (as
				// encoding/json reads it).
				hi := r
				r = utf8.RuneError
				if b, _ := d.r.Peek(6); len(b) == 6 && b[0] == '\\' && b[1] == 'u' {
					if r2, ok := parseHex4(b[2:]); ok {
						if dec := utf16.DecodeRune(hi, r2); dec != utf8.RuneError {
							r = dec
							_, _ = d.r.Discard(6)
							d.off += 6
						}
					}
				}
			}
			add(u[:utf8.EncodeRune(u[:], r)])
		default:
			return t, d.fail("bad escape \\%c", e)
		}
	}
}

// hex4 reads the four hex digits of a \u escape.
func (d *decoder) hex4() (rune, error) {
	b, err := d.r.Peek(4)
	if err != nil && len(b) < 4 {
		return 0, d.fail("the file ends inside a \\u escape")
	}
	r, ok := parseHex4(b)
	if !ok {
		return 0, d.fail("bad \\u escape")
	}
	_, _ = d.r.Discard(4)
	d.off += 4
	return r, nil
}

// parseHex4 reads four hex digits.
func parseHex4(b []byte) (rune, bool) {
	var r rune
	for _, c := range b[:4] {
		var v byte
		switch {
		case c >= '0' && c <= '9':
			v = c - '0'
		case c >= 'a' && c <= 'f':
			v = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			v = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(v)
	}
	return r, true
}

// trimRune drops a character cut short at the end of b.
func trimRune(b []byte) []byte {
	for i := 1; i <= utf8.UTFMax && i <= len(b); i++ {
		c := b[len(b)-i]
		if c < utf8.RuneSelf {
			return b // ASCII: nothing cut
		}
		if utf8.RuneStart(c) {
			if r, _ := utf8.DecodeRune(b[len(b)-i:]); r == utf8.RuneError && !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i]
			}
			return b
		}
	}
	return b
}
