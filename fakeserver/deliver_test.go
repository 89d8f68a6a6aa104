package fakeserver

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestSync2xxEveryForm: the sync-2xx variant answers a successful
// synchronous invoke 203 in every response form, and leaves async alone.
func TestSync2xxEveryForm(t *testing.T) {
	ts, p := newTestServer(t, Config{Variants: []string{"sync-2xx"}})
	for accept, want := range map[string]int{"text/event-stream": 203, "application/json": 203, "text/plain": 203} {
		resp := post(t, ts.URL+"/api/invoke/"+p.Agents.Main.ID, p.Keys.Agent, accept, "hi")
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Accept %s: status %d, want %d", accept, resp.StatusCode, want)
		}
	}
	resp := post(t, ts.URL+"/api/invoke/"+p.Agents.Main.ID+"?async=true", p.Keys.Agent, "", "hi")
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("async: status %d, want 200 (the variant is about synchronous answers)", resp.StatusCode)
	}
}

// TestPromptWaitsUntilCancelled: with prompt-waits nothing follows the
// prompt event while the client stays.
func TestPromptWaitsUntilCancelled(t *testing.T) {
	ts, p := newTestServer(t, Config{Variants: []string{"prompt-waits"}, Keepalive: time.Hour})
	resp := post(t, ts.URL+"/api/invoke/"+p.Agents.Main.ID, p.Keys.Agent, "text/event-stream", "@ask fields=f M\n@say after")
	defer resp.Body.Close()
	got := make(chan string, 1)
	go func() {
		b := make([]byte, 64<<10)
		var body []byte
		for !strings.Contains(string(body), `"prompt"`) {
			n, err := resp.Body.Read(b)
			body = append(body, b[:n]...)
			if err != nil {
				break
			}
		}
		// Whatever arrives in the next 300 ms would follow the prompt.
		done := time.AfterFunc(300*time.Millisecond, func() { resp.Body.Close() })
		defer done.Stop()
		rest, _ := io.ReadAll(resp.Body)
		got <- string(rest)
	}()
	select {
	case rest := <-got:
		if strings.Contains(rest, "after") || strings.Contains(rest, "runComplete\":true") {
			t.Fatalf("the run went on after its prompt: %q", rest)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no prompt event within 10 s")
	}
}
