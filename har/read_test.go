package har

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/invokeconf/invokeconf/traffic"
)

// foreignFile is a HAR file of another program with the entries given.
func foreignFile(entries ...string) string {
	return `{"log":{"version":"1.2","creator":{"name":"a recorder","version":"1"},"entries":[` +
		strings.Join(entries, ",") + `]}}`
}

// foreignEntry is an entry with the response members given.
func foreignEntry(request, response string) string {
	if request == "" {
		request = `"method":"GET","url":"http://x/api/threads/t1","headers":[{"name":"Accept","value":"application/json"}],"bodySize":0`
	}
	return `{"startedDateTime":"2026-11-20T09:00:00.250Z","time":812.5,"timings":{"send":0.5,"wait":700,"receive":112.5},` +
		`"request":{` + request + `},"response":{"status":200,` + response + `}}`
}

func readOne(t *testing.T, file string, maxRecord int64) traffic.Exchange {
	t.Helper()
	xs, err := Read(strings.NewReader(file), traffic.NewRecorder(maxRecord, nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(xs) != 1 {
		t.Fatalf("%d exchanges", len(xs))
	}
	return xs[0]
}

// TestForeignBodies: a body a recorder lacks or cut is known as such,
// never read as an empty or a whole body.
func TestForeignBodies(t *testing.T) {
	json := `"headers":[{"name":"Content-Type","value":"application/json"}],`
	for _, tc := range []struct {
		name      string
		request   string
		response  string
		missing   bool
		truncated bool
		gap       string // what the gap says, in part
		text      string
		size      int64
	}{
		{name: "size without text", response: json + `"content":{"size":786,"mimeType":"application/json"}`,
			missing: true, gap: "none of the body's 786 bytes (content.size without content.text)", size: 786},
		{name: "text shorter than size", response: json + `"content":{"size":786,"text":"{\"items\":["}`,
			truncated: true, gap: "holds 10 of the body's 786 bytes", text: `{"items":[`, size: 786},
		{name: "unknown encoding", response: json + `"content":{"size":3,"text":"eJw=","encoding":"deflate"}`,
			missing: true, gap: `content.encoding "deflate" is not one the reader knows`, size: 3},
		{name: "bad base64", response: json + `"content":{"size":3,"text":"@@@","encoding":"base64"}`,
			missing: true, gap: "not valid base64", size: 3},
		{name: "base64", response: json + `"content":{"size":2,"text":"` + base64.StdEncoding.EncodeToString([]byte("{}")) + `","encoding":"base64"}`,
			text: "{}", size: 2},
		{name: "no content", response: json[:len(json)-1], missing: true, gap: "no response content"},
		{name: "null content", response: json + `"content":null`, missing: true, gap: "no response content"},
		{name: "empty body", response: json + `"content":{"size":0,"mimeType":""}`},
		{name: "whole text", response: json + `"content":{"size":2,"text":"{}"}`, text: "{}", size: 2},
		{name: "text longer than size (compressed size)", response: json + `"content":{"size":1,"text":"{}"}`, text: "{}", size: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := readOne(t, foreignFile(foreignEntry(tc.request, tc.response)), 0)
			b := x.Response.Body
			if b.Missing != tc.missing || b.Truncated != tc.truncated || !strings.Contains(b.Gap, tc.gap) ||
				string(b.Bytes()) != tc.text || b.Size != tc.size {
				t.Errorf("body: missing %v, truncated %v, gap %q, text %q, size %d", b.Missing, b.Truncated, b.Gap, b.Bytes(), b.Size)
			}
			if b.Complete() != (!tc.missing && !tc.truncated) {
				t.Errorf("Complete() = %v", b.Complete())
			}
		})
	}
}

func TestForeignRequestBodies(t *testing.T) {
	for _, tc := range []struct {
		name    string
		request string
		missing bool
		gap     string
		text    string
	}{
		{"postData", `"method":"POST","url":"http://x/api/invoke/a","headers":[],"bodySize":5,"postData":{"mimeType":"text/plain","text":"hello"}`, false, "", "hello"},
		{"no postData, a size", `"method":"POST","url":"http://x/api/invoke/a","headers":[],"bodySize":5`, true, "no postData for a request body of 5 bytes", ""},
		{"no postData, no size", `"method":"POST","url":"http://x/api/invoke/a","headers":[]`, true, "no postData and no bodySize", ""},
		{"form parameters", `"method":"POST","url":"http://x/api/invoke/a","headers":[],"bodySize":5,"postData":{"mimeType":"application/x-www-form-urlencoded","params":[{"name":"a","value":"b"}]}`, true, "form parameters", ""},
		{"text shorter than bodySize", `"method":"POST","url":"http://x/api/invoke/a","headers":[],"bodySize":9,"postData":{"text":"hel"}`, false, "holds 3 of the body's 9 bytes", "hel"},
		{"a GET", `"method":"GET","url":"http://x/api/threads/t","headers":[],"bodySize":0`, false, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := readOne(t, foreignFile(foreignEntry(tc.request, `"headers":[],"content":{"size":0}`)), 0)
			b := x.Request.Body
			if b.Missing != tc.missing || !strings.Contains(b.Gap, tc.gap) || string(b.Bytes()) != tc.text {
				t.Errorf("request body: missing %v, gap %q, text %q", b.Missing, b.Gap, b.Bytes())
			}
		})
	}
}

