package steps

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/onsi/gomega"

	"github.com/invokeconf/invokeconf/profile"
)

// Checks on installation records (docs/bundles.md) and on refusals. Status
// codes of the bundle errors are not shown: a refused transition is only
// required not to be 2xx; a refused document, a client's mistake, a 4xx.

// isInstalled: the last install or update answered 2xx and the record says
// installed; with a document, the record holds each of its children (and,
// withVersions, at the document's version). BUNDLE-02, BUNDLE-03, BUNDLE-04:
// one agent, no or one app, any number of knowledge sets and connectors
// install.
func (bw *bundleWorld) isInstalled(name, doc string, withVersions bool) error {
	if _, err := bw.state(name); err != nil {
		if bw.w.resp != nil {
			return fmt.Errorf("%w; last answer: status %d: %s", err, bw.w.resp.Status, abbreviate(bw.w.resp.Body))
		}
		return err
	}
	if r := bw.w.resp; r != nil && (r.Status < 200 || r.Status > 299) {
		return fmt.Errorf("the last call answered %d, want 2xx: %s", r.Status, abbreviate(r.Body))
	}
	rec, err := bw.read(name)
	if err != nil {
		return err
	}
	if rec.State != "installed" {
		return fmt.Errorf("installation %q is in state %q, want installed (error: %q)", name, rec.State, rec.Error)
	}
	if doc == "" {
		return nil
	}
	want, err := bw.docChildren(doc)
	if err != nil {
		return err
	}
	return checkf("installation %q after %s", name, doc)(func(g gomega.Gomega) {
		got := rec.versions()
		for _, c := range want {
			v, ok := got[c.key()]
			g.Expect(ok).To(gomega.BeTrue(), "the record should list the %s child %q; children: %v", c.Type, c.Name, rec.Children)
			if withVersions {
				g.Expect(v).To(gomega.Equal(c.Version), "version of the %s child %q", c.Type, c.Name)
			}
		}
		g.Expect(rec.Children).To(gomega.HaveLen(len(want)), "the record's children should be the document's")
	})
}

func (bw *bundleWorld) stillInstalled(name string) error {
	rec, err := bw.read(name)
	if err != nil {
		return fmt.Errorf("the record should survive a refused uninstall: %w", err)
	}
	if rec.State != "installed" {
		return fmt.Errorf("installation %q is in state %q, want installed", name, rec.State)
	}
	return nil
}

// installRefused: BUNDLE-01, BUNDLE-02 (not exactly one agent), BUNDLE-03
// (two apps), BUNDLE-05 (a nested project), BUNDLE-08 (an unknown child
// type). A document that is not a valid project bundle gets a 4xx that names
// the problem.
func (bw *bundleWorld) installRefused(problem string) error {
	r := bw.w.resp
	if r == nil {
		return errors.New("no response yet")
	}
	p, err := bw.w.expand(problem)
	if err != nil {
		return need(err)
	}
	return check(func(g gomega.Gomega) {
		g.Expect(r.Status).To(gomega.And(gomega.BeNumerically(">=", 400), gomega.BeNumerically("<", 500)),
			"the document should be refused with a 4xx; body: %s", abbreviate(r.Body))
		if p != "" {
			g.Expect(strings.ToLower(string(r.Body))).To(gomega.ContainSubstring(strings.ToLower(p)),
				"the refusal should name the problem (%q)", p)
		}
	})
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
	if resp.Status != http.StatusOK {
		return fmt.Errorf("list installations: status %d, want 200: %s", resp.Status, abbreviate(resp.Body))
	}
	m := bw.w.marker("b")
	if strings.Contains(string(resp.Body), m) {
		return fmt.Errorf("the refused document left installations behind (records mention %s): %s", m, abbreviate(resp.Body))
	}
	return nil
}

// refusedNaming: UPDATE-02 (eval gate), UNINSTALL-02 (orphaned task). The
// status of a bundle error is not shown; a refusal is not 2xx and names the
// object.
func (bw *bundleWorld) refusedNaming(what string) error {
	r := bw.w.resp
	if r == nil {
		return errors.New("no response yet")
	}
	n, err := bw.w.expand(what)
	if err != nil {
		return need(err)
	}
	return check(func(g gomega.Gomega) {
		g.Expect(r.Status).NotTo(gomega.And(gomega.BeNumerically(">=", 200), gomega.BeNumerically("<", 300)),
			"the call should be refused; body: %s", abbreviate(r.Body))
		g.Expect(string(r.Body)).To(gomega.ContainSubstring(n), "the refusal should name %q", n)
	})
}

