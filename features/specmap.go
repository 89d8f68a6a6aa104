package features

import (
	_ "embed"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// The spec, sentence by sentence: which of its statements the catalog's
// rules quote (their spec words), and which no rule does.
//
// The spec (SpecText) is Markdown of a plain kind: headings, paragraphs,
// numbered lists and tables. A statement is a sentence of a paragraph or a
// list item, or a table row; a table cell that holds several sentences
// makes each of them a statement of its own, the row's other cells
// naming what it is about. A rule quotes a statement when its spec words,
// or a part of them (parts are cut at "; " and at "..."), read as the
// statement does once Markdown and punctuation are left aside, or, for a
// quote that leaves words out, when its words all stand in the statement
// in their order.

// Statement is one statement of the spec.
type Statement struct {
	// N numbers the statements from 1, in the spec's order.
	N int `json:"n"`
	// Section is the path of headings it stands under ("Endpoints /
	// Invoke routes / Path parameter {id}").
	Section string `json:"section"`
	// Line is its line in the spec text.
	Line int `json:"line"`
	// Text is the statement as the spec writes it, Markdown kept; a table
	// row's cells are joined by " | ".
	Text string `json:"text"`
	// Normative is false for what states no behaviour: a table's or a
	// list's introduction (ending with ":"), a "not shown" remark, and the
	// spec's opening paragraph.
	Normative bool `json:"normative"`
	// Rules are the IDs of the rules whose spec words quote it.
	Rules []string `json:"rules,omitempty"`
}

// SpecDoc is the spec text as blocks of statements, for a report to show
// it annotated.
type SpecDoc struct {
	Blocks     []SpecBlock
	Statements []Statement
	// Unlocated are the rules whose spec words (or a part of them) stand
	// nowhere in the spec text, with the part not found.
	Unlocated map[string]string
}

// SpecBlock is a heading, a paragraph, a list or a table of the spec.
type SpecBlock struct {
	// Kind is "heading", "paragraph", "list" or "table".
	Kind string
	// Level is a heading's level (1 for "#").
	Level int
	// Text is a heading's text.
	Text string
	// Items are a list's items (a paragraph is one item): each a run of
	// pieces.
	Items [][]SpecPiece
	// Header holds a table's head cells; Rows its rows.
	Header []string
	Rows   []SpecRow
}

// SpecRow is a table row: a statement of its own (Statement, from 1), or,
// when a cell holds several sentences, cells whose pieces are each one
// (Statement 0).
type SpecRow struct {
	Statement int
	Cells     [][]SpecPiece
}

// SpecPiece is a span of text: a sentence that is a statement (Statement,
// from 1) or text that is none (0).
type SpecPiece struct {
	Text      string
	Statement int
}

var (
	specOnce sync.Once
	specDoc  *SpecDoc
	specErr  error
)

// Spec returns the spec text as statements, each with the rules that
// quote it.
func Spec() (*SpecDoc, error) {
	specOnce.Do(func() {
		var rules []Rule
		rules, specErr = Rules()
		if specErr != nil {
			return
		}
		specDoc = parseSpec(string(SpecText))
		specDoc.locate(rules)
	})
	return specDoc, specErr
}

// Uncovered returns the normative statements no rule quotes.
func (d *SpecDoc) Uncovered() []Statement {
	var out []Statement
	for _, s := range d.Statements {
		if s.Normative && len(s.Rules) == 0 {
			out = append(out, s)
		}
	}
	return out
}

// parser builds a SpecDoc line by line.
type parser struct {
	doc      *SpecDoc
	headings []string
	line     int
}

var (
	headingLine = regexp.MustCompile(`^(#{1,6})\s+(.*)$`)
	itemLine    = regexp.MustCompile(`^(\d+\.|[-*])\s+(.*)$`)
	tableRule   = regexp.MustCompile(`^\|?\s*:?-{3,}`)
)

// parseSpec reads the spec's Markdown into blocks of statements.
func parseSpec(text string) *SpecDoc {
	p := &parser{doc: &SpecDoc{Unlocated: map[string]string{}}}
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		p.line = i + 1
		l := strings.TrimRight(lines[i], " \t\r")
		switch {
		case l == "":
		case headingLine.MatchString(l):
			m := headingLine.FindStringSubmatch(l)
			level := len(m[1])
			if len(p.headings) >= level {
				p.headings = p.headings[:level-1]
			}
			for len(p.headings) < level-1 {
				p.headings = append(p.headings, "")
			}
			p.headings = append(p.headings, m[2])
			p.doc.Blocks = append(p.doc.Blocks, SpecBlock{Kind: "heading", Level: level, Text: m[2]})
		case strings.HasPrefix(l, "|"):
			var rows []string
			start := i
			for ; i < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i]), "|"); i++ {
				rows = append(rows, strings.TrimSpace(lines[i]))
			}
			i--
			p.table(rows, start+1)
		case itemLine.MatchString(l):
			b := SpecBlock{Kind: "list"}
			for ; i < len(lines) && itemLine.MatchString(strings.TrimSpace(lines[i])); i++ {
				p.line = i + 1
				b.Items = append(b.Items, p.sentences(itemLine.FindStringSubmatch(strings.TrimSpace(lines[i]))[2], true))
			}
			i--
			p.doc.Blocks = append(p.doc.Blocks, b)
		default:
			// The opening paragraph, before any section, says what the
			// document covers.
			normative := len(p.headings) > 1
			p.doc.Blocks = append(p.doc.Blocks, SpecBlock{Kind: "paragraph", Items: [][]SpecPiece{p.sentences(l, normative)}})
		}
	}
	return p.doc
}

