package checks

import (
	"strings"
	"testing"

	"github.com/invokeconf/invokeconf/outcome"
)

// evt is an SSE event frame with the given members beside runID and
// threadID.
func evt(members string) string {
	if members != "" {
		members = "," + members
	}
	return "id: r1\ndata: {\"runID\":\"r1\",\"threadID\":\"t1\"" + members + "}\n\n"
}

// env is an envelope answer holding the given items.
func env(items ...string) ex {
	return ex{req: hdr("Accept", "application/json"), resp: hdr("Content-Type", "application/json", "X-SVC-Thread-Id", "t1"),
		chunks: whole(`{"items":[` + strings.Join(items, ",") + `]}`)}
}

func TestEventChecks(t *testing.T) {
	stream := func(members ...string) ex {
		parts := []string{start}
		for _, m := range members {
			parts = append(parts, evt(m))
		}
		return sse(whole(append(parts, final, closeF)...)...)
	}
	scripted := func(prompt string, members ...string) ex {
		e := stream(members...)
		e.prompt = prompt
		return e
	}
	eventsRoute := func(ct, b string) ex {
		return ex{method: "GET", url: "http://svc.test/api/threads/t1/events?runID=r1", req: hdr(),
			resp: hdr("Content-Type", ct), chunks: whole(b)}
	}
	cut := stream(`"toolCall":{"name":"calc"},"step":{"description":"x"}`)
	cut.chunks = whole(start, evt(`"content":"hi"`), evt(`"toolCall":{"name":"calc"},"step":{"description":"x"}`)[:60])
	cut.end = "client-gone"
	tests := []struct {
		name, rule string
		x          ex
		want       string
	}{
		// EVT-04
		{"one richer field each", "EVT-04", stream(`"waitingOnModel":true`, `"toolCall":{"name":"calc"}`, `"content":"hi"`), "pass"},
		{"unset ones beside a set one", "EVT-04", stream(`"toolCall":{"name":"calc"},"step":{},"prompt":null,"input":"","replayComplete":false,"username":[]`), "pass"},
		{"a 0/1 flag of 0 is unset", "EVT-04", stream(`"waitingOnModel":0,"username":"bob"`), "pass"},
		{"a 0/1 flag of 1 is set", "EVT-04", stream(`"waitingOnModel":1,"username":"bob"`), "fail"},
		{"two richer fields", "EVT-04", stream(`"toolCall":{"name":"calc"},"step":{"description":"x"}`), "fail"},
		{"input and username together", "EVT-04", stream(`"input":"p","username":"ann"`), "fail"},
		{"envelope item with two", "EVT-04", env(`{"runID":"r1","waitingOnModel":true,"toolInput":{"a":1}}`), "fail"},
		{"envelope of plain events", "EVT-04", env(`{"runID":"r1","content":"hi"}`), "pass"},
		{"events route SSE", "EVT-04", eventsRoute("text/event-stream", start+evt(`"step":{"description":"s"},"prompt":{"message":"m"}`)+closeF), "fail"},
		{"events route of unknown shape", "EVT-04", eventsRoute("text/plain", `{"items":[{"step":{"description":"s"},"prompt":{"message":"m"}}]}`), "skip"},
		{"plain text that looks like events", "EVT-04", ex{resp: hdr("Content-Type", "text/plain"), chunks: whole(`{"items":[{"step":{"a":1},"toolCall":{"b":2}}]}`)}, "skip"},
		{"envelope under text/plain", "EVT-04", ex{req: hdr("Accept", "application/json"), resp: hdr("Content-Type", "text/plain"), chunks: whole(`{"items":[{"step":{"a":1},"toolCall":{"b":2}}]}`)}, "skip"},
		{"a frame cut by the client is no event", "EVT-04", cut, "pass"},
		{"no body recorded", "EVT-04", ex{req: hdr("Accept", "text/event-stream"), resp: sseResp, chunks: whole(start, evt(`"step":{"a":1},"toolCall":{"b":2}`)), redacted: true}, "untested"},
		{"refused", "EVT-04", ex{req: hdr("Accept", "text/event-stream"), status: 401, resp: sseResp, chunks: whole(start, evt(`"step":{"a":1},"toolCall":{"b":2}`))}, "skip"},
		// EVT-05
		{"toolCall with name", "EVT-05", stream(`"toolCall":{"name":"calc","arguments":"{}","id":"c1"}`), "pass"},
		{"toolCall with a numeric name", "EVT-05", stream(`"toolCall":{"name":7}`), "pass"},
		{"toolCall with tool instead of name", "EVT-05", stream(`"toolCall":{"tool":"calc"}`), "fail"},
		{"toolCall name null", "EVT-05", stream(`"toolCall":{"name":null,"arguments":{}}`), "fail"},
		{"toolCall name empty", "EVT-05", stream(`"toolCall":{"name":""}`), "fail"},
		{"toolCall name false", "EVT-05", stream(`"toolCall":{"name":false}`), "fail"},
		{"toolCall a string", "EVT-05", stream(`"toolCall":"calc"`), "fail"},
		{"toolCall unset", "EVT-05", stream(`"toolCall":{}`, `"toolCall":null`, `"content":"x"`), "skip"},
		{"envelope toolCall without name", "EVT-05", env(`{"toolCall":{"arguments":{}}}`), "fail"},
		// EVT-06
		{"step with description", "EVT-06", stream(`"step":{"description":"Summarise","id":"s1"}`), "pass"},
		{"step with an empty description", "EVT-06", stream(`"step":{"description":""}`), "fail"},
		{"step with a description false", "EVT-06", stream(`"step":{"description":false}`), "fail"},
		{"step with title", "EVT-06", stream(`"step":{"title":"Summarise"}`), "fail"},
		{"no step", "EVT-06", stream(`"content":"x"`), "skip"},
		// EVT-07
		{"prompt with all three", "EVT-07", stream(`"prompt":{"fields":["token"],"message":"Paste","sensitive":true}`), "pass"},
		{"prompt without the false flag or fields", "EVT-07", stream(`"prompt":{"message":"Pick"}`), "pass"},
		{"prompt without message", "EVT-07", stream(`"prompt":{"fields":["a"],"sensitive":true}`), "fail"},
		{"prompt flag not a boolean", "EVT-07", stream(`"prompt":{"message":"m","sensitive":"yes"}`), "fail"},
		{"prompt a string", "EVT-07", stream(`"prompt":"log in"`), "fail"},
		{"scripted sensitive ask, flag true", "EVT-07", scripted("@ask sensitive fields=token Paste a token",
			`"prompt":{"fields":[{"name":"token"}],"message":"Paste a token","sensitive":true}`), "pass"},
		{"scripted sensitive ask, flag left out", "EVT-07", scripted("@ask sensitive fields=token Paste a token",
			`"prompt":{"fields":["token"],"message":"Paste a token"}`), "fail"},
		{"scripted ask with fields, none", "EVT-07", scripted("@ask fields=choice Pick one",
			`"prompt":{"message":"Pick one"}`), "fail"},
		{"scripted ask with fields, null", "EVT-07", scripted("@ask fields=choice Pick one",
			`"prompt":{"message":"Pick one","fields":null}`), "fail"},
		{"scripted ask with fields, empty", "EVT-07", scripted("@ask fields=choice Pick one",
			`"prompt":{"message":"Pick one","fields":[]}`), "fail"},
		{"scripted ask with fields, a mapping", "EVT-07", scripted("@ask fields=choice Pick one",
			`"prompt":{"message":"Pick one","fields":{"choice":{"type":"text"}}}`), "pass"},
		{"scripted ask without fields, fields empty", "EVT-07", scripted("@ask Pick one",
			`"prompt":{"message":"Pick one","fields":[]}`), "pass"},
		{"scripted sensitive ask, flag 1", "EVT-07", scripted("@ask sensitive fields=token Paste a token",
			`"prompt":{"fields":["token"],"message":"Paste a token","sensitive":1}`), "pass"},
		{"scripted plain ask, flag 0", "EVT-07", scripted("@ask Pick one", `"prompt":{"message":"Pick one","sensitive":0}`), "pass"},
		{"a flag 2 is no flag", "EVT-07", stream(`"prompt":{"message":"m","sensitive":2}`), "fail"},
		{"scripted ask, fields not the ones asked for", "EVT-07", scripted("@ask fields=username,password Log in",
			`"prompt":{"message":"Log in","fields":["value"]}`), "fail"},
		{"scripted ask, one field of two", "EVT-07", scripted("@ask fields=username,password Log in",
			`"prompt":{"message":"Log in","fields":["username"]}`), "fail"},
		{"scripted ask, fields as objects", "EVT-07", scripted("@ask fields=username,password Log in",
			`"prompt":{"message":"Log in","fields":[{"name":"username","type":"text"},{"name":"Password","secret":true}]}`), "pass"},
		{"scripted ask, fields as a mapping", "EVT-07", scripted("@ask fields=username,password Log in",
			`"prompt":{"message":"Log in","fields":{"username":{},"password":{"secret":true}}}`), "pass"},
		{"scripted plain ask, flag true", "EVT-07", scripted("@ask Pick one", `"prompt":{"message":"Pick one","sensitive":true}`), "fail"},
		{"scripted plain ask, flag left out", "EVT-07", scripted("@ask Pick one", `"prompt":{"message":"Pick one"}`), "pass"},
		{"another message than the script's", "EVT-07", scripted("@ask sensitive Paste a token", `"prompt":{"message":"Log in"}`), "pass"},
		{"asks with one message that differ", "EVT-07", scripted("@ask sensitive Paste\n@ask Paste", `"prompt":{"message":"Paste"}`), "pass"},
		{"an echoed prompt is no script", "EVT-07", scripted("please @ask sensitive Paste", `"prompt":{"message":"please @ask sensitive Paste"}`), "pass"},
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

func TestIsSet(t *testing.T) {
	for raw, want := range map[string]bool{"": false, "null": false, "false": false, `""`: false, "{}": false, "[]": false,
		"0": false, "0.0": false, "-0": false, "0e3": false,
		"true": true, "1": true, "-1": true, "0.5": true, `"x"`: true, `{"a":1}`: true, "[1]": true, "nonsense": false} {
		if got := IsSet([]byte(raw)); got != want {
			t.Errorf("IsSet(%q) = %t, want %t", raw, got, want)
		}
	}
}

// TestSetBefore: EVT-08, EVT-09 and EVT-06 order the events; an event that
// sets both fields is not before the one it should precede.
func TestSetBefore(t *testing.T) {
	stream := func(members ...string) *View {
		parts := []string{start}
		for _, m := range members {
			parts = append(parts, evt(m))
		}
		return sse(whole(append(parts, final, closeF)...)...).build()
	}
	for _, tc := range []struct {
		name, field, later string
		x                  *View
		pass               bool
	}{
		{"waiting, then content", "waitingOnModel", "content", stream(`"waitingOnModel":true`, `"content":"hi"`), true},
		{"waiting as a 0/1 flag", "waitingOnModel", "content", stream(`"waitingOnModel":1`, `"content":"hi"`), true},
		{"waiting on the first content", "waitingOnModel", "content", stream(`"waitingOnModel":true,"content":"hi"`), false},
		{"waiting after content", "waitingOnModel", "content", stream(`"content":"hi"`, `"waitingOnModel":true`), false},
		{"no waiting", "waitingOnModel", "content", stream(`"content":"hi"`), false},
		{"toolInput, then toolCall", "toolInput", "toolCall", stream(`"toolInput":"{\"q\":1}"`, `"toolCall":{"name":"t"}`), true},
		{"toolInput on the toolCall", "toolInput", "toolCall", stream(`"toolInput":{"name":"t"},"toolCall":{"name":"t"}`), false},
		{"step, then its content", "step", "content", stream(`"step":{"description":"s"}`, `"content":"hi"`), true},
		{"step after its content", "step", "content", stream(`"content":"hi"`, `"step":{"description":"s"}`), false},
		{"envelope order", "step", "content", env(`{"step":{"description":"s"}}`, `{"content":"hi"}`).build(), true},
	} {
		err := SetBefore(tc.field, tc.later)(tc.x, nil)
		if (err == nil) != tc.pass {
			t.Errorf("%s: %v, want pass %t", tc.name, err, tc.pass)
		}
		if _, ok := outcome.AsFailure(err); err != nil && !ok {
			t.Errorf("%s: not a failure: %v", tc.name, err)
		}
	}
}

// TestStepAhead: EVT-06's order on an agent script with one @step: the
// step's event before the content said in it, after the content said before.
func TestStepAhead(t *testing.T) {
	scripted := func(prompt string, members ...string) *View {
		parts := []string{start}
		for _, m := range members {
			parts = append(parts, evt(m))
		}
		x := sse(whole(append(parts, final, closeF)...)...)
		x.prompt = prompt
		return x.build()
	}
	const script = "@say a\n@step S\n@say b"
	for _, tc := range []struct {
		name string
		x    *View
		want string
	}{
		{"step between its contents", scripted(script, `"content":"a"`, `"step":{"description":"S"}`, `"content":"b"`), "pass"},
		{"step first", scripted(script, `"step":{"description":"S"}`, `"content":"a"`, `"content":"b"`), "pass"},
		{"step after the content of the step", scripted(script, `"content":"a"`, `"content":"b"`, `"step":{"description":"S"}`), "fail"},
		{"step on the step's content", scripted(script, `"content":"a"`, `"content":"b","step":{"description":"S"}`), "pass"},
		{"no step event", scripted(script, `"content":"ab"`), "skip"},
		{"another text", scripted(script, `"content":"x"`, `"content":"y"`), "skip"},
		{"no step in the script", scripted("@say a\n@say b", `"content":"ab"`), "skip"},
		{"an echo prompt", scripted("@step in words", `"content":"@step in words"`), "skip"},
	} {
		got, r := verdictOf("EVT-06", StepOrder, tc.x)
		if got != tc.want {
			t.Errorf("%s: %s, want %s (%v %v)", tc.name, got, tc.want, r.Failure, r.Skip)
		}
	}
}

// TestMentionsNone: a removed tool is named by no event, in any member, as
// a whole word.
func TestMentionsNone(t *testing.T) {
	stream := func(members ...string) *View {
		parts := []string{start}
		for _, m := range members {
			parts = append(parts, evt(m))
		}
		return sse(whole(append(parts, final, closeF)...)...).build()
	}
	check := MentionsNone("silently", []string{"deep-research"})
	for _, tc := range []struct {
		name string
		x    *View
		pass bool
	}{
		{"no mention", stream(`"content":"calculator, notes"`), true},
		{"part of another name", stream(`"content":"deep-research-lite"`), true},
		{"a notice member", stream(`"notice":"tool deep-research removed"`), false},
		{"a step", stream(`"step":{"description":"deep-research removed"}`), false},
		{"escaped in JSON", stream(`"notice":"deep\u002dresearch"`), false},
		{"an envelope item", env(`{"x":{"y":["deep-research"]}}`).build(), false},
	} {
		err := check(tc.x, nil)
		if (err == nil) != tc.pass {
			t.Errorf("%s: %v, want pass %t", tc.name, err, tc.pass)
		}
		if f, ok := outcome.AsFailure(err); err != nil && (!ok || f.Spec != "silently") {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}
