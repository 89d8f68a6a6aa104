package reports

import (
	"fmt"
	"html/template"
	"strings"

	"github.com/invokeconf/invokeconf/features"
)

// SpecView is the spec text as report.html shows it: every statement a
// rule quotes marked with the worst verdict of those rules and linked to
// their rows of the rule matrix; every normative statement no rule quotes
// marked as such, with the catalog's reason (features/uncovered.yaml).
type SpecView struct {
	Blocks []specBlockView
	// Statements counts the spec's statements; Quoted those a rule quotes,
	// Uncovered the normative ones none quotes, Informative those that
	// state no behaviour.
	Statements, Quoted, Uncovered, Informative int
	// FirstOf is, per rule, the statement its row links back to.
	FirstOf map[string]int
}

type specBlockView struct {
	Kind    string
	Level   int
	Heading template.HTML
	Items   [][]specPieceView
	Header  []template.HTML
	Rows    []specRowView
}

type specRowView struct {
	St    *statementView
	Cells [][]specPieceView
}

type specPieceView struct {
	HTML template.HTML
	St   *statementView
}

// statementView is one statement with what the report says of it.
type statementView struct {
	N int
	// Class is "v-<verdict>" of the worst verdict among its rules,
	// "st-uncovered" for a normative statement no rule quotes,
	// "st-informative" for one that states no behaviour.
	Class   string
	Verdict Verdict
	Rules   []specRuleRef
	// Why is the catalog's reason no rule quotes it; OtherWords the rules
	// that check it in the words of another statement.
	Why        string
	OtherWords []string
}

type specRuleRef struct {
	ID      string
	Verdict Verdict
}

// specView builds the annotated spec for rep; nil when the spec cannot
// be read (the report still renders without it).
func specView(rep *Report) *SpecView {
	d, err := features.Spec()
	if err != nil {
		return nil
	}
	reasons, err := features.UncoveredReasons()
	if err != nil {
		return nil
	}
	why := map[string]features.UncoveredReason{}
	for _, r := range reasons {
		why[r.Statement] = r
	}
	verdict := map[string]Verdict{}
	for _, r := range rep.Rules {
		verdict[r.ID] = r.Verdict
	}
	v := &SpecView{Statements: len(d.Statements), FirstOf: map[string]int{}}
	sts := make([]*statementView, len(d.Statements))
	for i, s := range d.Statements {
		sv := &statementView{N: s.N}
		switch {
		case len(s.Rules) > 0:
			v.Quoted++
			worst := Verdict("")
			for _, id := range s.Rules {
				vd, ok := verdict[id]
				if !ok {
					continue // a rule the report does not hold
				}
				sv.Rules = append(sv.Rules, specRuleRef{id, vd})
				if worst == "" || severity(vd) < severity(worst) {
					worst = vd
				}
				if _, seen := v.FirstOf[id]; !seen {
					v.FirstOf[id] = s.N
				}
			}
			sv.Verdict, sv.Class = worst, "v-"+strings.ReplaceAll(string(worst), " ", "-")
		case s.Normative:
			v.Uncovered++
			r := why[s.Text]
			sv.Class, sv.Why, sv.OtherWords = "st-uncovered", r.Why, r.Rules
			if sv.Why == "" {
				sv.Why = "no rule quotes it, and the catalog does not say why"
			}
		default:
			v.Informative++
			sv.Class = "st-informative"
		}
		sts[i] = sv
	}
	at := func(n int) *statementView {
		if n < 1 || n > len(sts) {
			return nil
		}
		return sts[n-1]
	}
	pieces := func(ps []features.SpecPiece) []specPieceView {
		out := make([]specPieceView, 0, len(ps))
		for _, p := range ps {
			out = append(out, specPieceView{HTML: inlineMarkdown(p.Text), St: at(p.Statement)})
		}
		return out
	}
	for _, b := range d.Blocks {
		bv := specBlockView{Kind: b.Kind, Level: b.Level, Heading: inlineMarkdown(b.Text)}
		for _, it := range b.Items {
			bv.Items = append(bv.Items, pieces(it))
		}
		for _, h := range b.Header {
			bv.Header = append(bv.Header, inlineMarkdown(h))
		}
		for _, r := range b.Rows {
			rv := specRowView{St: at(r.Statement)}
			for _, c := range r.Cells {
				rv.Cells = append(rv.Cells, pieces(c))
			}
			bv.Rows = append(bv.Rows, rv)
		}
		v.Blocks = append(v.Blocks, bv)
	}
	return v
}

// inlineMarkdown renders the spec's inline Markdown (`code` spans) as
// HTML, every byte of text escaped.
func inlineMarkdown(s string) template.HTML {
	var b strings.Builder
	parts := strings.Split(s, "`")
	for i, p := range parts {
		esc := template.HTMLEscapeString(p)
		switch {
		case i%2 == 1 && i < len(parts)-1:
			fmt.Fprintf(&b, "<code>%s</code>", esc)
		case i%2 == 1:
			b.WriteString("`" + esc) // an unclosed span stays as written
		default:
			b.WriteString(esc)
		}
	}
	return template.HTML(b.String())
}
