package traffic

import (
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/invokeconf/invokeconf/profile"
)

// Auth is the recorded shape of an Authorization header.
type Auth int

// The shapes an Authorization header can have. Only the spec's form
// "Bearer sk-svc-<user>-<key>-<secret>" is well-formed; a value a service
// could read either way is Unclassified, so no rule is decided on it.
const (
	AuthMissing Auth = iota
	AuthWellFormed
	AuthMalformed
	AuthUnclassified
)

// The recorded values of an Authorization header: the key's ID, or its shape.
const (
	authKeyPrefix    = "[key "
	authMalformed    = "[malformed key]"
	authUnclassified = "[unclassified key]"
)

// ClassifyAuth returns the shape of an Authorization value (sent or
// recorded) and, for a well-formed key, its <user>-<key> ID. A header that
// is absent is AuthMissing; an empty one is malformed.
func ClassifyAuth(values []string) (Auth, string) {
	switch {
	case len(values) == 0:
		return AuthMissing, ""
	case len(values) > 1:
		return AuthUnclassified, ""
	}
	v := values[0]
	switch {
	case strings.HasPrefix(v, authKeyPrefix) && strings.HasSuffix(v, "]"):
		return AuthWellFormed, strings.TrimSuffix(strings.TrimPrefix(v, authKeyPrefix), "]")
	case v == authMalformed:
		return AuthMalformed, ""
	case v == authUnclassified:
		return AuthUnclassified, ""
	}
	scheme, tok, found := strings.Cut(v, " ")
	if !found || !strings.EqualFold(scheme, "Bearer") {
		return AuthMalformed, ""
	}
	if scheme != "Bearer" {
		// HTTP auth schemes are case-insensitive; the spec writes "Bearer".
		return AuthUnclassified, ""
	}
	parts := strings.Split(tok, "-")
	if len(parts) < 5 || parts[0] != "sk" || parts[1] != "svc" {
		return AuthMalformed, ""
	}
	for _, p := range parts[2:] {
		if p == "" {
			return AuthMalformed, ""
		}
	}
	if len(parts) > 5 {
		// A secret with a "-" in it: the spec does not say it cannot have one.
		return AuthUnclassified, ""
	}
	return AuthWellFormed, parts[2] + "-" + parts[3]
}

// AuthValue returns what a recording keeps of an Authorization header: the
// key's ID ("[key <user>-<key>]") or its shape, never the secret.
func AuthValue(values []string) string {
	switch a, id := ClassifyAuth(values); a {
	case AuthWellFormed:
		return authKeyPrefix + id + "]"
	case AuthMalformed:
		return authMalformed
	default:
		return authUnclassified
	}
}

// bearerToken returns the token of an Authorization value, if it has one.
func bearerToken(v string) string {
	if scheme, tok, ok := strings.Cut(v, " "); ok && strings.EqualFold(scheme, "Bearer") {
		return strings.TrimSpace(tok)
	}
	return ""
}

// keyShape finds anything shaped like a key of the spec's form.
var keyShape = regexp.MustCompile(`sk-svc-[A-Za-z0-9_]+-[A-Za-z0-9_]+-[A-Za-z0-9_-]+`)

// Redactor hides keys and credentials in recorded text: every key it has
// learnt (whole, and any piece of its secret from profile.FragmentMin
// characters on), anything shaped like a key, and the values of JSON members
// whose names it hides (DefaultHidden, Hide). It learns the keys of the
// requests it sees, so a service that echoes a client's key in a body
// leaves no trace of it. It is safe for concurrent use.
type Redactor struct {
	mu     sync.Mutex
	keys   map[string]bool
	creds  map[string]bool // learnt values of hidden headers and parameters
	hidden nameSet
	r      *profile.Redactor
}

// NewRedactor returns a Redactor that knows keys from the start (a
// profile's, for instance) and hides DefaultHidden.
func NewRedactor(keys ...string) *Redactor {
	r := &Redactor{keys: map[string]bool{}, creds: map[string]bool{}, hidden: newNameSet(DefaultHidden)}
	for _, k := range keys {
		r.Learn(k)
	}
	if r.r == nil {
		r.r = profile.NewRedactor(nil, r.marker)
	}
	return r
}

