package traffic

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"
)

const key = "sk-svc-alice-k1-S3cr3tS3cr3tXYZ"

func TestClassifyAuth(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want Auth
		id   string
	}{
		{nil, AuthMissing, ""},
		{[]string{"Bearer " + key}, AuthWellFormed, "alice-k1"},
		{[]string{"[key alice-k1]"}, AuthWellFormed, "alice-k1"},
		{[]string{""}, AuthMalformed, ""},
		{[]string{"Basic abc"}, AuthMalformed, ""},
		{[]string{"Bearer not-a-key"}, AuthMalformed, ""},
		{[]string{"Bearer sk-svc-alice-k1"}, AuthMalformed, ""},
		{[]string{"Bearer sk-svc-alice--sec"}, AuthMalformed, ""},
		{[]string{"[malformed key]"}, AuthMalformed, ""},
		{[]string{"bearer " + key}, AuthUnclassified, ""},
		{[]string{"Bearer sk-svc-a-b-c-d"}, AuthUnclassified, ""},
		{[]string{"Bearer " + key, "Bearer " + key}, AuthUnclassified, ""},
	} {
		got, id := ClassifyAuth(tc.in)
		if got != tc.want || id != tc.id {
			t.Errorf("ClassifyAuth(%q) = %v %q, want %v %q", tc.in, got, id, tc.want, tc.id)
		}
		// What a recording keeps classifies the same.
		if tc.want != AuthMissing {
			if again, id2 := ClassifyAuth([]string{AuthValue(tc.in)}); again != got || id2 != id {
				t.Errorf("AuthValue(%q) = %q classifies as %v %q", tc.in, AuthValue(tc.in), again, id2)
			}
		}
	}
}

func TestRecorderHidesKeys(t *testing.T) {
	rc := NewRecorder(1<<10, nil)
	h := rc.Header(http.Header{"Authorization": {"Bearer " + key}, "X-Echo": {"got " + key},
		"Cookie": {"session=abc"}})
	if got := h.Get("Authorization"); got != "[key alice-k1]" {
		t.Errorf("Authorization recorded as %q", got)
	}
	if got := h.Get("X-Echo"); strings.Contains(got, "S3cr3t") {
		t.Errorf("a header keeps the key: %q", got)
	}
	if got := h.Get("Cookie"); strings.Contains(got, "abc") {
		t.Errorf("a cookie is kept: %q", got)
	}
	start := time.Now()
	br := rc.Body(start)
	for _, p := range []string{"before " + key + " after ", "piece S3cr3tS3cr", " and sk-svc-bob-k2-Other0Secret99 end"} {
		br.Add([]byte(p), start.Add(time.Millisecond))
	}
	b := br.Finish()
	got := string(b.Bytes())
	for _, leak := range []string{"S3cr3t", "Other0Secret"} {
		if strings.Contains(got, leak) {
			t.Errorf("the body keeps %q: %q", leak, got)
		}
	}
	if !strings.Contains(got, "[key alice-k1]") || !strings.Contains(got, "[key bob-k2]") {
		t.Errorf("the body lost the keys' IDs: %q", got)
	}
}

// TestRecorderIgnoresItsMarkers: a recording read back holds the key's ID
// in the Authorization header; it is no key, so nothing else is hidden.
func TestRecorderIgnoresItsMarkers(t *testing.T) {
	rc := NewRecorder(1<<10, nil)
	for _, marker := range []string{"[key alice-kbundle]", "[malformed key]", "[unclassified key]"} {
		rc.Header(http.Header{"Authorization": {marker}})
	}
	if got := rc.URL("/api/assistants/a/projects/p/bundle"); got != "/api/assistants/a/projects/p/bundle" {
		t.Errorf("a URL read after the markers became %q", got)
	}
}

func TestRecorderBounds(t *testing.T) {
	rc := NewRecorder(10, nil)
	start := time.Now()
	br := rc.Body(start)
	for i := 0; i < maxChunks+100; i++ {
		br.Add([]byte("abcdef"), start.Add(time.Duration(i)*time.Millisecond))
	}
	b := br.Finish()
	if !b.Truncated || b.Size != int64(6*(maxChunks+100)) {
		t.Errorf("Truncated %v Size %d", b.Truncated, b.Size)
	}
	if got := b.Bytes(); !bytes.Equal(got, []byte("abcdefabcd")) {
		t.Errorf("kept %q, want the first 10 bytes", got)
	}
	if len(b.Chunks) != maxChunks {
		t.Errorf("%d chunk entries, want the cap %d", len(b.Chunks), maxChunks)
	}
	// Reads past the cap join the last entry, which takes their time: the
	// body's last byte keeps its arrival, and the sizes still add up.
	last, sum := b.Chunks[len(b.Chunks)-1], 0
	for _, c := range b.Chunks {
		sum += c.Size
	}
	if want := time.Duration(maxChunks+99) * time.Millisecond; last.At != want || int64(sum) != b.Size {
		t.Errorf("the last entry arrived at %s (want %s, the last read's); sizes add up to %d of %d", last.At, want, sum, b.Size)
	}
	if at, ok := b.TimeAt(7); !ok || at != time.Millisecond {
		t.Errorf("TimeAt(7) = %v %v, want 1ms", at, ok)
	}
	s := StripBodies(Exchange{Request: Request{Body: b}})
	if n := len(s.Request.Body.Bytes()); n != 0 || !s.Request.Body.Redacted || s.Request.Body.SHA256 == "" {
		t.Errorf("stripped body keeps %d bytes (redacted %v, hash %q)", n, s.Request.Body.Redacted, s.Request.Body.SHA256)
	}
}

func TestFromHTTP(t *testing.T) {
	req, _ := http.NewRequest("POST", "http://svc.test/api/invoke/agt?async=false", nil)
	req.Header.Set("Accept", "text/event-stream")
	resp := &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}}
	x := FromHTTP(time.Now(), req, []byte("hi"), resp, []Timed{{At: time.Millisecond, Data: []byte("ab")}, {At: time.Second, Data: []byte("c")}}, nil, EndComplete)
	if got := string(x.Response.Body.Bytes()); got != "abc" || !x.Response.Body.Timed || x.Response.Body.Size != 3 {
		t.Errorf("body %q timed %v size %d", got, x.Response.Body.Timed, x.Response.Body.Size)
	}
	if at, _ := x.Response.Body.TimeAt(2); at != time.Second {
		t.Errorf("TimeAt(2) = %v", at)
	}
	if x.Request.Path() != "/api/invoke/agt" || x.Request.Query().Get("async") != "false" || string(x.Request.Body.Bytes()) != "hi" {
		t.Errorf("request %+v", x.Request)
	}
	u := FromHTTP(time.Now(), req, nil, resp, nil, []byte("whole"), EndComplete)
	if u.Response.Body.Timed || string(u.Response.Body.Bytes()) != "whole" {
		t.Errorf("untimed body %+v", u.Response.Body)
	}
}
