package steps

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/invokeconf/invokeconf/outcome"
	"github.com/invokeconf/invokeconf/profile"
)

// Checks on installation records (docs/bundles.md) and on refusals. Status
// codes of the bundle errors are not shown: a refused transition is only
// required not to be 2xx; a refused document, under the contract, a 4xx.

// isGone reports whether a status says an installation no longer exists:
// the contract allows 404 and 410.
func isGone(status int) bool { return status == http.StatusNotFound || status == http.StatusGone }

// goneStatus is what isGone accepts, for messages.
const goneStatus = "404 or 410 (docs/bundles.md: gone)"

// isInstalled: the last install or update answered 2xx and the record says
// installed; with a document, the record holds each of its children (and,
// withVersions, at the document's version). BUNDLE-02, BUNDLE-03, BUNDLE-04:
// one agent, no or one app, any number of knowledge sets and connectors
// install.
func (bw *bundleWorld) isInstalled(name, doc string, withVersions bool) error {
	if _, err := bw.state(name); err != nil {
		return err
	}
	if bw.noAnswer != "" {
		return outcome.Fail("the last update of installation "+name, "a 2xx answer", "no answer: "+bw.noAnswer)
	}
	if r := bw.w.resp; r != nil && !is2xx(r.Status()) {
		st, _ := bw.state(name)
		f := outcome.Failf(fmt.Sprintf("the last call (%s %s)", r.Method(), r.URL()), "a 2xx answer", "status %d: %s", r.Status(), abbreviate(r.Body())).
			Explained(bw.docRules(st.doc)...)
		if bw.lastUpdate != nil {
			// An update skips children already at the target version
			// (UPDATE-01): one that does not may trip a gate it need not.
			f.Explained("UPDATE-01")
		}
		return f
	}
	rec, err := bw.read(name)
	if err != nil {
		return err
	}
	check := "the record of installation " + name
	if rec.State != "installed" {
		st, _ := bw.state(name)
		return outcome.Failf(check, "state installed", "state %q (error: %q)", rec.State, rec.Error).Explained(bw.docRules(st.doc)...)
	}
	if doc == "" {
		return nil
	}
	want, err := bw.docChildren(doc)
	if err != nil {
		return err
	}
	got := rec.versions()
	for _, c := range want {
		v, ok := got[c.key()]
		if !ok {
			return outcome.Failf(check+" after "+doc, fmt.Sprintf("the %s child %q on record", c.Type, c.Name), "%s", childList(rec.Children))
		}
		if withVersions && v != c.Version {
			return outcome.Failf(check+" after "+doc, fmt.Sprintf("the %s child %q at version %q", c.Type, c.Name, c.Version), "version %q", v)
		}
	}
	if len(rec.Children) != len(want) {
		return outcome.Failf(check+" after "+doc, fmt.Sprintf("the document's %d children", len(want)), "%d: %s", len(rec.Children), childList(rec.Children))
	}
	return nil
}

// stillInstalled: UNINSTALL-02. A refused uninstall leaves the installation
// Installed: the record survives, with the children it had.
func (bw *bundleWorld) stillInstalled(name string) error {
	rec, err := bw.read(name)
	if err != nil {
		return err
	}
	check := "the record of installation " + name + " after a refused uninstall"
	if rec.State != "installed" {
		return outcome.Failf(check, "state installed: the record survives", "state %q", rec.State)
	}
	if st, err := bw.state(name); err == nil && st.before != nil && !sameChildren(rec, st.before) {
		return outcome.Failf(check, "the children as before: the installation stays Installed, nothing removed: "+childList(st.before.Children), "%s", childList(rec.Children))
	}
	return nil
}

