package fakeserver

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/invokeconf/invokeconf/profile"
)

// DefaultRecentRequests is how many requests a server remembers for
// Requests (Config.RecentRequests).
const DefaultRecentRequests = 500

// maxRecordedText bounds each text a recorded request keeps (its path and
// query, each header).
const maxRecordedText = 512

// recordedHeaders are the request headers a Request keeps: those the spec
// gives a meaning to, Authorization aside (kept as the key's ID).
var recordedHeaders = [...]string{"Accept", "Content-Type", hdrThreadID, "X-SVC-Scoped-Tools", "X-SVC-Run-Mode"}

// recordedKeys are recordedHeaders' canonical keys.
var recordedKeys = func() (keys [len(recordedHeaders)]string) {
	for i, h := range recordedHeaders {
		keys[i] = http.CanonicalHeaderKey(h)
	}
	return keys
}()

// maxKeptRaw bounds a text a recorded request keeps as it was sent, to be
// hidden when it is read; a longer one is hidden at once, so that the log
// holds little of each request.
const maxKeptRaw = 4 << 10

// Request is one request the server served, as Requests shows it: a key
// appears only as its ID, never any part of its secret.
type Request struct {
	// Seq numbers the requests from 1 in the order they were answered
	// (their handlers returned, or an SSE stream began: a request is
	// listed before its answer ends at the client); Requests(since)
	// returns those after since.
	Seq    int64     `json:"seq"`
	Time   time.Time `json:"time"`
	Method string    `json:"method"`
	// Path is the path and query as sent, keys hidden, cut at 512 bytes.
	Path   string `json:"path"`
	Status int    `json:"status"`
	// Key is the ID <user>-<key> of the request's key, or what stood in
	// its place: none, not-bearer, malformed, unknown.
	Key string `json:"key"`
	// Headers are the spec's request headers that were sent (Accept,
	// Content-Type, X-SVC-Thread-Id, X-SVC-Scoped-Tools, X-SVC-Run-Mode).
	Headers map[string]string `json:"headers,omitempty"`
	// ElapsedMS is how long the handler took, up to the start of an SSE
	// stream, which goes on after it.
	ElapsedMS float64 `json:"elapsedMs"`
	// Defects and Variants are the switches the request was served with.
	Defects  []string `json:"defects,omitempty"`
	Variants []string `json:"variants,omitempty"`
}

// requestRing keeps the most recent requests.
type requestRing struct {
	mu   sync.Mutex
	buf  []recorded
	next int // where the next one goes
	full bool
	seq  int64
}

// recorded is a Request as the ring keeps it: its method, path and headers
// as they were sent, their keys hidden when they are read (since), so that
// serving a request costs the log little, and the switch set it was served
// with, whose names are written out then too.
type recorded struct {
	Request
	sw      *switchSet
	method  keptText
	path    keptText
	headers [len(recordedHeaders)]keptText
}

// keptText is a text of a request: as it was sent (raw), or already hidden
// (ready) when it was too long to keep raw.
type keptText struct {
	s           string
	sent, ready bool
}

// hiding is how a text of a recorded request has its keys hidden: its
// method (hideMethod), its path and query (hidePath), a header
// (hideHeader).
type hiding func(s *Server, text string) string

func hideMethod(s *Server, text string) string { return s.hideKeys(text) }

func hidePath(s *Server, text string) string {
	return s.requestRedactor().Cut(s.hideKeysInURI(text), maxRecordedText, "...")
}

func hideHeader(s *Server, text string) string {
	return s.requestRedactor().Cut(keyShape.ReplaceAllStringFunc(text, shapeMarker), maxRecordedText, "...")
}

// keep keeps a text of a request, hidden at once if it is too long to keep
// raw.
func keep(s *Server, hide hiding, text string) keptText {
	if len(text) > maxKeptRaw {
		return keptText{s: hide(s, text), sent: true, ready: true}
	}
	return keptText{s: text, sent: true}
}

// text is the kept text as Requests shows it, its keys hidden.
func (k keptText) text(s *Server, hide hiding) string {
	if k.ready {
		return k.s
	}
	return hide(s, k.s)
}

func newRequestRing(n int) *requestRing { return &requestRing{buf: make([]recorded, n)} }

