package reports

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/invokeconf/invokeconf/transcript"
)

//go:embed report.html.tmpl
var reportTemplate string

var htmlTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"class": func(v Verdict) string { return "v-" + strings.ReplaceAll(string(v), " ", "-") },
	"upper": func(s any) string { return strings.ToUpper(fmt.Sprint(s)) },
	"join":  strings.Join,
	"date":  func(t time.Time) string { return t.Format("2006-01-02 15:04:05 MST") },
	"last": func(list []string) string {
		if len(list) == 0 {
			return ""
		}
		return list[len(list)-1]
	},
	"request":      requestText,
	"response":     responseText,
	"curl":         Curl,
	"add":          func(a, b int) int { return a + b },
	"count":        func(c Counts, v Verdict) int { return c.Get(v) },
	"verdicts":     func() []Verdict { return Verdicts },
	"orNothing":    orNothing,
	"outcomeClass": func(o string) string { return strings.ReplaceAll(o, " ", "-") },
	"outcomeBadge": func(o string) string {
		if o == "partial" {
			return "v-untested"
		}
		return "v-" + strings.ReplaceAll(o, " ", "-")
	},
	"sources": func(rep *Report) []SourceVerdict { return []SourceVerdict{rep.Spec, rep.Contract} },
	"chipTarget": func(v Verdict) string {
		switch v {
		case Fail, Warning, HarnessError, ExpectedFailure:
			return "failed-rules"
		}
		return "matrix"
	},
	"tileTarget": tileTarget,
	"specView":   specView,
	"anchor": func(findings []Finding, id string) string {
		for _, f := range findings {
			if f.ID() == id {
				return f.Anchor()
			}
		}
		return ""
	},
}).Parse(reportTemplate))

// WriteHTML writes the certification report: one self-contained page (inline
// CSS, no scripts, no fonts or images to fetch; a Content-Security-Policy
// forbids any fetch) with the summary first, then the rule matrix, then every
// failure with its spec sentence, expected vs actual, transcript and curl
// commands.
func WriteHTML(w io.Writer, rep *Report) error {
	var b strings.Builder
	if err := htmlTemplate.Execute(&b, rep); err != nil {
		return err
	}
	_, err := io.WriteString(w, printable(b.String()))
	return err
}

// tileTarget is where an area's tile leads: its first row in the failed
// rules table when it has one, else its first row of the rule matrix.
func tileTarget(rep *Report, a AreaResult) string {
	for _, f := range rep.FailedRules {
		for _, r := range rep.Rules {
			if r.ID == f.ID && r.Area == a.Area {
				return "failed-" + f.ID
			}
		}
	}
	for _, r := range rep.Rules {
		if r.Area == a.Area {
			return "rule-" + r.ID
		}
	}
	return "matrix"
}

// requestText renders a request of a transcript as it went on the wire,
// control bytes made visible.
func requestText(ex transcript.Exchange) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\n", ex.Method, ex.URL)
	writeHeader(&b, ex.Header)
	if ex.Body != "" {
		b.WriteString("\n" + ex.Body)
	}
	return printable(b.String())
}

// responseText renders a response of a transcript, or why there was none.
func responseText(ex transcript.Exchange) string {
	var b strings.Builder
	if ex.Status != 0 {
		fmt.Fprintf(&b, "%d %s", ex.Status, http.StatusText(ex.Status))
		if ex.Elapsed != "" {
			fmt.Fprintf(&b, "  (body complete after %s)", ex.Elapsed)
		}
		b.WriteString("\n")
		writeHeader(&b, ex.RespHeader)
		if ex.RespBody != "" {
			b.WriteString("\n" + ex.RespBody)
		}
	}
	if ex.Error != "" {
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString("[" + ex.Error + "]")
	}
	if b.Len() == 0 {
		return "[no response recorded]"
	}
	return printable(b.String())
}

func writeHeader(b *strings.Builder, h http.Header) {
	names := make([]string, 0, len(h))
	for n := range h {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		for _, v := range h[n] {
			fmt.Fprintf(b, "%s: %s\n", n, v)
		}
	}
}
