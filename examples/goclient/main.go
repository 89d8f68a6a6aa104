// Command goclient is an example client of the Agent Invoke Service, with
// its own small test suite: run it against the reference server, and it
// checks that it gets the answer right from each response form. It is
// written to the spec, not to the reference server, so it passes against
// every legal variant:
//
//	invokeconf clients -- go run ./examples/goclient
//
// It reads the service from the INVOKECONF_* variables that `invokeconf
// clients` (and invokeconftest.Server.Env) hand it: INVOKECONF_BASE_URL,
// INVOKECONF_KEYS_AGENT, INVOKECONF_AGENTS_MAIN_ID. Standard library only.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// client talks to one agent of the service with one key.
type client struct {
	base, key, agent string
	http             *http.Client
}

func main() {
	c := &client{base: strings.TrimSuffix(os.Getenv("INVOKECONF_BASE_URL"), "/"), key: os.Getenv("INVOKECONF_KEYS_AGENT"),
		agent: os.Getenv("INVOKECONF_AGENTS_MAIN_ID"), http: &http.Client{Timeout: 60 * time.Second}}
	if c.base == "" || c.key == "" || c.agent == "" {
		fmt.Fprintln(os.Stderr, "goclient: set INVOKECONF_BASE_URL, INVOKECONF_KEYS_AGENT and INVOKECONF_AGENTS_MAIN_ID (invokeconf clients does)")
		os.Exit(2)
	}
	failed := 0
	for _, tc := range []struct {
		name string
		test func(*client) error
	}{
		{"stream", testStream},
		{"stream with a quiet spell", testQuietStream},
		{"envelope", testEnvelope},
		{"plain text", testPlain},
		{"async run, then its events", testAsync},
		{"thread continued by header", testThread},
		{"abort", testAbort},
		{"refused without a key", testRefused},
	} {
		if err := tc.test(c); err != nil {
			failed++
			fmt.Printf("FAIL %s: %v\n", tc.name, err)
			continue
		}
		fmt.Printf("ok   %s\n", tc.name)
	}
	fmt.Printf("%d passed, %d failed\n", 8-failed, failed)
	if failed > 0 {
		os.Exit(1)
	}
}

// invoke posts a prompt; accept "" sends no Accept header.
func (c *client) invoke(path, accept, prompt string, hdr map[string]string) (*http.Response, error) {
	req, err := http.NewRequest("POST", c.base+path, strings.NewReader(prompt))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set("Content-Type", "text/plain")
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 { // the spec names no success status
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		return nil, fmt.Errorf("status %d: %s", resp.StatusCode, b)
	}
	return resp, nil
}

func (c *client) agentPath() string { return "/api/invoke/" + url.PathEscape(c.agent) }

// event is what the client reads of an event object: content may be
// missing or null (empty), and runComplete is true on the last event.
type event struct {
	Content     *string `json:"content"`
	RunComplete bool    `json:"runComplete"`
}

func (e event) text() string {
	if e.Content == nil {
		return ""
	}
	return *e.Content
}

