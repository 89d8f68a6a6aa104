package fakeserver

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/invokeconf/invokeconf/internal/suggest"
	"github.com/invokeconf/invokeconf/profile"
)

// Run-time control of the reference server, for the test suites of clients
// (docs/clients.md): switch defects and variants between two tests, reset
// the state to the seed, read the requests served. The same operations are
// methods of Server (in process) and routes under AdminPrefix (admin_http.go),
// open only with Config.AdminKey.

// switchSet is the defect and variant switches in force. It is never
// changed once made: a change makes a new set and swaps it in
// (control.switches), and a request keeps the set it started with (view).
type switchSet struct {
	defects  defectSet
	variants variantSet
	// none: every switch is off (sealed), so no rewrite table needs a look.
	none bool
}

// sealed is the set as it is served, with none worked out.
func (set switchSet) sealed() *switchSet {
	set.none = set.defects == defectSet{} && set.variants == variantSet{}
	return &set
}

// control is the state every view of a server shares.
type control struct {
	switches atomic.Pointer[switchSet]
	store    atomic.Pointer[store]
	// startUp is the switch set of Config, which RestoreSwitches brings
	// back.
	startUp *switchSet
	// mu serialises changes (SetSwitches, Reset): each reads the state in
	// force and swaps in the next. Requests never take it.
	mu     sync.Mutex
	recent *requestRing
	// redactor hides keys in recorded requests (requestRedactor).
	redactOnce sync.Once
	redactor   *profile.Redactor
	// adminMux routes the admin requests (serveAdmin).
	adminMuxOnce sync.Once
	adminMux     *http.ServeMux
	// installHook, set only by tests before they send, runs between an
	// install's preparation and its publication: it shows the preparation
	// holds no lock.
	installHook func()
}

// startUpOnly are the variants that change the seed itself (the IDs and the
// tools the served profile lists): they are chosen at start-up and cannot be
// switched at run time.
var startUpOnly = map[variantID]string{
	varUUIDSeedIDs: "it re-seeds the agents, projects and thread with other IDs",
	varServiceTool: "the served profile lists the service tool under agents.*.serviceTools",
}

// SwitchState is one switch as Switches lists it.
type SwitchState struct {
	Name string `json:"name"`
	On   bool   `json:"on"`
	// Description says what the switch does.
	Description string `json:"description"`
	// Rules are the rule IDs a defect breaks.
	Rules []string `json:"rules,omitempty"`
	// Spec holds the spec's words that allow a variant.
	Spec string `json:"spec,omitempty"`
	// Group names variants that exclude each other.
	Group string `json:"group,omitempty"`
	// StartUpOnly marks a variant that changes the seed: it is chosen when
	// the server starts and cannot be switched at run time.
	StartUpOnly bool `json:"startUpOnly,omitempty"`
}

// Switches is every defect and variant switch with its state.
type Switches struct {
	Defects  []SwitchState `json:"defects"`
	Variants []SwitchState `json:"variants"`
}

// On lists the names of the switches that are on: defects, then variants.
func (w Switches) On() (defects, variants []string) {
	for _, d := range w.Defects {
		if d.On {
			defects = append(defects, d.Name)
		}
	}
	for _, v := range w.Variants {
		if v.On {
			variants = append(variants, v.Name)
		}
	}
	return defects, variants
}

// SwitchChange turns switches on (true) or off (false) by name; a switch it
// does not name keeps its state.
type SwitchChange struct {
	Defects  map[string]bool `json:"defects,omitempty"`
	Variants map[string]bool `json:"variants,omitempty"`
}

// SwitchError is a switch change the server refuses: an unknown name
// (Conflict false), or a set it cannot serve (Conflict true: variants of
// one group together, a start-up-only variant changed).
type SwitchError struct {
	Conflict bool
	Problems []string
}

func (e *SwitchError) Error() string { return strings.Join(e.Problems, "; ") }

// Switches lists every switch with its state now.
func (s *Server) Switches() Switches { return s.ctl.switches.Load().list() }

func (set *switchSet) list() Switches {
	var w Switches
	for i, d := range defectTable {
		w.Defects = append(w.Defects, SwitchState{Name: d.Name, On: set.defects[i], Description: d.Description,
			Rules: append([]string(nil), d.Rules...)})
	}
	for i, v := range variantTable {
		_, fixed := startUpOnly[variantID(i)]
		w.Variants = append(w.Variants, SwitchState{Name: v.Name, On: set.variants[i], Description: v.Description,
			Spec: v.Spec, Group: v.Group, StartUpOnly: fixed})
	}
	return w
}

// names lists the switches of the set that are on.
func (set *switchSet) names() (defects, variants []string) {
	for i, on := range set.defects {
		if on {
			defects = append(defects, defectTable[i].Name)
		}
	}
	for i, on := range set.variants {
		if on {
			variants = append(variants, variantTable[i].Name)
		}
	}
	return defects, variants
}