// markKey is what a whole key becomes.
func markKey(k string) string {
	if a, id := ClassifyAuth([]string{"Bearer " + k}); a == AuthWellFormed {
		return authKeyPrefix + id + "]"
	}
	return authUnclassified
}

// marker is what a whole learnt value becomes: a key its ID or shape, a
// credential Hidden. r.mu is held (profile.NewRedactor calls it).
func (r *Redactor) marker(k string) string {
	if r.creds[k] && !r.keys[k] {
		return Hidden
	}
	return markKey(k)
}

// Learn adds a key (or the token of an Authorization value).
func (r *Redactor) Learn(key string) { r.learn(key, false) }

// learnCredential adds the value of a hidden header or parameter (its
// token, for a Bearer value) when it is long enough to tell from text.
func (r *Redactor) learnCredential(v string) {
	if t := bearerToken(v); t != "" {
		v = t
	}
	if len(v) >= minLearnt {
		r.learn(v, true)
	}
}

func (r *Redactor) learn(key string, credential bool) {
	if t := bearerToken(key); t != "" {
		key = t
	}
	if key == "" || isMarker(key) || key == Hidden {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.keys[key] || r.creds[key] {
		return
	}
	if credential {
		r.creds[key] = true
	} else {
		r.keys[key] = true
	}
	all := make([]string, 0, len(r.keys)+len(r.creds))
	for k := range r.keys {
		all = append(all, k)
	}
	for k := range r.creds {
		if !r.keys[k] {
			all = append(all, k)
		}
	}
	r.r = profile.NewRedactor(all, r.marker)
}

// isMarker reports whether an Authorization value is what a recording
// keeps in a key's place (AuthValue): read back from a HAR file it is no
// key, and learning it would hide every piece of its ID ("bundle" of
// "[key alice-kbundle]") wherever it occurs.
func isMarker(v string) bool {
	return strings.HasPrefix(v, authKeyPrefix) && strings.HasSuffix(v, "]") || v == authMalformed || v == authUnclassified
}

// Redact returns b with every key hidden (b itself when nothing was).
func (r *Redactor) Redact(b []byte) []byte {
	s := r.RedactString(string(b))
	if s == string(b) {
		return b
	}
	return []byte(s)
}

// RedactString returns s with every key hidden.
func (r *Redactor) RedactString(s string) string { return profile.Apply(s, r.Spans(s)) }

// Spans returns the ranges of s that Redact replaces, in order and apart:
// the values of hidden JSON members, then the keys (profile.Redactor), then
// anything shaped like a key.
func (r *Redactor) Spans(s string) []profile.Span {
	spans, _ := r.spans(s)
	return spans
}

// spans is Spans, and where a text that goes on after s could still turn
// into something hidden (see holdFrom).
func (r *Redactor) spans(s string) ([]profile.Span, int) {
	r.mu.Lock()
	pr, hidden := r.r, r.hidden
	r.mu.Unlock()
	fields, hold := hidden.fieldSpans(s)
	spans := pr.SpansBeside(s, fields)
	masked := profile.Masked(s, spans)
	var shaped []profile.Span
	for _, loc := range keyShape.FindAllStringIndex(masked, -1) {
		shaped = append(shaped, profile.Span{From: loc[0], Start: loc[0], End: loc[1], With: markKey(s[loc[0]:loc[1]])})
	}
	if len(shaped) > 0 {
		spans = append(spans, shaped...)
		slices.SortFunc(spans, func(a, b profile.Span) int { return a.Start - b.Start })
	}
	if i := strings.LastIndex(masked, "sk-svc-"); i >= 0 && strings.TrimFunc(masked[i:], isKeyChar) == "" {
		hold = min(hold, i) // a key's shape the text ends in
	}
	return spans, hold
}

// isKeyChar reports whether a key of the spec's shape may hold c.
func isKeyChar(c rune) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}
