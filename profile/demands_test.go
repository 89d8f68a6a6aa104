package profile_test

import (
	"strings"
	"testing"

	"github.com/invokeconf/invokeconf/fixtures"
	"github.com/invokeconf/invokeconf/profile"
)

// TestUnmetDemands: the reference profile meets every demand, and each
// change that breaks one is reported.
func TestUnmetDemands(t *testing.T) {
	tests := []struct {
		name   string
		change func(p *profile.Profile)
		want   string // "" for none
	}{
		{"reference", func(*profile.Profile) {}, ""},
		{"one plain tool", func(p *profile.Profile) { p.Agents.Main.Tools = []string{"calculator", "search-web", "crm-lookup"} }, "two tools that use no credential"},
		{"no search credential", func(p *profile.Profile) { p.Agents.Main.CredentialTools["search-web"] = "web" }, "credential is named search"},
		{"no project credential", func(p *profile.Profile) { p.Projects.Main.Credentials = []string{"nothing"} }, "projects.main.credentials"},
		{"other has main's tools", func(p *profile.Profile) { p.Agents.Other.Tools = p.Agents.Main.Tools }, "agents.other.tools"},
		{"owners differ", func(p *profile.Profile) { p.Keys.ThreadRead = "sk-svc-zed-kread-00" }, "keys.threadRead (owner zed)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := fixtures.Reference()
			if err != nil {
				t.Fatal(err)
			}
			tc.change(p)
			var got []string
			for _, d := range p.UnmetDemands() {
				got = append(got, d.What)
			}
			all := strings.Join(got, "\n")
			if tc.want == "" && len(got) > 0 || tc.want != "" && !strings.Contains(all, tc.want) {
				t.Errorf("unmet demands:\n%s\nwant one naming %q", all, tc.want)
			}
			if strings.Contains(all, "sk-svc") {
				t.Errorf("a demand quotes a key: %s", all)
			}
		})
	}
}
