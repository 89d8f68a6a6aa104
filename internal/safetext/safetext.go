// Package safetext makes text from an untrusted target safe to show: in a
// terminal (no escape sequences), in XML (no character XML 1.0 forbids) and
// in any UTF-8 report.
package safetext

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Clean returns s with every byte sequence a reader could be fooled or
// broken by made visible: control characters (NUL, ESC, CR, DEL, C1),
// invisible format characters (bidi overrides) and non-characters become Go
// escapes (\x00, \x1b, \r, \u202e), and invalid UTF-8 becomes U+FFFD.
// Newlines and tabs stay: bodies and messages have lines.
func Clean(s string) string {
	if isClean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == utf8.RuneError && size <= 1:
			b.WriteRune(utf8.RuneError)
		case safe(r):
			b.WriteRune(r)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r <= 0xffff:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
	}
	return b.String()
}

// isClean is the fast path: most text is printable ASCII.
func isClean(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 {
			return !strings.ContainsFunc(s[i:], func(r rune) bool { return !safe(r) }) && utf8.ValidString(s[i:])
		}
		if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

// safe reports whether r may stand as it is.
func safe(r rune) bool {
	if r == '\n' || r == '\t' {
		return true
	}
	if r == utf8.RuneError {
		return true // a real U+FFFD, or already replaced
	}
	return unicode.IsGraphic(r) && !(r >= 0xfdd0 && r <= 0xfdef) && r&0xfffe != 0xfffe
}
