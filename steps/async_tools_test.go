package steps

import (
	"net/http"
	"slices"
	"testing"

	"github.com/invokeconf/invokeconf/profile"
)

// TestLastRunIDOf: lastRunID's type is not shown; a string and a number
// both name the run, absence and null name none.
func TestLastRunIDOf(t *testing.T) {
	for body, want := range map[string]string{
		`{"lastRunID":"run_1"}`:          "run_1",
		`{"lastRunID":1234567890123456}`: "1234567890123456",
		`{"lastRunID":null}`:             "",
		`{"id":"thr_1"}`:                 "",
	} {
		if got, err := lastRunIDOf([]byte(body)); err != nil || got != want {
			t.Errorf("lastRunIDOf(%s) = %q, %v; want %q", body, got, err, want)
		}
	}
	if _, err := lastRunIDOf([]byte(`[1]`)); err == nil {
		t.Error("lastRunIDOf of a JSON array: no error")
	}
}

// TestServiceToolsLeftOut: a tool the profile lists under serviceTools does
// not count in an exact comparison; any other extra tool does.
func TestServiceToolsLeftOut(t *testing.T) {
	tests := []struct {
		answer string
		pass   bool
	}{
		{"tools: calc", true},
		{"tools: calc, platform-help", true},
		{"tools: calc, web", false},
	}
	for _, tc := range tests {
		w := testWorld(t)
		w.P.Agents.Main.ServiceTools = []string{"platform-help"}
		w.resp = fake{Method: "POST", URL: "http://x/api", Status: 200, Body: []byte(tc.answer), Complete: true}.response()
		if err := w.toolsExactly("calc"); (err == nil) != tc.pass {
			t.Errorf("%q: %v, want pass %v", tc.answer, err, tc.pass)
		}
	}
}

// TestLastCompletedOrWaited: the answer completed when the call came passes;
// both answers, neither, or a run that must not show fail without waiting.
func TestLastCompletedOrWaited(t *testing.T) {
	tests := []struct {
		body string
		pass bool
	}{
		{"second", true},
		{"first second", false},
		{"second third", false},
		{"nothing", false},
	}
	for _, tc := range tests {
		w := testWorld(t)
		w.threads["T"], w.runs["R3"] = "thr_1", "run_3"
		w.resp = fake{Method: "GET", URL: "http://x/events", Status: 200, Body: []byte(tc.body), Complete: true}.response()
		if err := w.lastCompletedOrWaited("second", "first", "third", "R3", "T"); (err == nil) != tc.pass {
			t.Errorf("%q: %v, want pass %v", tc.body, err, tc.pass)
		}
	}
}

// TestToolRulesOfAnotherAgentsRun: a run of the other agent that shows
// another agent's tools, or none, is its route's fault alone; the main
// agent's narrowing, credentials and tools do not explain it (a service
// that ran a third agent with none of the main agent's tools once made
// TOOLS-03 and ROUTE-01 explain each other).
func TestToolRulesOfAnotherAgentsRun(t *testing.T) {
	tests := []struct {
		path string
		got  []string
		want []string
	}{
		{"/api/invoke/agt_2", []string{"mail"}, nil},
		{"/api/invoke/agt_2", []string{"calc", "web"}, []string{"ROUTE-01"}},
		{"/api/invoke/agt_2", nil, []string{"ROUTE-01"}},
		{"/api/invoke/other-alias", []string{"lookup"}, []string{"ROUTE-02"}},
		{"/api/invoke/agt_1", []string{"lookup"}, []string{"TOOLS-04", "TOOLS-03"}}, // the main agent: unchanged
	}
	for _, tc := range tests {
		w := testWorld(t)
		w.P.Agents.Other = profile.Agent{ID: "agt_2", Alias: "other-alias", Tools: []string{"mail"}}
		w.resp = fake{Method: "POST", URL: "http://127.0.0.1:1" + tc.path, Status: 200, Complete: true}.response()
		if got := w.toolRules(tc.got); !slices.Equal(got, tc.want) {
			t.Errorf("%s, tools %v: %v, want %v", tc.path, tc.got, got, tc.want)
		}
	}
}

// TestToolRulesOfAModeRunMissingTools: a run with X-SVC-Run-Mode that lacks
// a plain tool of the agent shows either a mode that replaced the tools
// (MODE-02) or an earlier run's narrowing that stuck (TOOLS-03: the
// defect scoped-tools-sticky once failed MODE-01 when another scenario's
// narrowing landed between a MODE-01 row's two runs).
func TestToolRulesOfAModeRunMissingTools(t *testing.T) {
	tests := []struct {
		path string
		got  []string
		want []string
	}{
		{"/api/invoke/agt_1", []string{"deep-research"}, []string{"MODE-02", "TOOLS-03"}},
		{"/api/invoke/agt_1", []string{"calc", "deep-research"}, nil},                              // web: a credential this key lacks
		{"/api/projects/prj_1/invoke", []string{"deep-research"}, []string{"MODE-02", "TOOLS-03"}}, // a narrowing stuck to the agent shows in its project's runs too
	}
	for _, tc := range tests {
		w := testWorld(t)
		w.P.Projects.Main.ID = "prj_1"
		w.resp = fake{Method: "POST", URL: "http://127.0.0.1:1" + tc.path, Status: 200, Complete: true,
			ReqHeader: http.Header{"X-Svc-Run-Mode": {"research"}}}.response()
		if got := w.toolRules(tc.got); !slices.Equal(got, tc.want) {
			t.Errorf("%s, tools %v: %v, want %v", tc.path, tc.got, got, tc.want)
		}
	}
}

// TestToolRulesOfAnAsyncRun: the tools of an async run are read from the
// events route, but what they show rests on the invoke that started the
// run (its route, key and headers): a narrowing header there makes tools
// beyond it TOOLS-02's.
func TestToolRulesOfAnAsyncRun(t *testing.T) {
	w := testWorld(t)
	w.startedBy = map[*Response]*Response{}
	invoke := fake{Method: "POST", URL: "http://127.0.0.1:1/api/invoke/agt_1?async=true", Status: 202, Complete: true,
		ReqHeader: http.Header{"X-Svc-Scoped-Tools": {"calc"}}}.response()
	events := fake{Method: "GET", URL: "http://127.0.0.1:1/api/threads/thr_1/events?runID=run_1", Status: 200, Complete: true}.response()
	if got := w.toolRulesOn(events, []string{"calc", "lookup"}); slices.Contains(got, "TOOLS-02") {
		t.Errorf("an events answer on its own: %v; the request names no narrowing", got)
	}
	w.startedBy[events] = invoke
	if got := w.toolRulesOn(events, []string{"calc", "lookup"}); !slices.Contains(got, "TOOLS-02") {
		t.Errorf("an events answer of a narrowed run: %v, want TOOLS-02 among them", got)
	}
}