// rankOf reads an order such as "connector, knowledge, agent" as ranks.
func rankOf(order string) map[string]int {
	rank := map[string]int{}
	for i, t := range strings.Split(order, ",") {
		rank[strings.TrimSpace(t)] = i
	}
	return rank
}

// inOrder checks that the entries of a log with an action follow an order of
// types, and that each type of the order occurs. Types outside the order
// (tasks removed with the thread) are not judged.
func inOrder(log []recordEntry, action, order string, alias map[string]string) error {
	rank := rankOf(order)
	var seen []string
	last := -1
	present := map[string]bool{}
	for _, e := range log {
		if e.Action != action {
			continue
		}
		t := e.Type
		if a, ok := alias[t]; ok {
			t = a
		}
		r, ok := rank[t]
		if !ok {
			continue
		}
		seen = append(seen, t+" "+e.Name)
		present[t] = true
		if r < last {
			return fmt.Errorf("%s %q comes after a later type; the %s order was: %s", t, e.Name, action, strings.Join(seen, ", "))
		}
		last = r
	}
	for t := range rank {
		if !present[t] {
			return fmt.Errorf("the log has no %q entry of type %s; the %s order was: %s", action, t, action, strings.Join(seen, ", "))
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
		return fmt.Errorf("installation %q has no log (docs/bundles.md): the install order cannot be read", name)
	}
	return inOrder(rec.Log, "install", order, nil)
}

// removalOrder: UNINSTALL-01, through the final record that the DELETE
// answered with (the record itself is gone afterwards).
func (bw *bundleWorld) removalOrder(name, order string) error {
	r := bw.w.resp
	if r == nil {
		return errors.New("no response yet")
	}
	var rec installRecord
	if err := json.Unmarshal(r.Body, &rec); err != nil || len(rec.Log) == 0 {
		return &untested{reason: "the DELETE answer carries no installation record with a log (docs/bundles.md), so the uninstall order cannot be observed"}
	}
	return inOrder(rec.Log, "remove", order, map[string]string{"thread": "project"})
}

// markedFailed: INSTALL-03.
func (bw *bundleWorld) markedFailed(name, child string) error {
	n, err := bw.w.expand(child)
	if err != nil {
		return need(err)
	}
	rec, err := bw.read(name)
	if err != nil {
		return err
	}
	return checkf("installation %q", name)(func(g gomega.Gomega) {
		g.Expect(rec.State).To(gomega.Equal("failed"), "the parent installation should be marked failed")
		g.Expect(rec.Error).To(gomega.ContainSubstring(n), "the error should name the failed child")
	})
}

// stillRecords: INSTALL-04. Nothing is rolled back: the children installed
// before the failure are on the parent's record, and their own records
// exist.
func (bw *bundleWorld) stillRecords(name, list string) error {
	l, err := bw.w.expand(list)
	if err != nil {
		return need(err)
	}
	rec, err := bw.read(name)
	if err != nil {
		return err
	}
	for _, n := range strings.Split(l, ",") {
		n = strings.TrimSpace(n)
		var c *recordChild
		for i := range rec.Children {
			if rec.Children[i].Name == n {
				c = &rec.Children[i]
			}
		}
		if c == nil {
			return fmt.Errorf("installation %q no longer records child %q (rolled back?); children: %v", name, n, rec.Children)
		}
		if status, err := bw.statusOf(c.InstallationID); err != nil {
			return err
		} else if status != http.StatusOK {
			return fmt.Errorf("the own installation of child %q (%s) answers %d, want 200: it was rolled back", n, c.InstallationID, status)
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
	if st.before == nil || len(st.before.Children) == 0 {
		return fmt.Errorf("installation %q recorded no child before it was uninstalled: nothing to check", name)
	}
	ids := []string{st.id}
	for _, c := range st.before.Children {
		ids = append(ids, c.InstallationID)
	}
	for i, id := range ids {
		status, err := bw.statusOf(id)
		if err != nil {
			return err
		}
		if status != http.StatusNotFound {
			what := "the parent installation"
			if i > 0 {
				what = fmt.Sprintf("the %s child %q", st.before.Children[i-1].Type, st.before.Children[i-1].Name)
			}
			return fmt.Errorf("after the uninstall, %s (%s) answers %d, want 404", what, id, status)
		}
	}
	return nil
}

// stoppedPartway: the interruptOnce test hook stopped the update after some
// children reached the target version and before others did.
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
		return fmt.Errorf("the update should have stopped partway (test hook interruptOnce), but %d children are at the target version and %d are not; children: %v",
			done, pending, rec.Children)
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
			return fmt.Errorf("the log shows %d updates of the %s child %q, want 1: a child already at the target version must be skipped", n, c.Type, c.Name)
		}
	}
	return nil
}

