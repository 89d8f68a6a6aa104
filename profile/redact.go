package profile

import (
	"slices"
	"sort"
	"strings"
	"sync"
)

// FragmentMin is the length from which a piece of a key's secret counts as a
// leak: a target that echoes a key can get it cut anywhere (a quoted body is
// cut at a few hundred bytes), and what is left of the secret must not show.
const FragmentMin = 6

// Fragment replaces a piece of a key's secret that is not the whole key.
const Fragment = "[redacted]"

// Redactor hides a profile's keys in text: a whole key becomes a marker, and
// then any piece of FragmentMin or more characters of a key's secret becomes
// Fragment. A key's secret is what follows its last "-" for keys of the form
// sk-svc-<user>-<key>-<secret> (the public part stays readable), the whole
// key otherwise.
type Redactor struct {
	whole  []replacement
	pieces map[string]bool // every FragmentMin-long substring of a secret
	first  [256]bool       // the first bytes of pieces, a cheap filter
	maxLen int             // the longest key
	// starts holds the sk-svc keys' public parts with their secrets: a
	// public part followed by the start of its secret is a key cut in two
	// (by a bounded read, or a cut), and even one character of that start
	// is hidden, since the public part says whose secret it is.
	starts []keyStart
}

type replacement struct{ value, marker string }

type keyStart struct{ public, secret string }

// newRedactor returns a Redactor for keys; marker names what a whole key
// becomes.
func newRedactor(keys []string, marker func(key string) string) *Redactor {
	r := &Redactor{pieces: map[string]bool{}}
	for _, k := range keys {
		if k == "" {
			continue
		}
		r.whole = append(r.whole, replacement{k, marker(k)})
		r.maxLen = max(r.maxLen, len(k))
		sec := secretOf(k)
		if len(sec) < len(k) {
			r.starts = append(r.starts, keyStart{k[:len(k)-len(sec)], sec})
		}
		for i := 0; i+FragmentMin <= len(sec); i++ {
			r.pieces[sec[i:i+FragmentMin]] = true
			r.first[sec[i]] = true
		}
	}
	// Longest first, so a key that contains another is replaced whole.
	sort.SliceStable(r.whole, func(i, j int) bool { return len(r.whole[i].value) > len(r.whole[j].value) })
	return r
}

// secretOf returns the part of a key that must never show.
func secretOf(k string) string {
	if i := strings.LastIndex(k, "-"); i > 0 && i+1 < len(k) && strings.HasPrefix(k, "sk-svc-") {
		return k[i+1:]
	}
	return k
}

// Span is a range of a text that redaction replaces: Text[Start:End]
// becomes With. From (at most Start) is where the text that decided it
// begins: a secret's start is hidden because of the public part before it.
type Span struct {
	From, Start, End int
	With             string
}

// Redact returns s with every key and every piece of a secret hidden: a
// whole key, any FragmentMin characters of a secret, and the start of a
// secret, however short, that follows its key's public part (a key cut in
// two by a bounded read).
func (r *Redactor) Redact(s string) string { return Apply(s, r.Spans(s)) }

// Spans returns the ranges Redact replaces in s, in order and apart. A
// caller that must redact a text it holds in pieces (the chunks of a body)
// redacts their join and maps the spans back to the pieces.
func (r *Redactor) Spans(s string) []Span { return r.SpansBeside(s, nil) }

// SpansBeside is Spans for a text whose ranges given are hidden by the
// caller already: no key is looked for across them, and they are among the
// spans returned.
func (r *Redactor) SpansBeside(s string, given []Span) []Span {
	m := &masker{s: s}
	m.add(given...)
	r.startSpans(m)
	r.wholeSpans(m)
	r.pieceSpans(m)
	return m.spans
}

// MaxLen returns the length of the longest key the Redactor knows.
func (r *Redactor) MaxLen() int { return r.maxLen }

// Apply returns s with spans (in order, apart) replaced.
func Apply(s string, spans []Span) string {
	if len(spans) == 0 {
		return s
	}
	var b strings.Builder
	last := 0
	for _, sp := range spans {
		b.WriteString(s[last:sp.Start])
		b.WriteString(sp.With)
		last = sp.End
	}
	b.WriteString(s[last:])
	return b.String()
}

// Masked returns s with the bytes of spans set to 0, a byte no key holds:
// a search on it finds nothing across what is hidden already.
func Masked(s string, spans []Span) string {
	if len(spans) == 0 {
		return s
	}
	b := []byte(s)
	for _, sp := range spans {
		clear(b[sp.Start:sp.End])
	}
	return string(b)
}

// masker collects spans over a text, keeping the text with their bytes
// masked for the next search.
type masker struct {
	s      string // the text
	masked string // s with the spans' bytes masked (Masked); "" until a span is added
	spans  []Span // sorted, apart
}

// text returns the text to search: s with every span so far masked.
func (m *masker) text() string {
	if len(m.spans) == 0 {
		return m.s
	}
	return m.masked
}

// add records spans (each apart from those already held) and masks them.
func (m *masker) add(spans ...Span) {
	if len(spans) == 0 {
		return
	}
	m.spans = append(m.spans, spans...)
	sort.Slice(m.spans, func(i, j int) bool { return m.spans[i].Start < m.spans[j].Start })
	m.masked = Masked(m.s, m.spans)
}

