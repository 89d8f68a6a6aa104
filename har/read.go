package har

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/invokeconf/invokeconf/traffic"
)

// Bounds of what a Reader keeps of an entry besides its bodies (which
// keep the Recorder's MaxRecord bytes each), so that an entry of any size
// takes bounded memory.
const (
	maxHeaders     = 1000     // header lines kept per message
	maxHeaderName  = 256      // bytes kept of a header's name
	maxHeaderValue = 16 << 10 // bytes kept of a header's value
	maxURL         = 64 << 10 // bytes kept of a URL
	maxShort       = 1 << 10  // bytes kept of a method, date, status text or error
	maxReadChunks  = 1 << 16  // _chunks entries kept per body
	maxReadStalls  = 1 << 14  // _stalls entries kept per entry
)

// Reader reads the exchanges of a HAR file one at a time, so that a file
// of any length is judged in memory that does not grow with it: the file
// is read as a stream, token by token, and what an entry holds is bounded
// (each body keeps at most the Recorder's MaxRecord bytes, as the proxy's
// recording does; what it drops it still counts). Headers and bodies pass
// through the Recorder, so a file's keys are hidden as a recording's are.
//
// Files this harness wrote keep what they say (chunk timings, how each
// body ended). Files other programs wrote (browser developer tools, HAR
// libraries, mitmproxy) are read for what they truly hold: a body the
// recorder has no text for, or less text than its size, or text in an
// encoding this reader does not know, is marked as such (traffic.Body's
// Missing, Truncated and Gap), never read as an empty or whole body; a
// header listed twice with the same value is one header, and with
// different values is marked as one whose value the recording cannot
// vouch for (traffic.HeaderGaps); a message without a header list has
// none it can vouch for; and the entry's own times (startedDateTime, time,
// timings) say when the headers and the last byte of the answer arrived.
type Reader struct {
	d   *decoder
	rec *traffic.Recorder
	// Version and Creator are the file's, once read (they may follow the
	// entries).
	Version string
	Creator Creator
	state   readState
	dialect dialect // what the file's creator writes, known once it is read
	first   bool    // the next member or element is the first of its object or array
	entries int     // entries read
	sawLog  bool
	sawList bool
}

type readState int

// dialect is what a recorder's HAR files say beyond HAR 1.2, or say
// otherwise: the reader was tried on each (docs/passive.md).
type dialect int

const (
	generic dialect = iota
	// chromeHAR: the npm chrome-har library. Its content.size counts the
	// text it was given (in UTF-16 code units, JavaScript's length) plus
	// every byte Chrome received; it writes no sign of how a body ended
	// (a page that aborted a stream looks like one the service ended).
	chromeHAR
	// mitmproxyDump: mitmproxy's har_dump addon. It writes a flow once
	// mitmproxy has its whole response, so every body it has ended as
	// the service ended it; content.size counts the bytes as sent
	// (compressed ones compressed), its text is decoded.
	mitmproxyDump
)

// dialectOf names the dialect of a file's creator.
func dialectOf(c Creator) dialect {
	switch {
	case c.Name == "chrome-har":
		return chromeHAR
	case strings.HasPrefix(c.Name, "mitmproxy"):
		return mitmproxyDump
	}
	return generic
}

const (
	inTop     readState = iota // the file's object, before "log"
	inLog                      // the log object
	inEntries                  // the entries array
	afterLog                   // the file's object, after "log"
	done
)

// NewReader returns a Reader of the HAR file r; rec nil means
// traffic.NewRecorder(0, nil).
func NewReader(r io.Reader, rec *traffic.Recorder) *Reader {
	if rec == nil {
		rec = traffic.NewRecorder(0, nil)
	}
	return &Reader{d: newDecoder(r), rec: rec, state: -1}
}

// Entries returns the number of entries read so far.
func (r *Reader) Entries() int { return r.entries }

// Next returns the next exchange, and io.EOF after the last. Its errors
// name the entry and the byte where the file stopped being a HAR file.
func (r *Reader) Next() (traffic.Exchange, error) {
	x, err := r.next()
	if err != nil && !errors.Is(err, io.EOF) {
		r.state = done
		if r.entries > 0 && r.sawList {
			return x, fmt.Errorf("har: entry %d: %w", r.entries, err)
		}
		return x, fmt.Errorf("har: %w", err)
	}
	return x, err
}

