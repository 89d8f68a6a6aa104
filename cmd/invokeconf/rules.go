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
	rules, err := features.Rules()
	if err != nil {
		return err
	}
	scenarios, err := features.Scenarios()
	if err != nil {
		return err
	}
	byRule := map[string][]string{}
	for _, sc := range scenarios {
		for _, id := range sc.Rules {
			byRule[id] = append(byRule[id], fmt.Sprintf("%s:%d %s", sc.File, sc.Line, sc.Name))
		}
	}
	switch *format {
	case "json":
		type entry struct {
			features.Rule
			Scenarios []string `json:"scenarios"`
		}
		out := make([]entry, 0, len(rules))
		for _, r := range rules {
			out = append(out, entry{r, byRule[r.ID]})
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	case "markdown":
		fmt.Fprintln(stdout, "| rule | level | section | statement | checked by |")
		fmt.Fprintln(stdout, "|---|---|---|---|---|")
		for _, r := range rules {
			by := fmt.Sprintf("%d scenarios", len(byRule[r.ID]))
			switch {
			case !r.Observable:
				by = "not observable: " + r.Why
			case r.Pending != "" && len(byRule[r.ID]) == 0:
				by = "pending (" + r.Pending + ")"
			}
			fmt.Fprintf(stdout, "| %s | %s | %s | %s | %s |\n", r.ID, r.Level, r.Section, mdEscape(r.Rule), mdEscape(by))
		}
		return nil
	}
	return usageError{fmt.Errorf("--format must be markdown or json, not %q", *format)}
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
