package checks

import (
	"slices"
	"strings"

	"github.com/invokeconf/invokeconf/agentscript"
)

// Cell is where an exchange sits among the spec's quantifiers: the invoke
// route it went to (with what {id} named), the response form it asked for,
// how its run ended, and the request headers it carried. The spec states
// many rules for every route ("Payload of all five"; "Project routes behave
// identically to the agent routes"), every form ("same Accept variants,
// same async parameter"), every run ("The last event of a run") and every
// response ("Every response carries the header"): a rule is judged on the
// cells the suite's exchanges visited, and the catalog says which it must
// visit (features.Rule.Cells).
type Cell struct {
	Route   string   `json:"route"`
	Form    string   `json:"form"`
	Outcome string   `json:"outcome"`
	Headers []string `json:"headers,omitempty"`
}

// The dimensions of a cell and their values.
const (
	DimRoute   = "route"
	DimForm    = "form"
	DimOutcome = "outcome"
	DimHeaders = "headers"
)

// Values of the route dimension: the five invoke routes, {id} of the first
// by what it names.
const (
	RouteAgentID       = "agent-id"
	RouteAlias         = "alias"
	RouteThreadID      = "thread-id"
	RouteThreadPath    = "thread"  // /api/invoke/{id}/thread/{thread}
	RouteThreadsPath   = "threads" // /api/invoke/{id}/threads/{thread}
	RouteProject       = "project"
	RouteProjectThread = "project-thread"
)

// Values of the form dimension.
const (
	FormSSE   = "sse"
	FormJSON  = "json"
	FormPlain = "plain"
	FormAsync = "async"
)

// Values of the outcome dimension.
const (
	OutcomeCompleted = "completed"
	OutcomeFailed    = "failed"
	OutcomeAborted   = "aborted"
)

// Values of the headers dimension: the request headers of the spec's
// table beyond Authorization and Accept, or none of them.
const (
	HeaderNone        = "none"
	HeaderScopedTools = "scoped-tools"
	HeaderRunMode     = "run-mode"
	HeaderThread      = "thread-id"
)

// Dimensions lists every dimension's values, in order.
var Dimensions = map[string][]string{
	DimRoute:   {RouteAgentID, RouteAlias, RouteThreadID, RouteThreadPath, RouteThreadsPath, RouteProject, RouteProjectThread},
	DimForm:    {FormSSE, FormJSON, FormPlain, FormAsync},
	DimOutcome: {OutcomeCompleted, OutcomeFailed, OutcomeAborted},
	DimHeaders: {HeaderNone, HeaderScopedTools, HeaderRunMode, HeaderThread},
}

// Of returns the cell's value on a dimension; for headers, the headers
// joined with "+" ("none" when it carried none).
func (c Cell) Of(dim string) string {
	switch dim {
	case DimRoute:
		return c.Route
	case DimForm:
		return c.Form
	case DimOutcome:
		return c.Outcome
	case DimHeaders:
		if len(c.Headers) == 0 {
			return HeaderNone
		}
		return strings.Join(c.Headers, "+")
	}
	return ""
}

// Has reports whether the cell has value v on dim (a header among several
// counts).
func (c Cell) Has(dim, v string) bool {
	if dim == DimHeaders && v != HeaderNone {
		return slices.Contains(c.Headers, v)
	}
	return c.Of(dim) == v
}

// String names the cell: "agent-id/sse/completed", with "+headers" when it
// carried any.
func (c Cell) String() string {
	s := c.Route + "/" + c.Form + "/" + c.Outcome
	if len(c.Headers) > 0 {
		s += "/" + strings.Join(c.Headers, "+")
	}
	return s
}

// FormOf returns the response form an invoke asks for: async with
// async=true, else by its Accept header as the spec compares it (AcceptRule).
func FormOf(x *View) string {
	if inv, ok := InvokeOf(x); ok && inv.Async {
		return FormAsync
	}
	vs := x.Request.Header.Values("Accept")
	switch {
	case len(vs) == 1 && AcceptRule(vs[0], true) == "FMT-01":
		return FormSSE
	case len(vs) == 1 && AcceptRule(vs[0], true) == "FMT-02":
		return FormJSON
	}
	return FormPlain
}

// HeadersOf returns the cell's headers of a request: X-SVC-Scoped-Tools,
// X-SVC-Run-Mode and X-SVC-Thread-Id, those it carried.
func HeadersOf(x *View) []string {
	var out []string
	for _, h := range []struct{ name, value string }{
		{"X-SVC-Scoped-Tools", HeaderScopedTools}, {"X-SVC-Run-Mode", HeaderRunMode}, {threadHeader, HeaderThread},
	} {
		if len(x.Request.Header.Values(h.name)) > 0 {
			out = append(out, h.value)
		}
	}
	return out
}

// ScriptOutcome returns how the prompt's agent script says the run ends:
// failed when it holds @fail, else completed. (That a client aborted it is
// known only to the client.)
func ScriptOutcome(x *View) string {
	if s, ok := x.program(); ok {
		for _, d := range s.Directives {
			if d.Kind == agentscript.Fail {
				return OutcomeFailed
			}
		}
	}
	return OutcomeCompleted
}
