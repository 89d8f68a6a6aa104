package fakeserver

import (
	"crypto/rand"
	"encoding/hex"
	"sync"
)

// store is the server's in-memory state. One mutex guards the maps but keys,
// which seeding fills and nothing changes after; a run guards its own event
// log.
type store struct {
	mu       sync.Mutex
	users    map[string]*user   // by name
	keys     map[string]*apiKey // by "<user>-<key>"; read without mu
	agents   map[string]*agent  // by ID
	aliases  map[string]*agent  // by alias
	threads  map[string]*thread // by ID
	projects map[string]*project
	// scopedCreds are the credentials some project scopes (PROJ-05). Only
	// seeding gives projects credentials, so it is read without mu.
	scopedCreds map[string]bool
	// mainAgent is the profile's agents.main, set at seeding: the agent
	// the *-default-agent defects run in another's place.
	mainAgent *agent
	// nonAgents are IDs that exist but name no agent (knowledge sets and the
	// like): invoking one is the spec's 400.
	nonAgents map[string]bool
	// bundles is what bundles install, and their installation records
	// (bundle_store.go).
	bundles *bundleStore

	// keep bounds what runs leave behind; recent lists the threads that
	// invokes made, most recently used first, for eviction; kept is the
	// size of the prompts their runs hold.
	keep   retention
	recent threadList
	kept   int64
}

// retention bounds the threads and runs the store keeps (see
// Config.MaxThreads, Config.MaxRetainedBytes, Config.MaxRunsPerThread).
type retention struct {
	threads int
	bytes   int64
	runs    int
}

// Retention defaults: 10,000 threads, 64 MiB of prompts, 32 runs a thread.
// A complete run of the suite opens about 1,200 threads: under 1,000, a
// scenario's idle thread could be forgotten while it waited on a busy
// machine (a 404 no service would answer). Threads cost little beside the
// prompts, which the byte bound keeps.
const (
	DefaultMaxThreads       = 10000
	DefaultMaxRetainedBytes = 64 << 20
	DefaultMaxRunsPerThread = 32
)

func newStore() *store {
	return &store{
		users:       map[string]*user{},
		keys:        map[string]*apiKey{},
		agents:      map[string]*agent{},
		aliases:     map[string]*agent{},
		threads:     map[string]*thread{},
		projects:    map[string]*project{},
		nonAgents:   map[string]bool{},
		scopedCreds: map[string]bool{},
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
	// credentials are scoped to the project: usable only inside it
	// (PROJ-05). Set at seeding only (store.scopedCreds lists them all).
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
	// running counts its runs in progress (addRun, Server.finish).
	running int

	// prev and next link the thread into store.recent; kept is the size of
	// the prompts its runs hold.
	prev, next *thread
	listed     bool
	kept       int64
}

// newID returns prefix_ followed by 16 random hex digits.
func newID(prefix string) string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	var id [48]byte
	if len(prefix) > len(id)-17 {
		return prefix + "_" + hex.EncodeToString(b[:])
	}
	n := copy(id[:], prefix)
	id[n] = '_'
	hex.Encode(id[n+1:], b[:])
	return string(id[:n+17])
}

func (st *store) newThread(a *agent, p *project) *thread {
	return st.newThreadID(newID("thr"), a, p)
}

// newThreadID stores a new thread with the given ID.
func (st *store) newThreadID(id string, a *agent, p *project) *thread {
	t := &thread{id: id, agent: a, project: p}
	st.mu.Lock()
	defer st.mu.Unlock()
	st.threads[t.id] = t
	st.recent.pushFront(t)
	st.evict(t)
	return t
}

// addRun records a new run on its thread, with the size of its prompt; the
// caller holds st.mu. The thread's oldest finished runs beyond
// keep.runs are forgotten (its last completed run stays), and then the least
// recently used threads beyond the bounds.
func (st *store) addRun(t *thread, r *run, size int) {
	r.size = int64(size)
	if !t.listed {
		r.size = 0 // a bundle's thread, never forgotten: only its run count is bounded
	}
	t.runs = append(t.runs, r)
	t.running++
	t.kept += r.size
	st.kept += r.size
	st.touch(t)
	for i := 0; len(t.runs) > st.keep.runs && i < len(t.runs); {
		old := t.runs[i]
		if old == t.lastCompleted || old == r || !old.isDone() {
			i++
			continue
		}
		t.runs = append(t.runs[:i], t.runs[i+1:]...)
		t.kept -= old.size
		st.kept -= old.size
	}
	st.evict(t)
}

// evict forgets the least recently used threads while the store holds more
// than it keeps. A thread with a run in progress is never forgotten, nor
// current, the thread in use. A forgotten thread is unknown from then on
// (404).
func (st *store) evict(current *thread) {
	t := st.recent.back
	for t != nil && (st.recent.n > st.keep.threads || st.kept > st.keep.bytes) {
		prev := t.prev
		if t != current && !t.busy() {
			st.recent.remove(t)
			delete(st.threads, t.id)
			st.kept -= t.kept
		}
		t = prev
	}
}

// busy reports whether a run of the thread is in progress; the caller holds
// st.mu. It is a count, not a look at each run: eviction asks it of every
// thread it passes, and a server holding many open streams has as many busy
// threads.
func (t *thread) busy() bool { return t.running > 0 }

// touch marks a thread made by an invoke as just used.
func (st *store) touch(t *thread) {
	if t.listed {
		st.recent.remove(t)
		st.recent.pushFront(t)
	}
}

// threadList is a doubly linked list of threads, most recently used first.
type threadList struct {
	front, back *thread
	n           int
}

func (l *threadList) pushFront(t *thread) {
	t.prev, t.next, t.listed = nil, l.front, true
	if l.front != nil {
		l.front.prev = t
	} else {
		l.back = t
	}
	l.front = t
	l.n++
}

func (l *threadList) remove(t *thread) {
	if t.prev != nil {
		t.prev.next = t.next
	} else {
		l.front = t.next
	}
	if t.next != nil {
		t.next.prev = t.prev
	} else {
		l.back = t.prev
	}
	t.prev, t.next, t.listed = nil, nil, false
	l.n--
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
	t := st.threads[id]
	if t != nil {
		st.touch(t)
	}
	return t
}
