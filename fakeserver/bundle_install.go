package fakeserver

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
)

// Spec: Bundle rules 1-5; States and transitions (installation in
// progress, failed installation, uninstall). Every function here runs with
// store.mu held.

// idPrefix is the ID prefix of each resource type.
var idPrefix = map[string]string{kindConnector: "con", kindKnowledge: "kns", kindAgent: "agt", kindApp: "app"}

// stripOnInstall strips the "Dropped on export" items from a hand-written
// document and returns the warnings the record carries (DROP-07).
func (s *Server) stripOnInstall(doc *bundleDoc) []string {
	if s.defect(defInstallKeepsDropped) {
		return []string{}
	}
	w := strip(doc, func(defectID) bool { return false })
	if w == nil {
		w = []string{}
	}
	return w
}

// install installs a project bundle: children in the order connector,
// knowledge, agent, app (INSTALL-01), then the project and its tasks; every
// knowledge set is attached to the agent (INSTALL-02). A child that fails
// marks the installation failed with an error naming it (INSTALL-03), and
// nothing is rolled back (INSTALL-04). A document that is not a valid
// project bundle is refused before anything is written.
func (s *Server) install(doc *bundleDoc) (*installation, error) {
	view, err := s.validateProject(doc)
	if err != nil {
		return nil, err
	}
	warnings := s.stripOnInstall(doc)
	b := s.st.bundles
	in := &installation{id: newID("ins"), name: doc.name(), kind: kindProject, version: doc.version(),
		state: stateInstalled, warnings: warnings, interrupted: map[string]bool{}}
	b.installations[in.id] = in
	b.order = append(b.order, in)

	agents := 0
	for _, c := range s.childrenInOrder(doc) {
		if c.Spec.Type == kindAgent {
			if agents++; agents > 1 && s.defect(defInvalidHalfWritten) {
				// Defect: the second agent is found only while installing.
				return nil, badDoc("spec.includes holds 2 agents: a project bundle needs exactly 1 agent")
			}
		}
		if c.Spec.TestHook == hookFailInstall {
			b.logTo(in, "fail", c.Spec.Type, c.name(), c.version(), "test hook failInstall")
			if s.defect(defFailureNotMarked) {
				continue
			}
			in.state = stateFailed
			in.err = fmt.Sprintf("child %s failed to install (test hook failInstall); children installed before it stay on record", childKey(c.Spec.Type, c.name()))
			if s.defect(defFailedChildUnnamed) {
				in.err = "a child bundle failed to install"
			}
			if s.defect(defRollbackOnFailure) {
				for _, ch := range in.children {
					s.removeChildResource(ch)
					delete(b.installations, ch.id)
				}
				in.children = nil
			}
			return in, nil
		}
		s.installChild(in, c)
	}
	s.link(in)
	s.createProject(in, doc, view)
	return in, nil
}

// installChild creates a child's resource and its own installation record.
func (s *Server) installChild(parent *installation, c *bundleDoc) *installation {
	b := s.st.bundles
	kind := c.Spec.Type
	res := &resource{id: newID(idPrefix[kind]), kind: kind, name: c.name(), version: c.version(), payload: deepCopy(c.Spec.Payload)}
	if res.payload == nil {
		res.payload = map[string]any{}
	}
	b.resources[res.id] = res
	s.registerResource(res)
	ci := &installation{id: newID("ins"), name: c.name(), kind: kind, version: c.version(), state: stateInstalled,
		warnings: []string{}, parentID: parent.id, resourceID: res.id}
	b.installations[ci.id] = ci
	b.order = append(b.order, ci)
	b.logTo(ci, "install", kind, ci.name, ci.version, "")
	b.logTo(parent, "install", kind, ci.name, ci.version, "")
	parent.children = append(parent.children, ci)
	return ci
}

// registerResource makes a resource visible to the rest of the server: an
// agent can be invoked, any other ID is one that names no agent (ERR-01).
func (s *Server) registerResource(res *resource) {
	if res.kind == kindApp {
		res.publicID, _ = res.payload["publicID"].(string)
	}
	if res.kind == kindAgent {
		s.st.agents[res.id] = &agent{id: res.id, tools: stringList(res.payload["tools"]), credTools: map[string]string{}}
		return
	}
	s.st.nonAgents[res.id] = true
}

// agentOf returns the agent child of a project installation.
func (in *installation) agentChild() *installation {
	for _, c := range in.children {
		if c.kind == kindAgent {
			return c
		}
	}
	return nil
}

// connectorIDs resolves connector names among a project installation's
// current children.
func (in *installation) connectorIDs(names []string) []string {
	var ids []string
	for _, n := range names {
		if c := in.child(kindConnector, n); c != nil {
			ids = append(ids, c.resourceID)
		}
	}
	return ids
}

