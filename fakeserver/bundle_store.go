package fakeserver

import (
	"encoding/json"
	"sort"
	"strings"
	"sync/atomic"
)

// The state bundles work on: connectors, knowledge sets, agents, apps,
// projects and tasks, and the installation records. It lives in the store
// and is guarded by store.mu. An install is built outside the lock and made
// visible in one step (publish); no route holds the lock across work that
// grows with its request beyond the caps of docs/bundles.md, so one large
// document never blocks other requests.

// bundleScope is the scope the reference server asks of every bundle route
// (the spec does not show one): the "bundles" key role holds it.
const bundleScope = "bundles:manage"

type bundleStore struct {
	resources     map[string]*resource      // by ID: connectors, knowledge sets, agents, apps
	projects      map[string]*bundleProject // by project ID
	installations map[string]*installation  // by installation ID
	// order lists the installations oldest first, for the list route; it
	// may still hold removed ones until forget compacts it, which keeps it
	// within twice the live ones (plus orderSlack).
	order   []*installation
	seq     atomic.Int64 // last log sequence number
	nextNum atomic.Int64 // last integer ID (bundle-integer-ids variant)
	// removed remembers the most recently removed installations, at most
	// keepRemoved of them, oldest first in removedOrder, for the
	// removed-installation-410 variant; an older one answers 404, which
	// the contract allows as well.
	removed      map[string]bool
	removedOrder []string
	keepRemoved  int
}

// Retention of removed installations: the IDs remembered for 410, and the
// slack of removed entries order may hold before it is compacted.
const (
	defaultKeepRemoved = 1000
	orderSlack         = 64
)

// forget removes an installation record and remembers that it was removed,
// within the store's bounds.
func (b *bundleStore) forget(id string) {
	delete(b.installations, id)
	if !b.removed[id] {
		b.removed[id] = true
		b.removedOrder = append(b.removedOrder, id)
	}
	for len(b.removedOrder) > b.keepRemoved {
		delete(b.removed, b.removedOrder[0])
		b.removedOrder = b.removedOrder[1:]
	}
	if len(b.order) > 2*len(b.installations)+orderSlack {
		b.compactOrder()
	}
}

// compactOrder drops removed installations from order. forget calls it
// only once order has doubled, so its cost per removal is constant.
func (b *bundleStore) compactOrder() {
	kept := b.order[:0]
	for _, in := range b.order {
		if b.installations[in.id] == in {
			kept = append(kept, in)
		}
	}
	clear(b.order[len(kept):])
	b.order = kept
}

func newBundleStore() *bundleStore {
	return &bundleStore{
		resources:     map[string]*resource{},
		projects:      map[string]*bundleProject{},
		installations: map[string]*installation{},
		removed:       map[string]bool{},
		keepRemoved:   defaultKeepRemoved,
	}
}

// resource is a connector, knowledge set, agent or app.
type resource struct {
	id, kind, name, version string
	payload                 map[string]any
	// knowledge are the IDs of the knowledge sets attached to an agent
	// (INSTALL-02, EXPORT-02).
	knowledge []string
	// connectors are the IDs of the connectors an agent references
	// (EXPORT-03).
	connectors []string
	// publicID is an app's public ID (EXPORT-04: ?app=<publicID>).
	publicID string
}

// bundleProject is a project: its lead thread, its agent, its tasks.
type bundleProject struct {
	id, name, version string
	agentID, threadID string
	// thread is the lead thread's payload (flagged as a project).
	thread map[string]any
	// connectors are the IDs of the connectors the project references.
	connectors []string
	// taskIDs are the project's tasks in creation order; tasks holds them
	// by ID. Tasks live with their project, so an install publishes them
	// with it in one step.
	taskIDs []string
	tasks   map[string]*task
	// installationID names the installation that created the project; ""
	// for a project made by hand.
	installationID string
}

// task is a task on a project's thread.
type task struct {
	id, name, projectID string
	payload             map[string]any
	// payloadJSON is the payload encoded, so an update compares tasks
	// without encoding under the store lock.
	payloadJSON string
	// installationID is the marker that identifies the task as a bundle's
	// own; an update that no longer declares the task clears it (UPDATE-04).
	installationID string
}

// Installation states. The spec names none; these are the reference
// server's (docs/bundles.md).
const (
	stateInstalled = "installed"
	stateFailed    = "failed"
	stateUpdating  = "updating" // a composite update stopped partway (UPDATE-01)
	stateRemoved   = "removed"  // only in the final record a DELETE answers with
)

// installation is an installation record: a project bundle's, or one
// child's own.
type installation struct {
	id, name, kind, version, state string
	err                            string
	warnings                       []string
	// parentID is the project installation a child's own record belongs to.
	parentID string
	// resourceID is what a child installation installed.
	resourceID string
	// projectID is what a project installation installed.
	projectID string
	// children are a project installation's current children in install
	// order; orphaned are those an update no longer declares (UPDATE-05).
	children, orphaned []*installation
	log                []logEntry
	// interrupted remembers the children at which the interruptOnce test
	// hook already stopped an update.
	interrupted map[string]bool
}

