package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/invokeconf/invokeconf/fakeserver"
	"github.com/invokeconf/invokeconf/features"
)

func cmdRules(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("rules", stderr)
	format := fs.String("format", "markdown", "markdown or json")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *format != "markdown" && *format != "json" {
		return usageError{fmt.Errorf("--format must be markdown or json, not %q", *format)}
	}
	rules, err := features.Rules()
	if err != nil {
		return err
	}
	pickles, err := features.Pickles()
	if err != nil {
		return err
	}
	// A scenario of the rules listing: one per scenario or example row.
	type scenario struct {
		ID   string   `json:"id"`
		Name string   `json:"name"`
		Tags []string `json:"tags"`
	}
	byRule := map[string][]scenario{}
	for _, pk := range pickles {
		for _, id := range pk.Rules {
			byRule[id] = append(byRule[id], scenario{pk.ID, pk.Name, pk.Tags})
		}
	}
	if *format == "json" {
		type entry struct {
			features.Rule
			Scenarios []scenario `json:"scenarios"`
		}
		out := make([]entry, 0, len(rules))
		for _, r := range rules {
			scs := byRule[r.ID]
			if scs == nil {
				scs = []scenario{}
			}
			out = append(out, entry{r, scs})
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	fmt.Fprintln(stdout, "| rule | level | area | section | statement | checked by | traffic decides it |")
	fmt.Fprintln(stdout, "|---|---|---|---|---|---|---|")
	for _, r := range rules {
		// Outline rows share a name: list each name once with its IDs.
		var names []string
		ids := map[string][]string{}
		for _, sc := range byRule[r.ID] {
			if _, ok := ids[sc.Name]; !ok {
				names = append(names, sc.Name)
			}
			ids[sc.Name] = append(ids[sc.Name], sc.ID)
		}
		var by []string
		for _, n := range names {
			by = append(by, fmt.Sprintf("%s (%s)", n, strings.Join(ids[n], ", ")))
		}
		checked := strings.Join(by, "<br>")
		switch {
		case !r.Observable:
			checked = "not observable: " + r.Why
		case r.Pending != "" && len(by) == 0:
			checked = "pending (" + r.Pending + ")"
		case len(by) == 0:
			checked = "no scenario"
		}
		passive := r.Passive
		if r.PassiveWhy != "" {
			passive += ": " + r.PassiveWhy
		}
		fmt.Fprintf(stdout, "| %s | %s | %s | %s | %s | %s | %s |\n", r.ID, r.Level, r.Area, r.Section, mdEscape(r.Rule), mdEscape(checked), mdEscape(passive))
	}
	return nil
}

func mdEscape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

func cmdDefects(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("defects", stderr)
	if err := parse(fs, args); err != nil {
		return err
	}
	for _, d := range fakeserver.Defects() {
		fmt.Fprintf(stdout, "%-28s %-22s %s\n", d.Name, strings.Join(d.Rules, ","), d.Description)
	}
	return nil
}

func cmdVariants(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("variants", stderr)
	if err := parse(fs, args); err != nil {
		return err
	}
	for _, v := range fakeserver.Variants() {
		fmt.Fprintf(stdout, "%-28s %s\n%-28s spec: %s\n", v.Name, v.Description, "", v.Spec)
	}
	return nil
}
