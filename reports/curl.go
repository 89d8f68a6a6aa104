package reports

import (
	"net/http"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/invokeconf/invokeconf/transcript"
)

// envRef matches the references that stand for keys in a transcript.
var envRef = regexp.MustCompile(`\$INVOKECONF_[A-Z0-9_]+`)

// Curl renders an exchange as a curl command that sends the same request.
// Keys appear as references to their environment variables, written
// "${INVOKECONF_KEYS_AGENT:?export it first}" so that the shell fills them
// in, and refuses to run (instead of sending an empty key) while one is
// unset; everything else is quoted literally.
// curl's own default headers are switched off where the harness sent none,
// so the target sees what it saw during the run.
func Curl(ex transcript.Exchange) string {
	args := []string{"curl -sS -i -N --max-time 60", "-X " + shellWord(ex.Method)}
	names := make([]string, 0, len(ex.Header))
	for name := range ex.Header {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		for _, v := range ex.Header[name] {
			args = append(args, "-H "+shellWord(name+": "+v))
		}
	}
	hasBody := ex.Body != "" || ex.Method == http.MethodPost || ex.Method == http.MethodPut || ex.Method == http.MethodPatch
	if ex.Header.Get("Accept") == "" {
		args = append(args, "-H "+shellWord("Accept:"))
	}
	if hasBody && ex.Header.Get("Content-Type") == "" {
		args = append(args, "-H "+shellWord("Content-Type:"))
	}
	if hasBody {
		args = append(args, "--data-raw "+shellWord(ex.Body)) // not --data-binary: it reads a body starting with @ from a file
	}
	args = append(args, shellWord(ex.URL))
	return strings.Join(args, " \\\n  ")
}

// shellWord quotes s for a POSIX shell (bash for $'...'), leaving
// $INVOKECONF_... references to be expanded.
func shellWord(s string) string {
	if s == "" {
		return "''"
	}
	var b strings.Builder
	last := 0
	for _, loc := range envRef.FindAllStringIndex(s, -1) {
		if loc[0] > last {
			b.WriteString(quoteLiteral(s[last:loc[0]]))
		}
		b.WriteString(`"${` + s[loc[0]+1:loc[1]] + `:?export it first}"`)
		last = loc[1]
	}
	if last < len(s) {
		b.WriteString(quoteLiteral(s[last:]))
	}
	return b.String()
}

// quoteLiteral single-quotes text that is printable (newlines and tabs
// included), and uses bash's $'...' with escapes for anything else.
func quoteLiteral(s string) string {
	printable := utf8.ValidString(s)
	for _, r := range s {
		if r < 0x20 && r != '\n' && r != '\t' || r == 0x7f {
			printable = false
		}
	}
	if printable {
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	var b strings.Builder
	b.WriteString("$'")
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' || c == '\'':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\n':
			b.WriteString(`\n`)
		case c >= 0x20 && c < 0x7f:
			b.WriteByte(c)
		default:
			b.WriteString(`\x`)
			b.WriteByte("0123456789abcdef"[c>>4])
			b.WriteByte("0123456789abcdef"[c&15])
		}
	}
	b.WriteString("'")
	return b.String()
}