func (r *Reader) next() (traffic.Exchange, error) {
	d := r.d
	for {
		switch r.state {
		case -1:
			if end, err := d.atEnd(); err != nil {
				return traffic.Exchange{}, err
			} else if end {
				// Said as such, not as JSON that ends early.
				if d.off == 0 {
					return traffic.Exchange{}, errors.New("the file is empty")
				}
				return traffic.Exchange{}, errors.New("the file holds only white space")
			}
			if k, err := d.kind(); err != nil {
				return traffic.Exchange{}, err
			} else if k != '{' {
				return traffic.Exchange{}, d.fail("the file is no JSON object")
			}
			_ = d.expect('{')
			r.state, r.first = inTop, true
		case inTop, afterLog:
			key, ok, err := d.nextKey(r.first)
			r.first = false
			switch {
			case err != nil:
				return traffic.Exchange{}, err
			case !ok:
				if end, err := d.atEnd(); err != nil {
					return traffic.Exchange{}, err
				} else if !end {
					return traffic.Exchange{}, d.fail("more after the file's object")
				}
				r.state = done
				if !r.sawLog {
					return traffic.Exchange{}, errors.New("no log")
				}
				if !r.sawList {
					return traffic.Exchange{}, errors.New("no log.entries")
				}
				return traffic.Exchange{}, io.EOF
			case key == "log" && !r.sawLog:
				if err := d.expect('{'); err != nil {
					return traffic.Exchange{}, err
				}
				r.sawLog, r.state, r.first = true, inLog, true
			default:
				if err := d.skip(); err != nil {
					return traffic.Exchange{}, err
				}
			}
		case inLog:
			key, ok, err := d.nextKey(r.first)
			r.first = false
			switch {
			case err != nil:
				return traffic.Exchange{}, err
			case !ok:
				r.state = afterLog
			case key == "entries" && !r.sawList:
				if err := d.expect('['); err != nil {
					return traffic.Exchange{}, err
				}
				r.sawList, r.state, r.first = true, inEntries, true
				r.dialect = dialectOf(r.Creator)
			case key == "version":
				v, err := d.shortString()
				if err != nil {
					return traffic.Exchange{}, err
				}
				r.Version = v
			case key == "creator":
				if err := d.object(func(k string) error {
					switch k {
					case "name":
						v, err := d.shortString()
						r.Creator.Name = v
						return err
					case "version":
						v, err := d.shortString()
						r.Creator.Version = v
						return err
					}
					return d.skip()
				}); err != nil {
					return traffic.Exchange{}, err
				}
			default:
				if err := d.skip(); err != nil {
					return traffic.Exchange{}, err
				}
			}
		case inEntries:
			more, err := d.nextElem(r.first)
			r.first = false
			if err != nil {
				return traffic.Exchange{}, err
			}
			if !more {
				r.state = inLog
				continue
			}
			r.entries++
			e, err := r.readEntry()
			if err != nil {
				return traffic.Exchange{}, err
			}
			x := r.exchangeOf(e)
			if x.ID == 0 {
				x.ID = r.entries
			}
			return x, nil
		default:
			return traffic.Exchange{}, io.EOF
		}
	}
}

// Read reads a whole HAR file (a Reader's exchanges, in file order).
func Read(r io.Reader, rec *traffic.Recorder) ([]traffic.Exchange, error) {
	hr := NewReader(r, rec)
	var xs []traffic.Exchange
	for {
		x, err := hr.Next()
		if errors.Is(err, io.EOF) {
			return xs, nil
		}
		if err != nil {
			return nil, err
		}
		xs = append(xs, x)
	}
}

// nextKey reads past the comma before an object's next member and returns
// its key (its first maxKey bytes); ok is false, the closing brace read,
// at the object's end.
func (d *decoder) nextKey(first bool) (string, bool, error) {
	c, err := d.peek()
	if err != nil {
		return "", false, err
	}
	if c == '}' {
		_, err := d.readByte()
		return "", false, err
	}
	if !first {
		if err := d.expect(','); err != nil {
			return "", false, err
		}
	}
	if k, err := d.kind(); err != nil {
		return "", false, err
	} else if k != '"' {
		return "", false, d.fail("an object key that is no string")
	}
	key, err := d.str(maxKey)
	if err != nil {
		return "", false, err
	}
	return string(key.kept), true, d.expect(':')
}