// link resolves the agent's connector references and attaches every
// knowledge set of the installation to its agent (INSTALL-02).
func (s *Server) link(in *installation) {
	b := s.st.bundles
	ac := in.agentChild()
	if ac == nil {
		return
	}
	ag := b.resources[ac.resourceID]
	ag.connectors = in.connectorIDs(stringList(ag.payload["connectors"]))
	for _, c := range in.children {
		if c.kind != kindKnowledge || contains(ag.knowledge, c.resourceID) || s.defect(defKnowledgeNotAttached) {
			continue
		}
		ag.knowledge = append(ag.knowledge, c.resourceID)
		b.logTo(in, "attach", kindKnowledge, c.name, c.version, "attached to agent "+ag.name)
	}
}

// createProject creates the project (its lead thread, flagged as a
// project) and its tasks, each marked as the installation's own. It is a
// normal project (BUNDLE-06): registered with the other projects and
// threads, its agent invocable, exported like any other.
func (s *Server) createProject(in *installation, doc *bundleDoc, view *projectView) {
	b := s.st.bundles
	p := &bundleProject{id: newID("prj"), version: doc.version(), thread: deepCopy(view.thread), installationID: in.id}
	p.name, _ = view.thread["name"].(string)
	if p.name == "" {
		p.name = doc.name()
	}
	p.connectors = in.connectorIDs(stringList(view.thread["connectors"]))
	var ag *agent
	if ac := in.agentChild(); ac != nil {
		p.agentID = ac.resourceID
		ag = s.st.agents[ac.resourceID]
	}
	pr := &project{id: p.id, agent: ag, credentials: map[string]bool{}}
	th := &thread{id: newID("thr"), agent: ag, project: pr}
	p.threadID = th.id
	if ag != nil { // only the agentless-accepted defect lets a project lack its agent
		s.st.threads[th.id] = th
		s.st.projects[p.id] = pr
	}
	s.st.nonAgents[p.id] = true
	b.projects[p.id] = p
	in.projectID = p.id
	b.logTo(in, "install", kindProject, p.name, p.version, "")
	for _, t := range view.tasks {
		s.createTask(in, p, t)
	}
}

// syncTasks gives the project's runs its current tasks as tools (PROJ-04),
// as for any project. The slice is replaced, never changed in place.
func (s *Server) syncTasks(p *bundleProject) {
	pr := s.st.projects[p.id]
	if pr == nil {
		return
	}
	var names []string
	for _, id := range p.taskIDs {
		if t := s.st.bundles.tasks[id]; t != nil {
			names = append(names, t.name)
		}
	}
	pr.tasks = names
}

func (s *Server) createTask(in *installation, p *bundleProject, payload map[string]any) *task {
	b := s.st.bundles
	t := &task{id: newID("tsk"), projectID: p.id, payload: deepCopy(payload), installationID: in.id}
	t.name, _ = payload["name"].(string)
	b.tasks[t.id] = t
	p.taskIDs = append(p.taskIDs, t.id)
	s.syncTasks(p)
	b.logTo(in, "install", kindTask, t.name, "", "")
	return t
}

// removeChildResource removes what a child installation installed.
func (s *Server) removeChildResource(ci *installation) {
	b := s.st.bundles
	res := b.resources[ci.resourceID]
	if res == nil {
		return
	}
	delete(b.resources, res.id)
	delete(s.st.agents, res.id)
	delete(s.st.nonAgents, res.id)
	ci.state = stateRemoved
}

// attachedTo returns the agent a knowledge set is attached to, or nil.
func (b *bundleStore) attachedTo(knowledgeID string) *resource {
	for _, r := range b.resources {
		if r.kind == kindAgent && contains(r.knowledge, knowledgeID) {
			return r
		}
	}
	return nil
}

// uninstallRank is bundle rule 2: the project's own thread first, then app,
// agent, knowledge, connector. The agent goes before the knowledge sets
// because a knowledge set still attached to an agent cannot be removed.
var uninstallRank = map[string]int{kindProject: 0, kindApp: 1, kindAgent: 2, kindKnowledge: 3, kindConnector: 4}

