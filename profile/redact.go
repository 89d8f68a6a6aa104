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
}

type replacement struct{ value, marker string }

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

// Redact returns s with every key and every piece of a secret hidden.
func (r *Redactor) Redact(s string) string {
	for _, w := range r.whole {
		if strings.Contains(s, w.value) {
			s = strings.ReplaceAll(s, w.value, w.marker)
		}
	}
	return r.pieceOut(s)
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
// can keep of them.
func (r *Redactor) Cut(s string, n int, note string) string {
	if len(s) > n+r.maxLen {
		s = s[:n+r.maxLen]
	}
	s = r.Redact(s)
	if len(s) > n {
		return s[:n] + note
	}
	return s
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
