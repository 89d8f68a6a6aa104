package fakeserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Spec: Endpoints, X-SVC-Run-Mode table (research); Limits (research mode run
// time). The research tool here is a deterministic, offline stand-in: it plans
// sub-questions, "searches the web" and "reads sources" from a built-in corpus
// on the reserved .test domain, and returns a cited report (MODE-08). A run
// that has the research tool is capped at Config.ResearchLimit (MODE-07).

// DefaultResearchLimit is the spec's research-mode run time (Limits).
const DefaultResearchLimit = 30 * time.Minute

// researchLimitError is the cause of a run stopped at the research cap.
type researchLimitError struct{ limit time.Duration }

func (e *researchLimitError) Error() string {
	return fmt.Sprintf("research run stopped at its time limit of %s", e.limit)
}

// runContext is the context a run lives on: the server's, and for a run with
// the research tool, bounded by the research cap (MODE-07).
func (s *view) runContext(tools []string) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(s.ctx)
	if !contains(tools, ResearchTool) {
		return ctx, cancel
	}
	capped, cancelCap := context.WithTimeoutCause(ctx, s.cfg.ResearchLimit, &researchLimitError{s.cfg.ResearchLimit})
	return capped, func() { cancelCap(); cancel() }
}

// stopped says why a run's context ended: the research cap, or a
// cancellation (client gone, abort, server closing).
func stopped(ctx context.Context) error {
	var capErr *researchLimitError
	if errors.As(context.Cause(ctx), &capErr) {
		return capErr
	}
	return errors.New("run cancelled")
}

// useTool runs the behaviour of a tool the agent called, after its toolCall
// event, and returns the tool's result. Only the research tool has one; other
// tools just get called.
func (s *view) useTool(ctx context.Context, emit func(Event), name string, args json.RawMessage) (string, error) {
	if name != ResearchTool {
		return `{"ok":true}`, nil
	}
	var in struct {
		Question string `json:"question"`
	}
	if err := json.Unmarshal(args, &in); err != nil || strings.TrimSpace(in.Question) == "" {
		return "", fmt.Errorf(`%s wants arguments {"question": "..."}`, ResearchTool)
	}
	rep := planResearch(strings.TrimSpace(in.Question))
	emit(Event{Step: &Step{Description: fmt.Sprintf("Research plan: %d sub-questions", len(rep.Parts))}})
	for _, p := range rep.Parts {
		if ctx.Err() != nil {
			return "", stopped(ctx)
		}
		emit(Event{Step: &Step{Description: "Searching the web: " + p.SubQuestion}})
		emit(Event{Step: &Step{Description: "Reading " + p.Source.URL}})
	}
	if ctx.Err() != nil {
		return "", stopped(ctx)
	}
	report := rep.Render()
	emit(Event{Content: report})
	return report, nil
}

// researchReport is what the research tool returns.
type researchReport struct {
	Question string
	Parts    []researchPart
}

// researchPart answers one sub-question from one source.
type researchPart struct {
	SubQuestion string
	Finding     string
	Source      researchSource
}

// researchSource is a source the research tool read.
type researchSource struct {
	Title, URL string
}

// researchAspects are the sub-questions every plan asks, in order.
var researchAspects = []struct{ ask, finding string }{
	{"What background does the question %q assume?", "The background the question assumes is laid out"},
	{"Which evidence bears on %q?", "The evidence that bears on the question is collected"},
	{"What remains uncertain about %q?", "What remains open about the question is listed"},
}

// planResearch plans and answers a question without the network: the same
// question always gives the same report.
func planResearch(question string) researchReport {
	rep := researchReport{Question: question}
	slug := slugify(question)
	for i, a := range researchAspects {
		n := i + 1
		rep.Parts = append(rep.Parts, researchPart{
			SubQuestion: fmt.Sprintf(a.ask, question),
			Finding:     a.finding,
			Source: researchSource{
				Title: fmt.Sprintf("Offline corpus, %s, part %d", slug, n),
				URL:   fmt.Sprintf("https://sources.invokeconf.test/%s/%d", slug, n),
			},
		})
	}
	return rep
}

// Render writes the report with a citation [n] after every finding and the
// numbered sources at the end.
func (r researchReport) Render() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Research report: %s\n\n", r.Question)
	for i, p := range r.Parts {
		fmt.Fprintf(&b, "%d. %s\n   %s [%d].\n", i+1, p.SubQuestion, p.Finding, i+1)
	}
	b.WriteString("\nSources:\n")
	for i, p := range r.Parts {
		fmt.Fprintf(&b, "[%d] %s, %s\n", i+1, p.Source.Title, p.Source.URL)
	}
	return b.String()
}

func slugify(s string) string {
	var b strings.Builder
	dash := false
	for _, c := range strings.ToLower(s) {
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
			b.WriteRune(c)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
		if b.Len() >= 48 {
			break
		}
	}
	if out := strings.TrimSuffix(b.String(), "-"); out != "" {
		return out
	}
	return "question"
}
