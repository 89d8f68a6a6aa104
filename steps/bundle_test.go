package steps

import (
	"encoding/json"
	"testing"

	"github.com/invokeconf/invokeconf/outcome"
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
		{"a webhook trigger", `{"tasks":[{"triggers":[{"type":"schedule"},{"type":"onDemand"},{"type":"webhook"}]}]}`, false},
		{"a trigger keyed by kind", `{"tasks":[{"triggers":{"schedule":{},"onDemand":{},"email":{}}}]}`, false},
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
