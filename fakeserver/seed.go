package fakeserver

import (
	"fmt"
	"sort"

	"github.com/invokeconf/invokeconf/profile"
)

// roleScopes is what each key role of the profile stands for on the reference
// server. A vendor provisions keys with the same scopes on their service.
func roleScopes(p *profile.Profile) map[string][]string {
	main, other := p.Agents.Main, p.Agents.Other
	proj := p.Projects.Main.ID
	return map[string][]string{
		"agent":           {"agent:chat:" + main.ID, "thread:read"},
		"alias":           {"agent:chat:" + main.Alias},
		"wildcard":        {"agent:chat:*", "thread:read"},
		"wildcardLimited": {"agent:chat:*"},
		"otherAgent":      {"agent:chat:" + other.ID},
		"expired":         {"agent:chat:*", "thread:read"},
		"project":         {"project:chat:" + proj, "project:threads"},
		"apiDisabled":     {"agent:chat:*"},

		// Credential scopes and run modes.
		"credentialSearch": {"agent:chat:" + main.ID, "credential:use:search"},
		"credentialAll":    {"agent:chat:" + main.ID, "project:chat:" + proj, "credential:use:*"},
		"notEntitled":      {"agent:chat:" + main.ID, "credential:use:*"},

		// Project bundles.
		"bundles": {bundleScope},

		// One scope each, so that routes needing more are caught.
		"threadRead":   {"thread:read"},
		"threadChat":   {"agent:chat:" + p.Threads.Main.ID},
		"otherProject": {"project:chat:" + p.Projects.Other.ID},
	}
}

// seed builds the store from a profile.
func seed(p *profile.Profile) (*store, error) {
	st := newStore()
	steps := []func(*store, *profile.Profile) error{
		seedAgents, seedMainProject, seedOthers, seedNonAgent, seedBundles, seedKeys, checkEntitlementsOf,
	}
	for _, step := range steps {
		if err := step(st, p); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// seedAgents seeds every agent role the profile fills.
func seedAgents(st *store, p *profile.Profile) error {
	for role, a := range p.Agents.Roles() {
		if a.ID == "" {
			continue
		}
		ag := &agent{id: a.ID, alias: a.Alias, tools: append([]string(nil), a.Tools...), credTools: map[string]string{}}
		for tool, cred := range a.CredentialTools {
			ag.credTools[tool] = cred
		}
		if _, dup := st.agents[a.ID]; dup {
			return fmt.Errorf("agents.%s: duplicate agent ID %q", role, a.ID)
		}
		st.agents[a.ID] = ag
		if role == "main" {
			st.mainAgent = ag
		}
		if a.Alias != "" {
			st.aliases[a.Alias] = ag
		}
	}
	return nil
}

// seedMainProject seeds projects.main on agents.main, with its tasks,
// credentials and model.
func seedMainProject(st *store, p *profile.Profile) error {
	pm := p.Projects.Main
	if pm.ID == "" {
		return nil
	}
	main := st.agents[p.Agents.Main.ID]
	if main == nil {
		return fmt.Errorf("projects.main needs agents.main")
	}
	prj := &project{id: pm.ID, agent: main, tasks: append([]string(nil), pm.Tasks...), credentials: map[string]bool{}, model: pm.Model}
	for _, c := range pm.Credentials {
		prj.credentials[c] = true
		st.scopedCreds[c] = true
	}
	st.projects[pm.ID] = prj
	st.nonAgents[pm.ID] = true
	return nil
}

// seedNonAgent marks the profile's ID that exists but names no agent.
func seedNonAgent(st *store, p *profile.Profile) error {
	if p.NonAgentID != "" {
		st.nonAgents[p.NonAgentID] = true
	}
	return nil
}

// seedKeys seeds every key the profile fills, with its user and the scopes
// of its role.
func seedKeys(st *store, p *profile.Profile) error {
	scopes := roleScopes(p)
	for role, tok := range p.Keys.Roles() {
		if *tok == "" {
			continue
		}
		k, err := parseKey(*tok)
		if err != nil {
			return fmt.Errorf("keys.%s: %w", role, err)
		}
		u := st.users[k.user]
		if u == nil {
			u = &user{name: k.user, denied: map[string]bool{}}
			st.users[k.user] = u
		}
		switch role {
		case "wildcardLimited":
			u.denied[p.Agents.Restricted.ID] = true
		case "apiDisabled":
			u.apiDisabled = true
		case "notEntitled":
			u.noResearch = true
		}
		id := k.user + "-" + k.key
		if _, dup := st.keys[id]; dup {
			return fmt.Errorf("keys.%s: key ID %q used twice", role, id)
		}
		st.keys[id] = &apiKey{user: u, id: id, secret: secretSum(k.secret), scopes: scopes[role], expired: role == "expired"}
	}
	return nil
}

func checkEntitlementsOf(_ *store, p *profile.Profile) error { return checkEntitlements(p) }

// seedOthers seeds the second project (on agents.other) and the provisioned
// thread of agents.main.
func seedOthers(st *store, p *profile.Profile) error {
	if id := p.Projects.Other.ID; id != "" {
		a := st.agents[p.Agents.Other.ID]
		if a == nil {
			return fmt.Errorf("projects.other needs agents.other")
		}
		st.projects[id] = &project{id: id, agent: a, credentials: map[string]bool{}}
		st.nonAgents[id] = true
	}
	if id := p.Threads.Main.ID; id != "" {
		a := st.agents[p.Agents.Main.ID]
		if a == nil {
			return fmt.Errorf("threads.main needs agents.main")
		}
		st.threads[id] = &thread{id: id, agent: a}
	}
	return nil
}

// checkEntitlements: the notEntitled key's user stands for a workspace
// without the 'Research mode' entitlement, so it may not own the keys whose
// workspace must hold it.
func checkEntitlements(p *profile.Profile) error {
	ne, err := parseKey(p.Keys.NotEntitled)
	if p.Keys.NotEntitled == "" || err != nil {
		return nil
	}
	for _, role := range []string{"agent", "credentialSearch", "credentialAll"} {
		if k, err := parseKey(*p.Keys.Roles()[role]); err == nil && k.user == ne.user {
			return fmt.Errorf("keys.notEntitled and keys.%s belong to the same user %q: one workspace cannot both lack and hold the research entitlement", role, ne.user)
		}
	}
	return nil
}

// KeyRoles lists the key roles a profile fills, sorted.
func KeyRoles(p *profile.Profile) []string {
	var roles []string
	for role, k := range p.Keys.Roles() {
		if *k != "" {
			roles = append(roles, role)
		}
	}
	sort.Strings(roles)
	return roles
}
