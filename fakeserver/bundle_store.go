package fakeserver

import "sort"

// The state bundles work on: connectors, knowledge sets, agents, apps,
// projects and tasks, and the installation records. It lives in the store
// and is guarded by store.mu; every bundle route holds the lock for its
// whole operation, so an install, an update or an uninstall is one step to
// every other request.

// bundleScope is the scope the reference server asks of every bundle route
// (the spec does not show one): the "bundles" key role holds it.
const bundleScope = "bundles:manage"

type bundleStore struct {
	resources     map[string]*resource      // by ID: connectors, knowledge sets, agents, apps
	projects      map[string]*bundleProject // by project ID
	tasks         map[string]*task          // by task ID
	installations map[string]*installation  // by installation ID
	order         []*installation           // every installation ever made, oldest first
	seq           int                       // last log sequence number
}

func newBundleStore() *bundleStore {
	return &bundleStore{
		resources:     map[string]*resource{},
		projects:      map[string]*bundleProject{},
		tasks:         map[string]*task{},
		installations: map[string]*installation{},
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
	// taskIDs are the project's tasks in creation order.
	taskIDs []string
	// installationID names the installation that created the project; ""
	// for a project made by hand.
	installationID string
}

// task is a task on a project's thread.
type task struct {
	id, name, projectID string
	payload             map[string]any
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

func (b *bundleStore) logTo(in *installation, action, kind, name, version, detail string) {
	b.seq++
	in.log = append(in.log, logEntry{Seq: b.seq, Action: action, Type: kind, Name: name, Version: version, Detail: detail})
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
	p := b.projects[in.projectID]
	if p == nil {
		return nil
	}
	var out []*task
	for _, id := range p.taskIDs {
		if t := b.tasks[id]; t != nil && t.installationID == in.id {
			out = append(out, t)
		}
	}
	return out
}

// record is the JSON form of an installation record (docs/bundles.md).
type record struct {
	ID         string      `json:"id"`
	Name       string      `json:"name"`
	Type       string      `json:"type"`
	Version    string      `json:"version"`
	State      string      `json:"state"`
	Error      string      `json:"error,omitempty"`
	Warnings   []string    `json:"warnings"`
	ParentID   string      `json:"parentID,omitempty"`
	ResourceID string      `json:"resourceID,omitempty"`
	Project    *projectRef `json:"project,omitempty"`
	Children   []childRef  `json:"children"`
	Orphaned   []childRef  `json:"orphaned"`
	Tasks      []taskRef   `json:"tasks"`
	Log        []logEntry  `json:"log"`
}

type projectRef struct {
	ID       string `json:"id"`
	ThreadID string `json:"threadID"`
	AgentID  string `json:"agentID"`
	Name     string `json:"name"`
}

type childRef struct {
	Type           string `json:"type"`
	Name           string `json:"name"`
	Version        string `json:"version"`
	State          string `json:"state"`
	InstallationID string `json:"installationID"`
	ResourceID     string `json:"resourceID"`
}

type taskRef struct {
	Name string `json:"name"`
	ID   string `json:"id"`
}

func (b *bundleStore) render(in *installation) record {
	r := record{ID: in.id, Name: in.name, Type: in.kind, Version: in.version, State: in.state, Error: in.err,
		Warnings: append([]string{}, in.warnings...), ParentID: in.parentID, ResourceID: in.resourceID,
		Children: []childRef{}, Orphaned: []childRef{}, Tasks: []taskRef{}, Log: append([]logEntry{}, in.log...)}
	if p := b.projects[in.projectID]; p != nil {
		r.Project = &projectRef{ID: p.id, ThreadID: p.threadID, AgentID: p.agentID, Name: p.name}
	}
	for _, c := range in.children {
		r.Children = append(r.Children, childRef{c.kind, c.name, c.version, c.state, c.id, c.resourceID})
	}
	for _, c := range in.orphaned {
		r.Orphaned = append(r.Orphaned, childRef{c.kind, c.name, c.version, c.state, c.id, c.resourceID})
	}
	for _, t := range b.ownTasks(in) {
		r.Tasks = append(r.Tasks, taskRef{t.name, t.id})
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
