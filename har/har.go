// Package har writes and reads recorded exchanges as HAR 1.2 files
// (http://www.softwareishard.com/blog/har-12-spec/).
//
// The arrival time of every response chunk travels in an extension field,
// as HAR allows for fields whose names start with "_":
//
//	"content": {
//	  "size": 123, "mimeType": "text/event-stream", "text": "...",
//	  "_chunks": [{"time": 0.41, "size": 22}, {"time": 812.07, "size": 101}],
//	  "_truncated": false, "_redacted": false, "_sha256": "hex of the whole body as it passed"
//	}
//
// Each _chunks entry is one read from the service: "time" is its arrival in
// milliseconds from the request's startedDateTime, "size" the number of
// bytes of content.text it holds (after keys were hidden; the bytes that
// passed are counted in content.size). Joined in order the chunks are
// content.text. A chunk past the recording cap has its time and a size of 0.
// The request body carries the same fields on postData, and the response
// says how its body ended in "_end" ("complete", "client-gone", "error").
//
// An entry says how far its times can be trusted: "_stalls" are the times,
// [from, to] in milliseconds from the start, when the recording process
// itself ran late (its lateness probe woke late: timing checks do not blame
// the service for a delay the recorder's lateness could explain), "_probed"
// is true when a probe watched the whole exchange, and "_precision" is how
// far, in milliseconds, its times may be off (absent: exact). Times are
// written to the nanosecond, so that a recording read back is judged on the
// times it was judged on when it was made.
//
// Reading (Reader) accepts HAR files written by browser developer tools,
// HAR libraries and mitmproxy: without _chunks the body is one untimed
// chunk, so no timing rule is decided on its chunks, and what the file
// lacks is marked as lacking (see Reader).
package har

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/url"
	"sort"
	"time"
	"unicode/utf8"

	"github.com/invokeconf/invokeconf/traffic"
)

// File is a HAR file.
type File struct {
	Log Log `json:"log"`
}

// Log is a HAR file's log.
type Log struct {
	Version string  `json:"version"`
	Creator Creator `json:"creator"`
	Entries []Entry `json:"entries"`
}

// Creator names the program that wrote a HAR file.
type Creator struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Entry is one exchange.
type Entry struct {
	StartedDateTime string   `json:"startedDateTime"`
	Time            float64  `json:"time"`
	Request         Request  `json:"request"`
	Response        Response `json:"response"`
	Cache           struct{} `json:"cache"`
	Timings         Timings  `json:"timings"`
	// Pageref names the page (a scenario, in a run's evidence) the
	// exchange was made in.
	Pageref string `json:"pageref,omitempty"`
	// ID is the exchange's number in the recording.
	ID int `json:"_id,omitempty"`
	// Error says why the exchange did not complete.
	Error string `json:"_error,omitempty"`
	// Stalls are the recorder's own late spans, [from, to] in ms from the
	// start; Probed says a probe watched the whole exchange; Precision is
	// how far its times may be off, in ms (traffic.Exchange's fields).
	Stalls    [][2]float64 `json:"_stalls,omitempty"`
	Probed    bool         `json:"_probed,omitempty"`
	Precision float64      `json:"_precision,omitempty"`
}

// Request is an entry's request.
type Request struct {
	Method      string      `json:"method"`
	URL         string      `json:"url"`
	HTTPVersion string      `json:"httpVersion"`
	Cookies     []NameValue `json:"cookies"`
	Headers     []NameValue `json:"headers"`
	QueryString []NameValue `json:"queryString"`
	PostData    *PostData   `json:"postData,omitempty"`
	HeadersSize int         `json:"headersSize"`
	BodySize    int64       `json:"bodySize"`
}

// PostData is a request body.
type PostData struct {
	MimeType string `json:"mimeType"`
	Text     string `json:"text"`
	Encoding string `json:"_encoding,omitempty"`
	Extension
}

