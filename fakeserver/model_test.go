package fakeserver_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/invokeconf/invokeconf/fakeserver"
	"github.com/invokeconf/invokeconf/fixtures"
	"github.com/invokeconf/invokeconf/modelserver"
)

// TestModelsShowTheSameEvents: the in-process interpreter and the remote
// model on `invokeconf model` turn the same prompt into the same events,
// content streams and tool calls included.
func TestModelsShowTheSameEvents(t *testing.T) {
	t.Parallel()
	seed, err := fixtures.Reference()
	if err != nil {
		t.Fatal(err)
	}
	local, err := fakeserver.Listen(fakeserver.Config{Profile: seed}, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer local.Close()
	model, err := modelserver.Listen(modelserver.Config{}, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer model.Close()
	remote, err := fakeserver.Listen(fakeserver.Config{Profile: seed, ModelURL: model.BaseURL}, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer remote.Close()
	key := seed.Keys.Agent
	agent := seed.Agents.Main.ID

	for _, prompt := range []string{
		"just echo me \n",
		"@say Hel\n@say \"lo, \"\n@pause 100ms\n@say world",
		"@say thinking\n@toolinput calculator {\"a\":1}\n@tool calculator {\"a\":1}\n@say used it",
		"@tool notes\n@tool calculator {\"x\":[1,2]}",
		"@say a\n@step Collecting sources\n@say b\n@ask sensitive fields=user,token Log in to Example\n@ask Pick one",
		"@tools\n@say \" and more\"",
		"@say partial\n@fail the tool exploded",
		"@fail at once",
		"@waiting\n@say here I am",
		"@say before\n@tool search-web", // the agent key may not use search-web
		"@toolinput search-web\n@tool search-web",
		"@say hi\n@pause soon", // does not parse
	} {
		t.Run(strings.SplitN(prompt, "\n", 2)[0], func(t *testing.T) {
			want := runEvents(t, local.URL, key, agent, prompt)
			got := runEvents(t, remote.URL, key, agent, prompt)
			// A loaded machine may delay a model's first chunk past the
			// waiting threshold: an extra waitingOnModel is honest, so
			// only scripted ones are compared.
			if !strings.Contains(prompt, "@waiting") {
				got = dropWaiting(got)
			}
			if !reflect.DeepEqual(shape(got), shape(want)) {
				t.Fatalf("remote model events differ from the in-process ones\nremote:     %v\nin process: %v", shape(got), shape(want))
			}
			if strings.Contains(prompt, "@fail") && !reflect.DeepEqual(got, want) {
				t.Fatalf("failure differs\nremote:     %v\nin process: %v", got, want)
			}
		})
	}
}

// runEvents invokes the agent with the JSON envelope and returns its events
// without IDs and times; content IDs become the index of their stream.
func runEvents(t *testing.T, base, key, agent, prompt string) []map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", base+"/api/invoke/"+agent, strings.NewReader(prompt))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var env struct {
		Items []map[string]any `json:"items"`
	}
	if resp.StatusCode != 200 || json.Unmarshal(b, &env) != nil {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	streams := map[any]int{}
	for _, it := range env.Items {
		delete(it, "runID")
		delete(it, "threadID")
		delete(it, "time")
		if id, ok := it["contentID"]; ok {
			if _, seen := streams[id]; !seen {
				streams[id] = len(streams)
			}
			it["contentID"] = streams[id]
		}
	}
	return env.Items
}

func dropWaiting(evs []map[string]any) []map[string]any {
	var out []map[string]any
	for _, ev := range evs {
		if ev["waitingOnModel"] != true {
			out = append(out, ev)
		}
	}
	return out
}

// shape is an event list as compared: every field, but an error only as
// "set" (a remote model words refusals its own way) and toolInput by name
// (a model streams the arguments of the call itself).
func shape(evs []map[string]any) []string {
	var out []string
	for _, ev := range evs {
		c := map[string]any{}
		for k, v := range ev {
			c[k] = v
		}
		if _, ok := c["error"]; ok {
			c["error"] = "set"
		}
		if ti, ok := c["toolInput"].(map[string]any); ok {
			c["toolInput"] = ti["name"]
		}
		b, _ := json.Marshal(c)
		out = append(out, string(b))
	}
	return out
}
