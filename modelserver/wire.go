package modelserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/invokeconf/invokeconf/internal/httpserve"
)

// The wire shapes of the OpenAI chat-completions API, as far as the model
// server reads and writes them. Unknown request fields are ignored, as a
// compatible server does.
//
// openai-go (the tests' client) has all of these types, and they do not fit
// a server, either way:
//   - reading: its params decode leniently by design, never failing on a
//     type mismatch and dropping what they cannot place: "messages": 5,
//     "content": 5 and a tool call whose "id" is a number decode without
//     error, and a tool call or a tool without "type" is silently left out.
//     A malformed request would get an answer instead of its 400, and a
//     call the client made would be forgotten, replaying the script.
//   - writing: its response types are made to be read (no omitempty, no
//     MarshalJSON), so encoding one writes every optional field at its zero
//     value: an empty "function_call" and "audio" in every delta, a zero
//     "usage" and "moderation" in every chunk, "finish_reason": "" for
//     null, a model's "shutdown_date" in year 1. Clients that test a
//     field's presence read those as sent (an empty function_call as a
//     legacy function call).
//
// So the shapes below are the server's own, and the tests read them with
// openai-go: if its client accepts them, a vendor's agent will.

// chatRequest is the body of POST /v1/chat/completions.
type chatRequest struct {
	Model         string         `json:"model"`
	Messages      []message      `json:"messages"`
	Tools         []tool         `json:"tools"`
	Stream        bool           `json:"stream"`
	StreamOptions *streamOptions `json:"stream_options"`
	N             *int           `json:"n"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// message is one message of the conversation. Content is a string, an array
// of content parts, or null.
type message struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCalls  []toolCall      `json:"tool_calls"`
	ToolCallID string          `json:"tool_call_id"`
}

// text returns the message's text: the string content, or the text parts
// of an array joined in order (other parts, such as images, are skipped).
func (m message) text() (string, error) {
	c := strings.TrimSpace(string(m.Content))
	if c == "" || c == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(m.Content, &s); err == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(m.Content, &parts); err != nil {
		return "", fmt.Errorf("content must be a string or an array of content parts")
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String(), nil
}

// toolCall is a tool call, in an assistant message of the request or in a
// non-streaming response.
type toolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function functionCall `json:"function"`
}

type functionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// tool is one tool the request offers the model.
type tool struct {
	Type     string `json:"type"`
	Function struct {
		Name string `json:"name"`
	} `json:"function"`
}

// completion is a non-streaming response.
type completion struct {
	ID      string             `json:"id"`
	Object  string             `json:"object"`
	Created int64              `json:"created"`
	Model   string             `json:"model"`
	Choices []completionChoice `json:"choices"`
	Usage   usage              `json:"usage"`
}

type completionChoice struct {
	Index        int             `json:"index"`
	Message      responseMessage `json:"message"`
	Logprobs     *struct{}       `json:"logprobs"`
	FinishReason string          `json:"finish_reason"`
}

type responseMessage struct {
	Role      string     `json:"role"`
	Content   *string    `json:"content"`
	Refusal   *string    `json:"refusal"`
	ToolCalls []toolCall `json:"tool_calls,omitempty"`
}

// chunk is one event of a streaming response.
type chunk struct {
	ID      string        `json:"id"`
	Object  string        `json:"object"`
	Created int64         `json:"created"`
	Model   string        `json:"model"`
	Choices []chunkChoice `json:"choices"`
	Usage   *usage        `json:"usage,omitempty"`
}

type chunkChoice struct {
	Index        int       `json:"index"`
	Delta        delta     `json:"delta"`
	Logprobs     *struct{} `json:"logprobs"`
	FinishReason *string   `json:"finish_reason"`
}

type delta struct {
	Role      string          `json:"role,omitempty"`
	Content   *string         `json:"content,omitempty"`
	ToolCalls []toolCallDelta `json:"tool_calls,omitempty"`
}

// toolCallDelta is a piece of a streamed tool call: the first piece carries
// the ID and name, later pieces only more of the arguments.
type toolCallDelta struct {
	Index    int           `json:"index"`
	ID       string        `json:"id,omitempty"`
	Type     string        `json:"type,omitempty"`
	Function functionDelta `json:"function"`
}

type functionDelta struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// estimateUsage counts about four bytes a token: the server has no
// tokenizer, and clients only need plausible numbers.
func estimateUsage(prompt, completion int) usage {
	p, c := (prompt+3)/4, (completion+3)/4
	return usage{PromptTokens: p, CompletionTokens: c, TotalTokens: p + c}
}

// apiError is an error in the OpenAI error envelope {"error": {...}}.
type apiError struct {
	Status  int     `json:"-"`
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

func (e *apiError) Error() string { return e.Message }

// Error codes the server uses in the envelope's code field.
const (
	codeScriptError    = "script_error"          // the script does not parse or cannot be followed
	codeOffScript      = "conversation_mismatch" // the conversation does not fit the script
	codeScriptedFail   = "scripted_failure"      // @fail
	codeInvalidRequest = "invalid_request"
)

// badRequest is a 400 invalid_request_error.
func badRequest(code, param, format string, args ...any) *apiError {
	e := &apiError{Status: http.StatusBadRequest, Message: fmt.Sprintf(format, args...), Type: "invalid_request_error", Code: &code}
	if param != "" {
		e.Param = &param
	}
	return e
}

// writeError writes e in the OpenAI error envelope.
func writeError(w http.ResponseWriter, e *apiError) {
	writeJSON(w, e.Status, map[string]*apiError{"error": e})
}

// writeJSON writes v as a JSON response.
var writeJSON = httpserve.WriteJSON