// TestForeignHeaders: identical duplicates (a HAR library writes the
// page's headers and the wire's) are one header; different values of a
// header leave it one the recording cannot vouch for; a message without a
// header list has none.
func TestForeignHeaders(t *testing.T) {
	req := `"method":"POST","url":"http://x/api/invoke/a","bodySize":2,"postData":{"text":"hi"},"headers":[` +
		`{"name":"Accept","value":"text/event-stream"},{"name":"accept","value":"text/event-stream"},` +
		`{"name":"Authorization","value":"Bearer sk-svc-u1-k1-HeaderSecret77"},{"name":"authorization","value":"Bearer sk-svc-u1-k1-HeaderSecret77"},` +
		`{"name":"X-SVC-Thread-Id","value":"t1"},{"name":"x-svc-thread-id","value":"t2"},{"name":":path","value":"/api"}]`
	x := readOne(t, foreignFile(foreignEntry(req, `"headers":[{"name":"X-SVC-Thread-Id","value":"t1"},{"name":"X-SVC-Thread-Id","value":"t1"}],"content":{"size":0}`)), 0)
	h := x.Request.Header
	if vs := h.Values("Accept"); len(vs) != 1 || x.Request.Gaps.Of("Accept") != "" {
		t.Errorf("Accept %q, gap %q", vs, x.Request.Gaps.Of("Accept"))
	}
	if a, id := traffic.ClassifyAuth(h.Values("Authorization")); a != traffic.AuthWellFormed || id != "u1-k1" {
		t.Errorf("Authorization read as %v %q", a, id)
	}
	if g := x.Request.Gaps.Of("X-Svc-Thread-Id"); !strings.Contains(g, "request header X-Svc-Thread-Id") || !strings.Contains(g, "2 times with different values") {
		t.Errorf("thread header gap %q", g)
	}
	if h.Get(":path") != "" {
		t.Error("a pseudo-header is kept")
	}
	if vs := x.Response.Header.Values("X-Svc-Thread-Id"); len(vs) != 1 || x.Response.Gaps.Of("X-Svc-Thread-Id") != "" {
		t.Errorf("response thread header %q, gap %q", vs, x.Response.Gaps.Of("X-Svc-Thread-Id"))
	}
	// A HAR 1.1-style entry: no header lists, no content.
	x = readOne(t, foreignFile(`{"startedDateTime":"2026-11-20T09:00:00Z","request":{"method":"POST","url":"http://x/api/invoke/a"},"response":{"status":200}}`), 0)
	if g := x.Request.Gaps.Of("Authorization"); !strings.Contains(g, "no request header list") {
		t.Errorf("request gap %q", g)
	}
	if g := x.Response.Gaps.Of("X-SVC-Thread-Id"); !strings.Contains(g, "no response header list") {
		t.Errorf("response gap %q", g)
	}
	if !x.Response.Body.Missing || !x.Request.Body.Missing {
		t.Errorf("bodies: request %+v, response %+v", x.Request.Body, x.Response.Body)
	}
}

