package invokeconftest_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"strings"
	"time"

	"github.com/invokeconf/invokeconf/invokeconftest"
)

// Example is a client test. The reference server answers with legal
// behaviours switched on (CRLF line endings, no space after "data:", then
// comment lines), and the client must still get the answer right. In a test
// function, invokeconftest.NewServer(t, ...) starts the server and stops it
// when the test ends.
func Example() {
	srv, err := invokeconftest.Start(invokeconftest.WithVariants("sse-crlf", "sse-no-space"))
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	answer, err := ask(srv.URL, srv.Key("agent"), srv.AgentID(), "Hello, agent")
	fmt.Println(answer, err)

	// Between two tests: one more legal behaviour, and the state of the seed.
	_ = srv.SwitchVariants(true, "sse-comments")
	_ = srv.Reset()
	answer, err = ask(srv.URL, srv.Key("agent"), srv.AgentID(), "@say one\n@say two")
	fmt.Println(answer, err)
	// Output:
	// Hello, agent <nil>
	// onetwo <nil>
}

// ask is the client under test: it sends a prompt to an agent and returns
// the answer it streams back over SSE, read as the SSE grammar says (lines
// end in CRLF, LF or CR; one space after the colon is optional; comment
// lines are dropped).
func ask(baseURL, key, agent, prompt string) (string, error) {
	req, err := http.NewRequest("POST", baseURL+"/api/invoke/"+agent, strings.NewReader(prompt))
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return "", fmt.Errorf("status %d", resp.StatusCode)
	}
	var answer, data strings.Builder
	lines := bufio.NewScanner(resp.Body)
	lines.Split(sseLines)
	for lines.Scan() {
		field, value, _ := strings.Cut(lines.Text(), ":")
		value = strings.TrimPrefix(value, " ")
		switch {
		case field == "data":
			data.WriteString(value)
		case lines.Text() == "" && data.Len() > 0: // the end of an event
			var ev struct {
				Content     string
				RunComplete bool
			}
			if err := json.Unmarshal([]byte(data.String()), &ev); err == nil {
				answer.WriteString(ev.Content)
				if ev.RunComplete {
					return answer.String(), nil
				}
			}
			data.Reset()
		}
	}
	return answer.String(), fmt.Errorf("the stream ended before runComplete: %v", lines.Err())
}

// sseLines splits a stream into lines ending in CRLF, LF or CR.
func sseLines(b []byte, atEOF bool) (int, []byte, error) {
	if i := bytes.IndexAny(b, "\r\n"); i >= 0 {
		if b[i] == '\r' && i+1 == len(b) && !atEOF {
			return 0, nil, nil // a CR at the end: maybe CRLF
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
}
