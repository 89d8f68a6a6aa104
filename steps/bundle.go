package steps

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/invokeconf/invokeconf/fixtures"
	"github.com/invokeconf/invokeconf/outcome"
	"github.com/invokeconf/invokeconf/profile"
)

// bundleDefs: the project bundle lifecycle of bundle.feature,
// export.feature, install.feature, update.feature and uninstall.feature
// (BUNDLE-*, EXPORT-*, DROP-*, INSTALL-*, UPDATE-*, UNINSTALL-*).
//
// The spec shows the export route, DELETE /api/bundles/installations/{id}
// and DELETE /api/tasks/{id}. Installing, updating and reading an
// installation are extension routes the profile names (routes.bundleInstall,
// bundleUpdate, bundleInstallation, bundleInstallations); the documents
// installed are fixtures/bundles/*, and the installation record they answer
// with follows docs/bundles.md. Orders, versions, skips, orphans and the
// bundle marker on tasks are read from that record.
//
// Every document names its resources with ${marker:b}, unique to the
// scenario, so scenarios run concurrently against one target; what a
// scenario installed is uninstalled after it, as far as the target lets.
func bundleDefs() []Def {
	// What the steps read of the profile beyond their texts: every call
	// carries the bundles key; installing, updating and reading installation
	// records go through the extension routes.
	bundleKey := []string{"keys.bundles"}
	installRoutes := []string{"keys.bundles", "routes"}

	return []Def{
		step0(`^a target that manages bundles$`, (*World).managesBundles).Need("capabilities.bundles", "keys.bundles"),
		step0(`^the target honours the bundle test hooks$`, (*World).honoursTestHooks).Need("capabilities.bundleTestHooks"),

		step2(`^I install the bundle "([^"]*)" as "(\w+)"$`, (*World).install).Need(installRoutes...),
		step2(`^installation "(\w+)" of "([^"]*)"$`, (*World).givenInstalled).Need(installRoutes...),
		step2(`^I update installation "(\w+)" with "([^"]*)"$`, (*World).update).Need(installRoutes...),
		step2(`^installation "(\w+)" was updated with "([^"]*)"$`, (*World).givenUpdated).Need(installRoutes...),
		step0(`^I send the same update again$`, (*World).updateAgain).Need(installRoutes...),
		step3(`^I update the "(\w+)" child of installation "(\w+)" directly with "([^"]*)"$`, (*World).updateChild).Need(installRoutes...),
		step1(`^I uninstall installation "(\w+)"$`, (*World).uninstall).Need(installRoutes...),
		step2(`^I delete the task "([^"]*)" of installation "(\w+)"$`, (*World).deleteTask).Need(installRoutes...),
		step1(`^I uninstall the own installation of orphaned child "([^"]*)"$`, (*World).uninstallOrphan).Need(bundleKey...),

		step1(`^installation "(\w+)" is installed$`, func(w *World, name string) error { return w.isInstalled(name, "", false) }).Need(installRoutes...),
		step2(`^installation "(\w+)" is installed with every child of "([^"]*)"$`, func(w *World, name, doc string) error { return w.isInstalled(name, doc, false) }).Need(installRoutes...),
		step2(`^installation "(\w+)" is installed with every child at its version in "([^"]*)"$`, func(w *World, name, doc string) error { return w.isInstalled(name, doc, true) }).Need(installRoutes...),
		step1(`^installation "(\w+)" is still installed$`, (*World).stillInstalled).Need(installRoutes...),
		step1(`^the install is refused with a 4xx naming "([^"]*)"$`, (*World).installRefused),
		step0(`^nothing of the bundle is installed$`, (*World).nothingInstalled).Need(installRoutes...),
		step2(`^the (update|uninstall) is refused, naming "([^"]*)"$`, (*World).refusedNaming),
		step2(`^the log of installation "(\w+)" installed in the order (.+)$`, (*World).installOrder).Need(installRoutes...),
		step2(`^the final record of installation "(\w+)" removed in the order (.+)$`, (*World).removalOrder),
		step2(`^installation "(\w+)" is marked failed with an error naming "([^"]*)"$`, (*World).markedFailed).Need(installRoutes...).Asserts("INSTALL-03"),
		step2(`^installation "(\w+)" still records "([^"]*)" as installed, each with its own installation record$`, (*World).stillRecords).Need(installRoutes...),
		step1(`^installation "(\w+)" and every child it recorded are gone$`, (*World).allGone).Need(installRoutes...),
		step1(`^the update of installation "(\w+)" stopped partway$`, (*World).stoppedPartway).Need(installRoutes...),
		step1(`^the log of installation "(\w+)" updated each child once$`, (*World).updatedOnce).Need(installRoutes...),
		step1(`^the refused update wrote nothing to installation "(\w+)"$`, func(w *World, name string) error { return w.wroteNothing(name, false) }).Need(installRoutes...),
		step1(`^the last update wrote nothing to the children of installation "(\w+)"$`, func(w *World, name string) error { return w.wroteNothing(name, true) }).Need(installRoutes...),
		step2(`^installation "(\w+)" no longer counts the task "([^"]*)" as its own$`, (*World).taskUnmarked).Need(installRoutes...),
		step3(`^installation "(\w+)" records the "(\w+)" child "([^"]*)" as orphaned$`, (*World).recordsOrphan).Need(installRoutes...),
		step2(`^the own installation of orphaned child "([^"]*)" is still there at version "([^"]*)"$`, (*World).orphanUntouched).Need(installRoutes...),
		step1(`^the own installation of orphaned child "([^"]*)" is gone$`, (*World).orphanGone).Need(installRoutes...),
		step1(`^installation "(\w+)" carries a warning$`, (*World).carriesWarning).Need(installRoutes...),
	}
}