// TestForeignTimes: the entry's own times say when the headers and the
// last byte arrived, as precisely as startedDateTime is written.
func TestForeignTimes(t *testing.T) {
	x := readOne(t, foreignFile(foreignEntry("", `"headers":[],"content":{"size":2,"text":"{}"}`)), 0)
	want := time.Date(2026, 11, 20, 9, 0, 0, 250e6, time.UTC)
	// 1 ms for the start, 1 ms for the one timing in whole milliseconds.
	if !x.Start.Equal(want) || x.Precision != 2*time.Millisecond {
		t.Errorf("start %v, precision %v", x.Start, x.Precision)
	}
	if x.Response.HeaderAt != 700*time.Millisecond || x.Response.EndAt != 812500*time.Microsecond {
		t.Errorf("headers at %v, end at %v", x.Response.HeaderAt, x.Response.EndAt)
	}
	if end, ok := x.Response.LastByte(); !ok || end != x.Response.EndAt {
		t.Errorf("LastByte %v %v", end, ok)
	}
	if x.Response.End != traffic.EndUnknown || x.Response.Body.Timed {
		t.Errorf("end %q, timed %v", x.Response.End, x.Response.Body.Timed)
	}
	// A browser says a request the page aborted.
	x = readOne(t, foreignFile(foreignEntry("", `"headers":[],"content":{"size":2,"text":"{}"},"_error":"net::ERR_ABORTED"`)), 0)
	if x.Response.End != traffic.EndClientGone {
		t.Errorf("aborted: end %q", x.Response.End)
	}
	// Seconds only: a second of doubt (and the whole millisecond).
	x = readOne(t, foreignFile(strings.Replace(foreignEntry("", `"headers":[],"content":{"size":0}`), "09:00:00.250Z", "09:00:00Z", 1)), 0)
	if x.Precision != time.Second+time.Millisecond {
		t.Errorf("precision %v", x.Precision)
	}
}