// nextElem reads past the comma before an array's next element; it
// reports false, the closing bracket read, at the array's end.
func (d *decoder) nextElem(first bool) (bool, error) {
	c, err := d.peek()
	if err != nil {
		return false, err
	}
	if c == ']' {
		_, err := d.readByte()
		return false, err
	}
	if !first {
		return true, d.expect(',')
	}
	return true, nil
}

// shortString reads a string of at most maxShort bytes kept, or null as "".
func (d *decoder) shortString() (string, error) {
	t, err := d.optString(maxShort)
	return string(t.kept), err
}

// optString reads a string, or null (or any other value, skipped) as an
// empty text.
func (d *decoder) optString(limit int) (text, error) {
	k, err := d.kind()
	if err != nil {
		return text{}, err
	}
	if k != '"' {
		return text{}, d.skip()
	}
	return d.str(limit)
}

// optNumber reads a number; ok is false for null or any other value
// (skipped).
func (d *decoder) optNumber() (float64, bool, error) {
	k, err := d.kind()
	if err != nil {
		return 0, false, err
	}
	if k != '0' {
		return 0, false, d.skip()
	}
	f, err := d.number()
	return f, err == nil, err
}

// optBool reads true or false; any other value is false (skipped).
func (d *decoder) optBool() (bool, error) {
	k, err := d.kind()
	if err != nil {
		return false, err
	}
	if k != 't' && k != 'f' {
		return false, d.skip()
	}
	v, err := d.literal()
	return v == "true", err
}

// entry is what a Reader keeps of an entry.
type entry struct {
	started   string
	time      float64
	hasTime   bool
	timings   map[string]float64
	id        int
	err       string
	req, resp message
	hasReq    bool
	hasResp   bool
	// stalls, probed and precision are this harness's own: the recorder's
	// lateness and how far the times may be off.
	stalls       []traffic.Stall
	stallsCut    bool
	probed       bool
	precision    float64
	hasPrecision bool
}

// message is what a Reader keeps of a request or a response.
type message struct {
	method   string
	url      text
	status   int
	headers  []NameValue
	cutNames map[string]bool // headers whose value was longer than kept
	dropped  int             // header lines past maxHeaders
	hasHdrs  bool
	body     bodyEntry
	hasBody  bool // postData or content
	size     float64
	hasSize  bool // bodySize
	end      string
	hdrTime  *float64
	errText  string // a browser's _error on the response
}

// bodyEntry is what a Reader keeps of postData or content.
type bodyEntry struct {
	text      text
	hasText   bool
	size      float64
	hasSize   bool
	encoding  string
	chunks    []ChunkTime
	chunksCut bool
	hasChunks bool
	truncated bool
	redacted  bool
	sha       string
	hasParams bool
}

// textLimit is what a Reader keeps of a body's text: the Recorder's
// MaxRecord bytes, as base64 when the file says so (the encoding may
// follow the text).
func (r *Reader) textLimit() int {
	n := r.rec.MaxRecord
	if n <= 0 {
		n = traffic.DefaultMaxRecord
	}
	return int(min(n, 1<<40)/3*4 + 8)
}

func (r *Reader) readEntry() (entry, error) {
	d := r.d
	var e entry
	err := d.object(func(k string) error {
		var err error
		switch k {
		case "startedDateTime":
			e.started, err = d.shortString()
		case "time":
			e.time, e.hasTime, err = d.optNumber()
		case "timings":
			e.timings = map[string]float64{}
			err = d.object(func(k string) error {
				v, ok, err := d.optNumber()
				if ok && len(e.timings) < 32 {
					e.timings[k] = v
				}
				return err
			})
		case "_id":
			var v float64
			v, _, err = d.optNumber()
			if v >= 1 && v <= 1<<53 {
				e.id = int(v)
			}
		case "_error":
			e.err, err = d.shortString()
		case "_stalls":
			err = r.readStalls(&e)
		case "_probed":
			e.probed, err = d.optBool()
		case "_precision":
			e.precision, e.hasPrecision, err = d.optNumber()
		case "request":
			e.hasReq = true
			e.req, err = r.readMessage(true)
		case "response":
			e.hasResp = true
			e.resp, err = r.readMessage(false)
		default:
			err = d.skip()
		}
		return err
	})
	return e, err
}

