package fakeserver

import (
	"errors"
	"net/http"
)

// errDropConnection asks the handler to drop the connection without an
// answer, as a crashed server would (interrupt-drops-connection variant).
var errDropConnection = errors.New("drop the connection")

// Spec: States and transitions (Installed rows); Bundle rules 6 and 7;
// Errors 5; Versioning. Every function here runs with store.mu held.

// update applies a document to an installation: a composite update of a
// project installation, or a direct update of a child's own installation.
func (s *view) update(in *installation, doc *bundleDoc, prep *projectPrep, prepErr error) error {
	if in.kind != kindProject {
		return s.updateChild(in, doc)
	}
	if prepErr != nil {
		return prepErr
	}
	if prep == nil { // not a project bundle: validation says why
		_, err := s.validateProject(doc)
		return err
	}
	return s.updateProject(in, doc, prep)
}

// planStep is what a composite update does to one child.
type planStep struct {
	doc    *bundleDoc
	cur    *installation // nil for a child the update adds
	action string        // install, update or skip
}

// updateProject is the composite update. It is idempotent and resumable
// (UPDATE-01, UPDATE-07): a child already at its target version is skipped,
// so the same request sent again after a partial stop finishes the update
// and, after a complete one, writes nothing. Every child's eval gate is
// checked before anything is written (UPDATE-02); a child whose own
// installation was updated directly is at its target version and so no
// longer trips it (UPDATE-03). A task the payload no longer declares loses
// the bundle's marker and stays (UPDATE-04); a child spec.includes no
// longer declares is recorded as orphaned and left alone (UPDATE-05).
func (s *view) updateProject(in *installation, doc *bundleDoc, prep *projectPrep) error {
	if doc.name() != in.name {
		return badDoc("metadata.name is %q, but installation %s installed bundle %q", doc.name(), in.id, in.name)
	}
	if in.state == stateFailed {
		return refuse(http.StatusConflict, "installation %s failed: uninstall it, then install again", in.id)
	}
	plan, declared := s.updatePlan(in, doc)
	if err := s.checkEvalGates(in, plan); err != nil {
		return err
	}
	in.state = stateUpdating
	if err := s.applyPlan(in, plan); err != nil {
		return err
	}
	s.orphanUndeclared(in, declared)
	s.link(in)
	s.updateProjectItself(in, doc, prep.view)
	in.version = doc.version()
	in.state = stateInstalled
	in.warnings = prep.warnings
	return nil
}

// updatePlan lists what an update does to each child the document
// declares, in install order: install, update, or skip one already at its
// target version. declared holds the children's keys.
func (s *view) updatePlan(in *installation, doc *bundleDoc) (plan []planStep, declared map[string]bool) {
	declared = map[string]bool{}
	for _, c := range s.childrenInOrder(doc) {
		declared[childKey(c.Spec.Type, c.name())] = true
		st := planStep{doc: c, cur: in.child(c.Spec.Type, c.name()), action: "install"}
		if st.cur != nil {
			st.action = "update"
			repeated := in.state == stateInstalled && in.version == doc.version() && s.defect(defRepeatUpdateRewritesChildren)
			if st.cur.version == c.version() && !s.defect(defRerunReinstallsUpToDate) && !repeated {
				st.action = "skip"
			}
		}
		plan = append(plan, st)
	}
	return plan, declared
}

// checkEvalGates refuses the whole update before writing anything when one
// child would trip its own eval gate (UPDATE-02).
func (s *view) checkEvalGates(in *installation, plan []planStep) error {
	for i, st := range plan {
		if st.doc.Spec.TestHook != hookTripEvalGate {
			continue
		}
		if st.action == "update" || st.cur != nil && s.defect(defGateIgnoresDirectUpdate) {
			if s.defect(defGateRefusalAfterWrite) {
				for _, w := range plan[:i] {
					s.applyStep(in, w)
				}
			}
			if s.defect(defGateErrorUnnamed) {
				return refuse(http.StatusConflict, "composite update refused: a child's eval gate would trip")
			}
			return refuse(http.StatusConflict,
				"composite update refused before anything was written: updating child %s to %s would trip its eval gate; update that child's own installation directly, then re-run the composite update",
				childKey(st.doc.Spec.Type, st.doc.name()), st.doc.version())
		}
	}
	return nil
}

