package profile

import (
	"sort"
	"strings"
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

// Redact returns s with every key and every piece of a secret hidden: a
// whole key, any FragmentMin characters of a secret, and the start of a
// secret, however short, that follows its key's public part (a key cut in
// two by a bounded read).
func (r *Redactor) Redact(s string) string {
	s = r.hideStarts(s)
	for _, w := range r.whole {
		if strings.Contains(s, w.value) {
			s = strings.ReplaceAll(s, w.value, w.marker)
		}
	}
	return r.pieceOut(s)
}

// hideStarts replaces the start of a secret that follows its key's public
// part, where the rest of the key is missing, with Fragment. Whole keys are
// left to Redact's markers.
func (r *Redactor) hideStarts(s string) string {
	for _, k := range r.starts {
		from := 0
		for {
			i := strings.Index(s[from:], k.public)
			if i < 0 {
				break
			}
			j := from + i + len(k.public)
			m, whole := r.startAt(s[j:], k.public)
			switch {
			case whole, m == 0: // a whole key, or no secret
				from = j
			default:
				s = s[:j] + Fragment + s[j+m:]
				from = j + len(Fragment)
			}
		}
	}
	return s
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

// pieceOut replaces every run of bytes covered by a piece of a secret.
func (r *Redactor) pieceOut(s string) string {
	var b strings.Builder
	last := 0    // s[:last] is written or dropped
	covered := 0 // s[start:covered] is covered by pieces
	start := -1
	for i := 0; i+FragmentMin <= len(s); i++ {
		if !r.first[s[i]] || !r.pieces[s[i:i+FragmentMin]] {
			continue
		}
		if start >= 0 && i > covered {
			b.WriteString(s[last:start])
			b.WriteString(Fragment)
			last, start = covered, -1
		}
		if start < 0 {
			start = i
		}
		covered = i + FragmentMin
	}
	if start < 0 {
		if last == 0 {
			return s
		}
		b.WriteString(s[last:])
		return b.String()
	}
	b.WriteString(s[last:start])
	b.WriteString(Fragment)
	b.WriteString(s[covered:])
	return b.String()
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
	return newRedactor(keys, func(k string) string { return env[k] })
}

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
