package fakeserver

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/invokeconf/invokeconf/profile"
)

// IDs and the shapes of answers the spec leaves open. The spec gives
// threadID and runID as strings and shows nothing of the agent and project
// resources, so a client must take any shape: the
// variants uuid-ids and uuid-seed-ids hand out UUIDs instead of the
// reference's prefixed hex.

// newUUID returns a random (version 4) UUID.
func newUUID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// newRunID returns the ID of a new run.
func (s *view) newRunID() string {
	if s.variant(varNumericRunIDs) {
		return numericID()
	}
	if s.variant(varUUIDIDs) {
		return newUUID()
	}
	return newID("run")
}

// newThread creates a thread for an agent (and project) and stores it.
func (s *view) newThread(a *agent, p *project) *thread {
	switch {
	case s.variant(varNumericThreadIDs):
		return s.st.newThreadID(numericID(), a, p)
	case s.variant(varUUIDIDs):
		return s.st.newThreadID(newUUID(), a, p)
	}
	return s.st.newThread(a, p)
}

// reseedUUIDs returns a copy of the seed profile whose agents, projects and
// provisioned thread carry UUIDs (variant uuid-seed-ids). Keys are scoped
// from the copy, so they follow.
func reseedUUIDs(p *profile.Profile) *profile.Profile {
	c := p.Clone()
	for _, a := range c.Agents.Roles() {
		if a.ID != "" {
			a.ID = newUUID()
		}
	}
	for _, pr := range []*profile.Project{&c.Projects.Main, &c.Projects.Other} {
		if pr.ID != "" {
			pr.ID = newUUID()
		}
	}
	if c.Threads.Main.ID != "" {
		c.Threads.Main.ID = newUUID()
	}
	return c
}

// Profile returns the profile of the target the server serves: its seed,
// with the IDs it re-seeded (variant uuid-seed-ids). The base URL is the
// seed's; a caller that listens fills in its own.
func (s *Server) Profile() *profile.Profile { return s.cfg.Profile.Clone() }

// withExtraMembers adds members to a JSON object (variant
// problem-extra-members): the problem format's body shape is not shown.
func withExtraMembers(obj []byte) []byte {
	var m map[string]any
	if json.Unmarshal(obj, &m) != nil {
		return obj
	}
	m["instance"] = "/errors/" + newUUID()
	m["traceId"] = newUUID()
	m["errors"] = []map[string]string{{"detail": "see detail"}}
	b, err := json.Marshal(m)
	if err != nil {
		return obj
	}
	return b
}

// numericID returns a random decimal ID below 2^53, so that a client that
// reads JSON numbers as floats keeps it exact (variant numeric-run-ids).
func numericID() string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	n := binary.BigEndian.Uint64(b[:])%(1<<53-1e15) + 1e15
	return strconv.FormatUint(n, 10)
}

// asNumber writes an ID made by numericID as a JSON number.
func asNumber(id string) any { return json.Number(id) }

// numericRunID rewrites an event object's runID as a JSON number (variant
// numeric-run-ids).
func numericRunID(m map[string]any) { numericMember(m, "runID") }

// numericThreadID rewrites an event object's threadID as a JSON number
// (variant numeric-thread-ids).
func numericThreadID(m map[string]any) { numericMember(m, "threadID") }

// numericMember writes a member holding a decimal ID as a JSON number; an
// ID of another shape (the seeded thread's) stays a string.
func numericMember(m map[string]any, key string) {
	if id, ok := m[key].(string); ok && isDecimal(id) {
		m[key] = asNumber(id)
	}
}

// idValue is an ID as the answers of the follow-up routes write it: a JSON
// number when its variant is on and the ID is decimal.
func idValue(id string, numeric bool) any {
	if numeric && isDecimal(id) {
		return asNumber(id)
	}
	return id
}

func isDecimal(s string) bool {
	if s == "" || s[0] == '0' {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
