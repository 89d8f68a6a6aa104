package checks

import (
	"strings"
	"testing"
)

// legalStream writes the stream start, ev, final, close with the line
// ending eol, each frame passed through shape first.
func legalStream(eol string, shape func(frame string) string) string {
	var b strings.Builder
	for _, f := range []string{start, ev, final, closeF} {
		f = shape(f)
		b.WriteString(strings.ReplaceAll(f, "\n", eol))
	}
	return b.String()
}

func same(f string) string { return f }

// spreadData writes a frame's JSON data over several data lines, with an
// empty data line and a nameless one first: the parser joins them with LF,
// which JSON reads as whitespace.
func spreadData(f string) string {
	var out []string
	for _, l := range strings.Split(strings.TrimSuffix(f, "\n\n"), "\n") {
		d, ok := strings.CutPrefix(l, "data: ")
		if !ok {
			out = append(out, l)
			continue
		}
		out = append(out, "data", "data:")
		for _, part := range strings.SplitAfter(d, ",") {
			out = append(out, "data: "+part)
		}
	}
	return strings.Join(out, "\n") + "\n\n"
}

// ignoredFields adds what a conforming parser ignores to every frame: an
// unknown field, a nameless unknown one, a retry line, an id holding U+0000
// before the real id, an empty event line (the default type) in event
// frames, a comment inside the frame, and a frame that dispatches nothing
// before it.
func ignoredFields(f string) string {
	extra := "x-seq: 3\nflag\nretry: soon\n: inside\n"
	if strings.HasPrefix(f, "id: ") {
		extra += "id: junk\x00\nevent:\n"
	}
	return "id: r1\nevent: progress\n\n" + extra + f
}

// TestLegalStreamShapes: every SSE check passes every stream shape the
// grammar of the HTML Living Standard allows, as a conforming client reads
// it: a conformant stream with a byte order mark, any line ending, fields
// without the space, data over several lines, ignored fields and frames, and
// IDs as JSON numbers.
func TestLegalStreamShapes(t *testing.T) {
	numeric := func(f string) string {
		f = strings.ReplaceAll(f, `"threadID":"t1"`, `"threadID":17`)
		return strings.ReplaceAll(strings.ReplaceAll(f, `"runID":"r1"`, `"runID":4`), "id: r1", "id: 4")
	}
	noSpace := func(f string) string {
		return strings.NewReplacer("id: ", "id:", "data: ", "data:", "event: ", "event:").Replace(f)
	}
	shapes := []struct {
		name, stream string
		thread       string
	}{
		{"LF", legalStream("\n", same), "t1"},
		{"CRLF", legalStream("\r\n", same), "t1"},
		{"CR", legalStream("\r", same), "t1"},
		{"a byte order mark", "\xEF\xBB\xBF" + legalStream("\n", same), "t1"},
		{"mixed line endings", strings.Replace(legalStream("\r\n", same), "\r\n", "\r", 3) + "", "t1"},
		{"no space after the colon", legalStream("\n", noSpace), "t1"},
		{"data over several lines", legalStream("\n", spreadData), "t1"},
		{"ignored fields and frames", legalStream("\n", ignoredFields), "t1"},
		{"numeric IDs", legalStream("\n", numeric), "17"},
		{"numeric IDs in exponent form", legalStream("\n", func(f string) string {
			return strings.ReplaceAll(numeric(f), `"threadID":17`, `"threadID":1.7e1`)
		}), "17"},
		{"all at once", "\xEF\xBB\xBF" + legalStream("\r\n", func(f string) string { return ignoredFields(spreadData(noSpace(f))) }), "t1"},
	}
	rules := []string{"FMT-01", "SSE-01", "SSE-02", "SSE-03", "SSE-05", "SSE-06", "EVT-01", "EVT-02", "EVT-04", "THREAD-04"}
	for _, s := range shapes {
		x := sse(whole(s.stream)...)
		x.resp = hdr("Content-Type", "text/event-stream", "X-SVC-Thread-Id", s.thread)
		for _, rule := range rules {
			if got, r := verdictOf(rule, "", x.build()); got != "pass" {
				t.Errorf("%s, %s: %s (%v %v)", s.name, rule, got, r.Failure, r.Skip)
			}
		}
	}
}

// TestIllegalStreamShapes: what the grammar reads otherwise still fails.
func TestIllegalStreamShapes(t *testing.T) {
	for _, tc := range []struct {
		rule, name, stream string
	}{
		{"SSE-01", "a byte order mark past the start", "\n\xEF\xBB\xBF" + start + ev},
		{"SSE-01", "a start frame without data", "event: start\n\n" + ev},
		{"SSE-02", "an id with U+0000 only", start + "id: r1\x00\ndata: {\"runID\":\"r1\",\"threadID\":\"t1\"}\n\n"},
		{"SSE-02", "data before the id", start + "data: {\"runID\":\"r1\",\"threadID\":\"t1\"}\nid: r1\n\n"},
		{"SSE-02", "an id in a frame of its own", start + "id: r1\n\ndata: {\"runID\":\"r1\",\"threadID\":\"t1\"}\n\n"},
		{"SSE-05", "close without data", start + ev + final + "event: close\n\n"},
		{"EVT-01", "an empty data line alone", start + "id: r1\ndata\n\n"},
	} {
		if got, r := verdictOf(tc.rule, "", sse(whole(tc.stream)...).build()); got != "fail" {
			t.Errorf("%s, %s: %s, want fail (%v)", tc.rule, tc.name, got, r.Skip)
		}
	}
}
