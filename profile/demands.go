package profile

import (
	"fmt"
	"strings"
)

// Demand is something the scenarios ask of a profile beyond a field being
// set: a shape of the agents' tools, or keys that share an owner.
type Demand struct {
	// What names the demand as a vendor would read it.
	What string
	// Why says what happens when it is not met.
	Why string
	// WrongVerdicts is true when an unmet demand can fail an honest
	// service (not only leave scenarios untested).
	WrongVerdicts bool
}

// SameOwnerRoles are the key roles whose keys must belong to one owner (the
// <user> part of sk-svc-<user>-<key>-<secret>): scenarios open a thread with
// keys.agent and then use it with the others, and a service may hide
// another owner's thread (404) where the scenario expects its scope answer.
var SameOwnerRoles = []string{"agent", "alias", "wildcard", "otherAgent", "project", "threadRead", "threadChat"}

// UnmetDemands lists the demands the profile does not meet. A demand whose
// fields are all empty is left to the gaps (runner.Gaps): only what is set
// but of the wrong shape is reported here.
func (p *Profile) UnmetDemands() []Demand {
	var out []Demand
	main, other := p.Agents.Main, p.Agents.Other
	if len(main.Tools) > 0 {
		plain, search, project := 0, 0, 0
		projCreds := map[string]bool{}
		for _, c := range p.Projects.Main.Credentials {
			projCreds[c] = true
		}
		for _, t := range main.Tools {
			cred, gated := main.CredentialTools[t]
			switch {
			case !gated:
				plain++
			case cred == "search":
				search++
			case projCreds[cred]:
				project++
			}
		}
		const untested = "the scenarios that need it are untested"
		if plain < 2 {
			out = append(out, Demand{What: "agents.main.tools: two tools that use no credential (not in agents.main.credentialTools)", Why: untested})
		}
		if search == 0 {
			out = append(out, Demand{What: "agents.main.credentialTools: a tool whose credential is named search", Why: untested})
		}
		if project == 0 && p.Projects.Main.ID != "" {
			out = append(out, Demand{What: "projects.main.credentials: a credential that a tool of agents.main uses (agents.main.credentialTools)", Why: untested})
		}
		if other.ID != "" && len(distinct(main, other)) == 0 {
			out = append(out, Demand{What: "agents.main.tools: a tool that uses no credential and that agents.other lacks (shows which agent ran)", Why: untested})
		}
		if other.ID != "" && len(distinct(other, main)) == 0 {
			out = append(out, Demand{What: "agents.other.tools: a tool that uses no credential and that agents.main lacks (shows which agent ran)", Why: untested})
		}
	}
	if d, ok := p.ownersDiffer(); ok {
		out = append(out, d)
	}
	return out
}

// distinct lists a's credential-free tools that b lacks.
func distinct(a, b Agent) []string {
	theirs := map[string]bool{}
	for _, t := range b.Tools {
		theirs[t] = true
	}
	var out []string
	for _, t := range a.Tools {
		if _, gated := a.CredentialTools[t]; !gated && !theirs[t] {
			out = append(out, t)
		}
	}
	return out
}

// ownersDiffer reports keys of SameOwnerRoles whose owners differ from the
// owner of keys.agent. Keys are never quoted, only their roles and owners.
func (p *Profile) ownersDiffer() (Demand, bool) {
	roles := p.Keys.Roles()
	owner := func(role string) string {
		parts := strings.Split(*roles[role], "-")
		if len(parts) != 5 || parts[0] != "sk" || parts[1] != "svc" {
			return ""
		}
		return parts[2]
	}
	want := owner("agent")
	if want == "" {
		return Demand{}, false
	}
	var differ []string
	for _, role := range SameOwnerRoles[1:] {
		if got := owner(role); got != "" && got != want {
			differ = append(differ, fmt.Sprintf("keys.%s (owner %s)", role, got))
		}
	}
	if len(differ) == 0 {
		return Demand{}, false
	}
	return Demand{
		What: fmt.Sprintf("keys %s: one owner with keys.agent (owner %s); these differ: %s",
			strings.Join(SameOwnerRoles, ", "), want, strings.Join(differ, ", ")),
		Why:           "scenarios open a thread with one of these keys and use it with another; another owner's thread may answer 404 where a scope answer is expected",
		WrongVerdicts: true,
	}, true
}