// bundleWorld is the bundle state of one scenario.
type bundleWorld struct {
	w        *World
	installs map[string]*installState // by the scenario's name for it
	// tasks and children map names to IDs, from every record read, so a
	// task or child can be found after the record stops listing it.
	tasks    map[string]string
	children map[string]recordChild
	// lastUpdate is the last update request, for "the same update again".
	lastUpdate *bundleCall
	// noAnswer says why the last update got no answer (a dropped
	// connection); "" when it got one.
	noAnswer string
	// created are the installations the scenario made, for clean-up.
	created []string
}

type installState struct {
	id string
	// answer describes the install's answer when it yielded no record, and
	// err why a record it pointed at could not be read.
	answer string
	err    error
	// before is the record read just before the last update or uninstall.
	before *installRecord
	// doc is the document last sent for it.
	doc string
}

type bundleCall struct {
	name, method, path, contentType, body string
}

func (bw *bundleWorld) reset() {
	bw.installs = map[string]*installState{}
	bw.tasks = map[string]string{}
	bw.children = map[string]recordChild{}
	bw.lastUpdate, bw.created, bw.noAnswer = nil, nil, ""
}

// installRecord is the installation record of docs/bundles.md, as far as the
// scenarios read it.
type installRecord struct {
	ID       bundleID `json:"id"`
	Name     string   `json:"name"`
	Type     string   `json:"type"`
	Version  string   `json:"version"`
	State    string   `json:"state"`
	Error    string   `json:"error"`
	Warnings []any    `json:"warnings"`
	Project  *struct {
		ID      bundleID `json:"id"`
		AgentID bundleID `json:"agentID"`
	} `json:"project"`
	Children []recordChild `json:"children"`
	Orphaned []recordChild `json:"orphaned"`
	Tasks    []struct {
		Name string   `json:"name"`
		ID   bundleID `json:"id"`
	} `json:"tasks"`
	Log []recordEntry `json:"log"`
}

// bundleID is an ID in an installation record. The spec shows no types, so
// any JSON scalar is an ID: a string as it is, a number or a boolean as its
// JSON text (kept exactly, never rounded through a float).
type bundleID string

func (id *bundleID) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0:
		return errors.New("an empty ID")
	case b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*id = bundleID(s)
	case string(b) == "null":
		*id = ""
	case b[0] == '{' || b[0] == '[':
		return fmt.Errorf("an ID is a JSON scalar, got %s", abbreviate(b))
	default:
		*id = bundleID(b)
	}
	return nil
}

type recordChild struct {
	Type           string   `json:"type"`
	Name           string   `json:"name"`
	Version        string   `json:"version"`
	InstallationID bundleID `json:"installationID"`
}

// key names a child within a record: its type and name.
func (c recordChild) key() string { return c.Type + " " + c.Name }

// versions maps each child of the record (by key) to its version.
func (r *installRecord) versions() map[string]string {
	v := map[string]string{}
	for _, c := range r.Children {
		v[c.key()] = c.Version
	}
	return v
}

type recordEntry struct {
	Action  string `json:"action"`
	Type    string `json:"type"`
	Name    string `json:"name"`
	Version string `json:"version"`
}