// applyPlan writes the plan's steps in order. The test hook interruptOnce
// stops it once before its child, so that the same request sent again
// finishes it.
func (s *view) applyPlan(in *installation, plan []planStep) error {
	b := s.st.bundles
	for _, st := range plan {
		if st.action != "skip" && st.doc.Spec.TestHook == hookInterruptOnce {
			key := childKey(st.doc.Spec.Type, st.doc.name()) + "@" + st.doc.version()
			if !in.interrupted[key] {
				in.interrupted[key] = true
				b.logTo(in, "interrupt", st.doc.Spec.Type, st.doc.name(), st.doc.version(), "test hook interruptOnce")
				if s.variant(varInterruptDropsConnection) {
					return errDropConnection
				}
				return refuse(http.StatusServiceUnavailable,
					"update interrupted before child %s (test hook interruptOnce); send the same request again to finish it", childKey(st.doc.Spec.Type, st.doc.name()))
			}
		}
		s.applyStep(in, st)
	}
	return nil
}

// applyStep writes one child of a composite update.
func (s *view) applyStep(in *installation, st planStep) {
	b := s.st.bundles
	switch st.action {
	case "install":
		s.installChild(in, st.doc)
	case "update":
		s.writeChild(st.cur, st.doc)
		b.logTo(in, "update", st.cur.kind, st.cur.name, st.cur.version, "")
	default:
		b.logTo(in, "skip", st.cur.kind, st.cur.name, st.cur.version, "already at the target version")
	}
}

// writeChild updates a child's resource and its own record to a document.
func (s *view) writeChild(ci *installation, doc *bundleDoc) {
	b := s.st.bundles
	if res := b.resources[ci.resourceID]; res != nil {
		res.version, res.payload = doc.version(), deepCopy(doc.Spec.Payload)
		if res.payload == nil {
			res.payload = map[string]any{}
		}
		if res.kind == kindApp {
			res.publicID, _ = res.payload["publicID"].(string)
		}
	}
	ci.version = doc.version()
	b.logTo(ci, "update", ci.kind, ci.name, ci.version, "")
}

// orphanUndeclared records the children a document no longer declares as
// orphaned, leaving their resources and own records untouched (UPDATE-05).
func (s *view) orphanUndeclared(in *installation, declared map[string]bool) {
	b := s.st.bundles
	var kept []*installation
	for _, c := range in.children {
		if declared[childKey(c.kind, c.name)] {
			kept = append(kept, c)
			continue
		}
		switch {
		case s.defect(defUndeclaredChildRemoved):
			s.removeChildResource(c)
			b.forget(c.id)
			b.logTo(in, "remove", c.kind, c.name, c.version, "no longer declared")
		case s.defect(defOrphanedChildResourceRemoved):
			s.removeChildResource(c)
			c.state = stateInstalled // the record says nothing of it
			in.orphaned = append(in.orphaned, c)
			b.logTo(in, "orphan", c.kind, c.name, c.version, "no longer declared; left untouched")
		case s.defect(defOrphanNotRecorded):
			b.logTo(in, "orphan", c.kind, c.name, c.version, "no longer declared")
		default:
			if s.defect(defOrphanRecordMarked) {
				c.state = "orphaned"
			}
			in.orphaned = append(in.orphaned, c)
			b.logTo(in, "orphan", c.kind, c.name, c.version, "no longer declared; left untouched")
		}
	}
	in.children = kept
}

