package fakeserver

import (
	"reflect"
	"testing"
)

// TestEchoIsTheModelsTurn: a quick run played at once (echo) has the events
// the in-process model's turn (execute) gives the same prompt, under the
// switches that touch an echo's events, and under every other switch that
// touches events.
func TestEchoIsTheModelsTurn(t *testing.T) {
	switches := [][]string{
		nil,
		{"content-cumulative"},
		{"prompt-trimmed"},
		{"no-input-username"},
		{"waiting-late", "toolinput-late", "waiting-with-content", "step-after-content", "richer-merged"},
		{"signals-when-slow", "prompt-waits", "pauses-overrun"},
	}
	prompts := []string{"Hello, agent", "", "  padded  ", "{\"messages\": []}", "two\nlines"}
	for _, on := range switches {
		s := testServer(t, Config{})
		if _, err := s.ReplaceSwitches(onlyDefects(on), onlyVariants(on)); err != nil {
			t.Fatal(err)
		}
		v := s.current()
		k := v.st.keys[keyID(t, v.cfg.Profile.Keys.Agent)]
		for _, prompt := range prompts {
			if !v.quickRun(prompt) {
				continue
			}
			quick, _ := v.startRun(v.newThread(v.st.agents[v.cfg.Profile.Agents.Main.ID], nil), k, prompt, nil)
			played := &run{id: "run_x", thread: quick.thread, cancel: noCancel}
			v.execute(v.ctx, played, k, prompt)
			if got, want := eventShapes(quick), eventShapes(played); !reflect.DeepEqual(got, want) {
				t.Errorf("%v, prompt %q: echo\n%v\nturn\n%v", on, prompt, got, want)
			}
		}
	}
}

// eventShapes are a run's events without what differs between two runs of
// the same prompt (IDs, times).
func eventShapes(r *run) []Event {
	evs, _, _ := r.snapshot(0)
	out := make([]Event, len(evs))
	for i, ev := range evs {
		ev.RunID, ev.ThreadID, ev.Time = "", "", stamp{}
		if ev.ContentID != "" {
			ev.ContentID = "cnt"
		}
		out[i] = ev
	}
	return out
}

func onlyDefects(names []string) (out []string) {
	for _, n := range names {
		if _, ok := defectByName(n); ok {
			out = append(out, n)
		}
	}
	return out
}

func onlyVariants(names []string) (out []string) {
	for _, n := range names {
		if _, ok := variantByName(n); ok {
			out = append(out, n)
		}
	}
	return out
}

// keyID is the <user>-<key> ID of a token.
func keyID(t *testing.T, tok string) string {
	t.Helper()
	p, err := parseKey(tok)
	if err != nil {
		t.Fatal(err)
	}
	return p.user + "-" + p.key
}
