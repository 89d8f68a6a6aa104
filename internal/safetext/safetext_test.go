package safetext

import (
	"encoding/xml"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClean(t *testing.T) {
	for in, want := range map[string]string{
		"plain text\n\tindented": "plain text\n\tindented",
		"nul\x00esc\x1b[31mred":  `nul\x00esc\x1b[31mred`,
		"cr\r\nlf":               `cr\r` + "\nlf",
		"del\x7f":                `del\x7f`,
		"csi\u009b2J":            `csi\u009b2J`,
		"bidi\u202eevil":         `bidi\u202eevil`,
		"bad\xffutf8\xc3":        "bad\ufffdutf8\ufffd",
		"ünïcödé – “quotes” 日本":  "ünïcödé – “quotes” 日本",
		"nbsp\u00a0ok":           "nbsp\u00a0ok",
		"nonchar\uffff\ufdd0":    `nonchar\uffff\ufdd0`,
		"emoji 🙂":                "emoji 🙂",
	} {
		if got := Clean(in); got != want {
			t.Errorf("Clean(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestCleanAllBytes: whatever bytes come in, the result is valid UTF-8 with no
// control character but newline and tab, and XML accepts it as text.
func TestCleanAllBytes(t *testing.T) {
	var in []byte
	for c := 0; c < 256; c++ {
		in = append(in, byte(c), 'x', byte(c), byte(255-c))
	}
	got := Clean(string(in))
	if !utf8.ValidString(got) {
		t.Fatal("not valid UTF-8")
	}
	for _, r := range got {
		if r < 0x20 && r != '\n' && r != '\t' || r >= 0x7f && r < 0xa0 {
			t.Fatalf("control character %U left", r)
		}
	}
	var b strings.Builder
	if err := xml.EscapeText(&b, []byte(got)); err != nil {
		t.Fatal(err)
	}
	var v struct {
		S string `xml:",chardata"`
	}
	if err := xml.Unmarshal([]byte("<a>"+b.String()+"</a>"), &v); err != nil {
		t.Fatalf("XML refuses the cleaned text: %v", err)
	}
}
