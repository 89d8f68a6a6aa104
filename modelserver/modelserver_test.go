package modelserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/shared"

	"github.com/invokeconf/invokeconf/modelserver"
)

// These tests drive the model server with the official OpenAI Go client, as
// a vendor's agent would: if the client reads our answers as it reads
// OpenAI's, so will theirs.

const testWaiting = 400 * time.Millisecond

func start(t *testing.T) (*modelserver.Running, openai.Client) {
	t.Helper()
	srv, err := modelserver.Listen(modelserver.Config{Waiting: testWaiting}, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	client := openai.NewClient(option.WithBaseURL(srv.BaseURL), option.WithAPIKey("sk-test"), option.WithMaxRetries(0))
	return srv, client
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	t.Cleanup(cancel)
	return c
}

func tools(names ...string) []openai.ChatCompletionToolUnionParam {
	var out []openai.ChatCompletionToolUnionParam
	for _, n := range names {
		out = append(out, openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name:       n,
			Parameters: shared.FunctionParameters{"type": "object"},
		}))
	}
	return out
}

func params(prompt string, toolNames ...string) openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{
		Model:    modelserver.DefaultModel,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("You are a helpful agent."), openai.UserMessage(prompt)},
		Tools:    tools(toolNames...),
	}
}

// streamed is what one streaming response delivered.
type streamed struct {
	acc     openai.ChatCompletionAccumulator
	chunks  []openai.ChatCompletionChunk
	at      []time.Duration // arrival of each chunk after the request
	content []string        // non-empty content deltas
	err     error
}

func stream(t *testing.T, client openai.Client, p openai.ChatCompletionNewParams) *streamed {
	t.Helper()
	sent := time.Now()
	s := client.Chat.Completions.NewStreaming(ctx(t), p)
	out := &streamed{}
	for s.Next() {
		c := s.Current()
		out.acc.AddChunk(c)
		out.chunks = append(out.chunks, c)
		out.at = append(out.at, time.Since(sent))
		for _, ch := range c.Choices {
			if ch.Delta.Content != "" {
				out.content = append(out.content, ch.Delta.Content)
			}
		}
	}
	out.err = s.Err()
	return out
}

func (s *streamed) finishReason() string {
	if len(s.acc.Choices) == 0 {
		return ""
	}
	return s.acc.Choices[0].FinishReason
}

func (s *streamed) arrivalOf(content string) time.Duration {
	for i, c := range s.chunks {
		for _, ch := range c.Choices {
			if ch.Delta.Content == content {
				return s.at[i]
			}
		}
	}
	return -1
}

func TestModels(t *testing.T) {
	_, client := start(t)
	page, err := client.Models.List(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Data) != 1 || page.Data[0].ID != modelserver.DefaultModel {
		t.Fatalf("models = %+v, want just %s", page.Data, modelserver.DefaultModel)
	}
	m, err := client.Models.Get(ctx(t), modelserver.DefaultModel)
	if err != nil || m.ID != modelserver.DefaultModel {
		t.Fatalf("get model: %v %+v", err, m)
	}
	_, err = client.Models.Get(ctx(t), "gpt-nonexistent")
	var apierr *openai.Error
	if !errors.As(err, &apierr) || apierr.StatusCode != 404 {
		t.Fatalf("get unknown model: %v, want a 404 API error", err)
	}
}

func TestEchoIsVerbatim(t *testing.T) {
	_, client := start(t)
	for _, prompt := range []string{
		"hello",
		"  leading and trailing blanks \t",
		"line one\nline two\r\nline three\n   ",
		`{"messages":[{"role":"user","content":"hi"}],"model":"gpt-x"}`,
		"@alice is not a directive",
		"Ünïcödé ✓ 日本語 🚀 <&>",
	} {
		got, err := client.Chat.Completions.New(ctx(t), params(prompt))
		if err != nil {
			t.Fatalf("%q: %v", prompt, err)
		}
		if got.Choices[0].Message.Content != prompt || got.Choices[0].FinishReason != "stop" {
			t.Errorf("non-streaming echo of %q = %q (%s)", prompt, got.Choices[0].Message.Content, got.Choices[0].FinishReason)
		}
		s := stream(t, client, params(prompt))
		if s.err != nil || s.acc.Choices[0].Message.Content != prompt || s.finishReason() != "stop" {
			t.Errorf("streaming echo of %q = %q (%s, %v)", prompt, s.acc.Choices[0].Message.Content, s.finishReason(), s.err)
		}
	}
}