// installRefused: BUNDLE-09 (not a project bundle), BUNDLE-10 (not exactly
// one agent), BUNDLE-11 (two apps), BUNDLE-12 (a nested project), BUNDLE-13
// (an unknown child type). The contract: a document that is not a valid
// project bundle gets a 4xx that names the problem.
func (bw *bundleWorld) installRefused(problem string) error {
	r, err := bw.w.last()
	if err != nil {
		return err
	}
	p, err := bw.w.expand(problem)
	if err != nil {
		return err
	}
	if r.Status() < 400 || r.Status() > 499 {
		return outcome.Failf("the answer to the install", "a 4xx refusal (docs/bundles.md)", "status %d: %s", r.Status(), abbreviate(r.Body()))
	}
	if p != "" && !strings.Contains(strings.ToLower(string(r.Body())), strings.ToLower(p)) {
		return outcome.Failf("the refusal's body", fmt.Sprintf("a problem naming %q (docs/bundles.md)", p), "%s", abbreviate(r.Body()))
	}
	return nil
}

// nothingInstalled: a refused document leaves no installation behind, not
// even of the children before the problem. Every name in the documents
// carries the scenario's marker, so no record may mention it.
func (bw *bundleWorld) nothingInstalled() error {
	method, p, err := bw.route(profile.RouteBundleInstallations, "")
	if err != nil {
		return err
	}
	resp, err := bw.look(method, p)
	if err != nil {
		return err
	}
	check := method + " " + p + " after the refusal"
	if resp.Status() != http.StatusOK {
		return outcome.Failf(check, "200 with the installations", "status %d: %s", resp.Status(), abbreviate(resp.Body()))
	}
	m := bw.w.marker("b")
	if i := strings.Index(string(resp.Body()), m); i >= 0 {
		return outcome.Failf(check, "no record mentioning the refused document's names (marker "+m+")", "%s", abbreviate(resp.Body()[max(0, i-150):]))
	}
	return nil
}

// refusedNaming: UPDATE-02 (eval gate), UNINSTALL-02 (orphaned task). The
// status of a bundle error is not shown; a refusal is not 2xx and names the
// object.
func (bw *bundleWorld) refusedNaming(which, what string) error {
	rule, explained := "UPDATE-02", ""
	if which == "uninstall" {
		// The refusal needs the orphaned task an update left (UPDATE-04).
		rule, explained = "UNINSTALL-02", "UPDATE-04"
	}
	err := bw.refusalNames(what)
	if f, ok := outcome.AsFailure(err); ok && f.Rule == "" {
		f.Rule = rule
		f.Explained(explained)
	}
	return err
}

func (bw *bundleWorld) refusalNames(what string) error {
	n, err := bw.w.expand(what)
	if err != nil {
		return err
	}
	if bw.noAnswer != "" {
		return outcome.Fail("the answer to the last call", fmt.Sprintf("a refusal naming %q", n), "no answer: "+bw.noAnswer)
	}
	r, err := bw.w.last()
	if err != nil {
		return err
	}
	if is2xx(r.Status()) {
		return outcome.Failf("the answer to the last call", "a refusal: any status but 2xx", "status %d: %s", r.Status(), abbreviate(r.Body()))
	}
	if !strings.Contains(string(r.Body()), n) {
		return outcome.Failf("the refusal's body", fmt.Sprintf("an error naming %q", n), "%s", abbreviate(r.Body()))
	}
	return nil
}

// rankOf reads an order such as "connector, knowledge, agent" as ranks.
func rankOf(order string) map[string]int {
	rank := map[string]int{}
	for i, t := range strings.Split(order, ",") {
		rank[strings.TrimSpace(t)] = i
	}
	return rank
}

// projectAlias lets a log call the project by its lead thread.
var projectAlias = map[string]string{"thread": "project"}

// inOrder checks that the entries of a log with an action follow an order of
// types, and that each type of the order occurs. Types outside the order
// (tasks removed with the thread) are not judged.
func inOrder(log []recordEntry, action, order string) error {
	rank := rankOf(order)
	var seen []string
	last := -1
	present := map[string]bool{}
	check := "the " + action + " entries of the record's log"
	for _, e := range log {
		if e.Action != action {
			continue
		}
		t := e.Type
		if a, ok := projectAlias[t]; ok {
			t = a
		}
		r, ok := rank[t]
		if !ok {
			continue
		}
		seen = append(seen, t+" "+e.Name)
		present[t] = true
		if r < last {
			return outcome.Failf(check, "the order "+order, "%s %q after a later type: %s", t, e.Name, strings.Join(seen, ", "))
		}
		last = r
	}
	for t := range rank {
		if !present[t] {
			// A child never installed or never removed leaves no entry:
			// installing every child and removing every child are
			// INSTALL-01's and UNINSTALL-05's too.
			return outcome.Failf(check, "an entry of each type of "+order, "none of type %s: %s", t, strings.Join(seen, ", ")).
				Explained(map[string]string{"remove": "UNINSTALL-05", "install": "INSTALL-01"}[action])
		}
	}
	return nil
}

