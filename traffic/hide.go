package traffic

import (
	"net/url"
	"slices"
	"strings"

	"github.com/invokeconf/invokeconf/profile"
)

// Credentials other than the spec's Authorization header are hidden by
// name: a header, a query parameter or a JSON member whose name is one of
// DefaultHidden (or one a user adds) keeps its place and loses its value.

// DefaultHidden are the names whose values a recording hides by default,
// as header names, query parameters and JSON members alike. Names compare
// without case, "-" and "_": "X-Api-Key" is also x_api_key and xApiKey.
var DefaultHidden = []string{
	// headers
	"X-Api-Key", "Api-Key", "X-Auth-Token", "X-Access-Token", "X-Forwarded-Authorization",
	"X-Amz-Security-Token", "X-Goog-Api-Key", "Ocp-Apim-Subscription-Key", "X-Functions-Key",
	"Private-Token", "X-Vault-Token", "X-Csrf-Token", "X-Xsrf-Token",
	// query parameters and JSON members
	"api_key", "apikey", "key", "token", "access_token", "refresh_token", "id_token", "auth",
	"authorization", "password", "passwd", "secret", "client_secret", "private_key",
	"signature", "sig", "X-Amz-Signature", "X-Amz-Credential",
}

// Hidden is what a hidden value becomes: in a header, a query parameter
// (percent-encoded there) and a JSON string, where it reads the same
// whether the JSON stands alone or inside another JSON string (an event's
// content).
const Hidden = "[hidden]"

// minLearnt is the length from which a hidden value is also hidden
// wherever else it occurs (learnt as a key): shorter ones ("1", "yes")
// would hide ordinary text.
const minLearnt = 8

// maxNameLen bounds the names looked for in JSON text.
const maxNameLen = 64

// normName is a name as DefaultHidden's are compared.
func normName(s string) string {
	s = strings.ToLower(s)
	if !strings.ContainsAny(s, "-_") {
		return s
	}
	return dashes.Replace(s)
}

// dashes drops the separators normName ignores (built once: a replacer
// built per name cost the redaction of a run's evidence a tenth of a
// second).
var dashes = strings.NewReplacer("-", "", "_", "")

// nameSet is a set of normalised names.
type nameSet map[string]bool

func newNameSet(names []string) nameSet {
	set := nameSet{}
	for _, n := range names {
		if n = normName(strings.TrimSpace(n)); n != "" {
			set[n] = true
		}
	}
	return set
}

func (s nameSet) has(name string) bool { return len(name) <= maxNameLen && s[normName(name)] }

func isNameChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// fieldSpans finds the string values of JSON members named in set, as
// JSON text ("password": "v") and as JSON text inside a JSON string
// (\"password\": \"v\"), and returns them as spans that hide the value.
// A value the text ends in is hidden to the end. hold is where a member
// begins whose value the text ends before (its name, colon or opening
// quote are there, not its value): what follows may be a value to hide;
// len(s) when there is none.
func (set nameSet) fieldSpans(s string) (spans []profile.Span, hold int) {
	hold = len(s)
	for i := 0; i < len(s); i++ {
		q := strings.IndexByte(s[i:], '"')
		if q < 0 {
			break
		}
		i += q
		inner := i > 0 && s[i-1] == '\\' // inside a JSON string: quotes are \"
		from := i                        // where the member begins
		if inner {
			from--
		}
		j := i + 1
		for j < len(s) && j-i <= maxNameLen && isNameChar(s[j]) {
			j++
		}
		if j == len(s) {
			hold = min(hold, from) // a name the text ends in: any name, once whole
			break
		}
		if j == i+1 || !set.has(s[i+1:j]) {
			continue
		}
		k, ok := quote(s, j, inner)
		if k == len(s) {
			hold = min(hold, from)
			break
		}
		if !ok {
			continue
		}
		k = skipSpace(s, k)
		if k < len(s) && s[k] != ':' {
			continue
		}
		k = skipSpace(s, k+1)
		v, ok := quote(s, k, inner)
		if k >= len(s) || v == len(s) && !ok {
			hold = min(hold, from)
			break
		}
		if !ok {
			continue
		}
		end := valueEnd(s, v, inner)
		if end > v { // an empty value hides nothing
			spans = append(spans, profile.Span{From: from, Start: v, End: end, With: Hidden})
		}
		i = end
	}
	return spans, hold
}

// quote reads a quote at s[i] (\" when inner) and returns what follows it
// and whether it was there; i = len(s) when s ends first.
func quote(s string, i int, inner bool) (int, bool) {
	if inner {
		if i < len(s) && s[i] != '\\' {
			return i, false
		}
		i++
	}
	if i >= len(s) {
		return len(s), false
	}
	return i + 1, s[i] == '"'
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// valueEnd returns where the JSON string value starting at v ends (its
// closing quote), or len(s) when s ends first.
func valueEnd(s string, v int, inner bool) int {
	for v < len(s) {
		switch {
		case !inner && s[v] == '\\':
			v += 2
		case !inner && s[v] == '"':
			return v
		case inner && strings.HasPrefix(s[v:], `\\`):
			// The inner string's own escape: its next character is
			// escaped once more when it is a quote or a backslash.
			v += 2
			if v < len(s) && s[v] == '\\' {
				v++
			}
			v++
		case inner && strings.HasPrefix(s[v:], `\"`):
			return v
		case inner && s[v] == '\\':
			v += 2
		case inner && s[v] == '"':
			return v // the outer string ends: the inner text was cut
		default:
			v++
		}
	}
	return len(s)
}

// hiddenQuery returns a raw query with the values of hidden parameters
// replaced by Hidden (their values learnt first), and the values that hold
// a key once decoded redacted; the rest byte for byte.
func (r *Redactor) hiddenQuery(raw string) string {
	parts := strings.Split(raw, "&")
	changed := false
	for i, p := range parts {
		name, value, hasValue := strings.Cut(p, "=")
		dn := unescapeQuery(name)
		dv := unescapeQuery(value)
		switch {
		case r.hides(dn) && hasValue:
			r.learnCredential(dv)
			parts[i], changed = name+"="+queryEscape(Hidden), true
		default:
			rn, rv := r.RedactString(dn), r.RedactString(dv)
			if rn == dn && rv == dv {
				continue
			}
			parts[i], changed = queryEscape(rn), true
			if hasValue {
				parts[i] += "=" + queryEscape(rv)
			}
		}
	}
	if !changed {
		return raw
	}
	return strings.Join(parts, "&")
}

// hides reports whether values under name are hidden.
func (r *Redactor) hides(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.hidden.has(name)
}

// Hide adds names (headers, query parameters and JSON members) whose
// values are hidden, beside DefaultHidden.
func (r *Redactor) Hide(names ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for n := range newNameSet(names) {
		r.hidden[n] = true
	}
}

// HiddenNames returns the names whose values are hidden, normalised
// (lower case, without "-" and "_"), sorted.
func (r *Redactor) HiddenNames() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.hidden))
	for n := range r.hidden {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// unescapeQuery decodes a query component, or returns it as it is when it
// is not valid percent-encoding.
func unescapeQuery(s string) string {
	if d, err := url.QueryUnescape(s); err == nil {
		return d
	}
	return s
}

func queryEscape(s string) string { return url.QueryEscape(s) }