// writes are the log actions that change something; skip and interrupt
// entries do not.
var writes = map[string]bool{"install": true, "attach": true, "update": true, "orphan": true, "unmark": true, "remove": true, "fail": true}

// decodeRecord reads an installation record; what names where it came from.
func decodeRecord(what string, b []byte) (*installRecord, error) {
	var r installRecord
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, outcome.Failf(what, "an installation record: a JSON object with an id (docs/bundles.md)", "%v: %s", err, abbreviate(b))
	}
	if r.ID == "" {
		return nil, outcome.Failf(what, "an installation record with an id (docs/bundles.md)", "%s", abbreviate(b))
	}
	return &r, nil
}

func (bw *bundleWorld) managesBundles() error {
	if !bw.w.P.Capabilities.Bundles {
		return need(&profile.MissingError{What: "capabilities.bundles"})
	}
	return bw.w.useKey("bundles")
}

func (bw *bundleWorld) honoursTestHooks() error {
	if !bw.w.P.Capabilities.BundleTestHooks {
		return need(&profile.MissingError{What: "capabilities.bundleTestHooks (docs/bundles.md: test hooks)"})
	}
	return nil
}

// document reads a fixture document with the scenario's markers filled in.
func (bw *bundleWorld) document(name string) (body, contentType string, err error) {
	raw, err := fixtures.BundleDocument(name)
	if err != nil {
		return "", "", err
	}
	body, err = bw.w.expand(string(raw))
	if err != nil {
		return "", "", err
	}
	contentType = "application/yaml"
	if path.Ext(name) == ".json" {
		contentType = "application/json"
	}
	return body, contentType, nil
}

// route returns an extension route's method and path with {id} filled in.
func (bw *bundleWorld) route(name, id string) (string, string, error) {
	method, p, err := bw.w.P.Route(name)
	if err != nil {
		return "", "", need(err)
	}
	return method, strings.ReplaceAll(p, "{id}", url.PathEscape(id)), nil
}

// call sends one bundle request with the bundles key and keeps its response
// as the scenario's last.
func (bw *bundleWorld) call(method, p, contentType string, body *string, accept string) (*Response, error) {
	resp, err := bw.exchange(method, p, contentType, body, accept)
	if err != nil {
		return nil, err
	}
	bw.w.resp = resp
	return resp, nil
}

// exchange sends one bundle request with the bundles key and returns its
// response, read to its end. No answer, or one cut short, is the target's
// failure, not the harness's.
func (bw *bundleWorld) exchange(method, p, contentType string, body *string, accept string) (*Response, error) {
	rq, err := bw.w.keyed("bundles", map[string]string{"Accept": accept, "Content-Type": contentType}, method, p, body)
	if err != nil {
		return nil, err
	}
	resp, err := bw.w.do(rq)
	if err == nil {
		err = bw.w.readWhole(resp)
	}
	if err != nil {
		return nil, err // untested, or the failure of a route that gave no whole answer (rests.go)
	}
	return resp, nil
}

// look is exchange for a read that a later step should not mistake for
// the scenario's last response.
func (bw *bundleWorld) look(method, p string) (*Response, error) {
	return bw.exchange(method, p, "", nil, "application/json")
}

func (bw *bundleWorld) state(name string) (*installState, error) {
	st, ok := bw.installs[name]
	switch {
	case !ok:
		return nil, scenarioErrorf("no installation named %q was installed in this scenario", name)
	case st.err != nil:
		return nil, st.err
	case st.id == "":
		return nil, outcome.Fail("the answer to the install of "+st.doc,
			"the installation record (2xx), or a problem with a Location header pointing at it (docs/bundles.md)", st.answer).
			Explained(bw.docRules(st.doc)...)
	}
	return st, nil
}

// read fetches an installation record through routes.bundleInstallation.
func (bw *bundleWorld) read(name string) (*installRecord, error) {
	st, err := bw.state(name)
	if err != nil {
		return nil, err
	}
	return bw.readID(st.id, name)
}

func (bw *bundleWorld) readID(id, what string) (*installRecord, error) {
	method, p, err := bw.route(profile.RouteBundleInstallation, id)
	if err != nil {
		return nil, err
	}
	resp, err := bw.look(method, p)
	if err != nil {
		return nil, err
	}
	check := fmt.Sprintf("%s %s (the record of installation %s)", method, p, what)
	if resp.Status() != http.StatusOK {
		return nil, outcome.Failf(check, "200 with the installation record", "status %d: %s", resp.Status(), abbreviate(resp.Body()))
	}
	rec, err := decodeRecord(check, resp.Body())
	if err != nil {
		return nil, err
	}
	bw.learn(rec)
	return rec, nil
}

