package steps

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/invokeconf/invokeconf/outcome"
	"github.com/invokeconf/invokeconf/profile"
)

// TestJudgeTriggers: DROP-04 reads task triggers only; a tool or task named
// after a dropped trigger kind is no trigger.
func TestJudgeTriggers(t *testing.T) {
	for _, tc := range []struct {
		name, payload string
		ok            bool
	}{
		{"kept kinds", `{"tasks":[{"name":"a","triggers":[{"type":"schedule"},{"type":"onDemand"}]}]}`, true},
		{"scheduled spelling", `{"tasks":[{"triggers":[{"type":"scheduled"}]},{"Triggers":[{"type":"onDemand"}]}]}`, true},
		{"a tool and a task named email", `{"tools":["email"],"tasks":[{"name":"email","prompt":"poll","triggers":[{"type":"schedule"},{"type":"onDemand"}]}]}`, true},
		{"a notification kind inside a kept trigger", `{"tasks":[{"triggers":[{"type":"schedule","notify":"email"},{"type":"onDemand"}]}]}`, true},
		{"a webhook trigger", `{"tasks":[{"triggers":[{"type":"schedule"},{"type":"onDemand"},{"type":"webhook"}]}]}`, false},
		{"a trigger keyed by kind", `{"tasks":[{"triggers":{"schedule":{},"onDemand":{},"email":{}}}]}`, false},
		{"keyed kinds, the dropped ones unset", `{"tasks":[{"triggers":{"schedule":{"cron":"x"},"onDemand":{},"webhook":null,"email":false}}]}`, true},
		{"a keyed schedule that is null", `{"tasks":[{"triggers":{"schedule":null,"onDemand":{}}}]}`, false},
		{"kinds in another case", `{"tasks":[{"triggers":[{"type":"Schedule"},{"type":"ONDEMAND"}]}]}`, true},
		{"no onDemand", `{"tasks":[{"triggers":[{"type":"schedule"}]}]}`, false},
		{"triggers outside tasks only", `{"tasks":[{"name":"onDemand schedule"}]}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var payload any
			if err := json.Unmarshal([]byte(tc.payload), &payload); err != nil {
				t.Fatal(err)
			}
			err := judgeTriggers(payload)
			if (err == nil) != tc.ok {
				t.Fatalf("judgeTriggers(%s) = %v, want ok=%v", tc.payload, err, tc.ok)
			}
			if _, isFailure := outcome.AsFailure(err); err != nil && !isFailure {
				t.Errorf("the failure is not an outcome.Failure: %v", err)
			}
		})
	}
}

// TestBundleIDAnyScalar: an ID in a record may be any JSON scalar.
func TestBundleIDAnyScalar(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`"ins_1"`, "ins_1"}, {`12345678901234567890`, "12345678901234567890"}, {`1.5e3`, "1.5e3"}, {`true`, "true"}, {`null`, ""},
	} {
		var id bundleID
		if err := json.Unmarshal([]byte(tc.in), &id); err != nil || string(id) != tc.want {
			t.Errorf("%s: got %q, %v; want %q", tc.in, id, err, tc.want)
		}
	}
	var id bundleID
	if err := json.Unmarshal([]byte(`{"a":1}`), &id); err == nil {
		t.Error("an object was accepted as an ID")
	}
}

// TestJudgeChildren: BUNDLE-02/03/05/08 find the agent and app children by
// the profile's names, whatever type the export gives them.
func TestJudgeChildren(t *testing.T) {
	e := profile.ExportProject{AgentID: "agt_1", AgentName: "ag-ledger", AppPublicID: "pub-9", AppName: "app-ledger"}
	const (
		kb    = `{"metadata":{"name":"kb"},"spec":{"type":"knowledge"}}`
		agent = `{"metadata":{"name":"ag-ledger"},"spec":{"type":"agent"}}`
		app   = `{"metadata":{"name":"app-ledger"},"spec":{"type":"app","payload":{"publicID":"pub-9","agent":"ag-ledger"}}}`
	)
	for _, tc := range []struct {
		name     string
		children string
		broken   string // the rule broken, "" for none
	}{
		{"agent and knowledge", `[` + kb + `,` + agent + `]`, ""},
		{"agent typed assistant", `[` + kb + `,{"metadata":{"name":"ag-ledger"},"spec":{"type":"assistant"}}]`, ""},
		{"an app that names its agent", `[` + agent + `,` + app + `]`, ""},
		{"app typed application", `[` + agent + `,{"metadata":{"name":"app-ledger"},"spec":{"type":"application"}}]`, ""},
		{"no agent", `[` + kb + `]`, "BUNDLE-02"},
		{"agent twice", `[` + agent + `,` + agent + `]`, "BUNDLE-02"},
		{"a second agent of another name", `[` + agent + `,{"metadata":{"name":"helper"},"spec":{"type":"agent"}}]`, "BUNDLE-02"},
		{"two apps", `[` + agent + `,` + app + `,` + app + `]`, "BUNDLE-03"},
		{"a project child is BUNDLE-05's", `[` + agent + `,{"metadata":{"name":"p"},"spec":{"type":"project"}}]`, ""},
		{"a task child", `[` + agent + `,{"metadata":{"name":"t"},"spec":{"type":"task"}}]`, "BUNDLE-08"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var raw []map[string]any
			if err := json.Unmarshal([]byte(tc.children), &raw); err != nil {
				t.Fatal(err)
			}
			var broken []string
			for _, v := range judgeChildren(raw, e) {
				if v.err == nil {
					continue
				}
				var f *outcome.Failure
				if !errors.As(v.err, &f) || f.Rule != v.rule {
					t.Fatalf("%s: not an outcome.Failure of it: %v", v.rule, v.err)
				}
				broken = append(broken, v.rule)
			}
			if want := strings.Fields(tc.broken); !slices.Equal(broken, want) {
				t.Fatalf("judgeChildren broke %v, want %v", broken, want)
			}
		})
	}
}
