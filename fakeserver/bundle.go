package fakeserver

import (
	"errors"
	"fmt"
	"io"
	"net/http"
)

// Spec: Bundle routes; States and transitions; Bundle rules 1-7; Errors 4-6.
//
// Routes the spec shows:
//
//	GET    /api/assistants/{assistant_id}/projects/{project_id}/bundle[?app=<publicID>]   export (bundle_export.go)
//	DELETE /api/bundles/installations/{id}                                                 uninstall (bundle_install.go)
//	DELETE /api/tasks/{id}                                                                 remove a task, orphaned ones included
//
// Extension routes for what the spec leaves out (docs/bundles.md; the
// profile names them as routes.bundleInstall, bundleUpdate,
// bundleInstallation and bundleInstallations, so another target supplies
// its own):
//
//	POST /api/bundles/installations        install a project bundle (YAML or JSON body);
//	                                       201 with the installation record, also when a child failed (state failed)
//	PUT  /api/bundles/installations/{id}   update an installation: a project installation with a project
//	                                       bundle, a child's own installation with that child's bundle;
//	                                       200 with the record
//	GET  /api/bundles/installations/{id}   the installation record; 404 once removed
//	GET  /api/bundles/installations        {"items": [record, ...]}, every installation, oldest first
//
// Every bundle route needs a key with the scope bundles:manage (the spec
// does not show one). A refused document is a 4xx problem naming what is
// wrong (400 unreadable, 413 beyond the body limit, 422 not a valid project
// bundle or beyond the caps of docs/bundles.md) and writes nothing; a
// refused transition (eval gate, orphaned task, a child uninstalled while
// its parent holds it) is 409; an update stopped by the interruptOnce test
// hook is 503. The routes are in server.go's routeTable.

// bundleAuth authenticates a bundle route and checks its scope.
func (s *view) bundleAuth(w http.ResponseWriter, r *http.Request) bool {
	k, err := s.authenticate(r)
	if err != nil {
		s.problemErr(w, err)
		return false
	}
	if !k.has(bundleScope) {
		s.problem(w, http.StatusForbidden, "the key's scopes do not cover %s", bundleScope)
		return false
	}
	return true
}

// bundleProblem writes a refusal with its status, anything else as 500.
func (s *view) bundleProblem(w http.ResponseWriter, err error) {
	var be *bundleError
	if errors.As(err, &be) {
		s.problem(w, be.status, "%s", be.msg)
		return
	}
	s.problemErr(w, err)
}

// readDocument reads and parses the request's bundle document.
func (s *view) readDocument(w http.ResponseWriter, r *http.Request) (*bundleDoc, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBody))
	if err != nil {
		s.problem(w, http.StatusRequestEntityTooLarge, "read bundle document: %v", err)
		return nil, false
	}
	doc, err := parseDocument(body, r.Header.Get("Content-Type"))
	if err != nil {
		s.bundleProblem(w, err)
		return nil, false
	}
	return doc, true
}

// projectPrep is a project bundle validated, stripped and encoded before
// the store lock is taken.
type projectPrep struct {
	view     *projectView
	warnings []string
}

func (s *view) prepareProjectDoc(doc *bundleDoc) (*projectPrep, error) {
	view, err := s.validateProject(doc)
	if err != nil {
		return nil, err
	}
	warnings := s.stripOnInstall(doc)
	view.encodeTasks()
	return &projectPrep{view, warnings}, nil
}

// handleInstall installs a project bundle. Everything that grows with the
// document (parsing, validation, stripping, building the installation and
// its record) happens without the store lock; publishing it is one short
// step under the lock.
func (s *view) handleInstall(w http.ResponseWriter, r *http.Request) {
	if !s.bundleAuth(w, r) {
		return
	}
	doc, ok := s.readDocument(w, r)
	if !ok {
		return
	}
	prep, err := s.prepareProjectDoc(doc)
	if err != nil {
		s.bundleProblem(w, err)
		return
	}
	plan, err := s.prepareInstall(doc, prep.view, prep.warnings)
	var rec record
	if err == nil {
		rec = renderWith(plan.in, plan.project)
	}
	if s.ctl != nil && s.ctl.installHook != nil {
		s.ctl.installHook()
	}
	s.st.mu.Lock()
	s.publish(plan)
	s.st.mu.Unlock()
	if err != nil {
		s.bundleProblem(w, err)
		return
	}
	s.writeInstalled(w, plan, rec)
}

// writeInstalled answers an install that ran: 201 with its record, failed
// or not (INSTALL-03), or, under the variant failed-install-problem, a
// failed one 422 with a problem and the record's Location.
func (s *view) writeInstalled(w http.ResponseWriter, plan *installPlan, rec record) {
	if plan.in.state == stateFailed && s.variant(varFailedInstallProblem) {
		w.Header().Set("Location", "/api/bundles/installations/"+plan.in.id)
		s.problem(w, http.StatusUnprocessableEntity, "installation %s failed: %s", plan.in.id, plan.in.err)
		return
	}
	writeJSON(w, http.StatusCreated, rec)
}

