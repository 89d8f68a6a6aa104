package reports

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"
	"testing"
)

// TestSummarySchemaIsStable pins the field names of the JSON summary that
// consumers read. Adding a field is fine (add it here); renaming or removing
// one needs a new SchemaVersion.
func TestSummarySchemaIsStable(t *testing.T) {
	f := defectRun(t)
	var b bytes.Buffer
	if err := WriteJSON(&b, f.rep); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc["schema"] != "invokeconf.summary/v3" || doc["mode"] != ModeActive {
		t.Fatalf("schema %v, mode %v", doc["schema"], doc["mode"])
	}
	first := func(key string) map[string]any {
		list, _ := doc[key].([]any)
		if len(list) == 0 {
			t.Fatalf("%s is empty", key)
		}
		m, _ := list[0].(map[string]any)
		return m
	}
	for what, tc := range map[string]struct {
		obj  map[string]any
		want string
	}{
		"top level":   {doc, "areas baseURL contract counts durationSeconds exitCode failedRules findings harness headline identity mode outcome profile profileGaps rules scenarios schema selection spec started target"},
		"identity":    {doc["identity"].(map[string]any), "catalogDigest goVersion harnessBinary harnessCommit harnessNote harnessSource harnessVersion product productVersion specDigest"},
		"spec":        {doc["spec"].(map[string]any), "counts failed judged observable outcome source"},
		"profile":     {doc["profile"].(map[string]any), "baseURL capabilities keys"},
		"counts":      {doc["counts"].(map[string]any), "expectedFailure fail harnessError notApplicable notObservable notSelected pass untested warning"},
		"rule":        {first("rules"), "area id level observable reason rule scenarios section source spec verdict"},
		"area":        {first("areas"), "area counts label verdict"},
		"failed rule": {first("failedRules"), "anchor id level line scenario source verdict"},
		"scenario":    {first("scenarios"), "error feature id line name rules started status tags uri"},
		"finding":     {first("findings"), "actual baseline check curl expected rule scenario transcript verdict"},
	} {
		var keys []string
		for k := range tc.obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range strings.Fields(tc.want) {
			if _, ok := tc.obj[k]; !ok {
				t.Errorf("%s: field %q is gone (have %v): bump SchemaVersion if that is meant", what, k, keys)
			}
		}
	}
}