// Response is an entry's response.
type Response struct {
	Status      int         `json:"status"`
	StatusText  string      `json:"statusText"`
	HTTPVersion string      `json:"httpVersion"`
	Cookies     []NameValue `json:"cookies"`
	Headers     []NameValue `json:"headers"`
	Content     Content     `json:"content"`
	RedirectURL string      `json:"redirectURL"`
	HeadersSize int         `json:"headersSize"`
	BodySize    int64       `json:"bodySize"`
	// End says how the body ended.
	End string `json:"_end,omitempty"`
	// HeaderTime is when the headers arrived, in ms from the start.
	HeaderTime *float64 `json:"_headersTime,omitempty"`
}

// Content is a response body.
type Content struct {
	Size     int64  `json:"size"`
	MimeType string `json:"mimeType"`
	Text     string `json:"text,omitempty"`
	Encoding string `json:"encoding,omitempty"`
	Extension
}

// Extension holds this project's fields on a body.
type Extension struct {
	Chunks    []ChunkTime `json:"_chunks,omitempty"`
	Truncated bool        `json:"_truncated,omitempty"`
	Redacted  bool        `json:"_redacted,omitempty"`
	SHA256    string      `json:"_sha256,omitempty"`
}

// ChunkTime is one chunk's arrival.
type ChunkTime struct {
	Time float64 `json:"time"`
	Size int     `json:"size"`
}

// NameValue is a header, cookie or query parameter.
type NameValue struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Timings is an entry's timings, in ms.
type Timings struct {
	Send    float64 `json:"send"`
	Wait    float64 `json:"wait"`
	Receive float64 `json:"receive"`
}

// Write writes exchanges as a HAR file, in the order they started (by
// startedDateTime, then exchange number). A Spool writes the same file
// without holding the exchanges in memory.
func Write(w io.Writer, creatorVersion string, xs []traffic.Exchange) error {
	// Chronological, as HAR files are; a proxy ends exchanges in any order.
	sorted := append([]traffic.Exchange(nil), xs...)
	sort.SliceStable(sorted, func(i, j int) bool { return keyOf(sorted[i]).less(keyOf(sorted[j])) })
	i := 0
	return writeFile(w, creatorVersion, func() ([]byte, error) {
		if i == len(sorted) {
			return nil, io.EOF
		}
		i++
		return encodeEntry(sorted[i-1])
	})
}

// order is where an entry goes in a HAR file.
type order struct{ start, id int64 }

func keyOf(x traffic.Exchange) order { return order{x.Start.UnixNano(), int64(x.ID)} }

func (a order) less(b order) bool { return a.start < b.start || (a.start == b.start && a.id < b.id) }

// entryIndent is the indentation of an entry in the file writeFile writes.
const entryIndent = "      "

// encodeEntry returns x's entry as writeFile places it.
func encodeEntry(x traffic.Exchange) ([]byte, error) {
	return json.MarshalIndent(entryOf(x), entryIndent, "  ")
}

// writeFile writes a HAR file whose entries next returns (encodeEntry's
// form) until io.EOF, byte for byte as encoding/json writes a File indented
// by two spaces.
func writeFile(w io.Writer, creatorVersion string, next func() ([]byte, error)) error {
	version, err := json.Marshal(creatorVersion)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	bw.WriteString("{\n  \"log\": {\n    \"version\": \"1.2\",\n    \"creator\": {\n      \"name\": \"invokeconf\",\n" +
		"      \"version\": ")
	bw.Write(version)
	bw.WriteString("\n    },\n    \"entries\": [")
	n := 0
	for {
		e, err := next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if n > 0 {
			bw.WriteByte(',')
		}
		n++
		bw.WriteString("\n" + entryIndent)
		bw.Write(e)
	}
	if n > 0 {
		bw.WriteString("\n    ")
	}
	bw.WriteString("]\n  }\n}\n")
	return bw.Flush()
}

