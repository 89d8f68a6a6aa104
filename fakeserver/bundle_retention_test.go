package fakeserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// bundleDo serves one bundle request with the bundles key.
func bundleDo(t *testing.T, s *Server, method, path, body string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+bundleKey(t))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	return rec
}

// TestRemovedInstallationsBounded: however many installations are made and
// removed, the store keeps at most its bound of removed IDs, and its list of
// installations stays within twice the live ones plus slack. The most
// recent removals still answer 410 under removed-installation-410; older
// ones answer 404, which the contract allows too.
func TestRemovedInstallationsBounded(t *testing.T) {
	const keep, rounds, live = 10, 300, 3
	s := testServer(t, Config{Variants: []string{"removed-installation-410"}})
	s.current().st.mu.Lock()
	s.current().st.bundles.keepRemoved = keep
	s.current().st.mu.Unlock()
	var ids []string
	for i := 0; i < rounds; i++ {
		rec := bundleDo(t, s, "POST", "/api/bundles/installations", largeDoc(fmt.Sprintf("ret-%d", i), 1, 1, 1))
		if rec.Code != http.StatusCreated {
			t.Fatalf("install %d: %d %s", i, rec.Code, rec.Body)
		}
		var r struct{ ID string }
		if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil || r.ID == "" {
			t.Fatalf("install %d: no id in %s", i, rec.Body)
		}
		ids = append(ids, r.ID)
		if i >= live {
			if rec := bundleDo(t, s, "DELETE", "/api/bundles/installations/"+ids[i-live], ""); rec.Code != http.StatusOK {
				t.Fatalf("uninstall %d: %d %s", i-live, rec.Code, rec.Body)
			}
		}
	}
	s.current().st.mu.Lock()
	b := s.current().st.bundles
	installations, order, removed, removedOrder := len(b.installations), len(b.order), len(b.removed), len(b.removedOrder)
	s.current().st.mu.Unlock()
	// A live installation is the project's own record and its two children's.
	if installations != 3*live {
		t.Errorf("live installation records: %d, want %d", installations, 3*live)
	}
	if order > 2*installations+orderSlack {
		t.Errorf("order holds %d entries for %d live installations, want at most %d", order, installations, 2*installations+orderSlack)
	}
	if removed > keep || removedOrder > keep {
		t.Errorf("removed IDs kept: %d (list %d), want at most %d", removed, removedOrder, keep)
	}
	for _, tc := range []struct {
		id   string
		want int
	}{{ids[rounds-live-1], http.StatusGone}, {ids[0], http.StatusNotFound}, {ids[rounds-1], http.StatusOK}} {
		if rec := bundleDo(t, s, "GET", "/api/bundles/installations/"+tc.id, ""); rec.Code != tc.want {
			t.Errorf("GET installation %s: %d, want %d", tc.id, rec.Code, tc.want)
		}
	}
	rec := bundleDo(t, s, "GET", "/api/bundles/installations", "")
	var list struct{ Items []json.RawMessage }
	if err := json.Unmarshal(rec.Body.Bytes(), &list); err != nil || len(list.Items) != 3*live {
		t.Errorf("list: %d items (%v), want %d", len(list.Items), err, 3*live)
	}
}