// logEntry is one write (or skip) an installation made, in order. Install
// and uninstall order are observable only through it (INSTALL-01,
// UNINSTALL-01), and so are skips on a re-run (UPDATE-01).
type logEntry struct {
	Seq     int    `json:"seq"`
	Action  string `json:"action"` // install, attach, update, skip, fail, interrupt, orphan, unmark, remove
	Type    string `json:"type"`   // connector, knowledge, agent, app, project, task
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
	Detail  string `json:"detail,omitempty"`
}

// logTo appends to an installation's log. The sequence is atomic, so an
// install being built outside the lock can log too.
func (b *bundleStore) logTo(in *installation, action, kind, name, version, detail string) {
	seq := int(b.seq.Add(1))
	in.log = append(in.log, logEntry{Seq: seq, Action: action, Type: kind, Name: name, Version: version, Detail: detail})
}

// child returns a project installation's current child of a type and name.
func (in *installation) child(kind, name string) *installation {
	for _, c := range in.children {
		if c.kind == kind && c.name == name {
			return c
		}
	}
	return nil
}

// ownTasks returns the tasks that carry the installation's marker, in
// creation order.
func (b *bundleStore) ownTasks(in *installation) []*task {
	return ownTasksOf(in, b.projects[in.projectID])
}

func ownTasksOf(in *installation, p *bundleProject) []*task {
	if p == nil {
		return nil
	}
	var out []*task
	for _, id := range p.taskIDs {
		if t := p.tasks[id]; t != nil && t.installationID == in.id {
			out = append(out, t)
		}
	}
	return out
}

// recID is an ID in a record: a JSON number when it is all digits (the
// bundle-integer-ids variant; other IDs carry a prefix), else a string.
type recID string

func (id recID) MarshalJSON() ([]byte, error) {
	if id != "" && strings.Trim(string(id), "0123456789") == "" {
		return []byte(id), nil
	}
	return json.Marshal(string(id))
}

// record is the JSON form of an installation record (docs/bundles.md).
type record struct {
	ID         recID       `json:"id"`
	Name       string      `json:"name"`
	Type       string      `json:"type"`
	Version    string      `json:"version"`
	State      string      `json:"state"`
	Error      string      `json:"error,omitempty"`
	Warnings   []string    `json:"warnings"`
	ParentID   recID       `json:"parentID,omitempty"`
	ResourceID recID       `json:"resourceID,omitempty"`
	Project    *projectRef `json:"project,omitempty"`
	Children   []childRef  `json:"children"`
	Orphaned   []childRef  `json:"orphaned"`
	Tasks      []taskRef   `json:"tasks"`
	Log        []logEntry  `json:"log"`
}

type projectRef struct {
	ID       recID  `json:"id"`
	ThreadID recID  `json:"threadID"`
	AgentID  recID  `json:"agentID"`
	Name     string `json:"name"`
}

type childRef struct {
	Type           string `json:"type"`
	Name           string `json:"name"`
	Version        string `json:"version"`
	State          string `json:"state"`
	InstallationID recID  `json:"installationID"`
	ResourceID     recID  `json:"resourceID"`
}

type taskRef struct {
	Name string `json:"name"`
	ID   recID  `json:"id"`
}

// findTask returns a task by ID from any project.
func (b *bundleStore) findTask(id string) *task {
	for _, p := range b.projects {
		if t := p.tasks[id]; t != nil {
			return t
		}
	}
	return nil
}

func (b *bundleStore) render(in *installation) record {
	return renderWith(in, b.projects[in.projectID])
}

// renderWith renders an installation whose project is p.
func renderWith(in *installation, p *bundleProject) record {
	r := record{ID: recID(in.id), Name: in.name, Type: in.kind, Version: in.version, State: in.state, Error: in.err,
		Warnings: append([]string{}, in.warnings...), ParentID: recID(in.parentID), ResourceID: recID(in.resourceID),
		Children: []childRef{}, Orphaned: []childRef{}, Tasks: []taskRef{}, Log: append([]logEntry{}, in.log...)}
	if p != nil {
		r.Project = &projectRef{ID: recID(p.id), ThreadID: recID(p.threadID), AgentID: recID(p.agentID), Name: p.name}
	}
	for _, c := range in.children {
		r.Children = append(r.Children, childRef{c.kind, c.name, c.version, c.state, recID(c.id), recID(c.resourceID)})
	}
	for _, c := range in.orphaned {
		r.Orphaned = append(r.Orphaned, childRef{c.kind, c.name, c.version, c.state, recID(c.id), recID(c.resourceID)})
	}
	for _, t := range ownTasksOf(in, p) {
		r.Tasks = append(r.Tasks, taskRef{t.name, recID(t.id)})
	}
	return r
}

// resourcesOf returns the resources of a kind, sorted by name, for exports
// that (by defect) take more than they should.
func (b *bundleStore) resourcesOf(kind string) []*resource {
	var out []*resource
	for _, r := range b.resources {
		if r.kind == kind {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].name < out[j].name || out[i].name == out[j].name && out[i].id < out[j].id
	})
	return out
}
