package fakeserver

import (
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
)

// Spec: Bundle rules 1-5; States and transitions (installation in
// progress, failed installation, uninstall). An install is prepared without
// the store lock (prepareInstall) and published with it in one step
// (publish); every other function here runs with store.mu held.

// idPrefix is the ID prefix of each resource type.
var idPrefix = map[string]string{kindConnector: "con", kindKnowledge: "kns", kindAgent: "agt", kindApp: "app"}

// newBundleID returns the ID of something a bundle creates: prefix_ and
// random hex digits, or with the bundle-integer-ids variant a decimal
// number, which records show as a JSON number.
func (s *view) newBundleID(prefix string) string {
	if s.variant(varBundleIntegerIDs) {
		return strconv.FormatInt(1_000_000+s.st.bundles.nextNum.Add(1), 10)
	}
	return newID(prefix)
}

// projectLogType is the type the log gives the project: project, or its
// lead thread with the install-log-thread variant.
func (s *view) projectLogType() string {
	if s.variant(varInstallLogThread) {
		return "thread"
	}
	return kindProject
}

// stripOnInstall strips the "Dropped on export" items from a hand-written
// document and returns the warnings the record carries (DROP-07).
func (s *view) stripOnInstall(doc *bundleDoc) []string {
	if s.defect(defInstallKeepsDropped) {
		return []string{}
	}
	w := strip(doc, func(defectID) bool { return false })
	if w == nil {
		w = []string{}
	}
	return w
}

// installPlan is an installation built outside the store lock: nothing of
// it is visible until publish.
type installPlan struct {
	in       *installation
	children []childPlan
	project  *bundleProject
	pr       *project
	th       *thread
}

// childPlan is one child of an installPlan: its own record, its resource,
// and for an agent the agent that runs.
type childPlan struct {
	ci  *installation
	res *resource
	ag  *agent
}

// prepareInstall builds the installation of a validated project bundle:
// children in the order connector, knowledge, agent, app (INSTALL-01), then
// the project and its tasks; every knowledge set is attached to the agent
// (INSTALL-02). A child that fails marks the installation failed with an
// error naming it (INSTALL-03), and nothing is rolled back (INSTALL-04).
// It reads no store state, so it runs without the lock. An error comes
// with the plan only under the invalid-half-written defect, whose plan is
// published before the refusal.
func (s *view) prepareInstall(doc *bundleDoc, view *projectView, warnings []string) (*installPlan, error) {
	b := s.st.bundles
	in := &installation{id: s.newBundleID("ins"), name: doc.name(), kind: kindProject, version: doc.version(),
		state: stateInstalled, warnings: warnings, interrupted: map[string]bool{}}
	plan := &installPlan{in: in}
	agents := 0
	for _, c := range s.childrenInOrder(doc) {
		if c.Spec.Type == kindAgent {
			if agents++; agents > 1 && s.defect(defInvalidHalfWritten) {
				// Defect: the second agent is found only while installing.
				return plan, badDoc("spec.includes holds 2 agents: a project bundle needs exactly 1 agent")
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
				in.children, plan.children = nil, nil
			}
			return plan, nil
		}
		ci, res := s.newChild(in, c)
		plan.children = append(plan.children, childPlan{ci, res, agentFor(res)})
	}
	resources := map[string]*resource{}
	for _, c := range plan.children {
		resources[c.res.id] = c.res
	}
	s.linkWith(in, func(id string) *resource { return resources[id] })
	s.prepareProject(plan, doc, view)
	return plan, nil
}

// agent returns the agent of the plan's child resource id, or nil.
func (plan *installPlan) agent(id string) *agent {
	for _, c := range plan.children {
		if c.res.id == id {
			return c.ag
		}
	}
	return nil
}

// publish makes a prepared installation visible in one step. Its work
// grows with the number of children (capped), never with the tasks: they
// live with their project.
func (s *view) publish(plan *installPlan) {
	b := s.st.bundles
	b.installations[plan.in.id] = plan.in
	b.order = append(b.order, plan.in)
	for _, c := range plan.children {
		s.publishChild(c.ci, c.res, c.ag)
	}
	if p := plan.project; p != nil {
		if plan.pr.agent != nil { // only the agentless-accepted defect lets a project lack its agent
			s.st.threads[plan.th.id] = plan.th
			s.st.projects[p.id] = plan.pr
		}
		s.st.nonAgents[p.id] = true
		b.projects[p.id] = p
	}
}

