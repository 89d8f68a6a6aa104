package transcript

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/invokeconf/invokeconf/profile"
	"github.com/invokeconf/invokeconf/traffic"
)

// TestTranscriptHeadersAreBounded: a flood of response headers keeps at
// most MaxHeaders bytes of them in a transcript, and says how
// many lines it left out; an ordinary header set is kept whole.
func TestTranscriptHeadersAreBounded(t *testing.T) {
	flood := http.Header{}
	for i := range 5000 {
		flood.Set(fmt.Sprintf("X-Flood-%04d", i), strings.Repeat("h", 150))
	}
	same := func(s string) string { return s }
	kept := Header(same, flood)
	size := 0
	for k, vs := range kept {
		for _, v := range vs {
			size += len(k) + len(v)
		}
	}
	if size > MaxHeaders+200 || !strings.Contains(kept.Get(HeadersNotKept), "more header lines not kept") {
		t.Errorf("a transcript keeps %d bytes of a 5000-line header flood (note %q)", size, kept.Get(HeadersNotKept))
	}
	if h := Header(same, http.Header{"Accept": {"text/event-stream"}}); h.Get("Accept") != "text/event-stream" || len(h) != 1 {
		t.Errorf("an ordinary header set: %v", h)
	}
}

// TestOfHidesKeysBeforeItCuts: a key that the body cut would split is
// hidden whole, a long body is cut and says so, a recording's gap and a
// body not recorded are said, and the answer's end is the transcript's
// error when reading did not complete.
func TestOfHidesKeysBeforeItCuts(t *testing.T) {
	const key = "sk-live-0123456789abcdef0123456789abcdef"
	p := &profile.Profile{Keys: profile.Keys{Agent: key}}
	rd := p.Redactor()
	opts := Options{Cut: rd.Cut, Printable: func(s string) string { return s }, MaxBody: 64, KeyLen: rd.MaxLen()}
	body := func(s string, at time.Duration) traffic.Body {
		return traffic.Body{Chunks: []traffic.Chunk{{At: at, Data: []byte(s)}}, Size: int64(len(s)), Timed: true}
	}
	cases := []struct {
		name     string
		x        traffic.Exchange
		want     []string // in the transcript's body or error
		wantNot  []string
		elapsed  string
		maxBytes int
	}{
		{name: "a key across the cut",
			x: traffic.Exchange{Request: traffic.Request{Method: "POST", URL: "http://t/api/invoke/a"},
				Response: &traffic.Response{Status: 200, Body: body(strings.Repeat("x", 50)+key+strings.Repeat("y", 500), 20*time.Millisecond), End: traffic.EndComplete}},
			want: []string{"[... cut: the body has 590 bytes]"}, wantNot: []string{"sk-live", "0123"}, elapsed: "20ms", maxBytes: 64 + 40},
		{name: "a short body whole",
			x: traffic.Exchange{Request: traffic.Request{Method: "GET", URL: "http://t/x"},
				Response: &traffic.Response{Status: 200, Body: body("Bearer "+key, time.Millisecond), End: traffic.EndClientGone}},
			want: []string{"$INVOKECONF_KEYS_AGENT", "the body ended: client-gone"}, wantNot: []string{key}, elapsed: "1ms"},
		{name: "the recording's gap",
			x: traffic.Exchange{Request: traffic.Request{Method: "GET", URL: "http://t/x"},
				Response: &traffic.Response{Status: 200, Body: traffic.Body{Chunks: []traffic.Chunk{{Data: []byte("abc")}}, Size: 900, Truncated: true}}},
			want: []string{"abc\n[... the recording holds 3 of 900 bytes]"}},
		{name: "a body not recorded",
			x: traffic.Exchange{Request: traffic.Request{Method: "GET", URL: "http://t/x"},
				Response: &traffic.Response{Status: 200, HeaderAt: 3 * time.Millisecond, Body: traffic.Body{Size: 70, Redacted: true}}},
			want: []string{"[70 bytes, not recorded (--redact-bodies)]"}, elapsed: "3ms"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := Of(&c.x, opts)
			got := e.RespBody + "\n" + e.Error
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("transcript %q lacks %q", got, w)
				}
			}
			for _, w := range c.wantNot {
				if strings.Contains(got, w) {
					t.Errorf("transcript %q shows %q", got, w)
				}
			}
			if e.Elapsed != c.elapsed {
				t.Errorf("elapsed %q, want %q", e.Elapsed, c.elapsed)
			}
			if c.maxBytes > 0 && len(e.RespBody) > c.maxBytes {
				t.Errorf("the body keeps %d bytes, want at most %d", len(e.RespBody), c.maxBytes)
			}
		})
	}
}

// TestOfCleansEveryText: the request line, headers and error go through
// the same cleaning as the bodies.
func TestOfCleansEveryText(t *testing.T) {
	opts := Options{Cut: func(s string, n int, note string) string { return strings.ReplaceAll(s, "KEY", "$K") },
		Printable: func(s string) string { return strings.ReplaceAll(s, "\x1b", `\x1b`) }, MaxBody: 100}
	x := traffic.Exchange{Request: traffic.Request{Method: "POST", URL: "http://t/KEY\x1b", Header: http.Header{"Authorization": {"Bearer KEY"}}},
		Error: "read KEY\x1b", Response: &traffic.Response{Status: 500, Header: http.Header{"X-Key": {"KEY"}}}}
	e := Of(&x, opts)
	got := fmt.Sprint(e.URL, e.Header, e.RespHeader, e.Error)
	if strings.Contains(got, "KEY") || strings.Contains(got, "\x1b") {
		t.Errorf("a text left uncleaned: %s", got)
	}
}