// wroteNothing: UPDATE-02 (refused before anything is written), UPDATE-07
// (the same update again writes nothing). Compared with the record read
// just before the update.
func (bw *bundleWorld) wroteNothing(name string) error {
	st, err := bw.state(name)
	if err != nil {
		return err
	}
	if st.before == nil {
		return fmt.Errorf("no update of %q was sent", name)
	}
	rec, err := bw.read(name)
	if err != nil {
		return err
	}
	before := st.before
	return checkf("installation %q", name)(func(g gomega.Gomega) {
		g.Expect(rec.Version).To(gomega.Equal(before.Version), "the installation's version")
		g.Expect(rec.State).To(gomega.Equal(before.State), "the installation's state")
		was := before.versions()
		for _, c := range rec.Children {
			g.Expect(c.Version).To(gomega.Equal(was[c.key()]), "version of the %s child %q", c.Type, c.Name)
		}
		g.Expect(rec.Children).To(gomega.HaveLen(len(before.Children)), "the record's children")
		var written []string
		if len(rec.Log) >= len(before.Log) {
			for _, e := range rec.Log[len(before.Log):] {
				if writes[e.Action] {
					written = append(written, e.Action+" "+e.Type+" "+e.Name)
				}
			}
		}
		g.Expect(written).To(gomega.BeEmpty(), "the log should show no write")
	})
}

// taskUnmarked: UPDATE-04. The record no longer counts the task among the
// bundle's own (the marker is gone); the export shows that it stays.
func (bw *bundleWorld) taskUnmarked(name, taskName string) error {
	n, err := bw.w.expand(taskName)
	if err != nil {
		return need(err)
	}
	if _, known := bw.tasks[n]; !known {
		return fmt.Errorf("task %q was never listed as the installation's own, so losing the marker cannot be shown", n)
	}
	rec, err := bw.read(name)
	if err != nil {
		return err
	}
	for _, t := range rec.Tasks {
		if t.Name == n {
			return fmt.Errorf("installation %q still lists task %q as its own (it keeps the bundle's marker)", name, n)
		}
	}
	return nil
}

// recordsOrphan: UPDATE-05.
func (bw *bundleWorld) recordsOrphan(name, kind, child string) error {
	n, err := bw.w.expand(child)
	if err != nil {
		return need(err)
	}
	rec, err := bw.read(name)
	if err != nil {
		return err
	}
	return checkf("installation %q", name)(func(g gomega.Gomega) {
		var orphaned, current []string
		for _, c := range rec.Orphaned {
			orphaned = append(orphaned, c.key())
		}
		for _, c := range rec.Children {
			current = append(current, c.key())
		}
		g.Expect(orphaned).To(gomega.ContainElement(kind+" "+n), "the record should list the child as orphaned")
		g.Expect(current).NotTo(gomega.ContainElement(kind+" "+n), "an orphaned child is no longer a current child")
	})
}

// orphanUntouched: UPDATE-05, UNINSTALL-04. The child's own installation
// record is still there, at the version it had.
func (bw *bundleWorld) orphanUntouched(child, version string) error {
	c, err := bw.orphanID(child)
	if err != nil {
		return err
	}
	rec, err := bw.readID(c.InstallationID, "of child "+c.Name)
	if err != nil {
		return fmt.Errorf("the orphaned child should be left untouched: %w", err)
	}
	if rec.Version != version {
		return fmt.Errorf("the own installation of %q is at version %q, want %q (untouched)", c.Name, rec.Version, version)
	}
	return nil
}

func (bw *bundleWorld) orphanGone(child string) error {
	c, err := bw.orphanID(child)
	if err != nil {
		return err
	}
	status, err := bw.statusOf(c.InstallationID)
	if err != nil {
		return err
	}
	if status != http.StatusNotFound {
		return fmt.Errorf("the own installation of %q answers %d after it was uninstalled, want 404", c.Name, status)
	}
	return nil
}

// warnedAbout: DROP-07. The record's warnings name each stripped item.
func (bw *bundleWorld) warnedAbout(name, list string) error {
	rec, err := bw.read(name)
	if err != nil {
		return err
	}
	all := strings.ToLower(strings.Join(rec.Warnings, "\n"))
	var missing []string
	for _, k := range strings.Split(list, ",") {
		k = strings.TrimSpace(k)
		if !strings.Contains(all, strings.ToLower(k)) {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("no warning names %s; warnings: %q", strings.Join(missing, ", "), rec.Warnings)
	}
	return nil
}