// newChild builds a child's resource and its own installation record, and
// logs the install on both; nothing is visible until publishChild. The
// document is the request's own, so its payload is kept without a copy.
func (s *view) newChild(parent *installation, c *bundleDoc) (*installation, *resource) {
	b := s.st.bundles
	kind := c.Spec.Type
	res := &resource{id: s.newBundleID(idPrefix[kind]), kind: kind, name: c.name(), version: c.version(), payload: c.Spec.Payload}
	if res.payload == nil {
		res.payload = map[string]any{}
	}
	if kind == kindApp {
		res.publicID, _ = res.payload["publicID"].(string)
	}
	ci := &installation{id: s.newBundleID("ins"), name: c.name(), kind: kind, version: c.version(), state: stateInstalled,
		warnings: []string{}, parentID: parent.id, resourceID: res.id}
	b.logTo(ci, "install", kind, ci.name, ci.version, "")
	b.logTo(parent, "install", kind, ci.name, ci.version, "")
	parent.children = append(parent.children, ci)
	return ci, res
}

// agentFor returns the agent an agent resource runs as, or nil.
func agentFor(res *resource) *agent {
	if res.kind != kindAgent {
		return nil
	}
	return &agent{id: res.id, tools: stringList(res.payload["tools"]), credTools: map[string]string{}}
}

// publishChild makes a child visible to the rest of the server: an agent
// can be invoked, any other ID is one that names no agent (ERR-01).
func (s *view) publishChild(ci *installation, res *resource, ag *agent) {
	b := s.st.bundles
	b.installations[ci.id] = ci
	b.order = append(b.order, ci)
	b.resources[res.id] = res
	if ag != nil {
		s.st.agents[res.id] = ag
		return
	}
	s.st.nonAgents[res.id] = true
}

// installChild installs a child an update adds.
func (s *view) installChild(parent *installation, c *bundleDoc) *installation {
	ci, res := s.newChild(parent, c)
	s.publishChild(ci, res, agentFor(res))
	return ci
}

// agentChild returns the agent child of a project installation.
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

// link is linkWith on the store's resources.
func (s *view) link(in *installation) {
	s.linkWith(in, func(id string) *resource { return s.st.bundles.resources[id] })
}

// linkWith resolves the agent's connector references and attaches every
// knowledge set of the installation to its agent (INSTALL-02); resource
// looks resources up by ID.
func (s *view) linkWith(in *installation, resource func(string) *resource) {
	b := s.st.bundles
	ac := in.agentChild()
	if ac == nil {
		return
	}
	ag := resource(ac.resourceID)
	if ag == nil {
		return
	}
	ag.connectors = in.connectorIDs(stringList(ag.payload["connectors"]))
	for _, c := range in.children {
		if c.kind != kindKnowledge || contains(ag.knowledge, c.resourceID) || s.defect(defKnowledgeNotAttached) {
			continue
		}
		ag.knowledge = append(ag.knowledge, c.resourceID)
		b.logTo(in, "attach", kindKnowledge, c.name, c.version, "attached to agent "+ag.name)
	}
}

// prepareProject builds the project (its lead thread, flagged as a
// project) and its tasks, each marked as the installation's own. It is a
// normal project (BUNDLE-06): once published it is registered with the
// other projects and threads, its agent invocable, exported like any other.
func (s *view) prepareProject(plan *installPlan, doc *bundleDoc, view *projectView) {
	b := s.st.bundles
	in := plan.in
	p := &bundleProject{id: s.newBundleID("prj"), version: doc.version(), thread: view.thread, installationID: in.id,
		tasks: make(map[string]*task, len(view.tasks))}
	p.name, _ = view.thread["name"].(string)
	if p.name == "" {
		p.name = doc.name()
	}
	p.connectors = in.connectorIDs(stringList(view.thread["connectors"]))
	var ag *agent
	if ac := in.agentChild(); ac != nil {
		p.agentID = ac.resourceID
		ag = plan.agent(ac.resourceID)
	}
	pr := &project{id: p.id, agent: ag, credentials: map[string]bool{}}
	th := &thread{id: newID("thr"), agent: ag, project: pr}
	p.threadID = th.id
	in.projectID = p.id
	b.logTo(in, "install", s.projectLogType(), p.name, p.version, "")
	for i, t := range view.tasks {
		s.addTask(in, p, t, view.taskJSON[i])
	}
	pr.tasks = taskNames(p)
	plan.project, plan.pr, plan.th = p, pr, th
}

// syncTasks gives the project's runs its current tasks as tools (PROJ-04),
// as for any project. The slice is replaced, never changed in place.
func (s *view) syncTasks(p *bundleProject) {
	if pr := s.st.projects[p.id]; pr != nil {
		pr.tasks = taskNames(p)
	}
}

func taskNames(p *bundleProject) []string {
	names := make([]string, 0, len(p.taskIDs))
	for _, id := range p.taskIDs {
		if t := p.tasks[id]; t != nil {
			names = append(names, t.name)
		}
	}
	return names
}

