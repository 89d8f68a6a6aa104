package fakeserver

import (
	"crypto/rand"
	"encoding/hex"
	"sync"
)

// store is the server's in-memory state. One mutex guards the maps; a run
// guards its own event log.
type store struct {
	mu       sync.Mutex
	users    map[string]*user   // by name
	keys     map[string]*apiKey // by "<user>-<key>"
	agents   map[string]*agent  // by ID
	aliases  map[string]*agent  // by alias
	threads  map[string]*thread // by ID
	projects map[string]*project
	// nonAgents are IDs that exist but name no agent (knowledge sets and the
	// like): invoking one is the spec's 400.
	nonAgents map[string]bool
	// bundles is what bundles install, and their installation records
	// (bundle_store.go).
	bundles *bundleStore
}

func newStore() *store {
	return &store{
		users:     map[string]*user{},
		keys:      map[string]*apiKey{},
		agents:    map[string]*agent{},
		aliases:   map[string]*agent{},
		threads:   map[string]*thread{},
		projects:  map[string]*project{},
		nonAgents: map[string]bool{},
	}
}

type user struct {
	name string
	// apiDisabled: the user's instance has API access disabled (403).
	apiDisabled bool
	// denied are agent IDs the user cannot open in the browser.
	denied map[string]bool
	// noResearch: the user's workspace lacks the 'Research mode'
	// entitlement (MODE-03).
	noResearch bool
}

func (u *user) canOpen(a *agent) bool { return !u.denied[a.id] }

type agent struct {
	id, alias string
	tools     []string
	// credTools maps a credential-backed tool to its credential.
	credTools map[string]string
	// stickyScope serves the scoped-tools-sticky defect only.
	stickyScope []string
}

type project struct {
	id    string
	agent *agent
	// tasks appear as tools of runs inside the project (PROJ-04).
	tasks []string
	// credentials are scoped to the project: usable only inside it (PROJ-05).
	credentials map[string]bool
	// model is the project's model setting (PROJ-06); "" keeps the agent's.
	model string
}

type thread struct {
	id      string
	agent   *agent
	project *project // nil for a bare-agent thread
	runs    []*run
	// lastCompleted is the thread's last completed run (spec: GET
	// /api/threads/{id} reports it as lastRunID).
	lastCompleted *run
}

// newID returns prefix_ followed by 16 random hex digits.
func newID(prefix string) string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	return prefix + "_" + hex.EncodeToString(b[:])
}

func (st *store) newThread(a *agent, p *project) *thread {
	st.mu.Lock()
	defer st.mu.Unlock()
	t := &thread{id: newID("thr"), agent: a, project: p}
	st.threads[t.id] = t
	return t
}

// rememberThread and lastThreadOf serve the new-thread-reused defect.
func (st *store) rememberThread(k *apiKey, t *thread) {
	st.mu.Lock()
	defer st.mu.Unlock()
	k.lastThread = t
}

func (st *store) lastThreadOf(k *apiKey, a *agent, p *project) *thread {
	st.mu.Lock()
	defer st.mu.Unlock()
	if t := k.lastThread; t != nil && t.agent == a && t.project == p {
		return t
	}
	return nil
}

// projectOf returns a project whose agent is a, or nil.
func (st *store) projectOf(a *agent) *project {
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, p := range st.projects {
		if p.agent == a {
			return p
		}
	}
	return nil
}

func (st *store) thread(id string) *thread {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.threads[id]
}