// installOrder: INSTALL-01, through the record's log.
func (bw *bundleWorld) installOrder(name, order string) error {
	rec, err := bw.read(name)
	if err != nil {
		return err
	}
	if len(rec.Log) == 0 {
		return outcome.Fail("the record of installation "+name, "a log of its writes (docs/bundles.md), from which the install order is read", "no log")
	}
	return inOrder(rec.Log, "install", order)
}

// removalOrder: UNINSTALL-01, through the final record that the DELETE
// answered with (the record itself is gone afterwards).
func (bw *bundleWorld) removalOrder(name, order string) error {
	r, err := bw.w.last()
	if err != nil {
		return err
	}
	var rec installRecord
	if err := json.Unmarshal(r.Body(), &rec); err != nil || len(rec.Log) == 0 {
		return &untested{reason: "the DELETE answer carries no installation record with a log (docs/bundles.md), so the uninstall order cannot be observed"}
	}
	return inOrder(rec.Log, "remove", order)
}

// markedFailed: INSTALL-03.
func (bw *bundleWorld) markedFailed(name, child string) error {
	n, err := bw.w.expand(child)
	if err != nil {
		return err
	}
	rec, err := bw.read(name)
	if err != nil {
		return err
	}
	check := "the record of installation " + name
	if rec.State != "failed" {
		return outcome.Failf(check, "state failed: the parent installation is marked failed", "state %q", rec.State)
	}
	if !strings.Contains(rec.Error, n) {
		return outcome.Failf(check, fmt.Sprintf("an error naming the failed child %q", n), "error %q", rec.Error)
	}
	return nil
}

// stillRecords: INSTALL-04. Nothing is rolled back: the children installed
// before the failure are on the parent's record, and their own records
// exist.
func (bw *bundleWorld) stillRecords(name, list string) error {
	l, err := bw.w.expand(list)
	if err != nil {
		return err
	}
	rec, err := bw.read(name)
	if err != nil {
		return err
	}
	for _, n := range splitList(l) {
		var c *recordChild
		for i := range rec.Children {
			if rec.Children[i].Name == n {
				c = &rec.Children[i]
			}
		}
		if c == nil {
			// What landed before the failing child depends on the install
			// order (INSTALL-01).
			return outcome.Failf("the record of installation "+name, fmt.Sprintf("child %q still on record (nothing is rolled back)", n), "%s", childList(rec.Children)).
				Explained("INSTALL-01")
		}
		status, err := bw.statusOf(string(c.InstallationID))
		if err != nil {
			return err
		}
		if status != http.StatusOK {
			return outcome.Failf(fmt.Sprintf("the own installation %s of child %q", c.InstallationID, n), "200: it was not rolled back", "status %d", status)
		}
	}
	return nil
}

// allGone: INSTALL-05, UNINSTALL-05. One DELETE removed the parent and
// every child it recorded.
func (bw *bundleWorld) allGone(name string) error {
	st, err := bw.state(name)
	if err != nil {
		return err
	}
	rule := "UNINSTALL-05"
	if st.before != nil && st.before.State == "failed" {
		rule = "INSTALL-05" // "Failed installation: Removed ... in one step"
	}
	return outcome.Claim(bw.allGoneOf(name, st), rule)
}