// ms writes a duration in milliseconds to the nanosecond; fromMS reads it
// back exactly (a float64 holds every nanosecond count of a recording's
// times, and the product is rounded).
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func fromMS(f float64) time.Duration { return time.Duration(math.Round(f * float64(time.Millisecond))) }

func entryOf(x traffic.Exchange) Entry {
	e := Entry{StartedDateTime: x.Start.UTC().Format(time.RFC3339Nano), ID: x.ID, Error: x.Error,
		Probed: x.Probed, Precision: ms(x.Precision)}
	for _, st := range x.Stalls {
		e.Stalls = append(e.Stalls, [2]float64{ms(st.From), ms(st.To)})
	}
	e.Request = Request{Method: x.Request.Method, URL: x.Request.URL, HTTPVersion: "HTTP/1.1",
		Cookies: []NameValue{}, Headers: headersOf(x.Request.Header), QueryString: queryOf(x.Request.URL),
		HeadersSize: -1, BodySize: x.Request.Body.Size}
	if x.Request.Body.Size > 0 || len(x.Request.Body.Chunks) > 0 {
		text, enc := textOf(x.Request.Body.Bytes())
		e.Request.PostData = &PostData{MimeType: x.Request.Header.Get("Content-Type"), Text: text,
			Encoding: enc, Extension: extensionOf(x.Request.Body)}
	}
	e.Response = Response{Cookies: []NameValue{}, Headers: []NameValue{}, HeadersSize: -1, BodySize: -1}
	if r := x.Response; r != nil {
		text, enc := textOf(r.Body.Bytes())
		e.Response = Response{Status: r.Status, StatusText: http.StatusText(r.Status), HTTPVersion: "HTTP/1.1",
			Cookies: []NameValue{}, Headers: headersOf(r.Header), HeadersSize: -1, BodySize: r.Body.Size,
			End: string(r.End),
			Content: Content{Size: r.Body.Size, MimeType: r.Header.Get("Content-Type"), Text: text, Encoding: enc,
				Extension: extensionOf(r.Body)}}
		if r.HeaderAt >= 0 {
			h := ms(r.HeaderAt)
			e.Response.HeaderTime = &h
			e.Timings.Wait = h
		}
		if n := len(r.Body.Chunks); n > 0 && r.Body.Timed {
			last := ms(r.Body.Chunks[n-1].At)
			e.Time = last
			e.Timings.Receive = max(0, last-e.Timings.Wait)
		} else {
			e.Time = e.Timings.Wait
		}
	}
	return e
}

func extensionOf(b traffic.Body) Extension {
	x := Extension{Truncated: b.Truncated, Redacted: b.Redacted, SHA256: b.SHA256}
	if b.Timed {
		x.Chunks = make([]ChunkTime, len(b.Chunks))
		for i, c := range b.Chunks {
			size := len(c.Data)
			if b.Redacted {
				size = c.Size
			}
			x.Chunks[i] = ChunkTime{Time: ms(c.At), Size: size}
		}
	}
	return x
}

// textOf returns a body as HAR text: as it is when it is UTF-8, base64
// otherwise.
func textOf(b []byte) (string, string) {
	if utf8.Valid(b) {
		return string(b), ""
	}
	return base64.StdEncoding.EncodeToString(b), "base64"
}

func headersOf(h http.Header) []NameValue {
	out := []NameValue{}
	for name, vs := range h {
		for _, v := range vs {
			out = append(out, NameValue{name, v})
		}
	}
	sortNV(out)
	return out
}

func sortNV(nv []NameValue) {
	sort.SliceStable(nv, func(i, j int) bool { return nv[i].Name < nv[j].Name })
}

func queryOf(raw string) []NameValue {
	out := []NameValue{}
	u, err := url.Parse(raw)
	if err != nil {
		return out
	}
	for name, vs := range u.Query() {
		for _, v := range vs {
			out = append(out, NameValue{name, v})
		}
	}
	sortNV(out)
	return out
}
