package checks

import "testing"

func TestExportChecks(t *testing.T) {
	const route = "http://svc.test/api/assistants/agt_1/projects/prj_1/bundle"
	export := func(doc string) ex {
		return ex{method: "GET", url: route, req: hdr(), resp: hdr("Content-Type", "application/json"), chunks: whole(doc)}
	}
	const (
		agent     = `{"spec":{"type":"assistant"},"metadata":{"name":"Helper"}}`
		knowledge = `{"spec":{"type":"knowledge"}}`
	)
	payload := func(triggers string) string {
		return `{"spec":{"type":"project","payload":{"name":"P","tasks":[{"name":"t","triggers":` + triggers + `}]},"includes":[` + agent + `]}}`
	}
	tests := []struct {
		name, rule string
		x          ex
		want       string
	}{
		// BUNDLE-01
		{"a project bundle", "BUNDLE-01", export(payload(`[]`)), "pass"},
		{"a YAML project bundle", "BUNDLE-01", export("kind: Bundle\nspec:\n  type: project\n  payload: {name: P}\n  includes: [{spec: {type: agent}}]\n"), "pass"},
		{"no spec.type", "BUNDLE-01", export(`{"kind":"Bundle","spec":{"payload":{"name":"P"},"includes":[` + agent + `]}}`), "fail"},
		{"another spec.type", "BUNDLE-01", export(`{"spec":{"type":"bundle","payload":{"name":"P"},"includes":[` + agent + `]}}`), "fail"},
		{"no payload", "BUNDLE-01", export(`{"spec":{"type":"project","includes":[` + agent + `]}}`), "fail"},
		{"an empty payload", "BUNDLE-01", export(`{"spec":{"type":"project","payload":{},"includes":[` + agent + `]}}`), "fail"},
		{"no includes", "BUNDLE-01", export(`{"spec":{"type":"project","payload":{"name":"P"}}}`), "fail"},
		{"includes empty", "BUNDLE-01", export(`{"spec":{"type":"project","payload":{"name":"P"},"includes":[]}}`), "fail"},
		{"includes null", "BUNDLE-01", export(`{"spec":{"type":"project","payload":{"name":"P"},"includes":null}}`), "fail"},
		{"includes a mapping", "BUNDLE-01", export(`{"spec":{"type":"project","payload":{"name":"P"},"includes":{"agent":{}}}}`), "pass"},
		{"payload a list", "BUNDLE-01", export(`{"spec":{"type":"project","payload":[{"name":"P"},{"task":"t"}],"includes":[` + agent + `]}}`), "pass"},
		{"no spec", "BUNDLE-01", export(`{"kind":"Bundle","project":{"name":"P"}}`), "skip"},
		{"spec not a mapping", "BUNDLE-01", export(`{"spec":"project"}`), "skip"},
		{"not a mapping", "BUNDLE-01", export(`PK\x03\x04 a zip`), "skip"},
		{"refused", "BUNDLE-01", ex{method: "GET", url: route, req: hdr(), status: 404, chunks: whole(`{"error":"no such project"}`)}, "skip"},
		// BUNDLE-05
		{"agent and knowledge children", "BUNDLE-05", export(`{"spec":{"type":"project","includes":[` + agent + `,` + knowledge + `]}}`), "pass"},
		{"a project child", "BUNDLE-05", export(`{"spec":{"type":"project","includes":[` + agent + `,{"spec":{"type":"project"}}]}}`), "fail"},
		{"a project child by its type member", "BUNDLE-05", export(`{"spec":{"includes":[{"type":"project","name":"P"}]}}`), "fail"},
		{"YAML with a project child", "BUNDLE-05", export("spec:\n  type: project\n  includes:\n    - spec: {type: connector}\n    - spec: {type: project}\n"), "fail"},
		{"YAML without", "BUNDLE-05", export("spec:\n  type: project\n  includes:\n    - spec: {type: connector}\n"), "pass"},
		{"behind a base path", "BUNDLE-05", ex{method: "GET", url: "http://svc.test/svc/api/assistants/a/projects/p/bundle?app=x", req: hdr(),
			chunks: whole(`{"spec":{"includes":[{"type":"project"}]}}`)}, "fail"},
		{"a child of unread type", "BUNDLE-05", export(`{"spec":{"type":"project","includes":[{"kind":"project"}]}}`), "skip"},
		{"an agent and a child of unread type", "BUNDLE-05", export(`{"spec":{"type":"project","includes":[` + agent + `,{"spec":{"kind":"project"}}]}}`), "skip"},
		{"a child that is no mapping", "BUNDLE-05", export(`{"spec":{"type":"project","includes":[` + agent + `,"project"]}}`), "skip"},
		{"a project child beside one of unread type", "BUNDLE-05", export(`{"spec":{"type":"project","includes":[{"kind":"x"},{"type":"project"}]}}`), "fail"},
		{"no children", "BUNDLE-05", export(`{"spec":{"type":"project","includes":[]}}`), "skip"},
		{"not a document", "BUNDLE-05", export(`[not, a, mapping`), "skip"},
		{"refused", "BUNDLE-05", ex{method: "GET", url: route, req: hdr(), status: 403, chunks: whole(`{"spec":{"includes":[{"type":"project"}]}}`)}, "skip"},
		{"another route", "BUNDLE-05", ex{method: "GET", url: "http://svc.test/api/bundles/installations/i1", req: hdr(),
			chunks: whole(`{"spec":{"includes":[{"type":"project"}]}}`)}, "skip"},
		{"a POST", "BUNDLE-05", ex{method: "POST", url: route, req: hdr(), chunks: whole(`{"spec":{"includes":[{"type":"project"}]}}`)}, "skip"},
		{"cut", "BUNDLE-05", func() ex {
			e := export(`{"spec":{"includes":[{"type":"project"}]}}`)
			e.end = "client-gone"
			return e
		}(), "fail"},
		{"no body recorded", "BUNDLE-05", func() ex { e := export(`{"spec":{"includes":[{"type":"project"}]}}`); e.redacted = true; return e }(), "untested"},
		// DROP-04
		{"schedule and onDemand", "DROP-04", export(payload(`[{"type":"schedule","cron":"0 6 * * *"},{"type":"onDemand"}]`)), "pass"},
		{"a webhook trigger", "DROP-04", export(payload(`[{"type":"schedule"},{"type":"webhook","path":"/h"}]`)), "fail"},
		{"triggers as strings", "DROP-04", export(payload(`["onDemand","poll"]`)), "fail"},
		{"a trigger's kind member", "DROP-04", export(payload(`{"kind":"onTaskComplete","task":"t0"}`)), "fail"},
		{"triggers keyed by kind", "DROP-04", export(payload(`{"schedule":{"cron":"0 6 * * *"},"onDemand":{},"email":{"to":"a@b"}}`)), "fail"},
		{"email as another member's value", "DROP-04", export(payload(`[{"type":"schedule","notify":"email"}]`)), "pass"},
		{"keyed kinds that are not set", "DROP-04", export(payload(`{"schedule":{"cron":"0 6 * * *"},"webhook":null,"email":false,"poll":0,"onTaskComplete":[]}`)), "pass"},
		{"a keyed kind with no settings", "DROP-04", export(payload(`{"schedule":{"cron":"x"},"webhook":{}}`)), "fail"},
		{"a keyed mapping of no kind", "DROP-04", export(payload(`{"count":1,"items":[{"cron":"x"}]}`)), "skip"},
		{"a keyed list of kinds", "DROP-04", export(payload(`{"count":1,"items":[{"type":"webhook"}]}`)), "skip"},
		{"a kind in another case", "DROP-04", export(payload(`[{"type":"Webhook"}]`)), "fail"},
		{"a keyed kind in another case", "DROP-04", export(payload(`{"EMAIL":{"to":"a@b"}}`)), "fail"},
		{"only unspelled kinds", "DROP-04", export(payload(`[{"type":"cron"},"manual"]`)), "skip"},
		{"no trigger left", "DROP-04", export(payload(`[]`)), "skip"},
		{"a task named email outside triggers", "DROP-04", export(`{"spec":{"payload":{"tasks":[{"name":"email","triggers":[{"type":"onDemand"}]}]}}}`), "pass"},
		{"triggers outside the payload", "DROP-04", export(`{"spec":{"payload":{"name":"P"},"includes":[{"triggers":[{"type":"webhook"}]}]}}`), "skip"},
		{"YAML webhook", "DROP-04", export("spec:\n  payload:\n    tasks:\n      - Triggers:\n          - {type: webhook}\n"), "fail"},
	}
	for _, tt := range tests {
		t.Run(tt.rule+"/"+tt.name, func(t *testing.T) {
			got, r := verdictOf(tt.rule, "", tt.x.build())
			if got != tt.want {
				t.Errorf("got %s, want %s: %+v %+v %+v", got, tt.want, r.Failure, r.Skip, r.Err)
			}
		})
	}
}
