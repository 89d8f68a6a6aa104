package fakeserver

import (
	"encoding/hex"
	"encoding/json"
	"io"
	"regexp"
	"strings"
	"testing"
)

var uuidShape = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// TestUUIDVariants: the ID variants really change the IDs a client sees,
// so the variant test proves something.
func TestUUIDVariants(t *testing.T) {
	ts, p := newTestServer(t, Config{Variants: []string{"uuid-ids", "uuid-seed-ids"}})
	for role, a := range p.Agents.Roles() {
		if !uuidShape.MatchString(a.ID) {
			t.Errorf("agents.%s.id = %q, want a UUID", role, a.ID)
		}
	}
	if !uuidShape.MatchString(p.Projects.Main.ID) || !uuidShape.MatchString(p.Threads.Main.ID) {
		t.Errorf("projects.main.id %q, threads.main.id %q: want UUIDs", p.Projects.Main.ID, p.Threads.Main.ID)
	}
	resp := post(t, ts.URL+"/api/invoke/"+p.Agents.Main.ID+"?async=true", p.Keys.Agent, "", "hello")
	defer resp.Body.Close()
	var ack struct{ ThreadID, RunID string }
	if err := json.NewDecoder(resp.Body).Decode(&ack); err != nil {
		t.Fatal(err)
	}
	if !uuidShape.MatchString(ack.ThreadID) || !uuidShape.MatchString(ack.RunID) {
		t.Errorf("async answer %+v: want UUIDs", ack)
	}
}

// TestAnswerVariants: the status and body variants of this area.
func TestAnswerVariants(t *testing.T) {
	tests := []struct {
		variant, role, path string
		status              int
		bodyHas             string
	}{
		{"problem-extra-members", "otherAgent", "/api/invoke/{main}", 403, `"traceId"`},
		{"async-ack-extra-members", "agent", "/api/invoke/{main}?async=true", 200, `"links"`},
		{"hidden-thread-404", "wildcardLimited", "/api/invoke/{restrictedThread}", 404, ""},
	}
	for _, tc := range tests {
		t.Run(tc.variant, func(t *testing.T) {
			ts, p := newTestServer(t, Config{Variants: []string{tc.variant}})
			// A thread of the restricted agent, opened by the owner of the wildcard key.
			open := post(t, ts.URL+"/api/invoke/"+p.Agents.Restricted.ID, p.Keys.Wildcard, "", "hi")
			_, _ = io.Copy(io.Discard, open.Body)
			open.Body.Close()
			path := strings.NewReplacer("{main}", p.Agents.Main.ID, "{restrictedThread}", open.Header.Get("X-SVC-Thread-Id")).Replace(tc.path)
			key, _ := p.Key(tc.role)
			resp := post(t, ts.URL+path, key, "", "hello")
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status || !strings.Contains(string(b), tc.bodyHas) {
				t.Errorf("%s: %d %s, want %d with %s", path, resp.StatusCode, b, tc.status, tc.bodyHas)
			}
		})
	}
}

// TestNewID: an ID is its prefix, "_" and 16 hex digits, for a prefix of
// any length, and two are never alike.
func TestNewID(t *testing.T) {
	for _, prefix := range []string{"thr", "", strings.Repeat("p", 31), strings.Repeat("q", 40)} {
		id := newID(prefix)
		rest, ok := strings.CutPrefix(id, prefix+"_")
		if _, err := hex.DecodeString(rest); !ok || len(rest) != 16 || err != nil {
			t.Errorf("newID(%q) = %q", prefix, id)
		}
		if newID(prefix) == id {
			t.Errorf("newID(%q) twice %q", prefix, id)
		}
	}
}