// TestBodiesCapped: a body past the cap keeps its first MaxRecord bytes
// and counts the rest, in plain text and base64, with its chunk timings.
func TestBodiesCapped(t *testing.T) {
	big := strings.Repeat("0123456789", 1000)
	for _, tc := range []struct {
		name, content string
	}{
		{"text", `"content":{"size":10000,"text":"` + big + `"}`},
		{"base64", `"content":{"size":10000,"text":"` + base64.StdEncoding.EncodeToString([]byte(big)) + `","encoding":"base64"}`},
		{"base64, encoding first", `"content":{"encoding":"base64","size":10000,"text":"` + base64.StdEncoding.EncodeToString([]byte(big)) + `"}`},
		{"escaped", `"content":{"size":10000,"text":"` + strings.ReplaceAll(big, "5", `\u0035`) + `"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := readOne(t, foreignFile(foreignEntry("", `"headers":[],`+tc.content)), 100)
			b := x.Response.Body
			if got := string(b.Bytes()); got != big[:100] || !b.Truncated || b.Gap != "" || b.Size != 10000 || b.Missing {
				t.Errorf("body %q..., truncated %v, gap %q, size %d", got[:min(len(got), 20)], b.Truncated, b.Gap, b.Size)
			}
		})
	}
	// A file this harness wrote: chunks past the cap keep their times.
	x := sample()
	var buf bytes.Buffer
	if err := Write(&buf, "test", []traffic.Exchange{x}); err != nil {
		t.Fatal(err)
	}
	got := readOne(t, buf.String(), 4)
	b := got.Response.Body
	if len(b.Chunks) != 2 || string(b.Chunks[0].Data) != "abc" || len(b.Chunks[1].Data) != 1 || b.Chunks[1].Size != 4 ||
		b.Chunks[1].At != x.Response.Body.Chunks[1].At || !b.Truncated || b.Size != 7 {
		t.Errorf("capped chunks %+v, truncated %v, size %d", b.Chunks, b.Truncated, b.Size)
	}
}

// TestStrings: what the stream reader makes of JSON strings is what
// encoding/json makes of them.
func TestStrings(t *testing.T) {
	for _, in := range []string{`"plain"`, `"esc \" \\ \/ \b \f \n \r \t"`, `"\u00e9\u4e16"`, `"\ud83d\ude00 pair"`,
		`"lone \ud83d here"`, `"lone \ude00"`, `"\ud83d\u0041"`, `"caf` + "\xc3\xa9" + `"`, `"bad ` + "\xff" + ` byte"`, `"two ` + "\xff\xfe" + ` bad"`} {
		d := newDecoder(strings.NewReader(in))
		got, err := d.str(1 << 10)
		if err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		var want string
		if err := jsonUnmarshal(in, &want); err != nil {
			t.Fatal(err)
		}
		if string(got.kept) != want || !got.whole() {
			t.Errorf("%s: %q, want %q", in, got.kept, want)
		}
	}
}

// TestBadFiles: a file that is not a HAR file says where it stops being
// one; an empty entries list is no error here (the judge says it holds no
// exchange).
func TestBadFiles(t *testing.T) {
	for _, tc := range []struct{ in, err string }{
		{``, "har: the file is empty"},
		{" \n\t", "har: the file holds only white space"},
		{`[]`, "no JSON object"},
		{`{"log":{"version":"1.2"}}`, "no log.entries"},
		{`{"other":1}`, "no log"},
		{`{"log":{"entries":[{"request":{"method":"GET","url":"x"}},]}}`, "entry 2: not JSON at byte"},
		{`{"log":{"entries":[]}} trailing`, "more after"},
		{`{"log":{"entries":[{"request":{"url":"unterminated}]}}`, "ends inside a string"},
		{`{"log":{"entries":[{"time":01}]}}`, "bad number"},
		{`{"log":{"entries":[{"x":` + strings.Repeat("[", 300) + `]}]}}`, "nested more than"},
	} {
		_, err := Read(strings.NewReader(tc.in), nil)
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%q: %v, want %q", tc.in[:min(len(tc.in), 50)], err, tc.err)
		}
	}
	xs, err := Read(strings.NewReader(`{"log":{"version":"1.2","entries":[]}}`), nil)
	if err != nil || len(xs) != 0 {
		t.Errorf("empty entries: %d, %v", len(xs), err)
	}
}

// generated is a HAR file written on the fly: n small entries around one
// entry whose response text is bodySize bytes, never held whole.
type generated struct {
	parts    []func(w *bytes.Buffer) bool // each writes a piece; false when done
	buf      bytes.Buffer
	i        int
	produced int64
}

func newGenerated(n int, bodySize int64) *generated {
	g := &generated{}
	small := `{"startedDateTime":"2026-11-20T09:00:00.000Z","time":5,"request":{"method":"GET","url":"http://x/api/threads/t%d","headers":[{"name":"Accept","value":"application/json"}],"bodySize":0},` +
		`"response":{"status":200,"headers":[{"name":"Content-Type","value":"application/json"}],"content":{"size":11,"text":"{\"id\":\"t1\"}"}}}`
	k := 0
	g.parts = append(g.parts, func(w *bytes.Buffer) bool { w.WriteString(`{"log":{"version":"1.2","entries":[`); return false })
	g.parts = append(g.parts, func(w *bytes.Buffer) bool {
		fmt.Fprintf(w, small, k)
		w.WriteString(",")
		k++
		return k < n/2
	})
	var left int64 = bodySize
	g.parts = append(g.parts, func(w *bytes.Buffer) bool {
		w.WriteString(`{"startedDateTime":"2026-11-20T09:00:01.000Z","request":{"method":"GET","url":"http://x/big","headers":[],"bodySize":0},` +
			`"response":{"status":200,"headers":[],"content":{"size":` + fmt.Sprint(bodySize) + `,"text":"`)
		return false
	})
	g.parts = append(g.parts, func(w *bytes.Buffer) bool {
		n := min(left, 32<<10)
		w.WriteString(strings.Repeat("x", int(n)))
		left -= n
		return left > 0
	})
	g.parts = append(g.parts, func(w *bytes.Buffer) bool { w.WriteString(`"}}}`); return false })
	g.parts = append(g.parts, func(w *bytes.Buffer) bool {
		w.WriteString(",")
		fmt.Fprintf(w, small, k)
		k++
		return k < n
	})
	g.parts = append(g.parts, func(w *bytes.Buffer) bool { w.WriteString(`]}}`); return false })
	return g
}

func (g *generated) Read(p []byte) (int, error) {
	for g.buf.Len() == 0 {
		if g.i == len(g.parts) {
			return 0, io.EOF
		}
		if !g.parts[g.i](&g.buf) {
			g.i++
		}
	}
	n, _ := g.buf.Read(p)
	g.produced += int64(n)
	return n, nil
}

// TestReadInBoundedMemory: reading a large file (a 64 MiB body among
// 20,000 entries) keeps each body to its cap and takes memory that does
// not grow with the file: the heap the runtime obtains while reading it
// stays far below the body's size.
func TestReadInBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("reads a 66 MB file")
	}
	const body = 64 << 20
	g := newGenerated(20000, body)
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	r := NewReader(g, traffic.NewRecorder(1<<20, nil))
	n := 0
	var bigSize int64
	for {
		x, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
		if x.Response != nil && x.Response.Body.Size == body {
			bigSize = x.Response.Body.Size
			if got := len(x.Response.Body.Bytes()); got != 1<<20 || !x.Response.Body.Truncated {
				t.Errorf("the big body keeps %d bytes (truncated %v)", got, x.Response.Body.Truncated)
			}
		}
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if n != 20001 || bigSize != body {
		t.Fatalf("%d exchanges, big body %d bytes", n, bigSize)
	}
	grown := int64(after.HeapSys) - int64(before.HeapSys)
	t.Logf("read %d MB in %d entries; heap obtained grew by %.1f MB", g.produced>>20, n, float64(grown)/(1<<20))
	if grown > 24<<20 {
		t.Errorf("the heap grew by %d MB reading a file of %d MB: memory grows with the file", grown>>20, g.produced>>20)
	}
}

// BenchmarkReadLargeFile measures reading a file of many entries and one
// large body: bytes allocated per entry, and the heap obtained.
func BenchmarkReadLargeFile(b *testing.B) {
	for i := 0; i < b.N; i++ {
		g := newGenerated(10000, 8<<20)
		r := NewReader(g, traffic.NewRecorder(1<<20, nil))
		for {
			if _, err := r.Next(); err != nil {
				if !errors.Is(err, io.EOF) {
					b.Fatal(err)
				}
				break
			}
		}
		b.SetBytes(g.produced)
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapSys)/(1<<20), "heap-MB")
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }

// TestDialects: what a recorder writes beyond HAR, read as it means it.
// chrome-har's content.size counts the text it was given (in UTF-16 code
// units) and the bytes Chrome received; mitmproxy's har_dump writes only
// answers it had whole.
func TestDialects(t *testing.T) {
	file := func(creator, content string) string {
		return `{"log":{"version":"1.2","creator":{"name":"` + creator + `","version":"1"},"entries":[` +
			foreignEntry("", `"headers":[],`+content) + `]}}`
	}
	for _, tc := range []struct {
		name, creator, content string
		missing, truncated     bool
		gap, text              string
		end                    traffic.End
	}{
		{"chrome-har, whole", "chrome-har", `"content":{"size":4,"text":"{}"}`, false, false, "", "{}", traffic.EndUnknown},
		{"chrome-har, whole, non-ASCII", "chrome-har", `"content":{"size":13,"text":"\"é😀\""}`, false, false, "", `"é😀"`, traffic.EndUnknown},
		{"chrome-har, whole, base64", "chrome-har", `"content":{"size":6,"encoding":"base64","text":"e30="}`, false, false, "", "{}", traffic.EndUnknown},
		{"chrome-har, cut", "chrome-har", `"content":{"size":12,"text":"{}"}`, false, true, "holds 2 of the 10 bytes Chrome received", "{}", traffic.EndUnknown},
		{"chrome-har, no text", "chrome-har", `"content":{"size":829}`, true, false, "none of the 829 bytes Chrome received (chrome-har had no text for the body)", "", traffic.EndUnknown},
		{"mitmproxy", "mitmproxy har_dump", `"content":{"size":2,"text":"{}"}`, false, false, "", "{}", traffic.EndComplete},
		{"another recorder", "a recorder", `"content":{"size":4,"text":"{}"}`, false, true, "holds 2 of the body's 4 bytes", "{}", traffic.EndUnknown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := readOne(t, file(tc.creator, tc.content), 0)
			b := x.Response.Body
			if b.Missing != tc.missing || b.Truncated != tc.truncated || !strings.Contains(b.Gap, tc.gap) || string(b.Bytes()) != tc.text ||
				x.Response.End != tc.end {
				t.Errorf("missing %v, truncated %v, gap %q, text %q, end %q", b.Missing, b.Truncated, b.Gap, b.Bytes(), x.Response.End)
			}
		})
	}
}