func (s *view) handleUpdate(w http.ResponseWriter, r *http.Request) {
	if !s.bundleAuth(w, r) {
		return
	}
	doc, ok := s.readDocument(w, r)
	if !ok {
		return
	}
	var prep *projectPrep
	var prepErr error
	if doc.Spec.Type == kindProject {
		prep, prepErr = s.prepareProjectDoc(doc)
	}
	s.withInstallation(w, r, func(in *installation) (int, any, error) {
		if err := s.update(in, doc, prep, prepErr); err != nil {
			return 0, nil, err
		}
		return http.StatusOK, s.st.bundles.render(in), nil
	})
}

func (s *view) handleInstallation(w http.ResponseWriter, r *http.Request) {
	if !s.bundleAuth(w, r) {
		return
	}
	s.withInstallation(w, r, func(in *installation) (int, any, error) {
		return http.StatusOK, s.st.bundles.render(in), nil
	})
}

func (s *view) handleInstallations(w http.ResponseWriter, r *http.Request) {
	if !s.bundleAuth(w, r) {
		return
	}
	s.st.mu.Lock()
	items := []record{}
	for _, in := range s.st.bundles.order {
		if s.st.bundles.installations[in.id] == in {
			items = append(items, s.st.bundles.render(in))
		}
	}
	s.st.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"items": items})
}

// handleUninstall serves DELETE /api/bundles/installations/{id}. It answers
// with the final record (state removed), whose log shows the order of
// removal (UNINSTALL-01).
func (s *view) handleUninstall(w http.ResponseWriter, r *http.Request) {
	if !s.bundleAuth(w, r) {
		return
	}
	s.withInstallation(w, r, func(in *installation) (int, any, error) {
		final, err := s.uninstall(in)
		return http.StatusOK, final, err
	})
}

// withInstallation runs fn, with the store locked, on the installation the
// path's {id} names; there being none is 404 (410 for a removed one under
// the removed-installation-410 variant). What fn returns is written once the
// lock is released, so encoding a record never holds it.
func (s *view) withInstallation(w http.ResponseWriter, r *http.Request, fn func(*installation) (int, any, error)) {
	status, body, err := s.lockedInstallation(r.PathValue("id"), fn)
	switch {
	case errors.Is(err, errDropConnection):
		panic(http.ErrAbortHandler) // no answer at all, as from a crashed server
	case err != nil:
		s.bundleProblem(w, err)
	default:
		writeJSON(w, status, body)
	}
}

func (s *view) lockedInstallation(id string, fn func(*installation) (int, any, error)) (int, any, error) {
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	in := s.st.bundles.installations[id]
	switch {
	case in == nil && s.st.bundles.removed[id] && s.variant(varRemovedInstallation410):
		return 0, nil, refuse(http.StatusGone, "installation %s was removed", id)
	case in == nil:
		return 0, nil, refuse(http.StatusNotFound, "no installation %s", id)
	}
	return fn(in)
}

// taskDeletion decides what DELETE /api/tasks/{id} does with t (nil: no
// such task): found, it is removed (UNINSTALL-03), but under the defects
// orphan-task-undeletable (an orphaned task is not found) and
// delete-task-keeps-owned (a task the bundle still owns is answered for
// but kept).
func (s *view) taskDeletion(t *task) (found, removes bool) {
	switch {
	case t == nil || t.installationID == "" && s.defect(defOrphanTaskUndeletable):
		return false, false
	case t.installationID != "" && s.defect(defDeleteTaskKeepsOwned):
		return true, false
	}
	return true, true
}

// handleDeleteTask serves DELETE /api/tasks/{id}: removes a task, an
// orphaned one included (UNINSTALL-03).
func (s *view) handleDeleteTask(w http.ResponseWriter, r *http.Request) {
	if !s.bundleAuth(w, r) {
		return
	}
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	b := s.st.bundles
	t := b.findTask(r.PathValue("id"))
	found, removes := s.taskDeletion(t)
	if !found {
		s.problem(w, http.StatusNotFound, "no task %s", r.PathValue("id"))
		return
	}
	if !removes {
		w.WriteHeader(http.StatusNoContent) // defect: answered, not removed
		return
	}
	b.removeTask(t)
	if p := b.projects[t.projectID]; p != nil {
		s.syncTasks(p)
	}
	w.WriteHeader(http.StatusNoContent)
}

func (b *bundleStore) removeTask(t *task) {
	if p := b.projects[t.projectID]; p != nil {
		p.taskIDs = without(p.taskIDs, t.id)
		delete(p.tasks, t.id)
	}
}

func without(ids []string, id string) []string {
	out := ids[:0:0]
	for _, x := range ids {
		if x != id {
			out = append(out, x)
		}
	}
	return out
}

// childKey names a child in messages and in the interrupt memory.
func childKey(kind, name string) string { return fmt.Sprintf("%s %q", kind, name) }
