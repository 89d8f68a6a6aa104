package reports

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"unicode/utf16"

	"github.com/invokeconf/invokeconf/internal/safetext"
)

// SchemaVersion names the JSON summary's schema. Fields are only ever added
// within a version; a rename, removal or change of type bumps it. v2: the
// profile is an object, not YAML text; identity (harness, spec and catalog
// digests, product), spec and contract verdicts apart, failedRules. v3:
// failures became findings, each naming the one rule it breaks (rule), the
// scenario or the recorded exchange it was seen in, whether it broke in a
// step the scenario rests on (prerequisite) and the rules it blocked; rules
// carry blockedBy, failedRules the rules each blocked; scenarios may be
// "blocked"; a failed scenario's checked lists its other rules it had
// checked in full (each a pass).
const SchemaVersion = "invokeconf.summary/v3"

// WriteJSON writes the summary: the whole Report (rules with verdicts and
// what blocked them, areas, counts, scenarios, findings with transcripts and
// curl commands, profile gaps, baseline) as indented JSON.
func WriteJSON(w io.Writer, rep *Report) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(rep); err != nil {
		return err
	}
	_, err := w.Write(jsonSafe(b.Bytes()))
	return err
}

// jsonSafe writes every character a reader of the raw file could be fooled
// by (a bidi override, a non-character: what safetext escapes) as a JSON
// \u escape: the document means the same, and its bytes show nothing
// hidden. encoding/json has escaped control characters and invalid UTF-8
// already.
func jsonSafe(b []byte) []byte {
	if safetext.Clean(string(b)) == string(b) {
		return b
	}
	var out bytes.Buffer
	for _, r := range string(b) {
		if r == '\n' || r == '\t' || safetext.Clean(string(r)) == string(r) {
			out.WriteRune(r)
			continue
		}
		for _, u := range utf16.Encode([]rune{r}) {
			fmt.Fprintf(&out, `\u%04x`, u)
		}
	}
	return out.Bytes()
}
