// Command naive-space is a deliberately naive client: it reads only lines
// that start with "data: ", space included. The SSE grammar drops one space
// after the colon if there is one and allows none, so it loses every event
// of a service that writes "data:{...}" (variant sse-no-space). It parses
// each data line alone, so it loses the events of a service that spreads an
// event object over several data lines too (variant sse-data-lines). It
// splits lines as the grammar says otherwise.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"
)

func main() {
	req, err := http.NewRequest("POST", os.Getenv("INVOKECONF_BASE_URL")+"/api/invoke/"+os.Getenv("INVOKECONF_AGENTS_MAIN_ID"),
		strings.NewReader("@say Hello\n@say , world"))
	if err != nil {
		fail(err)
	}
	req.Header.Set("Authorization", "Bearer "+os.Getenv("INVOKECONF_KEYS_AGENT"))
	req.Header.Set("Accept", "text/event-stream")
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		fail(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		fail(fmt.Errorf("status %d", resp.StatusCode))
	}
	lines := bufio.NewScanner(resp.Body)
	lines.Split(func(b []byte, atEOF bool) (int, []byte, error) {
		if i := bytes.IndexAny(b, "\r\n"); i >= 0 {
			if b[i] == '\r' && i+1 == len(b) && !atEOF {
				return 0, nil, nil
			}
			if b[i] == '\r' && i+1 < len(b) && b[i+1] == '\n' {
				return i + 2, b[:i], nil
			}
			return i + 1, b[:i], nil
		}
		if atEOF && len(b) > 0 {
			return len(b), b, nil
		}
		return 0, nil, nil
	})
	answer, complete := "", false
	for lines.Scan() {
		data, ok := strings.CutPrefix(lines.Text(), "data: ")
		if !ok {
			continue
		}
		var ev struct {
			Content     string
			RunComplete bool
		}
		if json.Unmarshal([]byte(data), &ev) == nil {
			answer += ev.Content
			complete = complete || ev.RunComplete
		}
	}
	if answer != "Hello, world" || !complete {
		fail(fmt.Errorf("answer %q (run complete: %v), want \"Hello, world\"", answer, complete))
	}
	fmt.Println("ok: Hello, world")
}

func fail(err error) {
	fmt.Println("FAIL:", err)
	os.Exit(1)
}