// section is the heading path below the title.
func (p *parser) section() string {
	var parts []string
	for i, h := range p.headings {
		if i > 0 && h != "" {
			parts = append(parts, h)
		}
	}
	return strings.Join(parts, " / ")
}

// statement adds a statement and returns its number.
func (p *parser) statement(text string, normative bool) int {
	n := len(p.doc.Statements) + 1
	if strings.HasSuffix(text, ":") || notShown.MatchString(text) {
		normative = false
	}
	p.doc.Statements = append(p.doc.Statements, Statement{N: n, Section: p.section(), Line: p.line, Text: text, Normative: normative})
	return n
}

// notShown matches a remark that the spec leaves something out.
var notShown = regexp.MustCompile(`(?i)\bnot shown\b|\bis not part of this document\b`)

// sentences splits text into sentences, each a statement.
func (p *parser) sentences(text string, normative bool) []SpecPiece {
	var out []SpecPiece
	for i, s := range splitSentences(text) {
		if i > 0 {
			out = append(out, SpecPiece{Text: " "})
		}
		out = append(out, SpecPiece{Text: s, Statement: p.statement(s, normative)})
	}
	return out
}

// sentenceEnd is the end of a sentence: a full stop (or ? !) followed by a
// space and what starts a sentence.
var sentenceEnd = regexp.MustCompile(`[.?!]\s+[A-Z` + "`" + `]`)

// splitSentences cuts text at its sentences' ends, outside code spans.
func splitSentences(text string) []string {
	var out []string
	from := 0
	for _, m := range sentenceEnd.FindAllStringIndex(text, -1) {
		if strings.Count(text[:m[0]], "`")%2 == 1 {
			continue // inside a code span
		}
		out = append(out, strings.TrimSpace(text[from:m[0]+1]))
		from = m[1] - 1
	}
	if rest := strings.TrimSpace(text[from:]); rest != "" {
		out = append(out, rest)
	}
	return out
}