// updateProjectItself updates the project and its tasks: a new version
// rewrites the lead thread; tasks are written when they changed; a task no
// longer declared loses the marker and stays an ordinary task (UPDATE-04).
func (s *view) updateProjectItself(in *installation, doc *bundleDoc, view *projectView) {
	b := s.st.bundles
	p := b.projects[in.projectID]
	if p == nil {
		return
	}
	rewrite := s.variant(varUpdateRewritesProject)
	s.relinkAgent(in, p)
	if p.version != doc.version() || rewrite {
		p.version, p.thread = doc.version(), view.thread
		if name, _ := view.thread["name"].(string); name != "" {
			p.name = name
		}
		p.connectors = in.connectorIDs(stringList(view.thread["connectors"]))
		b.logTo(in, "update", s.projectLogType(), p.name, p.version, "")
	}
	wanted := s.writeTasks(in, p, view, rewrite)
	s.unmarkUndeclared(in, p, wanted)
}

// relinkAgent points the project, and its lead thread, at the agent child
// the update installed.
func (s *view) relinkAgent(in *installation, p *bundleProject) {
	ac := in.agentChild()
	if ac == nil || ac.resourceID == p.agentID {
		return
	}
	p.agentID = ac.resourceID
	if pr := s.st.projects[p.id]; pr != nil {
		pr.agent = s.st.agents[p.agentID]
	}
	if th := s.st.threads[p.threadID]; th != nil {
		th.agent = s.st.agents[p.agentID]
	}
}

// writeTasks adds the tasks the payload declares anew and rewrites those
// that changed (every one under rewrite). It returns the declared names.
func (s *view) writeTasks(in *installation, p *bundleProject, view *projectView, rewrite bool) (wanted map[string]bool) {
	b := s.st.bundles
	own := map[string]*task{}
	for _, t := range b.ownTasks(in) {
		own[t.name] = t
	}
	wanted = map[string]bool{}
	added := false
	for i, m := range view.tasks {
		name, _ := m["name"].(string)
		wanted[name] = true
		t := own[name]
		switch {
		case t == nil:
			s.addTask(in, p, m, view.taskJSON[i])
			added = true
		case rewrite || t.payloadJSON != view.taskJSON[i]:
			t.payload, t.payloadJSON = m, view.taskJSON[i]
			b.logTo(in, "update", kindTask, name, "", "")
		}
	}
	if added {
		s.syncTasks(p)
	}
	return wanted
}

// unmarkUndeclared takes the bundle's marker off every task of the
// installation the payload no longer declares: it stays, an ordinary task
// of the project (UPDATE-04).
func (s *view) unmarkUndeclared(in *installation, p *bundleProject, wanted map[string]bool) {
	b := s.st.bundles
	for _, t := range b.ownTasks(in) {
		if wanted[t.name] {
			continue
		}
		switch {
		case s.defect(defUndeclaredTaskDeleted):
			b.removeTask(t)
			s.syncTasks(p)
			b.logTo(in, "remove", kindTask, t.name, "", "no longer declared")
		case s.defect(defUndeclaredTaskKeepsMarker):
		default:
			t.installationID = ""
			b.logTo(in, "unmark", kindTask, t.name, "", "no longer declared: now an ordinary task of the project")
		}
	}
}

// updateChild is a direct update of a child's own installation (bundle
// rule 7). It passes the child's eval gate: the gate belongs to the
// child's own installation, and updating that is how the spec clears it.
func (s *view) updateChild(ci *installation, doc *bundleDoc) error {
	b := s.st.bundles
	switch {
	case doc.Spec.Type != ci.kind:
		return badDoc("installation %s is a %s; the document's spec.type is %q", ci.id, ci.kind, doc.Spec.Type)
	case doc.name() != ci.name:
		return badDoc("metadata.name is %q, but installation %s installed %s %q", doc.name(), ci.id, ci.kind, ci.name)
	case doc.version() == "":
		return badDoc("metadata.version is missing")
	}
	if doc.version() == ci.version {
		b.logTo(ci, "skip", ci.kind, ci.name, ci.version, "already at the target version")
		return nil
	}
	s.writeChild(ci, doc)
	if parent := b.installations[ci.parentID]; parent != nil && parent.child(ci.kind, ci.name) == ci {
		s.link(parent)
	}
	return nil
}