// stream reads an SSE answer as the SSE grammar says: lines end in CRLF,
// LF or CR; one space after the colon is dropped if there is one; comment
// lines (": ping") and other fields are skipped; an event ends at a blank
// line; the answer ends at the event with runComplete.
func stream(body io.Reader) (string, error) {
	lines := bufio.NewScanner(body)
	lines.Buffer(make([]byte, 64<<10), 1<<20)
	lines.Split(sseLines)
	var answer, data strings.Builder
	hasData := false
	for lines.Scan() {
		line := lines.Text()
		if line == "" {
			if hasData {
				var ev event
				if err := json.Unmarshal([]byte(data.String()), &ev); err == nil {
					answer.WriteString(ev.text())
					if ev.RunComplete {
						return answer.String(), nil
					}
				}
			}
			data.Reset()
			hasData = false
			continue
		}
		if strings.HasPrefix(line, ":") {
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		if field == "data" {
			if hasData {
				data.WriteByte('\n')
			}
			data.WriteString(value)
			hasData = true
		}
	}
	if err := lines.Err(); err != nil {
		return answer.String(), err
	}
	return answer.String(), errors.New("the stream ended before the event with runComplete")
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

func want(got, wanted string) error {
	if got != wanted {
		return fmt.Errorf("answer %q, want %q", got, wanted)
	}
	return nil
}

// ask posts a prompt to the agent with an Accept header ("" for none) and
// reads the answer with read.
func (c *client) ask(accept, prompt string, read func(io.Reader) (string, error)) (string, error) {
	resp, err := c.invoke(c.agentPath(), accept, prompt, nil)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	return read(resp.Body)
}

// answerIs checks an answer read by ask.
func answerIs(got string, err error, wanted string) error {
	if err != nil {
		return err
	}
	return want(got, wanted)
}

func testStream(c *client) error {
	got, err := c.ask("text/event-stream", "@say Hello\n@say , world", stream)
	return answerIs(got, err, "Hello, world")
}

// testQuietStream: a pause long enough for keepalive comments.
func testQuietStream(c *client) error {
	got, err := c.ask("text/event-stream", "@say before\n@pause 1200ms\n@say after", stream)
	return answerIs(got, err, "beforeafter")
}

// envelope reads a JSON envelope's answer: the concatenated content.
func envelope(body io.Reader) (string, error) {
	var env struct{ Items []event }
	if err := json.NewDecoder(io.LimitReader(body, 8<<20)).Decode(&env); err != nil {
		return "", fmt.Errorf("the envelope: %w", err)
	}
	var answer strings.Builder
	for _, ev := range env.Items {
		answer.WriteString(ev.text())
	}
	return answer.String(), nil
}

func testEnvelope(c *client) error {
	got, err := c.ask("application/json", "@say Hello\n@say , world", envelope)
	return answerIs(got, err, "Hello, world")
}

// plain reads a plain-text answer: the body is the text.
func plain(body io.Reader) (string, error) {
	b, err := io.ReadAll(io.LimitReader(body, 1<<20))
	return string(b), err
}

func testPlain(c *client) error {
	got, err := c.ask("", "@say Hello\n@pause 100ms\n@say , world", plain)
	return answerIs(got, err, "Hello, world")
}

// idString reads an ID that the spec types as a string but a service may
// send as a number where it gives no type (lastRunID).
func idString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return strings.TrimSpace(string(raw))
}

func (c *client) get(path, accept string) ([]byte, error) {
	req, err := http.NewRequest("GET", c.base+path, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("GET %s: status %d: %.300s", path, resp.StatusCode, b)
	}
	return b, err
}

// start begins an async run and returns its thread and run.
func (c *client) start(prompt string) (thread, run string, err error) {
	resp, err := c.invoke(c.agentPath()+"?async=true", "", prompt, nil)
	if err != nil {
		return "", "", err
	}
	defer resp.Body.Close()
	var ack struct{ ThreadID, RunID string }
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&ack); err != nil || ack.ThreadID == "" || ack.RunID == "" {
		return "", "", fmt.Errorf("the async answer: %v %+v", err, ack)
	}
	return ack.ThreadID, ack.RunID, nil
}

// testAsync: start, wait for the thread to report the run as its last
// completed one (GET /api/threads/{id}, the recommended way), then read its
// events.
func testAsync(c *client) error {
	thread, run, err := c.start("@say Hello\n@pause 200ms\n@say , world")
	if err != nil {
		return err
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, err := c.get("/api/threads/"+url.PathEscape(thread), "")
		if err != nil {
			return err
		}
		var th struct{ LastRunID json.RawMessage }
		if err := json.Unmarshal(b, &th); err != nil {
			return fmt.Errorf("the thread: %w", err)
		}
		if idString(th.LastRunID) == run {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the run did not complete within 30 s: %s", b)
		}
		time.Sleep(50 * time.Millisecond)
	}
	b, err := c.get("/api/threads/"+url.PathEscape(thread)+"/events?runID="+url.QueryEscape(run), "application/json")
	if err != nil {
		return err
	}
	answer, err := envelope(bytes.NewReader(b))
	if err != nil {
		return err
	}
	return want(answer, "Hello, world")
}

// testThread: a second run on the thread of the first, by header; every
// answer names its thread.
func testThread(c *client) error {
	first, err := c.invoke(c.agentPath(), "application/json", "first turn", nil)
	if err != nil {
		return err
	}
	first.Body.Close()
	thread := first.Header.Get("X-SVC-Thread-Id")
	if thread == "" {
		return errors.New("no X-SVC-Thread-Id on the answer")
	}
	second, err := c.invoke(c.agentPath(), "application/json", "second turn", map[string]string{"X-SVC-Thread-Id": thread})
	if err != nil {
		return err
	}
	defer second.Body.Close()
	if got := second.Header.Get("X-SVC-Thread-Id"); got != thread {
		return fmt.Errorf("continued thread %q, answered on %q", thread, got)
	}
	answer, err := envelope(second.Body)
	if err != nil {
		return err
	}
	return want(answer, "second turn")
}

func testAbort(c *client) error {
	thread, _, err := c.start("@say working\n@pause 5s\n@say too late")
	if err != nil {
		return err
	}
	resp, err := c.invoke("/api/threads/"+url.PathEscape(thread)+"/abort", "", "", nil)
	if err != nil {
		return err
	}
	resp.Body.Close() // the payload is not shown: any 2xx will do
	return nil
}

func testRefused(c *client) error {
	req, err := http.NewRequest("POST", c.base+c.agentPath(), strings.NewReader("Hello"))
	if err != nil {
		return err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		return fmt.Errorf("without a key: status %d, want 401", resp.StatusCode)
	}
	return nil
}
