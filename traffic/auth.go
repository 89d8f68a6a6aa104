package traffic

import (
	"regexp"
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

// Redactor hides keys in recorded text: every key it has learnt (whole, and
// any piece of its secret from profile.FragmentMin characters on) and
// anything shaped like a key. It learns the keys of the requests it sees, so
// a service that echoes a client's key in a body leaves no trace of it. It
// is safe for concurrent use.
type Redactor struct {
	mu   sync.Mutex
	keys map[string]bool
	r    *profile.Redactor
}

// NewRedactor returns a Redactor that knows keys from the start (a
// profile's, for instance).
func NewRedactor(keys ...string) *Redactor {
	r := &Redactor{keys: map[string]bool{}}
	for _, k := range keys {
		r.Learn(k)
	}
	if r.r == nil {
		r.r = profile.NewRedactor(nil, markKey)
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

// Learn adds a key (or the token of an Authorization value).
func (r *Redactor) Learn(key string) {
	if t := bearerToken(key); t != "" {
		key = t
	}
	if key == "" || isMarker(key) {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.keys[key] {
		return
	}
	r.keys[key] = true
	all := make([]string, 0, len(r.keys))
	for k := range r.keys {
		all = append(all, k)
	}
	r.r = profile.NewRedactor(all, markKey)
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
func (r *Redactor) RedactString(s string) string {
	r.mu.Lock()
	pr := r.r
	r.mu.Unlock()
	s = pr.Redact(s)
	return keyShape.ReplaceAllStringFunc(s, markKey)
}