func (bw *bundleWorld) allGoneOf(name string, st *installState) error {
	if st.before == nil || len(st.before.Children) == 0 {
		// A failed installation keeps the children that landed
		// (INSTALL-04); a refused uninstall leaves the record as it was
		// (UNINSTALL-02).
		why := "UNINSTALL-02"
		if st.before != nil && st.before.State == "failed" {
			why = "INSTALL-04"
		}
		return outcome.Fail("the record of installation "+name+" before the uninstall", "children to check", "no children").Explained(why)
	}
	ids := []string{st.id}
	for _, c := range st.before.Children {
		ids = append(ids, string(c.InstallationID))
	}
	for i, id := range ids {
		status, err := bw.statusOf(id)
		if err != nil {
			return err
		}
		if !isGone(status) {
			what := "the parent installation " + id
			if i > 0 {
				c := st.before.Children[i-1]
				what = fmt.Sprintf("the own installation %s of the %s child %q", id, c.Type, c.Name)
			}
			return outcome.Failf(what+" after the uninstall", goneStatus, "status %d", status)
		}
	}
	return nil
}

// stoppedPartway: the interruptOnce test hook stopped the update after some
// children reached the target version and before others did. Whatever the
// update answered (the contract names no answer, and a dropped connection
// is one) is not judged.
func (bw *bundleWorld) stoppedPartway(name string) error {
	rec, want, err := bw.recordAndTarget(name)
	if err != nil {
		return err
	}
	got := rec.versions()
	var done, pending int
	for _, c := range want {
		if got[c.key()] == c.Version {
			done++
		} else {
			pending++
		}
	}
	if done == 0 || pending == 0 {
		return outcome.Failf("the record of installation "+name+" after the interrupted update",
			"some children at the target version and some not (test hook interruptOnce)",
			"%d at it and %d not: %s", done, pending, childList(rec.Children))
	}
	return nil
}

// recordAndTarget reads an installation's record and the children of the
// document it was last sent.
func (bw *bundleWorld) recordAndTarget(name string) (*installRecord, []recordChild, error) {
	st, err := bw.state(name)
	if err != nil {
		return nil, nil, err
	}
	rec, err := bw.read(name)
	if err != nil {
		return nil, nil, err
	}
	want, err := bw.docChildren(st.doc)
	if err != nil {
		return nil, nil, err
	}
	return rec, want, nil
}

// updatedOnce: UPDATE-01. Across the stopped update and its re-run, each
// child was updated exactly once: the re-run skipped what was done.
func (bw *bundleWorld) updatedOnce(name string) error {
	rec, want, err := bw.recordAndTarget(name)
	if err != nil {
		return err
	}
	count := map[string]int{}
	for _, e := range rec.Log {
		if e.Action == "update" {
			count[e.Type+" "+e.Name]++
		}
	}
	for _, c := range want {
		if n := count[c.key()]; n != 1 {
			return outcome.Failf("the update entries of installation "+name+"'s log",
				fmt.Sprintf("one update of the %s child %q: a child already at the target version is skipped", c.Type, c.Name), "%d", n)
		}
	}
	return nil
}

// wroteNothing: UPDATE-02 (refused before anything is written), UPDATE-07
// (the same update again skips every child: each is at its target
// version). Compared with the record read just before the update. With
// childrenOnly, writes to the project and its tasks are not judged: the spec
// says only that children at the target version are skipped, and rewriting
// the project with the same content is still idempotent.
func (bw *bundleWorld) wroteNothing(name string, childrenOnly bool) error {
	st, err := bw.state(name)
	if err != nil {
		return err
	}
	if st.before == nil {
		return scenarioErrorf("no update of %q was sent", name)
	}
	rec, err := bw.read(name)
	if err != nil {
		return err
	}
	before := st.before
	check := "the record of installation " + name + " after the update"
	switch {
	case rec.Version != before.Version:
		return outcome.Failf(check, fmt.Sprintf("version %q as before", before.Version), "version %q", rec.Version)
	case rec.State != before.State:
		return outcome.Failf(check, fmt.Sprintf("state %q as before", before.State), "state %q", rec.State)
	case !sameChildren(rec, before):
		return outcome.Failf(check, "the children as before: "+childList(before.Children), "%s", childList(rec.Children))
	}
	var written []string
	if len(rec.Log) >= len(before.Log) {
		for _, e := range rec.Log[len(before.Log):] {
			if writes[e.Action] && (!childrenOnly || !projectOwn[e.Type]) {
				written = append(written, e.Action+" "+e.Type+" "+e.Name)
			}
		}
	}
	if len(written) > 0 {
		want := "no write entry in the log"
		if childrenOnly {
			want = "no write entry for a child in the log: every child is at its target version and is skipped"
		}
		return outcome.Failf(check, want, "%s", bounded(strings.Join(written, ", ")))
	}
	return nil
}