// startSpans hides the start of a secret that follows its key's public
// part, where the rest of the key is missing. Whole keys are left to
// wholeSpans.
func (r *Redactor) startSpans(m *masker) {
	var found []Span
	s := m.text()
	for _, k := range r.starts {
		from := 0
		for {
			i := strings.Index(s[from:], k.public)
			if i < 0 {
				break
			}
			at := from + i
			j := at + len(k.public)
			n, whole := r.startAt(s[j:], k.public)
			from = j
			// Keys that share a public part are measured together.
			dup := slices.ContainsFunc(found, func(sp Span) bool { return sp.Start == j })
			if !whole && n > 0 && !dup {
				found = append(found, Span{at, j, j + n, Fragment})
				from = j + n
			}
		}
	}
	m.add(found...)
}

// wholeSpans hides every whole key, the longest first, so a key that
// contains another is hidden whole.
func (r *Redactor) wholeSpans(m *masker) {
	for _, w := range r.whole {
		s := m.text()
		var found []Span
		for from := 0; ; {
			i := strings.Index(s[from:], w.value)
			if i < 0 {
				break
			}
			found = append(found, Span{from + i, from + i, from + i + len(w.value), w.marker})
			from += i + len(w.value)
		}
		m.add(found...)
	}
}

// pieceSpans hides every run of bytes covered by a piece of a secret.
func (r *Redactor) pieceSpans(m *masker) {
	s := m.text()
	var found []Span
	covered := 0 // s[start:covered] is covered by pieces
	start := -1
	for i := 0; i+FragmentMin <= len(s); i++ {
		if !r.first[s[i]] || !r.pieces[s[i:i+FragmentMin]] {
			continue
		}
		if start >= 0 && i > covered {
			found = append(found, Span{start, start, covered, Fragment})
			start = -1
		}
		if start < 0 {
			start = i
		}
		covered = i + FragmentMin
	}
	if start >= 0 {
		found = append(found, Span{start, start, covered, Fragment})
	}
	m.add(found...)
}

// startAt measures the longest start of a secret, among the keys whose
// public part is public, that rest begins with, and whether one of those
// keys' secrets stands there whole.
func (r *Redactor) startAt(rest, public string) (longest int, whole bool) {
	for _, k := range r.starts {
		if k.public != public {
			continue
		}
		if strings.HasPrefix(rest, k.secret) {
			return len(k.secret), true
		}
		m := 0
		for m < len(k.secret) && m < len(rest) && rest[m] == k.secret[m] {
			m++
		}
		longest = max(longest, m)
	}
	return longest, false
}

// Cut redacts s and then cuts it to at most n bytes, adding note when it
// cut. Redacting before cutting matters: a cut inside a key leaves a piece
// that a later whole-key redaction would not recognise. Only the first
// n plus the longest key's bytes are redacted, which is all a cut at n
// can keep of them; that bound is moved past a key that straddles it, so
// no key is cut in two before it is redacted (redaction shortens the text,
// and would bring such a piece into the first n bytes).
func (r *Redactor) Cut(s string, n int, note string) string {
	if len(s) > n+r.maxLen {
		s = s[:r.pastKeys(s, n+r.maxLen)]
	}
	s = r.Redact(s)
	if len(s) > n {
		return s[:n] + note
	}
	return s
}

// pastKeys moves end past every whole key of s that straddles it.
func (r *Redactor) pastKeys(s string, end int) int {
	for moved := true; moved; {
		moved = false
		for _, w := range r.whole {
			// Any occurrence in this window starts before end and ends
			// after it.
			lo, hi := max(0, end-len(w.value)+1), min(len(s), end+len(w.value)-1)
			if lo < hi {
				if i := strings.Index(s[lo:hi], w.value); i >= 0 {
					end, moved = lo+i+len(w.value), true
				}
			}
		}
	}
	return end
}

// Redactor returns a Redactor for the profile's keys as they are now: a
// whole key becomes a reference to the environment variable that sets it
// ($INVOKECONF_KEYS_AGENT), so a report names the key's role without
// showing it, and a curl command copied from a report works once the
// variables are exported.
func (p *Profile) Redactor() *Redactor {
	env := map[string]string{}
	var keys []string
	for _, f := range p.Fields() {
		if f.Secret && f.Kind == "string" && f.Value() != "" {
			if _, dup := env[f.Value()]; !dup {
				env[f.Value()] = "$" + f.Env
				keys = append(keys, f.Value())
			}
		}
	}
	var id strings.Builder
	for _, k := range keys {
		id.WriteString(k + "\x00" + env[k] + "\x00")
	}
	redactors.Lock()
	defer redactors.Unlock()
	if r, ok := redactors.m[id.String()]; ok {
		return r
	}
	if len(redactors.m) >= maxRedactors {
		clear(redactors.m)
	}
	r := newRedactor(keys, func(k string) string { return env[k] })
	redactors.m[id.String()] = r
	return r
}

// redactors keeps the Redactors made for a set of keys: one is read-only
// once made, and a run makes one per scenario, and planning one per
// placeholder and profile field, from the same few keys (building the
// pieces of every secret is most of what planning a run cost).
var redactors = struct {
	sync.Mutex
	m map[string]*Redactor
}{m: map[string]*Redactor{}}

// maxRedactors bounds redactors: a process that reads many profiles (a
// fuzz test) starts over.
const maxRedactors = 64

// RedactEnv is Redactor().Redact(s).
func (p *Profile) RedactEnv(s string) string { return p.Redactor().Redact(s) }

// EnvRedactor returns Redactor().Redact, for a caller that redacts many
// strings: the keys are looked up once.
func (p *Profile) EnvRedactor() func(string) string { return p.Redactor().Redact }

// Redact replaces every key of the profile in s with a marker that keeps the
// key's public part (sk-svc-<user>-<key>-) so a reader can still tell keys
// apart, and hides every piece of a secret.
func (p *Profile) Redact(s string) string {
	return newRedactor(p.Secrets(), RedactKey).Redact(s)
}