// table adds a table: its first row is its head; every other row is a
// statement, or one per sentence of its cells when a cell holds several.
func (p *parser) table(rows []string, first int) {
	b := SpecBlock{Kind: "table"}
	for i, r := range rows {
		p.line = first + i
		if tableRule.MatchString(r) {
			continue
		}
		cells := splitCells(r)
		if i == 0 {
			b.Header = cells
			continue
		}
		split := false
		for _, c := range cells {
			if len(splitSentences(c)) > 1 {
				split = true
			}
		}
		row := SpecRow{}
		if !split {
			row.Statement = p.statement(strings.Join(cells, " | "), true)
			for _, c := range cells {
				row.Cells = append(row.Cells, []SpecPiece{{Text: c}})
			}
		} else {
			// The cells of one sentence name what the others are about.
			var label []string
			for _, c := range cells {
				if len(splitSentences(c)) == 1 {
					label = append(label, c)
				}
			}
			for _, c := range cells {
				if len(splitSentences(c)) == 1 {
					row.Cells = append(row.Cells, []SpecPiece{{Text: c}})
					continue
				}
				var pieces []SpecPiece
				for k, s := range splitSentences(c) {
					if k > 0 {
						pieces = append(pieces, SpecPiece{Text: " "})
					}
					n := p.statement(s, true)
					p.doc.Statements[n-1].Text = strings.Join(append(append([]string(nil), label...), s), " | ")
					if notShown.MatchString(s) || strings.HasSuffix(s, ":") {
						p.doc.Statements[n-1].Normative = false
					}
					pieces = append(pieces, SpecPiece{Text: s, Statement: n})
				}
				row.Cells = append(row.Cells, pieces)
			}
		}
		b.Rows = append(b.Rows, row)
	}
	p.doc.Blocks = append(p.doc.Blocks, b)
}

// splitCells splits a table row into its cells.
func splitCells(row string) []string {
	row = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(row), "|"), "|")
	var out []string
	for _, c := range strings.Split(row, "|") {
		out = append(out, strings.TrimSpace(c))
	}
	return out
}

// normalize leaves Markdown, case and punctuation aside: what is compared
// when a rule's words are looked for in the spec.
func normalize(s string) string {
	s = strings.ToLower(s)
	s = strings.NewReplacer("`", "", "**", "", "->", " ", "→", " ", "'", " ", "’", " ").Replace(s)
	var b strings.Builder
	for _, r := range s {
		switch r {
		case ':', '|', ';', ',', '.', '(', ')', '"', '!', '?':
			b.WriteRune(' ')
		default:
			b.WriteRune(r)
		}
	}
	return " " + strings.Join(strings.Fields(b.String()), " ") + " "
}

// quoteParts cuts a rule's spec words into the parts looked for: at "; ",
// at "..." and between sentences, leaving out what quotes this project's
// own contract (docs/bundles.md) rather than the spec.
func quoteParts(spec string) []string {
	spec = regexp.MustCompile(`\(docs/[^)]*\)`).ReplaceAllString(spec, "")
	var out []string
	for _, a := range strings.Split(spec, "...") {
		for _, b := range strings.Split(a, "; ") {
			for _, part := range splitSentences(strings.TrimSpace(b)) {
				if strings.HasPrefix(part, "docs/") || len(strings.Fields(normalize(part))) == 0 {
					continue
				}
				out = append(out, part)
			}
		}
	}
	return out
}