// projectOwn are the log types of the project itself and its tasks.
var projectOwn = map[string]bool{"project": true, "thread": true, "task": true}

// taskUnmarked: UPDATE-04, UNINSTALL-03. The record no longer counts the
// task among the bundle's own.
func (bw *bundleWorld) taskUnmarked(name, taskName string) error {
	n, err := bw.w.expand(taskName)
	if err != nil {
		return err
	}
	if _, known := bw.tasks[n]; !known {
		return outcome.Failf("the tasks of installation "+name+"'s records", fmt.Sprintf("task %q listed before", n), "%s", strings.Join(mapKeys(bw.tasks), ", "))
	}
	rec, err := bw.read(name)
	if err != nil {
		return err
	}
	for _, t := range rec.Tasks {
		if t.Name == n {
			return outcome.Failf("the tasks of installation "+name, fmt.Sprintf("no task %q among the installation's own", n), "task %q (id %s) still listed", n, t.ID)
		}
	}
	return nil
}

// recordsOrphan: UPDATE-05.
func (bw *bundleWorld) recordsOrphan(name, kind, child string) error {
	n, err := bw.w.expand(child)
	if err != nil {
		return err
	}
	rec, err := bw.read(name)
	if err != nil {
		return err
	}
	key := kind + " " + n
	check := "the record of installation " + name
	has := func(cs []recordChild) bool {
		for _, c := range cs {
			if c.key() == key {
				return true
			}
		}
		return false
	}
	if !has(rec.Orphaned) {
		return outcome.Failf(check, fmt.Sprintf("the %s child %q among orphaned", kind, n), "orphaned: %s", childList(rec.Orphaned))
	}
	if has(rec.Children) {
		return outcome.Failf(check, fmt.Sprintf("the %s child %q no longer a current child", kind, n), "children: %s", childList(rec.Children))
	}
	return nil
}

// orphanUntouched: UPDATE-05, UNINSTALL-04. The child's own installation
// record is still there as it was: at its version, installed.
func (bw *bundleWorld) orphanUntouched(child, version string) error {
	c, err := bw.orphanID(child)
	if err != nil {
		return err
	}
	rec, err := bw.readID(string(c.InstallationID), "of child "+c.Name)
	if err != nil {
		return outcome.Explain(err, "UPDATE-05") // an orphaned child keeps its own record
	}
	check := fmt.Sprintf("the own installation of orphaned child %q", c.Name)
	if rec.Version != version {
		return outcome.Failf(check, fmt.Sprintf("version %q (untouched)", version), "version %q", rec.Version).Explained("UPDATE-05")
	}
	if rec.State != "installed" {
		return outcome.Failf(check, "state installed, as before the update: the record is left untouched", "state %q", rec.State).Explained("UPDATE-05")
	}
	return nil
}

func (bw *bundleWorld) orphanGone(child string) error {
	c, err := bw.orphanID(child)
	if err != nil {
		return err
	}
	status, err := bw.statusOf(string(c.InstallationID))
	if err != nil {
		return err
	}
	if !isGone(status) {
		return outcome.Failf(fmt.Sprintf("the own installation of %q after its uninstall", c.Name), goneStatus, "status %d", status)
	}
	return nil
}

// carriesWarning: DROP-07. Stripped items come "with a warning": the record
// carries at least one; its wording is the target's.
func (bw *bundleWorld) carriesWarning(name string) error {
	rec, err := bw.read(name)
	if err != nil {
		return err
	}
	if len(rec.Warnings) == 0 {
		return outcome.Fail("the warnings of installation "+name, "at least one warning about the stripped items", "none")
	}
	return nil
}

// sameChildren reports whether two records hold the same children at the
// same versions, in any order.
func sameChildren(a, b *installRecord) bool {
	was := b.versions()
	if len(a.Children) != len(b.Children) {
		return false
	}
	for _, c := range a.Children {
		if v, ok := was[c.key()]; !ok || v != c.Version {
			return false
		}
	}
	return true
}
