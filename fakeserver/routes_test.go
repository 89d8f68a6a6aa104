package fakeserver

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// TestRouteTable: every route of the table is served (a request without a
// key is 401, not the 404 of an unknown route), and the table lists all the
// routes of the spec and of docs/bundles.md.
func TestRouteTable(t *testing.T) {
	s := testServer(t, Config{})
	if len(routeTable) != 15 {
		t.Errorf("the route table lists %d routes, want the 15 of the spec and docs/bundles.md", len(routeTable))
	}
	wildcard := regexp.MustCompile(`\{[a-z_]+\}`)
	seen := map[string]bool{}
	for _, rt := range routeTable {
		method, pattern, _ := strings.Cut(rt.pattern, " ")
		if seen[rt.pattern] {
			t.Errorf("route %s listed twice", rt.pattern)
		}
		seen[rt.pattern] = true
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest(method, wildcard.ReplaceAllString(pattern, "x1"), nil))
		if rec.Code != http.StatusUnauthorized {
			t.Errorf("%s without a key: %d %s, want 401", rt.pattern, rec.Code, rec.Body)
		}
	}
}