// locate finds, for each rule, the statements its spec words quote: each
// part of them (quoteParts) where it reads whole; else where its words
// stand in order (a table row read with its column names, which a quote
// may use: "async: boolean, default false"); else, for a part that joins
// a list's introduction to a row of its table with ": ", each piece of it
// apart.
func (d *SpecDoc) locate(rules []Rule) {
	norm := make([]string, len(d.Statements))
	withHead := make([]string, len(d.Statements))
	for i, s := range d.Statements {
		norm[i] = normalize(s.Text)
		withHead[i] = norm[i]
		if h := d.headerOf(s.N); h != nil {
			cells := strings.Split(s.Text, " | ")
			var b strings.Builder
			for k, c := range cells {
				if k < len(h) {
					b.WriteString(h[k] + " ")
				}
				b.WriteString(c + " ")
			}
			withHead[i] = normalize(b.String())
		}
	}
	find := func(part string, minWords int) []int {
		np := normalize(part)
		if len(strings.Fields(np)) < minWords {
			return nil
		}
		var hits []int
		for i, n := range norm {
			if strings.Contains(n, np) {
				hits = append(hits, i)
			}
		}
		if len(hits) == 0 {
			if i := tightest(withHead, strings.Fields(np)); i >= 0 {
				hits = append(hits, i)
			}
		}
		return hits
	}
	for _, r := range rules {
		var parts [][]int // each part's statements
		for _, part := range quoteParts(r.Spec) {
			if len(strings.Fields(normalize(part))) < 2 {
				continue // one word ("App") says nothing of where it stands
			}
			hits := find(part, 2)
			if len(hits) == 0 && strings.Contains(part, ": ") {
				for _, piece := range strings.Split(part, ": ") {
					hits = append(hits, find(piece, 2)...)
				}
			}
			if len(hits) == 0 {
				if r.Source == SourceSpec {
					d.Unlocated[r.ID] = part
				}
				continue
			}
			parts = append(parts, hits)
		}
		for k, hits := range parts {
			// A part found in several statements ("whitespace is
			// trimmed") is the one the rule's other parts stand in.
			if len(hits) > 1 {
				var near []int
				for _, i := range hits {
					for o, other := range parts {
						if o != k && slices.Contains(other, i) && !slices.Contains(near, i) {
							near = append(near, i)
						}
					}
				}
				if len(near) > 0 {
					hits = near
				}
			}
			for _, i := range hits {
				if !contains(d.Statements[i].Rules, r.ID) {
					d.Statements[i].Rules = append(d.Statements[i].Rules, r.ID)
				}
			}
		}
	}
	for i := range d.Statements {
		sort.Strings(d.Statements[i].Rules)
	}
}

// headerOf returns the head cells of the table whose row is statement n
// (a row of its own), nil for a statement that is no such row.
func (d *SpecDoc) headerOf(n int) []string {
	for _, b := range d.Blocks {
		if b.Kind != "table" {
			continue
		}
		for _, r := range b.Rows {
			if r.Statement == n {
				return b.Header
			}
		}
	}
	return nil
}

// tightest returns the statement in which words stand in their order
// within the shortest span, -1 when none holds them so (or the words are
// too few to say: fewer than three): a span more than twice as long as the
// words is no quote of them.
func tightest(norm []string, words []string) int {
	if len(words) < 3 {
		return -1
	}
	best, bestSpan := -1, 0
	for i, n := range norm {
		fields := strings.Fields(n)
		for start := range fields {
			if fields[start] != words[0] {
				continue
			}
			k := 1
			end := start
			for j := start + 1; j < len(fields) && k < len(words); j++ {
				if fields[j] == words[k] {
					k++
					end = j
				}
			}
			if k == len(words) && end-start < 2*len(words) && (best < 0 || end-start < bestSpan) {
				best, bestSpan = i, end-start
			}
		}
	}
	return best
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// UncoveredReason explains, as data, a normative statement of the spec
// that no rule quotes (uncovered.yaml): why no rule of the catalog quotes
// it.
type UncoveredReason struct {
	// Statement is the statement's text as Statement.Text gives it.
	Statement string `yaml:"statement" json:"statement"`
	// Why says why no rule quotes it.
	Why string `yaml:"why" json:"why"`
	// Rules are the rules that check what it says in the words of another
	// statement, if any.
	Rules []string `yaml:"rules,omitempty" json:"rules,omitempty"`
}

//go:embed uncovered.yaml
var uncoveredYAML []byte

// UncoveredReasons returns the catalog's explanations of the spec's
// statements no rule quotes.
func UncoveredReasons() ([]UncoveredReason, error) {
	var out []UncoveredReason
	if err := yaml.Unmarshal(uncoveredYAML, &out); err != nil {
		return nil, fmt.Errorf("features/uncovered.yaml: %w", err)
	}
	return out, nil
}