// addTask adds a task marked as the installation's own; the caller syncs
// the project's tools once after adding them all. The payload is the
// request's own document, kept without a copy.
func (s *view) addTask(in *installation, p *bundleProject, payload map[string]any, payloadJSON string) *task {
	t := &task{id: s.newBundleID("tsk"), projectID: p.id, payload: payload, payloadJSON: payloadJSON, installationID: in.id}
	t.name, _ = payload["name"].(string)
	p.tasks[t.id] = t
	p.taskIDs = append(p.taskIDs, t.id)
	s.st.bundles.logTo(in, "install", kindTask, t.name, "", "")
	return t
}

// removeChildResource removes what a child installation installed.
func (s *view) removeChildResource(ci *installation) {
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
func (s *view) uninstall(in *installation) (record, error) {
	if in.kind != kindProject {
		return s.uninstallChild(in)
	}
	b := s.st.bundles
	p := b.projects[in.projectID]
	if err := s.refuseOrphanedTasks(in, p); err != nil {
		return record{}, err
	}
	if len(in.orphaned) > 0 && s.defect(defOrphanChildBlocksUninstall) {
		return record{}, refuse(http.StatusConflict, "uninstall refused: installation %s has orphaned children", in.id)
	}
	// Plan the removal, then check it, then write: one step.
	children := s.removalPlan(in)
	if err := checkRemoval(b, children); err != nil {
		return record{}, err
	}
	projectFirst := !s.defect(defUninstallInstallOrder)
	if p != nil && projectFirst {
		s.removeProject(in, p)
	}
	s.removeChildren(in, children)
	if p != nil && !projectFirst {
		s.removeProject(in, p)
	}
	in.state = stateRemoved
	b.forget(in.id)
	return b.render(in), nil
}

// refuseOrphanedTasks refuses the uninstall while an orphaned task is on the
// project's thread, naming each (UNINSTALL-02).
func (s *view) refuseOrphanedTasks(in *installation, p *bundleProject) error {
	if p == nil || s.defect(defUninstallIgnoresOrphanedTasks) {
		return nil
	}
	var names []string
	for _, id := range p.taskIDs {
		if t := p.tasks[id]; t != nil && t.installationID != in.id {
			if s.defect(defOrphanTaskRefusalUnnamed) {
				names = append(names, t.id)
			} else {
				names = append(names, fmt.Sprintf("%q", t.name))
			}
		}
	}
	if len(names) == 0 {
		return nil
	}
	s.refusalSideEffects(in)
	return refuse(http.StatusConflict,
		"uninstall refused: deleting the project's thread would delete the orphaned task %s; delete it (DELETE /api/tasks/{id}) and retry, or keep the project",
		strings.Join(names, ", "))
}

// refusalSideEffects serves the defects that change state although the
// uninstall is refused.
func (s *view) refusalSideEffects(in *installation) {
	if s.defect(defRefusalDropsRecord) {
		s.st.bundles.forget(in.id)
	}
	if s.defect(defRefusalAfterRemoval) {
		s.removeChildren(in, in.children)
		in.children = nil
	}
}

// removalPlan lists the children an uninstall removes, in the order of
// bundle rule 2: the current ones, and none an update orphaned
// (UNINSTALL-04).
func (s *view) removalPlan(in *installation) []*installation {
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
	return children
}

// checkRemoval refuses a plan that would remove a knowledge set while an
// agent that stays still has it attached.
func checkRemoval(b *bundleStore, children []*installation) error {
	gone := map[string]bool{}
	for _, c := range children {
		if c.kind == kindKnowledge {
			if ag := b.attachedTo(c.resourceID); ag != nil && !gone[ag.id] {
				return refuse(http.StatusConflict, "uninstall refused: knowledge set %q is still attached to agent %q", c.name, ag.name)
			}
		}
		gone[c.resourceID] = true
	}
	return nil
}

// removeChildren removes the children's resources and installations, in
// order, logging each.
func (s *view) removeChildren(in *installation, children []*installation) {
	b := s.st.bundles
	for _, c := range children {
		s.removeChildResource(c)
		b.forget(c.id)
		b.logTo(in, "remove", c.kind, c.name, c.version, "")
	}
}

// removeProject removes the project's lead thread, and with it every task
// still on it.
func (s *view) removeProject(in *installation, p *bundleProject) {
	b := s.st.bundles
	b.logTo(in, "remove", s.projectLogType(), p.name, p.version, "the project's own thread, with its tasks")
	for _, id := range p.taskIDs {
		if t := p.tasks[id]; t != nil {
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
func (s *view) uninstallChild(ci *installation) (record, error) {
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
	b.forget(ci.id)
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