// TestScriptIsTheLastUserMessage: the script is the last user message;
// earlier turns are history.
func TestScriptIsTheLastUserMessage(t *testing.T) {
	_, client := start(t)
	p := params("@say first turn")
	p.Messages = append(p.Messages, openai.AssistantMessage("first turn"), openai.UserMessage("second ${turn}"))
	got, err := client.Chat.Completions.New(ctx(t), p)
	if err != nil {
		t.Fatal(err)
	}
	if c := got.Choices[0].Message.Content; c != "second ${turn}" {
		t.Fatalf("content %q, want the last user message", c)
	}
}

func TestStreamingDeltasWithTiming(t *testing.T) {
	_, client := start(t)
	p := params("@say Hel\n@say \"lo, \"\n@pause 300ms\n@say world")
	p.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	s := stream(t, client, p)
	if s.err != nil {
		t.Fatal(s.err)
	}
	if strings.Join(s.content, "|") != "Hel|lo, |world" {
		t.Fatalf("content deltas %q, want one per @say", s.content)
	}
	// Arrivals are read on this side: the earlier one may be read late (a
	// busy machine), which shortens the gap seen here though the server
	// paused the whole 300 ms; 50 ms covers that, and a pause left out
	// still fails.
	if gap := s.arrivalOf("world") - s.arrivalOf("lo, "); gap < 250*time.Millisecond {
		t.Errorf("the @pause 300ms gap was %s", gap)
	}
	if s.acc.Choices[0].Message.Content != "Hello, world" || s.finishReason() != "stop" {
		t.Errorf("accumulated %q (%s)", s.acc.Choices[0].Message.Content, s.finishReason())
	}
	if s.acc.Usage.TotalTokens == 0 {
		t.Errorf("include_usage: no usage reported")
	}
	// The same script without streaming: one message, after the pause.
	got, err := client.Chat.Completions.New(ctx(t), params("@say Hel\n@say \"lo, \"\n@pause 300ms\n@say world"))
	if err != nil || got.Choices[0].Message.Content != "Hello, world" {
		t.Fatalf("non-streaming: %v %+v", err, got)
	}
}

// TestToolCallsAndContinuation: a tool call goes out with the script's
// arguments, and the script goes on once the conversation carries the tool's
// result.
func TestToolCallsAndContinuation(t *testing.T) {
	_, client := start(t)
	p := params("@say looking it up\n@tool calc {\"a\":1}\n@say \"the answer\"\n@tool notes\n@say done", "calc", "notes")
	want := []struct {
		content, tool, args, finish string
	}{
		{"looking it up", "calc", `{"a":1}`, "tool_calls"},
		{"the answer", "notes", `{}`, "tool_calls"},
		{"done", "", "", "stop"},
	}
	for i, w := range want {
		s := stream(t, client, p)
		if s.err != nil {
			t.Fatalf("round %d: %v", i+1, s.err)
		}
		msg := s.acc.Choices[0].Message
		if msg.Content != w.content || s.finishReason() != w.finish {
			t.Fatalf("round %d: content %q finish %q, want %q %q", i+1, msg.Content, s.finishReason(), w.content, w.finish)
		}
		if w.tool == "" {
			if len(msg.ToolCalls) != 0 {
				t.Fatalf("round %d: unexpected tool calls %+v", i+1, msg.ToolCalls)
			}
			break
		}
		if len(msg.ToolCalls) != 1 || msg.ToolCalls[0].Function.Name != w.tool || msg.ToolCalls[0].Function.Arguments != w.args || msg.ToolCalls[0].ID == "" {
			t.Fatalf("round %d: tool calls %+v, want %s %s", i+1, msg.ToolCalls, w.tool, w.args)
		}
		p.Messages = append(p.Messages, msg.ToParam(), openai.ToolMessage(`{"ok":true}`, msg.ToolCalls[0].ID))
	}

	// Non-streaming, the first round is the same call.
	got, err := client.Chat.Completions.New(ctx(t), params("@tool calc {\"x\":[1,2]}\n@say after", "calc"))
	if err != nil {
		t.Fatal(err)
	}
	c := got.Choices[0]
	if c.FinishReason != "tool_calls" || len(c.Message.ToolCalls) != 1 || c.Message.ToolCalls[0].Function.Arguments != `{"x":[1,2]}` {
		t.Fatalf("non-streaming tool call: %+v", c)
	}
}