// add records a request served by the view v.
func (q *requestRing) add(v *view, r *http.Request, status int, key string, start time.Time, elapsed time.Duration) {
	s := v.Server
	rc := recorded{Request: Request{Time: start.UTC(), Status: status, Key: key, ElapsedMS: float64(elapsed.Microseconds()) / 1000},
		sw: v.sw, method: keep(s, hideMethod, r.Method), path: keep(s, hidePath, r.URL.RequestURI())}
	for i, k := range recordedKeys {
		switch vals, ok := r.Header[k]; {
		case !ok:
		case len(vals) == 1:
			rc.headers[i] = keep(s, hideHeader, vals[0])
		default:
			rc.headers[i] = keep(s, hideHeader, strings.Join(vals, ", "))
		}
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.seq++
	rc.Seq = q.seq
	q.buf[q.next] = rc
	q.next++
	if q.next == len(q.buf) {
		q.next, q.full = 0, true
	}
}

// since returns the requests after seq, oldest first, their keys hidden as
// the server s hides them.
func (q *requestRing) since(seq int64, s *Server) []Request {
	q.mu.Lock()
	var all []recorded
	if q.full {
		all = append(all, q.buf[q.next:]...)
	}
	all = append(all, q.buf[:q.next]...)
	q.mu.Unlock()
	out := []Request{}
	for _, rc := range all {
		if rc.Seq <= seq {
			continue
		}
		out = append(out, rc.request(s))
	}
	return out
}

// request is the recorded request as Requests shows it.
func (rc *recorded) request(s *Server) Request {
	rq := rc.Request
	rq.Method = rc.method.text(s, hideMethod)
	rq.Path = rc.path.text(s, hidePath)
	for i, h := range recordedHeaders {
		if rc.headers[i].sent {
			if rq.Headers == nil {
				rq.Headers = map[string]string{}
			}
			rq.Headers[h] = rc.headers[i].text(s, hideHeader)
		}
	}
	if rc.sw != nil {
		rq.Defects, rq.Variants = rc.sw.names()
	}
	return rq
}

// clear forgets every request; the numbering goes on.
func (q *requestRing) clear() {
	q.mu.Lock()
	defer q.mu.Unlock()
	clear(q.buf)
	q.next, q.full = 0, false
}

// Requests returns the requests the server answered after the one numbered
// since (0: all it remembers), oldest first. The admin routes are not among
// them.
func (s *Server) Requests(since int64) []Request { return s.ctl.recent.since(since, s) }

// requestRedactor hides the profile's keys and the admin key in what a
// recorded request keeps: a service key becomes [key <user>-<key>].
func (s *Server) requestRedactor() *profile.Redactor {
	s.ctl.redactOnce.Do(func() {
		keys := s.cfg.Profile.Secrets()
		if s.cfg.AdminKey != "" {
			keys = append(keys, s.cfg.AdminKey)
		}
		s.ctl.redactor = profile.NewRedactor(keys, func(k string) string {
			if k == s.cfg.AdminKey {
				return "[admin key]"
			}
			if p, err := parseKey(k); err == nil {
				return "[key " + p.user + "-" + p.key + "]"
			}
			return "[key]"
		})
	})
	return s.ctl.redactor
}

// keyShape finds anything shaped like a key of the spec's form, one the
// server issued or not.
var keyShape = regexp.MustCompile(`sk-svc-[A-Za-z0-9_]+-[A-Za-z0-9_]+-[A-Za-z0-9_]+`)

// shapeMarker is what a text shaped like a key becomes: its ID.
func shapeMarker(k string) string {
	parts := strings.SplitN(k, "-", 5)
	return "[key " + parts[2] + "-" + parts[3] + "]"
}

// hideKeys returns text with the server's keys, the admin key and anything
// shaped like a key hidden (whole keys as their IDs, any piece of a
// secret), for the request log and the recent requests.
func (s *Server) hideKeys(text string) string {
	return s.requestRedactor().Redact(keyShape.ReplaceAllStringFunc(text, shapeMarker))
}

// hideKeysInURI returns a request's path and query with keys hidden: as
// sent, or percent-decoded when the decoded form holds a key (one encoded
// byte by byte passes a search of the form as sent).
func (s *Server) hideKeysInURI(uri string) string {
	if dec, err := url.PathUnescape(uri); err == nil && dec != uri {
		if hidden := s.hideKeys(dec); hidden != dec {
			return hidden
		}
	}
	return s.hideKeys(uri)
}