// statusOf returns the status a GET of an installation record answers.
func (bw *bundleWorld) statusOf(id string) (int, error) {
	method, p, err := bw.route(profile.RouteBundleInstallation, id)
	if err != nil {
		return 0, err
	}
	resp, err := bw.look(method, p)
	if err != nil {
		return 0, err
	}
	return resp.Status(), nil
}

// learn remembers the task and child IDs a record names.
func (bw *bundleWorld) learn(rec *installRecord) {
	if len(rec.Orphaned) > 0 {
		bw.w.orphans = true
	}
	for _, t := range rec.Tasks {
		bw.tasks[t.Name] = string(t.ID)
	}
	for _, c := range append(append([]recordChild(nil), rec.Children...), rec.Orphaned...) {
		if c.InstallationID != "" {
			bw.children[c.Name] = c
		}
	}
}

func (bw *bundleWorld) install(doc, name string) error {
	body, ct, err := bw.document(doc)
	if err != nil {
		return err
	}
	method, p, err := bw.route(profile.RouteBundleInstall, "")
	if err != nil {
		return err
	}
	resp, err := bw.call(method, p, ct, &body, "application/json")
	if err != nil {
		return err
	}
	st := &installState{doc: doc, answer: fmt.Sprintf("status %d: %s", resp.Status(), abbreviate(resp.Body()))}
	bw.installs[name] = st
	rec, err := bw.installedRecord(resp)
	if err != nil {
		if _, skip := Untested(err); skip {
			return err
		}
		st.err = err
		return nil
	}
	if rec != nil {
		st.id = string(rec.ID)
		bw.created = append(bw.created, st.id)
		bw.learn(rec)
	}
	return nil
}

// installedRecord reads the record an install answered with. The contract
// (docs/bundles.md): whenever an installation exists, a failed one
// included, the answer is a 2xx with its record, or any other status with a
// Location header pointing at the record. An answer with neither created
// nothing: (nil, nil).
func (bw *bundleWorld) installedRecord(resp *Response) (*installRecord, error) {
	what := fmt.Sprintf("the answer to the install (status %d)", resp.Status())
	if resp.Status() >= 200 && resp.Status() <= 299 {
		return decodeRecord(what, resp.Body())
	}
	loc := resp.Header().Get("Location")
	if loc == "" {
		return nil, nil
	}
	p, err := bw.ownPath(loc)
	if err != nil {
		return nil, outcome.Failf(what, "a Location on the target's own origin", "Location %q: %v", loc, err)
	}
	r, err := bw.look("GET", p)
	if err != nil {
		return nil, err
	}
	what = fmt.Sprintf("GET %s, the Location of the install's status %d answer", p, resp.Status())
	if r.Status() != http.StatusOK {
		return nil, outcome.Failf(what, "200 with the installation record", "status %d: %s", r.Status(), abbreviate(r.Body()))
	}
	return decodeRecord(what, r.Body())
}

// ownPath turns a Location into a path below the profile's base URL; a
// Location elsewhere is never followed.
func (bw *bundleWorld) ownPath(loc string) (string, error) {
	base, err := url.Parse(strings.TrimRight(bw.w.P.BaseURL, "/"))
	if err != nil {
		return "", err
	}
	u, err := base.Parse(loc)
	if err != nil {
		return "", err
	}
	if u.Scheme != base.Scheme || u.Host != base.Host || !strings.HasPrefix(u.Path, base.Path+"/") {
		return "", errors.New("not below the base URL " + base.Redacted())
	}
	p := strings.TrimPrefix(u.EscapedPath(), base.EscapedPath())
	if u.RawQuery != "" {
		p += "?" + u.RawQuery
	}
	return p, nil
}

// givenInstalled installs a document a scenario needs before its own
// check: it rests on INSTALL-01 (a valid document installs), and a refusal
// is explained as well by what the document holds that other rules say
// installs (docRules).
func (bw *bundleWorld) givenInstalled(name, doc string) error {
	err := bw.install(doc, name)
	if err == nil {
		if r := bw.w.resp; !is2xx(r.Status()) {
			err = outcome.Failf("the install of "+doc, "a 2xx answer with the installation record", "status %d: %s", r.Status(), abbreviate(r.Body()))
		} else {
			err = bw.isInstalled(name, "", false)
		}
	}
	return bw.restsOn(err, "INSTALL-01", doc)
}