// readStalls reads an entry's _stalls, [from, to] pairs in ms; a pair that
// is not two numbers is skipped, and past maxReadStalls the probe is taken
// not to have watched the whole exchange.
func (r *Reader) readStalls(e *entry) error {
	d := r.d
	k, err := d.kind()
	if err != nil {
		return err
	}
	if k != '[' {
		return d.skip()
	}
	return d.array(func(int) error {
		if k, err := d.kind(); err != nil || k != '[' {
			if err != nil {
				return err
			}
			return d.skip()
		}
		var v [2]float64
		n, ok := 0, true
		if err := d.array(func(int) error {
			f, is, err := d.optNumber()
			if n < len(v) {
				v[n] = f
			}
			ok, n = ok && is, n+1
			return err
		}); err != nil {
			return err
		}
		switch {
		case !ok || n != 2 || v[0] < 0 || v[1] < v[0]:
		case len(e.stalls) >= maxReadStalls:
			e.stallsCut = true
		default:
			e.stalls = append(e.stalls, traffic.Stall{From: fromMS(v[0]), To: fromMS(v[1])})
		}
		return nil
	})
}

func (r *Reader) readMessage(request bool) (message, error) {
	d := r.d
	var m message
	err := d.object(func(k string) error {
		var err error
		switch k {
		case "method":
			m.method, err = d.shortString()
		case "url":
			m.url, err = d.optString(maxURL)
		case "status":
			v, _, e := d.optNumber()
			if v >= 0 && v < 1000 {
				m.status = int(v)
			}
			err = e
		case "headers":
			m.hasHdrs = true
			err = r.readHeaders(&m)
		case "postData", "content":
			if (k == "postData") != request {
				return d.skip()
			}
			if k, err := d.kind(); err != nil || k != '{' {
				if err != nil {
					return err
				}
				return d.skip() // null: no body recorded
			}
			m.hasBody = true
			m.body, err = r.readBody()
		case "bodySize":
			m.size, m.hasSize, err = d.optNumber()
		case "_end":
			m.end, err = d.shortString()
		case "_headersTime":
			v, ok, e := d.optNumber()
			if ok {
				m.hdrTime = &v
			}
			err = e
		case "_error":
			m.errText, err = d.shortString()
		default:
			err = d.skip()
		}
		return err
	})
	return m, err
}

func (r *Reader) readHeaders(m *message) error {
	d := r.d
	k, err := d.kind()
	if err != nil {
		return err
	}
	if k != '[' {
		m.hasHdrs = false
		return d.skip()
	}
	return d.array(func(int) error {
		var nv NameValue
		cut := false
		if k, err := d.kind(); err != nil || k != '{' {
			if err != nil {
				return err
			}
			return d.skip()
		}
		if err := d.object(func(k string) error {
			switch k {
			case "name":
				t, err := d.optString(maxHeaderName)
				nv.Name = string(t.kept)
				return err
			case "value":
				t, err := d.optString(maxHeaderValue)
				nv.Value, cut = string(t.kept), !t.whole()
				return err
			}
			return d.skip()
		}); err != nil {
			return err
		}
		if len(m.headers) >= maxHeaders {
			m.dropped++
			return nil
		}
		if cut {
			if m.cutNames == nil {
				m.cutNames = map[string]bool{}
			}
			m.cutNames[http.CanonicalHeaderKey(nv.Name)] = true
		}
		m.headers = append(m.headers, nv)
		return nil
	})
}