// TestToolInputStreamsArguments: @toolinput streams the next call's arguments
// in pieces: the first delta names the call, later ones carry only arguments.
func TestToolInputStreamsArguments(t *testing.T) {
	_, client := start(t)
	args := `{"q":"héllo wörld, a longer query"}`
	s := stream(t, client, params("@toolinput search {\"ignored\":true}\n@tool search "+args, "search"))
	if s.err != nil {
		t.Fatal(s.err)
	}
	var deltas []openai.ChatCompletionChunkChoiceDeltaToolCall
	for _, c := range s.chunks {
		for _, ch := range c.Choices {
			deltas = append(deltas, ch.Delta.ToolCalls...)
		}
	}
	if len(deltas) < 3 {
		t.Fatalf("want a naming delta and at least two argument deltas, got %+v", deltas)
	}
	if deltas[0].ID == "" || deltas[0].Function.Name != "search" || deltas[0].Function.Arguments != "" {
		t.Errorf("first delta %+v, want the call's ID and name without arguments", deltas[0])
	}
	joined := ""
	for _, d := range deltas[1:] {
		if d.ID != "" || d.Function.Name != "" || d.Function.Arguments == "" {
			t.Errorf("continuation delta %+v, want arguments only", d)
		}
		joined += d.Function.Arguments
	}
	if joined != args {
		t.Errorf("streamed arguments %q, want %q", joined, args)
	}
	tc := s.acc.Choices[0].Message.ToolCalls
	if len(tc) != 1 || tc[0].Function.Arguments != args || s.finishReason() != "tool_calls" {
		t.Errorf("accumulated %+v (%s)", tc, s.finishReason())
	}
}

// TestToolsListsTheOfferedTools: @tools lists the tools the request offered,
// without the service tools.
func TestToolsListsTheOfferedTools(t *testing.T) {
	_, client := start(t)
	got, err := client.Chat.Completions.New(ctx(t), params("@tools", "search-web", "calculator", modelserver.StepTool, modelserver.AskTool))
	if err != nil {
		t.Fatal(err)
	}
	if c := got.Choices[0].Message.Content; c != "tools:calculator,search-web" {
		t.Fatalf("@tools = %q", c)
	}
	got, err = client.Chat.Completions.New(ctx(t), params("@tools"))
	if err != nil || got.Choices[0].Message.Content != "tools:" {
		t.Fatalf("@tools without tools = %v %+v", err, got)
	}
}

// TestStepAndAskAreServiceToolCalls: @step and @ask are calls of the service
// tools, when the request offers them.
func TestStepAndAskAreServiceToolCalls(t *testing.T) {
	_, client := start(t)
	p := params("@step Collecting sources\n@ask sensitive fields=user,token Log in to Example\n@say done", modelserver.StepTool, modelserver.AskTool)
	want := []struct{ tool, args string }{
		{modelserver.StepTool, `{"description":"Collecting sources"}`},
		{modelserver.AskTool, `{"message":"Log in to Example","fields":["user","token"],"sensitive":true}`},
	}
	for _, w := range want {
		s := stream(t, client, p)
		if s.err != nil {
			t.Fatal(s.err)
		}
		msg := s.acc.Choices[0].Message
		if len(msg.ToolCalls) != 1 || msg.ToolCalls[0].Function.Name != w.tool || msg.ToolCalls[0].Function.Arguments != w.args {
			t.Fatalf("tool calls %+v, want %s %s", msg.ToolCalls, w.tool, w.args)
		}
		p.Messages = append(p.Messages, msg.ToParam(), openai.ToolMessage("{}", msg.ToolCalls[0].ID))
	}
	s := stream(t, client, p)
	if s.err != nil || s.acc.Choices[0].Message.Content != "done" {
		t.Fatalf("last round: %v %q", s.err, s.acc.Choices[0].Message.Content)
	}
}