// restsOn names the rule a bundle step a scenario needs rests on, unless
// its failure names one already, and the rules of what doc holds explain
// it too.
func (bw *bundleWorld) restsOn(err error, rule, doc string) error {
	if f, ok := outcome.AsFailure(err); ok && f.Rule == "" {
		f.Rule = rule
		f.ExplainedBy = append(f.ExplainedBy, bw.docRules(doc)...)
	}
	return err
}

// docRules are the rules that say a document like doc installs: any number
// of knowledge sets and connectors (BUNDLE-04), no app (BUNDLE-03).
func (bw *bundleWorld) docRules(doc string) []string {
	children, err := bw.docChildren(doc)
	if err != nil {
		return nil
	}
	n := map[string]int{}
	for _, c := range children {
		n[c.Type]++
	}
	var out []string
	if n["knowledge"] > 1 || n["connector"] > 1 || n["knowledge"]+n["connector"] == 0 {
		out = append(out, "BUNDLE-04")
	}
	if n["app"] == 0 {
		out = append(out, "BUNDLE-03")
	}
	return out
}

func (bw *bundleWorld) update(name, doc string) error {
	st, err := bw.state(name)
	if err != nil {
		return err
	}
	body, ct, err := bw.document(doc)
	if err != nil {
		return err
	}
	method, p, err := bw.route(profile.RouteBundleUpdate, st.id)
	if err != nil {
		return err
	}
	bw.lastUpdate = &bundleCall{name: name, method: method, path: p, contentType: ct, body: body}
	st.doc = doc
	return bw.send(bw.lastUpdate)
}

// send sends an update, reading the record just before it.
func (bw *bundleWorld) send(c *bundleCall) error {
	st, err := bw.state(c.name)
	if err != nil {
		return err
	}
	if st.before, err = bw.read(c.name); err != nil {
		return err
	}
	body := c.body
	bw.noAnswer = ""
	if _, err = bw.call(c.method, c.path, c.contentType, &body, "application/json"); err != nil {
		if _, skip := Untested(err); skip {
			return err
		}
		// A dropped connection is an answer the contract allows an
		// interrupted update (a crashed server); the checks judge the rest.
		bw.noAnswer = err.Error()
		bw.w.resp = nil
	}
	return nil
}

func (bw *bundleWorld) updateAgain() error {
	if bw.lastUpdate == nil {
		return scenarioErrorf("no update was sent in this scenario")
	}
	return bw.send(bw.lastUpdate)
}

// givenUpdated updates an installation as a scenario needs before its own
// check. An update whose document no longer declares a task rests on
// UPDATE-04, one that no longer declares a child on UPDATE-05, any other on
// UPDATE-01 (an update goes through).
func (bw *bundleWorld) givenUpdated(name, doc string) error {
	err := bw.update(name, doc)
	if err == nil {
		err = bw.updateAnswered2xx(doc)
	}
	if err == nil {
		err = bw.isInstalled(name, "", false)
	}
	rule := "UPDATE-01"
	switch {
	case strings.Contains(doc, "orphan-task"):
		rule = "UPDATE-04"
	case strings.Contains(doc, "orphan-child"), strings.Contains(doc, "orphan-app"):
		rule = "UPDATE-05"
	}
	return bw.restsOn(err, rule, doc)
}

// updateAnswered2xx fails unless the last update got a 2xx answer.
func (bw *bundleWorld) updateAnswered2xx(doc string) error {
	check := "the update with " + doc
	if bw.noAnswer != "" {
		return outcome.Fail(check, "a 2xx answer", "no answer: "+bw.noAnswer)
	}
	if r := bw.w.resp; r != nil && !is2xx(r.Status()) {
		return outcome.Failf(check, "a 2xx answer", "status %d: %s", r.Status(), abbreviate(r.Body()))
	}
	return nil
}

// updateChild updates a child's own installation directly (UPDATE-03).
func (bw *bundleWorld) updateChild(kind, name, doc string) error {
	rec, err := bw.read(name)
	if err != nil {
		return err
	}
	var id string
	for _, c := range rec.Children {
		if c.Type == kind {
			id = string(c.InstallationID)
		}
	}
	if id == "" {
		return outcome.Failf("installation "+name+" record's children", "a "+kind+" child with its installationID", "%s", childList(rec.Children))
	}
	body, ct, err := bw.document(doc)
	if err != nil {
		return err
	}
	method, p, err := bw.route(profile.RouteBundleUpdate, id)
	if err != nil {
		return err
	}
	_, err = bw.call(method, p, ct, &body, "application/json")
	return err
}