func (r *Reader) readBody() (bodyEntry, error) {
	d := r.d
	var b bodyEntry
	err := d.object(func(k string) error {
		var err error
		switch k {
		case "text":
			kind, e := d.kind()
			if e != nil {
				return e
			}
			if kind != '"' {
				return d.skip() // null: no text
			}
			b.hasText = true
			b.text, err = d.str(r.textLimit())
		case "size":
			b.size, b.hasSize, err = d.optNumber()
		case "encoding", "_encoding":
			var v string
			v, err = d.shortString()
			if v != "" {
				b.encoding = v
			}
		case "params":
			kind, e := d.kind()
			if e != nil {
				return e
			}
			b.hasParams = kind == '['
			err = d.skip()
		case "_chunks":
			kind, e := d.kind()
			if e != nil {
				return e
			}
			if kind != '[' {
				return d.skip()
			}
			b.hasChunks = true
			err = d.array(func(int) error {
				var c ChunkTime
				if err := d.object(func(k string) error {
					v, _, err := d.optNumber()
					switch k {
					case "time":
						c.Time = v
					case "size":
						if v < 0 || v > 1<<40 {
							v = -1
						}
						c.Size = int(v)
					}
					return err
				}); err != nil {
					return err
				}
				if len(b.chunks) >= maxReadChunks {
					b.chunksCut = true
					return nil
				}
				b.chunks = append(b.chunks, c)
				return nil
			})
		case "_truncated":
			b.truncated, err = d.optBool()
		case "_redacted":
			b.redacted, err = d.optBool()
		case "_sha256":
			b.sha, err = d.shortString()
		default:
			err = d.skip()
		}
		return err
	})
	return b, err
}

// ours reports whether an entry was written by this harness: it numbers
// its entries and says how each answer ended.
func (e *entry) ours() bool { return e.id > 0 || e.resp.end != "" }

func (r *Reader) exchangeOf(e entry) traffic.Exchange {
	rec := r.rec
	ours := e.ours()
	x := traffic.Exchange{ID: e.id, Error: rec.Redactor.RedactString(e.err), Stalls: e.stalls, Probed: e.probed && !e.stallsCut}
	if e.hasPrecision && e.precision > 0 {
		x.Precision = fromMS(e.precision)
	}
	start, prec, ok := parseStart(e.started)
	if ok {
		x.Start = start
		if !ours {
			// time and timings are in milliseconds, and a timing written
			// as a whole number of them may be off by up to one (mitmproxy
			// truncates each; time is their sum).
			x.Precision = max(x.Precision, prec, time.Millisecond)
			for _, v := range e.timings {
				if v >= 0 && v == float64(int64(v)) {
					x.Precision += time.Millisecond
				}
			}
		}
	}
	req := e.req
	var reqHeader http.Header
	reqHeader, x.Request.Gaps = headerOf(req, ours, !e.hasReq, "request")
	x.Request.Header = rec.Header(reqHeader) // learns the keys first
	x.Request.Method, x.Request.URL = rec.Method(req.method), rec.URL(string(req.url.kept))
	x.Error = rec.Redactor.RedactString(x.Error)
	x.Request.Body = r.bodyOf(req, ours, true)
	resp := e.resp
	switch {
	case !e.hasResp || resp.status == 0:
		if x.Error == "" {
			// Browsers write status 0 for a request that got no response.
			x.Error = "no response"
			if resp.errText != "" {
				x.Error += " (" + rec.Redactor.RedactString(resp.errText) + ")"
			}
		}
		return x
	}
	out := &traffic.Response{Status: resp.status, HeaderAt: -1, End: traffic.End(resp.end)}
	var respHeader http.Header
	respHeader, out.Gaps = headerOf(resp, ours, false, "response")
	out.Header = rec.Header(respHeader)
	out.Body = r.bodyOf(resp, ours, false)
	if resp.hdrTime != nil && *resp.hdrTime >= 0 {
		out.HeaderAt = fromMS(*resp.hdrTime)
	}
	if !ours {
		// The entry's own times: the headers came when all but the
		// receiving was over, the last byte at its end.
		if rcv, ok := e.timings["receive"]; ok && e.hasTime && rcv >= 0 && e.time >= rcv {
			out.HeaderAt = fromMS(e.time - rcv)
		}
		if e.hasTime && e.time >= 0 {
			// A time of 0 (mitmproxy sums whole milliseconds) is kept as
			// 1 µs: EndAt 0 means unknown.
			out.EndAt = max(fromMS(e.time), time.Microsecond)
		}
		out.End = foreignEnd(resp.errText)
		if out.End == traffic.EndUnknown && r.dialect == mitmproxyDump {
			out.End = traffic.EndComplete
		}
	}
	x.Response = out
	return x
}