// uninstall serves DELETE /api/bundles/installations/{id} and answers with
// the final record. For a project installation: refused while an orphaned
// task exists on the project's thread, naming it (UNINSTALL-02); otherwise
// the project and every current child are removed in one step, in the order
// of bundle rule 2 (UNINSTALL-01, UNINSTALL-05, INSTALL-05); a child that an
// update orphaned is neither a blocker nor touched (UNINSTALL-04). A child's
// own installation can be uninstalled directly once no parent holds it.
func (s *Server) uninstall(in *installation) (record, error) {
	b := s.st.bundles
	if in.kind != kindProject {
		return s.uninstallChild(in)
	}
	p := b.projects[in.projectID]
	if p != nil && !s.defect(defUninstallIgnoresOrphanedTasks) {
		var names []string
		for _, id := range p.taskIDs {
			if t := b.tasks[id]; t != nil && t.installationID != in.id {
				if s.defect(defOrphanTaskRefusalUnnamed) {
					names = append(names, t.id)
				} else {
					names = append(names, fmt.Sprintf("%q", t.name))
				}
			}
		}
		if len(names) > 0 {
			if s.defect(defRefusalDropsRecord) {
				delete(b.installations, in.id)
			}
			return record{}, refuse(http.StatusConflict,
				"uninstall refused: deleting the project's thread would delete the orphaned task %s; delete it (DELETE /api/tasks/{id}) and retry, or keep the project",
				strings.Join(names, ", "))
		}
	}
	if len(in.orphaned) > 0 && s.defect(defOrphanChildBlocksUninstall) {
		return record{}, refuse(http.StatusConflict, "uninstall refused: installation %s has orphaned children", in.id)
	}

	// Plan the removal, then check it, then write: one step.
	children := append([]*installation(nil), in.children...)
	if s.defect(defUninstallCascadesOrphans) {
		children = append(children, in.orphaned...)
	}
	if s.defect(defUninstallLeavesChildren) && in.state != stateFailed || s.defect(defFailedDeleteKeepsChildren) && in.state == stateFailed {
		children = nil
	}
	rank := uninstallRank
	switch {
	case s.defect(defUninstallInstallOrder):
		rank = map[string]int{kindConnector: 0, kindKnowledge: 1, kindAgent: 2, kindApp: 3}
	case s.defect(defUninstallAppAfterAgent):
		rank = map[string]int{kindAgent: 1, kindApp: 2, kindKnowledge: 3, kindConnector: 4}
	}
	sort.SliceStable(children, func(i, j int) bool { return rank[children[i].kind] < rank[children[j].kind] })
	projectFirst := !s.defect(defUninstallInstallOrder)
	gone := map[string]bool{}
	for _, c := range children {
		if c.kind == kindKnowledge {
			if ag := b.attachedTo(c.resourceID); ag != nil && !gone[ag.id] {
				return record{}, refuse(http.StatusConflict, "uninstall refused: knowledge set %q is still attached to agent %q", c.name, ag.name)
			}
		}
		gone[c.resourceID] = true
	}

	if p != nil && projectFirst {
		s.removeProject(in, p)
	}
	for _, c := range children {
		s.removeChildResource(c)
		delete(b.installations, c.id)
		b.logTo(in, "remove", c.kind, c.name, c.version, "")
	}
	if p != nil && !projectFirst {
		s.removeProject(in, p)
	}
	in.state = stateRemoved
	delete(b.installations, in.id)
	return b.render(in), nil
}

// removeProject removes the project's lead thread, and with it every task
// still on it.
func (s *Server) removeProject(in *installation, p *bundleProject) {
	b := s.st.bundles
	b.logTo(in, "remove", kindProject, p.name, p.version, "the project's own thread, with its tasks")
	for _, id := range p.taskIDs {
		if t := b.tasks[id]; t != nil {
			delete(b.tasks, id)
			b.logTo(in, "remove", kindTask, t.name, "", "")
		}
	}
	delete(s.st.threads, p.threadID)
	delete(s.st.projects, p.id)
	delete(s.st.nonAgents, p.id)
	delete(b.projects, p.id)
	in.projectID = ""
}

// uninstallChild removes a child's own installation directly (bundle rule
// 4: the way to remove a child an update orphaned).
func (s *Server) uninstallChild(ci *installation) (record, error) {
	b := s.st.bundles
	if parent := b.installations[ci.parentID]; parent != nil && parent.child(ci.kind, ci.name) == ci {
		return record{}, refuse(http.StatusConflict,
			"installation %s is child %s of installation %s: uninstall that one", ci.id, childKey(ci.kind, ci.name), parent.id)
	}
	if ci.kind == kindKnowledge {
		if ag := b.attachedTo(ci.resourceID); ag != nil {
			return record{}, refuse(http.StatusConflict, "knowledge set %q is still attached to agent %q", ci.name, ag.name)
		}
	}
	s.removeChildResource(ci)
	b.logTo(ci, "remove", ci.kind, ci.name, ci.version, "")
	ci.state = stateRemoved
	delete(b.installations, ci.id)
	if parent := b.installations[ci.parentID]; parent != nil {
		var kept []*installation
		for _, o := range parent.orphaned {
			if o != ci {
				kept = append(kept, o)
			}
		}
		parent.orphaned = kept
	}
	return b.render(ci), nil
}
