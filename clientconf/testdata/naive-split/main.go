// Command naive-split is a deliberately naive client: it splits the SSE
// stream into events on "\n\n" and each event into lines on "\n", as many
// hand-written clients do, then joins the event's data lines and parses
// them as one JSON object. The SSE grammar also ends lines in CRLF and CR:
// from a service that uses them (variants sse-crlf, sse-cr and
// sse-mixed-endings) it gets one event holding the whole stream, and no
// answer. It reads data lines
// correctly otherwise (the space after "data:" is optional).
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
)

func main() {
	body, err := invoke()
	if err != nil {
		fmt.Println("FAIL:", err)
		os.Exit(1)
	}
	answer, complete := "", false
	for _, frame := range strings.Split(body, "\n\n") {
		var data []string
		for _, line := range strings.Split(frame, "\n") {
			if d, ok := strings.CutPrefix(line, "data:"); ok {
				data = append(data, strings.TrimPrefix(d, " "))
			}
		}
		var ev struct {
			Content     string
			RunComplete bool
		}
		if len(data) > 0 && json.Unmarshal([]byte(strings.Join(data, "\n")), &ev) == nil {
			answer += ev.Content
			complete = complete || ev.RunComplete
		}
	}
	if answer != "Hello, world" || !complete {
		fmt.Printf("FAIL: answer %q (run complete: %v), want \"Hello, world\"\n", answer, complete)
		os.Exit(1)
	}
	fmt.Println("ok: Hello, world")
}

// invoke streams "Hello, world" from the main agent and reads it whole.
func invoke() (string, error) {
	req, err := http.NewRequest("POST", os.Getenv("INVOKECONF_BASE_URL")+"/api/invoke/"+os.Getenv("INVOKECONF_AGENTS_MAIN_ID"),
		strings.NewReader("@say Hello\n@say , world"))
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+os.Getenv("INVOKECONF_KEYS_AGENT"))
	req.Header.Set("Accept", "text/event-stream")
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return "", fmt.Errorf("status %d", resp.StatusCode)
	}
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}