// foreignEnd reads how a browser says a body ended: its _error ("" when
// none) names a request the page aborted, or a network error.
func foreignEnd(errText string) traffic.End {
	switch {
	case errText == "":
		return traffic.EndUnknown
	case strings.Contains(strings.ToUpper(errText), "ABORTED"), strings.Contains(strings.ToUpper(errText), "CANCEL"):
		return traffic.EndClientGone
	}
	return traffic.EndError
}

// parseStart reads startedDateTime and how precise it is.
func parseStart(s string) (time.Time, time.Duration, bool) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, 0, false
	}
	prec := time.Second
	if i := strings.IndexByte(s, '.'); i >= 0 {
		digits := 0
		for _, c := range s[i+1:] {
			if c < '0' || c > '9' {
				break
			}
			digits++
		}
		for ; digits > 0 && prec > time.Nanosecond; digits-- {
			prec /= 10
		}
	}
	return t, prec, true
}

// headerOf rebuilds a message's headers. A file of another program may
// list a header twice (a browser's HAR library writes the page's request
// headers and the wire's): the same value twice is one header; different
// values leave the header's value one the recording cannot vouch for. A
// message without a header list has none it can vouch for.
func headerOf(m message, ours, absent bool, what string) (http.Header, traffic.HeaderGaps) {
	h := http.Header{}
	var gaps traffic.HeaderGaps
	gap := func(name, why string) {
		if gaps == nil {
			gaps = traffic.HeaderGaps{}
		}
		gaps[name] = why
	}
	if !m.hasHdrs { // missing, null or not a list, in any recorder's file: not recorded, not "none"
		gap("", "the recording has no "+what+" header list")
		if absent {
			gap("", "the recording has no "+what)
		}
		return h, gaps
	}
	if m.dropped > 0 {
		gap("", fmt.Sprintf("the recording lists more than %d %s headers (the rest were not read)", maxHeaders, what))
	}
	for name := range m.cutNames {
		gap(name, fmt.Sprintf("the %s header %s is longer than the reader keeps (%d bytes)", what, name, maxHeaderValue))
	}
	differ := map[string]bool{}
	for _, p := range m.headers {
		if strings.HasPrefix(p.Name, ":") {
			continue // HTTP/2 pseudo-headers, as browsers write them
		}
		name := http.CanonicalHeaderKey(strings.TrimSpace(p.Name))
		v := strings.Trim(p.Value, " \t")
		if !ours {
			if old := h.Values(name); len(old) > 0 {
				if sliceHas(old, v) {
					continue // the same line twice
				}
				differ[name] = true
			}
		}
		h.Add(name, v)
	}
	names := make([]string, 0, len(differ))
	for n := range differ {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		gap(n, fmt.Sprintf("the recording lists the %s header %s %d times with different values: which the service got (one line or several, and which) is not known",
			what, n, len(h.Values(n))))
	}
	return h, gaps
}

func sliceHas(ss []string, s string) bool {
	for _, v := range ss {
		if v == s {
			return true
		}
	}
	return false
}