// uninstall sends DELETE /api/bundles/installations/{id} (spec route),
// reading the record just before it so the children it holds are known.
func (bw *bundleWorld) uninstall(name string) error {
	st, err := bw.state(name)
	if err != nil {
		return err
	}
	if st.before, err = bw.read(name); err != nil {
		return err
	}
	_, err = bw.call("DELETE", "/api/bundles/installations/"+url.PathEscape(st.id), "", nil, "application/json")
	return err
}

// deleteTask: UNINSTALL-03, DELETE /api/tasks/{id} on an orphaned task,
// found by name in the records read earlier.
func (bw *bundleWorld) deleteTask(taskName, name string) error {
	if _, err := bw.read(name); err != nil {
		// A refused uninstall leaves the record so it can be retried
		// (UNINSTALL-02).
		return outcome.Explain(err, "UNINSTALL-02")
	}
	n, err := bw.w.expand(taskName)
	if err != nil {
		return err
	}
	id, ok := bw.tasks[n]
	if !ok {
		return outcome.Failf("the tasks of installation "+name+" records", fmt.Sprintf("task %q listed with its id", n), "%s", strings.Join(mapKeys(bw.tasks), ", "))
	}
	_, err = bw.call("DELETE", "/api/tasks/"+url.PathEscape(id), "", nil, "")
	return err
}

func (bw *bundleWorld) orphanID(child string) (recordChild, error) {
	n, err := bw.w.expand(child)
	if err != nil {
		return recordChild{}, err
	}
	c, ok := bw.children[n]
	if !ok {
		// An orphaned child stays on record (UPDATE-05).
		return recordChild{}, outcome.Failf("the children of this scenario's installation records", fmt.Sprintf("child %q listed with its installationID", n), "%s", strings.Join(mapKeys(bw.children), ", ")).
			Explained("UPDATE-05")
	}
	return c, nil
}

func (bw *bundleWorld) uninstallOrphan(child string) error {
	c, err := bw.orphanID(child)
	if err != nil {
		return err
	}
	_, err = bw.call("DELETE", "/api/bundles/installations/"+url.PathEscape(string(c.InstallationID)), "", nil, "application/json")
	return err
}

// cleanUp uninstalls what the scenario installed, best effort and outside
// the transcript: parents (after deleting the tasks they know of when an
// orphaned task blocks them), then children an update orphaned. Failures are
// ignored; the verdict is already in.
func (bw *bundleWorld) cleanUp() {
	if len(bw.created) == 0 {
		return
	}
	w := bw.w
	key, err := w.P.Key("bundles")
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	del := func(p string) int {
		req, err := http.NewRequestWithContext(ctx, "DELETE", strings.TrimRight(w.P.BaseURL, "/")+p, nil)
		if err != nil {
			return 0
		}
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := w.client.Do(req)
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for i := len(bw.created) - 1; i >= 0; i-- {
		p := "/api/bundles/installations/" + url.PathEscape(bw.created[i])
		if status := del(p); status >= 400 && status != http.StatusNotFound {
			for _, id := range bw.tasks {
				del("/api/tasks/" + url.PathEscape(id))
			}
			del(p)
		}
	}
	for _, c := range bw.children {
		del("/api/bundles/installations/" + url.PathEscape(string(c.InstallationID)))
	}
}

// docChildren lists the children a fixture document declares, with the
// scenario's markers filled in.
func (bw *bundleWorld) docChildren(doc string) ([]recordChild, error) {
	body, _, err := bw.document(doc)
	if err != nil {
		return nil, err
	}
	tree, err := parseTree([]byte(body))
	if err != nil {
		return nil, scenarioErrorf("fixture %s: %v", doc, err)
	}
	var out []recordChild
	for _, c := range includesOf(tree) {
		meta, _ := c["metadata"].(map[string]any)
		out = append(out, recordChild{Type: childType(c), Name: scalarString(meta["name"]), Version: scalarString(meta["version"])})
	}
	return out, nil
}

// childList shows a record's children in messages.
func childList(cs []recordChild) string {
	if len(cs) == 0 {
		return "no children"
	}
	var out []string
	for _, c := range cs {
		out = append(out, fmt.Sprintf("%s %q at %q", c.Type, c.Name, c.Version))
	}
	return strings.Join(out, ", ")
}

func mapKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
