package fakeserver

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net/http"
	"strings"
)

// Spec: Authentication. Keys look like sk-svc-<user>-<key>-<secret>.

type apiKey struct {
	user    *user
	id      string // "<user>-<key>", safe to log
	secret  [32]byte
	scopes  []string
	expired bool
	// lastThread is the newest thread the key started (new-thread-reused).
	lastThread *thread
}

type keyParts struct{ user, key, secret string }

var errMalformedKey = errors.New("malformed API key: want sk-svc-<user>-<key>-<secret>")

func parseKey(tok string) (keyParts, error) {
	rest, ok := strings.CutPrefix(tok, "sk-svc-")
	if !ok {
		return keyParts{}, errMalformedKey
	}
	user, rest, ok1 := strings.Cut(rest, "-")
	key, secret, ok2 := strings.Cut(rest, "-")
	if !ok1 || !ok2 || !isKeyPart(user) || !isKeyPart(key) || !isKeyPart(secret) {
		return keyParts{}, errMalformedKey
	}
	return keyParts{user: user, key: key, secret: secret}, nil
}

// isKeyPart reports whether p is a part of a key: one or more of a-z, A-Z,
// 0-9 and _.
func isKeyPart(p string) bool {
	for i := 0; i < len(p); i++ {
		if c := p[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return p != ""
}

func secretSum(secret string) [32]byte { return sha256.Sum256([]byte(secret)) }

// unknownSum is what a secret is compared with when its key is unknown.
var unknownSum = secretSum("\x00unknown")

// authError carries the status an authentication failure answers with.
type authError struct {
	status int
	msg    string
}

func (e *authError) Error() string { return e.msg }

func unauthorized(msg string) error { return &authError{http.StatusUnauthorized, msg} }
func forbidden(msg string) error    { return &authError{http.StatusForbidden, msg} }

// authenticate finds the key of a request. ERR-02..ERR-05: a Bearer that is
// missing, malformed, unknown or expired is 401. ERR-07: a key on an instance
// with API access disabled is 403.
func (s *view) authenticate(r *http.Request) (*apiKey, error) {
	h := headerValue(r, "Authorization")
	if h == "" {
		if s.defect(defMissingKey403) {
			return nil, forbidden("missing Authorization")
		}
		return nil, unauthorized("missing Authorization: Bearer sk-svc-<user>-<key>-<secret>")
	}
	tok, ok := strings.CutPrefix(h, "Bearer ")
	if !ok {
		return nil, unauthorized("Authorization is not a Bearer token")
	}
	parts, err := parseKey(tok)
	if err != nil {
		if s.defect(defMalformedKey400) || s.defect(defAliasMalformedKey400) && s.aliasPath(r) {
			return nil, &authError{http.StatusBadRequest, err.Error()}
		}
		return nil, unauthorized(err.Error())
	}
	k := s.st.keys[parts.user+"-"+parts.key] // fixed since seeding: no lock
	// Compare a digest even for an unknown key, in constant time, so timing
	// does not tell which key IDs exist.
	want := unknownSum
	if k != nil {
		want = k.secret
	}
	got := secretSum(parts.secret)
	if subtle.ConstantTimeCompare(got[:], want[:]) != 1 || k == nil {
		if s.defect(defUnknownKey403) || s.defect(defThreadSegmentUnknownKey403) && r.PathValue("thread") != "" {
			return nil, forbidden("unknown API key")
		}
		return nil, unauthorized("unknown API key")
	}
	if k.expired {
		if s.defect(defExpired403) || s.defect(defProjectExpired403) && projectRoute(r) {
			return nil, forbidden("API key expired")
		}
		return nil, unauthorized("API key expired")
	}
	if k.user.apiDisabled && !s.defect(defApiDisabledIgnored) && !s.inCell(defThreadSegmentApiDisabledIgnored, r) && !s.inCell(defAbortApiDisabledIgnored, r) {
		return nil, forbidden("API access is disabled for this instance")
	}
	return k, nil
}

// has reports whether the key holds a scope exactly.
func (k *apiKey) has(scope string) bool {
	for _, sc := range k.scopes {
		if sc == scope {
			return true
		}
	}
	return false
}

// canChat reports whether the key's scopes cover agent:chat:<value>, where
// value is the literal path value (AUTH-01, AUTH-02).
func (k *apiKey) canChat(value string) bool {
	return k.has("agent:chat:"+value) || k.has("agent:chat:*")
}

// hasChatScope reports whether the key holds any agent:chat scope (the
// abort-any-chat-scope defect).
func (k *apiKey) hasChatScope() bool {
	for _, sc := range k.scopes {
		if strings.HasPrefix(sc, "agent:chat:") {
			return true
		}
	}
	return false
}

// hasWildcard reports whether the key is a wildcard chat key.
func (k *apiKey) hasWildcard() bool { return k.has("agent:chat:*") }