// SetSwitches applies a change to the switches in force and returns the
// new state. It applies to requests, and so runs, that start after it
// returns; those in flight finish with the set they started with. A change
// with an unknown name, one that leaves two variants of a group on, or one
// that turns a start-up-only variant is refused whole (*SwitchError).
func (s *Server) SetSwitches(c SwitchChange) (Switches, error) {
	s.ctl.mu.Lock()
	defer s.ctl.mu.Unlock()
	next := *s.ctl.switches.Load()
	var unknown []string
	for name, on := range c.Defects {
		id, ok := defectByName(name)
		if !ok {
			unknown = append(unknown, fmt.Sprintf("unknown defect %q%s", name, suggest.DidYouMean(name, defectNames())))
			continue
		}
		next.defects[id] = on
	}
	for name, on := range c.Variants {
		id, ok := variantByName(name)
		if !ok {
			unknown = append(unknown, fmt.Sprintf("unknown variant %q%s", name, suggest.DidYouMean(name, variantNames())))
			continue
		}
		next.variants[id] = on
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return Switches{}, &SwitchError{Problems: unknown}
	}
	if err := s.checkServable(&next); err != nil {
		return Switches{}, err
	}
	s.ctl.switches.Store(next.sealed())
	return next.list(), nil
}

// ReplaceSwitches switches on exactly the named defects and variants, and
// every other one off (the start-up-only variants must keep their state).
func (s *Server) ReplaceSwitches(defects, variants []string) (Switches, error) {
	c := SwitchChange{Defects: map[string]bool{}, Variants: map[string]bool{}}
	for _, d := range defectTable {
		c.Defects[d.Name] = false
	}
	for _, v := range variantTable {
		c.Variants[v.Name] = false
	}
	for _, n := range defects {
		c.Defects[n] = true
	}
	for _, n := range variants {
		c.Variants[n] = true
	}
	return s.SetSwitches(c)
}

// checkServable refuses a switch set the server cannot serve: two variants
// of one group, or a start-up-only variant other than at start-up.
func (s *Server) checkServable(next *switchSet) error {
	var problems []string
	byGroup := map[string][]string{}
	for i, on := range next.variants {
		if g := variantTable[i].Group; on && g != "" {
			byGroup[g] = append(byGroup[g], variantTable[i].Name)
		}
	}
	for g, names := range byGroup {
		if len(names) > 1 {
			problems = append(problems, fmt.Sprintf("variants %s exclude each other (group %s): switch all but one off",
				strings.Join(names, " and "), g))
		}
	}
	for id, why := range startUpOnly {
		if next.variants[id] != s.ctl.startUp.variants[id] {
			problems = append(problems, fmt.Sprintf("variant %s can be chosen only at start-up (serve --variant %s): %s",
				variantTable[id].Name, variantTable[id].Name, why))
		}
	}
	if len(problems) == 0 {
		return nil
	}
	sort.Strings(problems)
	return &SwitchError{Conflict: true, Problems: problems}
}

// RestoreSwitches brings back the switches the server started with.
func (s *Server) RestoreSwitches() Switches {
	s.ctl.mu.Lock()
	defer s.ctl.mu.Unlock()
	s.ctl.switches.Store(s.ctl.startUp)
	return s.ctl.startUp.list()
}

// Reset returns the server's state to its seed: the threads and runs that
// invokes made are forgotten, installed bundles and deleted tasks are as
// seeded, and the recent requests are cleared. The switches stay as they
// are (RestoreSwitches brings back the start-up ones). Runs in flight
// finish on the state they started on, which nothing reads any more.
func (s *Server) Reset() error {
	s.ctl.mu.Lock()
	defer s.ctl.mu.Unlock()
	st, err := seedStore(s.cfg)
	if err != nil {
		return err
	}
	s.ctl.store.Store(st)
	s.ctl.recent.clear()
	return nil
}

func variantByName(name string) (variantID, bool) {
	for id, v := range variantTable {
		if v.Name == name {
			return variantID(id), true
		}
	}
	return 0, false
}

func defectNames() []string {
	out := make([]string, 0, len(defectTable))
	for _, d := range defectTable {
		out = append(out, d.Name)
	}
	return out
}

func variantNames() []string {
	out := make([]string, 0, len(variantTable))
	for _, v := range variantTable {
		out = append(out, v.Name)
	}
	return out
}

// MinAdminKeyLen is the shortest admin key New accepts.
const MinAdminKeyLen = 12

// checkAdminKey refuses an admin key that a client could confuse with, or
// that could be, a service key: one of the profile's keys, or any token of
// the sk-svc- shape; and one that cannot travel in a header.
func checkAdminKey(key string, p *profile.Profile) error {
	if key == "" {
		return nil
	}
	if len(key) < MinAdminKeyLen {
		return fmt.Errorf("fakeserver: the admin key is %d characters long; use at least %d", len(key), MinAdminKeyLen)
	}
	for _, r := range key {
		if r <= ' ' || r > '~' {
			return fmt.Errorf("fakeserver: the admin key may hold only printable ASCII without spaces")
		}
	}
	if strings.HasPrefix(strings.ToLower(key), "sk-svc-") {
		return fmt.Errorf("fakeserver: the admin key has the shape of a service key (sk-svc-...); an admin key can never be a service key")
	}
	if slices.Contains(p.Secrets(), key) {
		return fmt.Errorf("fakeserver: the admin key is one of the profile's keys; an admin key can never be a service key")
	}
	return nil
}

// adminKeyMatches compares a token with the admin key in constant time.
func (s *Server) adminKeyMatches(tok string) bool {
	a, b := sha256.Sum256([]byte(tok)), sha256.Sum256([]byte(s.cfg.AdminKey))
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1
}