// TestWaitingHoldsTheResponseBack: @waiting holds the whole response back; a
// @pause comes after the response has begun.
func TestWaitingHoldsTheResponseBack(t *testing.T) {
	_, client := start(t)
	s := stream(t, client, params("@waiting\n@say here"))
	if s.err != nil || len(s.at) == 0 {
		t.Fatalf("%v, %d chunks", s.err, len(s.at))
	}
	if s.at[0] < testWaiting {
		t.Errorf("the first chunk came after %s, want at least the waiting time %s", s.at[0], testWaiting)
	}
	s = stream(t, client, params("@pause 400ms\n@say here"))
	if s.err != nil || len(s.at) < 2 {
		t.Fatalf("%v, %d chunks", s.err, len(s.at))
	}
	if gap := s.arrivalOf("here") - s.at[0]; gap < 300*time.Millisecond {
		t.Errorf("with @pause the role chunk should open the response before the pause; it came %s before the content", gap)
	}
}

// TestFailIsAModelError: @fail is a model error: HTTP 500 before anything was
// sent, an error event in a stream that has begun.
func TestFailIsAModelError(t *testing.T) {
	_, client := start(t)
	_, err := client.Chat.Completions.New(ctx(t), params("@say partial\n@fail the tool exploded"))
	var apierr *openai.Error
	if !errors.As(err, &apierr) || apierr.StatusCode != 500 || apierr.Message != "the tool exploded" {
		t.Fatalf("non-streaming @fail: %v, want a 500 API error with the message", err)
	}

	s := stream(t, client, params("@say partial\n@fail the tool exploded"))
	var serr *ssestream.StreamError
	if !errors.As(s.err, &serr) || !strings.Contains(serr.Error(), "the tool exploded") {
		t.Fatalf("streaming @fail after content: %v, want a stream error", s.err)
	}
	if strings.Join(s.content, "") != "partial" {
		t.Errorf("content before the failure: %q", s.content)
	}

	s = stream(t, client, params("@fail at once"))
	if !errors.As(s.err, &apierr) || apierr.StatusCode != 500 || apierr.Message != "at once" {
		t.Fatalf("streaming @fail first: %v, want a 500 API error", s.err)
	}
}

// TestUnofferedToolFailsWhereItComes: a call of a tool the request does not
// offer fails where it comes: the tools a run has are the service's business,
// found out as an agent would.
func TestUnofferedToolFailsWhereItComes(t *testing.T) {
	_, client := start(t)
	s := stream(t, client, params("@say before\n@toolinput calc\n@tool calc", "notes"))
	var serr *ssestream.StreamError
	if !errors.As(s.err, &serr) || !strings.Contains(serr.Error(), `no tool named \"calc\"`) {
		t.Fatalf("streaming: %v, want a stream error naming the tool", s.err)
	}
	if strings.Join(s.content, "") != "before" {
		t.Errorf("content before the call: %q", s.content)
	}
	_, err := client.Chat.Completions.New(ctx(t), params("@say before\n@tool calc", "notes"))
	var apierr *openai.Error
	if !errors.As(err, &apierr) || apierr.StatusCode != 400 || !strings.Contains(apierr.Message, `no tool named "calc"`) {
		t.Fatalf("non-streaming: %v, want a 400 naming the tool", err)
	}
}

