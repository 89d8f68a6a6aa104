package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/invokeconf/invokeconf/fakeserver"
	"github.com/invokeconf/invokeconf/features"
	"github.com/invokeconf/invokeconf/internal/suggest"
)

// Formats of 'invokeconf rules'.
const (
	rulesText     = "text"     // a table that fits a terminal (the default)
	rulesMarkdown = "markdown" // a markdown table, every column whole
	rulesJSON     = "json"     // every field of every rule, with its scenarios
)

// ruleScenario is a scenario of the rules listing: one per scenario or
// example row.
type ruleScenario struct {
	ID   string   `json:"id"`
	Name string   `json:"name"`
	Tags []string `json:"tags"`
}

func cmdRules(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("rules", stderr)
	format := fs.String("format", rulesText, "text (a table that fits the terminal: $COLUMNS wide, else 100), markdown or json")
	uncovered := fs.Bool("uncovered", false, "list the spec's normative statements that no rule's spec words quote, each with why (features/uncovered.yaml)")
	if err := parseArgs(fs, args); err != nil {
		return err
	}
	if *format != rulesText && *format != rulesMarkdown && *format != rulesJSON {
		return usageError{fmt.Errorf("--format must be text, markdown or json, not %q", *format)}
	}
	if *uncovered {
		if fs.NArg() > 0 {
			return usageError{fmt.Errorf("--uncovered lists statements, not rules: drop %q", fs.Arg(0))}
		}
		return writeUncovered(stdout, *format)
	}
	rules, err := features.Rules()
	if err != nil {
		return err
	}
	pickles, err := features.Pickles()
	if err != nil {
		return err
	}
	byRule := map[string][]ruleScenario{}
	for _, pk := range pickles {
		for _, id := range pk.Rules {
			byRule[id] = append(byRule[id], ruleScenario{pk.ID, pk.Name, pk.Tags})
		}
	}
	if ids := fs.Args(); len(ids) > 0 {
		if rules, err = pickRules(rules, ids); err != nil {
			return err
		}
		if *format == rulesText {
			for i, r := range rules {
				if i > 0 {
					fmt.Fprintln(stdout)
				}
				writeRule(stdout, r, byRule[r.ID])
			}
			return nil
		}
	}
	switch *format {
	case rulesJSON:
		type entry struct {
			features.Rule
			Scenarios []ruleScenario `json:"scenarios"`
		}
		out := make([]entry, 0, len(rules))
		for _, r := range rules {
			scs := byRule[r.ID]
			if scs == nil {
				scs = []ruleScenario{}
			}
			out = append(out, entry{r, scs})
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	case rulesMarkdown:
		writeRulesMarkdown(stdout, rules, byRule)
		return nil
	}
	writeRulesTable(stdout, rules, byRule, terminalWidth())
	return nil
}

// pickRules returns the catalog entries of ids, in the order given; an
// unknown ID is bad usage, with the nearest one.
func pickRules(rules []features.Rule, ids []string) ([]features.Rule, error) {
	byID := map[string]features.Rule{}
	var known []string
	for _, r := range rules {
		byID[r.ID] = r
		known = append(known, r.ID)
	}
	var out []features.Rule
	var problems []string
	for _, id := range ids {
		for _, one := range splitList(id) {
			one = strings.ToUpper(strings.TrimPrefix(one, "@"))
			r, ok := byID[one]
			if !ok {
				problems = append(problems, "unknown rule "+one+suggest.DidYouMean(one, known))
				continue
			}
			out = append(out, r)
		}
	}
	if len(problems) > 0 {
		return nil, usageError{fmt.Errorf("%s (see 'invokeconf rules')", strings.Join(problems, "; "))}
	}
	return out, nil
}

// writeRule shows one rule whole: every field of its catalog entry and the
// scenarios that check it.
func writeRule(w io.Writer, r features.Rule, scs []ruleScenario) {
	fmt.Fprintf(w, "%s  %s %s rule, area %s\n", r.ID, r.Level, orDash(r.Source), r.Area)
	field := func(name, text string) {
		if text != "" {
			fmt.Fprintf(w, "  %-11s %s\n", name+":", wrapText(text, 100-14, strings.Repeat(" ", 14)))
		}
	}
	field("section", r.Section)
	field("statement", r.Rule)
	field("spec", r.Spec)
	field("strictness", r.Strictness)
	if r.Observable {
		field("observable", "yes")
	} else {
		field("observable", "no: "+r.Why)
	}
	field("pending", r.Pending)
	field("cells", strings.Join(r.Cells, "; "))
	field("rests on", strings.Join(r.RestsOn, ", "))
	passive := r.Passive
	if r.PassiveWhy != "" {
		passive += ": " + r.PassiveWhy
	}
	field("passive", passive)
	switch {
	case len(scs) == 0 && r.Observable:
		fmt.Fprintln(w, "  scenarios:  none yet")
	case len(scs) > 0:
		fmt.Fprintln(w, "  scenarios:")
		for _, sc := range scs {
			fmt.Fprintf(w, "    %-22s %s\n", sc.ID, sc.Name)
			fmt.Fprintf(w, "    %-22s %s\n", "", strings.Join(sc.Tags, " "))
		}
	}
}

// writeRulesTable lists the catalog one rule a line, fitted to width: the
// statement comes last and is clipped; below 90 columns the area, source
// and passive columns are left out.
func writeRulesTable(w io.Writer, rules []features.Rule, byRule map[string][]ruleScenario, width int) {
	narrow := width < 90
	row := func(id, level, area, source, scen, passive, stmt string) {
		cols := []string{fmt.Sprintf("%-12s", id), fmt.Sprintf("%-6s", level)}
		if !narrow {
			cols = append(cols, fmt.Sprintf("%-11s", area), fmt.Sprintf("%-8s", source))
		}
		cols = append(cols, fmt.Sprintf("%-9s", scen))
		if !narrow {
			cols = append(cols, fmt.Sprintf("%-7s", passive))
		}
		line := strings.Join(cols, " ") + " "
		fmt.Fprintln(w, line+clipText(stmt, max(width-len(line), 10)))
	}
	row("RULE", "LEVEL", "AREA", "SOURCE", "SCENARIOS", "PASSIVE", "STATEMENT")
	for _, r := range rules {
		scen := fmt.Sprint(len(byRule[r.ID]))
		switch {
		case !r.Observable:
			scen = "unobs."
		case r.Pending != "" && len(byRule[r.ID]) == 0:
			scen = "pending"
		}
		row(r.ID, r.Level, r.Area, orDash(r.Source), scen, r.Passive, r.Rule)
	}
	fmt.Fprintln(w, "\n"+wrapText(fmt.Sprintf("%d rules. 'invokeconf rules ID...' shows rules whole (spec words, strictness, scenarios); "+
		"--format markdown or json lists every field.", len(rules)), width, ""))
}

// writeRulesMarkdown is the whole catalog as a markdown table.
func writeRulesMarkdown(w io.Writer, rules []features.Rule, byRule map[string][]ruleScenario) {
	fmt.Fprintln(w, "| rule | level | area | section | statement | checked by | traffic decides it |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
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
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s |\n", r.ID, r.Level, r.Area, r.Section, mdEscape(r.Rule), mdEscape(checked), mdEscape(passive))
	}
}

// terminalWidth is $COLUMNS when it holds a sensible width, else 100.
func terminalWidth() int {
	if n, err := strconv.Atoi(strings.TrimSpace(os.Getenv("COLUMNS"))); err == nil && n >= 40 && n <= 1000 {
		return n
	}
	return 100
}

// clipText cuts s to n characters (runes), ending in "…" when it cut.
func clipText(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:max(n-1, 0)]) + "…"
}

