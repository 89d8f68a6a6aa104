package reports

import (
	"fmt"
	"net/http"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/invokeconf/invokeconf/outcome"
	"github.com/invokeconf/invokeconf/runner"
)

// printable makes target bytes safe for every writer: control characters
// other than newline and tab (NUL, ESC, DEL, C1 and the like) become visible
// escapes (\x1b, \u0085) and invalid UTF-8 bytes become \xNN, so no report
// can turn into invalid XML or JSON, and no terminal obeys an escape code.
func printable(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r < 0x80 && !safeRune(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case !safeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func needsEscape(s string) bool {
	for _, r := range s {
		if r == utf8.RuneError || !safeRune(r) {
			return true
		}
	}
	return false
}

// safeRune: printable, or a newline or tab; never a
// character XML 1.0 forbids or a terminal acts on.
func safeRune(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return true
	case r == utf8.RuneError:
		return true // a real U+FFFD; invalid bytes are caught by the decoder
	case unicode.IsControl(r), r == 0xFFFE, r == 0xFFFF, r >= 0xD800 && r <= 0xDFFF:
		return false
	case unicode.In(r, unicode.Bidi_Control):
		return false
	}
	return true
}

// sanitize makes what a scenario's target sent printable: its message, its
// structured failure and the response side of its transcript. What the
// harness sent stays as it was, so the curl commands reproduce it byte for
// byte.
func sanitize(s runner.ScenarioResult) runner.ScenarioResult {
	s.Name, s.Error = printable(s.Name), printable(s.Error)
	if f := s.Failure; f != nil {
		s.Failure = &outcome.Failure{Check: printable(f.Check), Expected: printable(f.Expected),
			Actual: printable(f.Actual), Spec: printable(f.Spec)}
	}
	if len(s.Transcript) > 0 {
		tr := append(s.Transcript[:0:0], s.Transcript...)
		for i := range tr {
			tr[i].RespBody, tr[i].Error, tr[i].Elapsed = printable(tr[i].RespBody), printable(tr[i].Error), printable(tr[i].Elapsed)
			tr[i].RespHeader = printableHeader(tr[i].RespHeader)
		}
		s.Transcript = tr
	}
	return s
}

func printableHeader(h http.Header) http.Header {
	if h == nil {
		return nil
	}
	out := make(http.Header, len(h))
	for k, vs := range h {
		for _, v := range vs {
			out[printable(k)] = append(out[printable(k)], printable(v))
		}
	}
	return out
}