// TestRequestsItCannotFollow: requests the server cannot follow get a 400 in
// the OpenAI error envelope.
func TestRequestsItCannotFollow(t *testing.T) {
	_, client := start(t)
	callMsg := func(name string) openai.ChatCompletionMessageParamUnion {
		return openai.ChatCompletionMessage{ToolCalls: []openai.ChatCompletionMessageToolCallUnion{{
			ID: "call_1", Type: "function", Function: openai.ChatCompletionMessageFunctionToolCallFunction{Name: name, Arguments: "{}"},
		}}}.ToParam()
	}
	tests := []struct {
		name   string
		params openai.ChatCompletionNewParams
		want   string
	}{
		{"script does not parse", params("@say hi\n@pause soon"), "does not parse"},
		{"tool not offered", params("@tool calc", "notes"), `no tool named "calc"`},
		{"step without the service tool", params("@step Plan", "calc"), "@step (line 1) cannot be expressed by a model"},
		{"ask without the service tool", params("@ask Log in"), "@ask (line 1) cannot be expressed by a model"},
		{"toolinput without its call", params("@toolinput calc\n@say no call", "calc"), "must be followed by @tool calc"},
		{"no user message", openai.ChatCompletionNewParams{Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("hi")}}, "no user message"},
		{"tool call without result", func() openai.ChatCompletionNewParams {
			p := params("@tool calc\n@say done", "calc")
			p.Messages = append(p.Messages, callMsg("calc"))
			return p
		}(), "must be followed by tool messages"},
		{"conversation off script", func() openai.ChatCompletionNewParams {
			p := params("@tool calc\n@say done", "calc", "notes")
			p.Messages = append(p.Messages, callMsg("notes"), openai.ToolMessage("{}", "call_1"))
			return p
		}(), `tool call 1 is "notes", the script's call 1 is "calc"`},
		{"script already ended", func() openai.ChatCompletionNewParams {
			p := params("just text", "calc")
			p.Messages = append(p.Messages, callMsg("calc"), openai.ToolMessage("{}", "call_1"))
			return p
		}(), "the script makes 0 tool calls"},
		{"several choices", func() openai.ChatCompletionNewParams {
			p := params("hi")
			p.N = openai.Int(2)
			return p
		}(), "n must be 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, streaming := range []bool{false, true} {
				var err error
				if streaming {
					err = stream(t, client, tt.params).err
				} else {
					_, err = client.Chat.Completions.New(ctx(t), tt.params)
				}
				var apierr *openai.Error
				if !errors.As(err, &apierr) || apierr.StatusCode != 400 || apierr.Type != "invalid_request_error" {
					t.Fatalf("streaming=%v: %v, want a 400 invalid_request_error", streaming, err)
				}
				if !strings.Contains(apierr.Message, tt.want) {
					t.Errorf("streaming=%v: message %q, want it to say %q", streaming, apierr.Message, tt.want)
				}
			}
		})
	}
}

// TestRawErrors: requests that are not chat completions at all get the
// envelope too.
func TestRawErrors(t *testing.T) {
	srv, _ := start(t)
	for _, tt := range []struct {
		method, path, body string
		status             int
	}{
		{"POST", "/v1/chat/completions", "{not json", 400},
		// A decoder that drops what it cannot place would echo "" here.
		{"POST", "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":5}]}`, 400},
		{"POST", "/v1/chat/completions", `{"model":"m","messages":5}`, 400},
		{"POST", "/v1/completions", `{"prompt":"x"}`, 404},
		{"GET", "/v1/chat/completions", "", 404},
	} {
		req, _ := http.NewRequestWithContext(ctx(t), tt.method, srv.URL+tt.path, strings.NewReader(tt.body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var env struct {
			Error struct {
				Message string `json:"message"`
				Type    string `json:"type"`
			} `json:"error"`
		}
		if resp.StatusCode != tt.status || json.Unmarshal(b, &env) != nil || env.Error.Message == "" || env.Error.Type == "" {
			t.Errorf("%s %s: %d %s, want %d with an OpenAI error envelope", tt.method, tt.path, resp.StatusCode, b, tt.status)
		}
	}
}

// TestDisconnectEndsTheResponse: a client that goes away ends a paused
// response at once.
func TestDisconnectEndsTheResponse(t *testing.T) {
	s := modelserver.New(modelserver.Config{})
	returned := make(chan struct{}, 1)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.ServeHTTP(w, r)
		returned <- struct{}{}
	}))
	defer ts.Close()
	client := openai.NewClient(option.WithBaseURL(ts.URL+"/v1"), option.WithAPIKey("sk-test"), option.WithMaxRetries(0))
	c, cancel := context.WithCancel(context.Background())
	st := client.Chat.Completions.NewStreaming(c, params("@say a\n@pause 10m\n@say never"))
	if !st.Next() {
		t.Fatal(st.Err())
	}
	cancel()
	for st.Next() {
	}
	select {
	case <-returned:
	case <-time.After(3 * time.Second):
		t.Fatal("the handler still runs 3s after its client went away")
	}
}