// wrapText wraps s at spaces to lines of at most n characters, indenting
// every line after the first.
func wrapText(s string, n int, indent string) string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		switch {
		case line == "":
			line = word
		case len([]rune(line))+1+len([]rune(word)) > n:
			lines = append(lines, line)
			line = word
		default:
			line += " " + word
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n"+indent)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func mdEscape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

func cmdDefects(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("defects", stderr)
	if err := parse(fs, args); err != nil {
		return err
	}
	writeDefects(stdout, fakeserver.Defects(), terminalWidth())
	return nil
}

// defectRulesWidth is the width of the defects table's rules column.
const defectRulesWidth = 22

// defectNameWidth is the width of the defects table's name column: the
// longest name's.
func defectNameWidth(defects []fakeserver.Defect) int {
	n := 0
	for _, d := range defects {
		n = max(n, len(d.Name))
	}
	return n
}

// writeDefects lists the defects in three columns that stay in line: a long
// rule list wraps at its commas within its column, the description wraps
// within the width left (at least 30 columns).
func writeDefects(w io.Writer, defects []fakeserver.Defect, width int) {
	nameWidth := defectNameWidth(defects)
	descWidth := max(width-nameWidth-defectRulesWidth-2, 30)
	for _, d := range defects {
		rules := wrapList(d.Rules, defectRulesWidth)
		desc := strings.Split(wrapText(d.Description, descWidth, "\n"), "\n\n")
		name := d.Name
		for i := 0; i < max(len(rules), len(desc)); i++ {
			var r, text string
			if i < len(rules) {
				r = rules[i]
			}
			if i < len(desc) {
				text = desc[i]
			}
			line := fmt.Sprintf("%-*s %-*s %s", nameWidth, name, defectRulesWidth, r, text)
			fmt.Fprintln(w, strings.TrimRight(line, " "))
			name = ""
		}
	}
}

// wrapList joins items with commas into lines of at most n characters,
// breaking after a comma; an item longer than n has a line of its own.
func wrapList(items []string, n int) []string {
	var lines []string
	line := ""
	for i, it := range items {
		if i < len(items)-1 {
			it += ","
		}
		if line != "" && len(line)+len(it) > n {
			lines = append(lines, line)
			line = ""
		}
		line += it
	}
	if line != "" || len(lines) == 0 {
		lines = append(lines, line)
	}
	return lines
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

// uncoveredStatement is a statement of the spec no rule quotes, with why.
type uncoveredStatement struct {
	features.Statement
	Why string `json:"why"`
	// Rules check what it says in the words of another statement.
	OtherWords []string `json:"checkedInOtherWordsBy,omitempty"`
}

// writeUncovered lists the spec's normative statements no rule quotes,
// each with the catalog's explanation (features/uncovered.yaml).
func writeUncovered(w io.Writer, format string) error {
	d, err := features.Spec()
	if err != nil {
		return err
	}
	reasons, err := features.UncoveredReasons()
	if err != nil {
		return err
	}
	why := map[string]features.UncoveredReason{}
	for _, r := range reasons {
		why[r.Statement] = r
	}
	normative := 0
	for _, s := range d.Statements {
		if s.Normative {
			normative++
		}
	}
	out := []uncoveredStatement{}
	for _, s := range d.Uncovered() {
		r := why[s.Text]
		if r.Why == "" {
			r.Why = "not explained (features/uncovered.yaml lacks it)"
		}
		out = append(out, uncoveredStatement{Statement: s, Why: r.Why, OtherWords: r.Rules})
	}
	switch format {
	case rulesJSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	case rulesMarkdown:
		fmt.Fprintln(w, "| line | section | statement | why | checked in other words by |")
		fmt.Fprintln(w, "|---|---|---|---|---|")
		for _, u := range out {
			fmt.Fprintf(w, "| %d | %s | %s | %s | %s |\n", u.Line, mdEscape(u.Section), mdEscape(u.Text), mdEscape(u.Why), strings.Join(u.OtherWords, " "))
		}
		return nil
	}
	fmt.Fprintf(w, "The spec's normative statements that no rule quotes: %d of %d (features/spec.md; why: features/uncovered.yaml)\n", len(out), normative)
	for _, u := range out {
		fmt.Fprintf(w, "\nspec.md:%d  %s\n  %s\n  why: %s\n", u.Line, u.Section, u.Text, u.Why)
		if len(u.OtherWords) > 0 {
			fmt.Fprintf(w, "  checked in other words by: %s\n", strings.Join(u.OtherWords, " "))
		}
	}
	return nil
}