// bodyOf rebuilds a body: split into its timed chunks when the file has
// them, one untimed chunk otherwise; marked for what the recording lacks.
func (r *Reader) bodyOf(m message, ours, request bool) traffic.Body {
	rec := r.rec
	what := "content"
	sizeField := "content.size"
	if request {
		what, sizeField = "postData", "bodySize"
	}
	b := m.body
	size, hasSize := b.size, b.hasSize
	if request {
		size, hasSize = m.size, m.hasSize
	}
	// What a gap says: "none of the body's N bytes (content.size without
	// content.text)", "M of the body's N bytes (content.text is shorter
	// than content.size)".
	noneOf := func(n int64) string {
		return fmt.Sprintf("the recording holds none of the body's %d bytes (%s without %s.text)", n, sizeField, what)
	}
	someOf := func(m, n int64) string {
		return fmt.Sprintf("the recording holds %d of the body's %d bytes (%s.text is shorter than %s)", m, n, what, sizeField)
	}
	if !request && !ours && r.dialect == chromeHAR && hasSize {
		// chrome-har counts the text it was given and the bytes Chrome
		// received: the body's size is what is left of it.
		noneOf = func(n int64) string {
			return fmt.Sprintf("the recording holds none of the %d bytes Chrome received (chrome-har had no text for the body)", n)
		}
		someOf = func(m, n int64) string {
			return fmt.Sprintf("the recording holds %d of the %d bytes Chrome received (chrome-har's text is shorter)", m, n)
		}
		if b.hasText {
			size -= float64(b.text.units)
			if size < 0 {
				hasSize = false // not its way of counting: no size known
			}
		}
	}
	var out traffic.Body
	missing := func(gap string) traffic.Body {
		out.Missing, out.Gap, out.Chunks = true, gap, nil
		if hasSize && size > 0 {
			out.Size = int64(size)
		}
		return out
	}
	if !m.hasBody {
		switch {
		case request && hasSize && size > 0:
			return missing(fmt.Sprintf("the recording has no %s for a request body of %d bytes (%s)", what, int64(size), sizeField))
		case request && (!hasSize || size < 0) && bodyMethod(m.method) && !ours:
			return missing(fmt.Sprintf("the recording has no %s and no %s for the request body", what, sizeField))
		case !request && !ours:
			return missing("the recording has no response content")
		}
		return out
	}
	if b.redacted {
		out.Redacted = true
	}
	out.Truncated, out.SHA256 = b.truncated, b.sha
	var data []byte
	var full int64 // the bytes of the whole text, decoded
	switch strings.ToLower(b.encoding) {
	case "":
		data, full = b.text.kept, b.text.total
	case "base64":
		kept := b.text.kept
		if !b.text.whole() {
			kept = kept[:len(kept)/4*4]
		}
		var err error
		data, err = base64.StdEncoding.DecodeString(string(kept))
		if err != nil {
			return missing(fmt.Sprintf("the recording's %s.text is not valid base64", what))
		}
		full = b.text.total / 4 * 3
		switch {
		case b.text.tail[1] == '=' && b.text.tail[0] == '=':
			full -= 2
		case b.text.tail[1] == '=':
			full--
		}
		if b.text.whole() {
			full = int64(len(data))
		}
	default:
		return missing(fmt.Sprintf("the recording's %s.encoding %q is not one the reader knows", what, b.encoding))
	}
	limit := r.rec.MaxRecord
	if limit <= 0 {
		limit = traffic.DefaultMaxRecord
	}
	if int64(len(data)) > limit {
		data = data[:limit]
	}
	cut := int64(len(data)) < full // --max-record
	out.Size = max(int64(size), full)
	if !hasSize {
		out.Size = full
	}
	if !ours && !b.redacted {
		switch {
		case !b.hasText && b.hasParams:
			return missing(fmt.Sprintf("the recording holds the %s as form parameters, not its text", what))
		case !b.hasText && (!hasSize || size != 0):
			if hasSize && size > 0 {
				return missing(noneOf(int64(size)))
			}
			return missing(fmt.Sprintf("the recording holds no %s.text", what))
		case hasSize && float64(full) < size:
			out.Truncated = true
			out.Gap = someOf(full, int64(size))
		}
	}
	if cut {
		out.Truncated = true
	}
	if !b.hasChunks {
		if len(data) > 0 {
			out.Chunks = []traffic.Chunk{{At: -1, Size: len(data), Data: rec.Redactor.Redact(data)}}
		}
		return out
	}

	out.Timed = true
	off, sum := 0, int64(0)
	for _, c := range b.chunks {
		if c.Size < 0 {
			return missing(fmt.Sprintf("the recording's %s._chunks hold a negative size", what))
		}
		ch := traffic.Chunk{At: fromMS(c.Time), Size: c.Size}
		if !b.redacted {
			if take := min(c.Size, len(data)-off); take > 0 {
				ch.Data = data[off : off+take]
				off += take
			}
			sum += int64(c.Size)
		}
		out.Chunks = append(out.Chunks, ch)
	}
	if b.chunksCut {
		out.Truncated = true
	}
	if !b.redacted && !b.chunksCut && sum != full {
		return missing(fmt.Sprintf("the recording's %s._chunks hold %d bytes, its text %d", what, sum, full))
	}
	out.Chunks = rec.Redactor.Chunks(out.Chunks) // keys hidden in the body as a whole, across its chunks
	return out
}

// bodyMethod reports whether requests of the method usually carry a body.
func bodyMethod(m string) bool {
	switch strings.ToUpper(m) {
	case "POST", "PUT", "PATCH":
		return true
	}
	return false
}
