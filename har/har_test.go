package har

import (
	"bytes"
	"net/http"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/invokeconf/invokeconf/traffic"
)

func sample() traffic.Exchange {
	start := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	return traffic.Exchange{ID: 1, Start: start,
		Request: traffic.Request{Method: "POST", URL: "http://127.0.0.1:1/api/invoke/agt?async=false",
			Header: http.Header{"Accept": {"text/event-stream"}, "Authorization": {"[key u-k]"}},
			Body:   traffic.Body{Size: 2, Timed: true, Chunks: []traffic.Chunk{{At: 0, Size: 2, Data: []byte("hi")}}}},
		Response: &traffic.Response{Status: 200, HeaderAt: 1500 * time.Microsecond, End: traffic.EndComplete,
			Header: http.Header{"Content-Type": {"text/event-stream"}},
			Body: traffic.Body{Size: 7, Timed: true, SHA256: "ab", Chunks: []traffic.Chunk{
				{At: 2 * time.Millisecond, Size: 3, Data: []byte("abc")},
				{At: 812250 * time.Microsecond, Size: 4, Data: []byte("\xffdef")}}}},
		Stalls: []traffic.Stall{{From: 3*time.Millisecond + 7, To: 41*time.Millisecond + 123}}, Probed: true,
		Precision: 1234567}
}

func TestRoundTrip(t *testing.T) {
	for _, strip := range []bool{false, true} {
		x := sample()
		if strip {
			x = traffic.StripBodies(x)
		}
		var buf bytes.Buffer
		if err := Write(&buf, "test", []traffic.Exchange{x}); err != nil {
			t.Fatal(err)
		}
		if strip && strings.Contains(buf.String(), "abc") {
			t.Errorf("a stripped recording keeps a body: %s", buf.String())
		}
		got, err := Read(&buf, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 {
			t.Fatalf("read %d exchanges", len(got))
		}
		g, w := got[0], x
		if !g.Start.Equal(w.Start) || g.Request.URL != w.Request.URL || g.Request.Header.Get("Accept") != "text/event-stream" {
			t.Errorf("request differs: %+v", g.Request)
		}
		gb, wb := g.Response.Body, w.Response.Body
		if !bytes.Equal(gb.Bytes(), wb.Bytes()) || !gb.Timed || gb.Redacted != strip || len(gb.Chunks) != 2 {
			t.Errorf("body differs: %+v", gb)
		}
		for i := range gb.Chunks {
			if gb.Chunks[i].At != wb.Chunks[i].At || gb.Chunks[i].Size != wb.Chunks[i].Size {
				t.Errorf("chunk %d: %v %d, want %v %d", i, gb.Chunks[i].At, gb.Chunks[i].Size, wb.Chunks[i].At, wb.Chunks[i].Size)
			}
		}
		if g.Response.HeaderAt != 1500*time.Microsecond || g.Response.End != traffic.EndComplete {
			t.Errorf("headers at %v, end %q", g.Response.HeaderAt, g.Response.End)
		}
		// The recorder's lateness and precision survive, to the
		// nanosecond: a re-judged recording reaches the timing verdicts
		// its recorder reached.
		if !reflect.DeepEqual(g.Stalls, w.Stalls) || g.Probed != w.Probed || g.Precision != w.Precision {
			t.Errorf("stalls %v probed %v precision %v, want %v %v %v", g.Stalls, g.Probed, g.Precision, w.Stalls, w.Probed, w.Precision)
		}
	}
}

// TestTimesRoundTripToTheNanosecond: every duration a recording holds is
// read back as written, however many nanoseconds it has.
func TestTimesRoundTripToTheNanosecond(t *testing.T) {
	for _, d := range []time.Duration{0, 1, 999, 1000001, 812250123, 20*time.Second + 7, 2*time.Hour + 123456789, 1<<52 + 3} {
		if got := fromMS(ms(d)); got != d {
			t.Errorf("%d ns read back as %d", int64(d), int64(got))
		}
	}
}

// TestForeignFiles: files as browser developer tools and mitmproxy write
// them are read, untimed, with their keys hidden.
func TestForeignFiles(t *testing.T) {
	for _, tc := range []struct {
		file   string
		n      int
		secret string
		first  string
	}{
		{"testdata/devtools.har", 2, "DevtoolsSecret", "event: start\ndata: {}\n\n"},
		{"testdata/mitmproxy.har", 1, "MitmSecret", `{"threadID":"thr_9"`},
	} {
		f, err := os.Open(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		xs, err := Read(f, nil)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if len(xs) != tc.n {
			t.Fatalf("%s: %d exchanges, want %d", tc.file, len(xs), tc.n)
		}
		x := xs[0]
		if a, _ := traffic.ClassifyAuth(x.Request.Header.Values("Authorization")); a != traffic.AuthWellFormed {
			t.Errorf("%s: Authorization read as %v", tc.file, a)
		}
		var buf bytes.Buffer
		if err := Write(&buf, "test", xs); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(buf.String(), tc.secret) {
			t.Errorf("%s: the key survives reading", tc.file)
		}
		b := x.Response.Body
		if b.Timed || !strings.HasPrefix(string(b.Bytes()), tc.first) {
			t.Errorf("%s: body timed %v, starts %q", tc.file, b.Timed, b.Bytes())
		}
		if x.Request.Header.Get(":authority") != "" {
			t.Errorf("%s: a pseudo-header is kept", tc.file)
		}
	}
	f, _ := os.Open("testdata/devtools.har")
	defer f.Close()
	xs, _ := Read(f, nil)
	if got := string(xs[1].Response.Body.Bytes()); got != `{"title":"Unauthorized","status":401}` {
		t.Errorf("base64 content read as %q", got)
	}
}

func TestChunksThatDoNotAddUpLeaveTheBodyMissing(t *testing.T) {
	in := `{"log":{"version":"1.2","entries":[{"startedDateTime":"2026-11-20T09:00:00Z","_id":1,"request":{"method":"GET","url":"http://x/"},
	"response":{"status":200,"_end":"complete","content":{"size":3,"text":"abc","_chunks":[{"time":1,"size":2}]}}}]}}`
	xs, err := Read(strings.NewReader(in), nil)
	if err != nil {
		t.Fatal(err)
	}
	b := xs[0].Response.Body
	if !b.Missing || !strings.Contains(b.Gap, "_chunks hold 2 bytes, its text 3") || len(b.Bytes()) != 0 {
		t.Errorf("body %+v", b)
	}
}
