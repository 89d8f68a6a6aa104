package fakeserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/shared"

	"github.com/invokeconf/invokeconf/modelserver"
)

// remoteModel plays a turn by asking an OpenAI-compatible chat-completions
// API, the way a real service's agent reaches its model: the prompt is the
// user message, the run's tools are offered as functions, content deltas
// become content events, tool calls are run and their results sent back
// until the model stops. Pointed at `invokeconf model` it shows what the
// in-process interpreter shows, event for event.
type remoteModel struct {
	client openai.Client
	model  string
}

const (
	// waitingAfter: when the model has sent nothing this long after a
	// request, the run reports waitingOnModel (EVT-08). `invokeconf model`
	// holds a response back for a second on @waiting, and starts every
	// other response at once.
	waitingAfter = 250 * time.Millisecond
	// maxRounds bounds the model calls of one run.
	maxRounds = 64
)

func newRemoteModel(baseURL, model string) (*remoteModel, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("model URL %q: want the absolute http(s) base URL of an OpenAI-compatible API, such as http://127.0.0.1:8090/v1", baseURL)
	}
	if model == "" {
		model = modelserver.DefaultModel
	}
	return &remoteModel{
		client: openai.NewClient(option.WithBaseURL(baseURL), option.WithAPIKey("invokeconf"), option.WithMaxRetries(0)),
		model:  model,
	}, nil
}

// serviceTools are the reference service's own tools: through them its
// model opens a step (EVT-06) or asks the user for input (EVT-07), which a
// model cannot show by itself. The service shows them; they are not the
// agent's tools.
var serviceTools = []openai.ChatCompletionToolUnionParam{
	openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
		Name:        modelserver.StepTool,
		Description: openai.String("Start a new step of the run; the service shows its description to the user."),
		Parameters: shared.FunctionParameters{"type": "object", "required": []string{"description"},
			"properties": map[string]any{"description": map[string]any{"type": "string"}}},
	}),
	openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
		Name:        modelserver.AskTool,
		Description: openai.String("Ask the user for input, such as an OAuth login."),
		Parameters: shared.FunctionParameters{"type": "object", "required": []string{"message"},
			"properties": map[string]any{
				"message":   map[string]any{"type": "string"},
				"fields":    map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
				"sensitive": map[string]any{"type": "boolean"},
			}},
	}),
}

// Play implements Model.
func (m *remoteModel) Play(ctx context.Context, t Turn) error {
	history := t.History()
	msgs := make([]openai.ChatCompletionMessageParamUnion, 0, len(history)+1)
	for _, h := range history {
		if h.Role == "user" {
			msgs = append(msgs, openai.UserMessage(h.Content))
		} else {
			msgs = append(msgs, openai.AssistantMessage(h.Content))
		}
	}
	msgs = append(msgs, openai.UserMessage(t.Prompt))
	tools := append([]openai.ChatCompletionToolUnionParam(nil), serviceTools...)
	for _, name := range t.Tools {
		tools = append(tools, openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name: name, Parameters: shared.FunctionParameters{"type": "object"},
		}))
	}
	model := m.model
	if t.ModelSetting != "" {
		model = t.ModelSetting // the project's model setting (PROJ-06)
	}
	params := openai.ChatCompletionNewParams{Model: model, Messages: msgs, Tools: tools}
	for range maxRounds {
		msg, err := m.round(ctx, t, params)
		if err != nil {
			return err
		}
		if len(msg.ToolCalls) == 0 {
			return nil
		}
		params.Messages = append(params.Messages, msg.ToParam())
		for _, c := range msg.ToolCalls {
			result, err := m.act(ctx, t, c.Function.Name, c.Function.Arguments)
			if err != nil {
				return err
			}
			params.Messages = append(params.Messages, openai.ToolMessage(result, c.ID))
		}
	}
	return fmt.Errorf("the model went on calling tools for more than %d rounds", maxRounds)
}

// round makes one streaming model call and turns what streams in into
// events; it returns the assistant message.
func (m *remoteModel) round(ctx context.Context, t Turn, params openai.ChatCompletionNewParams) (openai.ChatCompletionMessage, error) {
	watch := &firstChunk{emit: t.Emit}
	timer := time.AfterFunc(waitingAfter, watch.late)
	defer watch.arrived() // after this no waitingOnModel can be appended
	defer timer.Stop()

	stream := m.client.Chat.Completions.NewStreaming(ctx, params)
	defer stream.Close()
	var acc openai.ChatCompletionAccumulator
	names := map[int64]string{}
	composing := map[int64]bool{}
	for stream.Next() {
		c := stream.Current()
		watch.arrived()
		acc.AddChunk(c)
		for _, ch := range c.Choices {
			if ch.Index != 0 {
				continue
			}
			if ch.Delta.Content != "" {
				t.Emit(Event{Content: ch.Delta.Content})
			}
			for _, tc := range ch.Delta.ToolCalls {
				if tc.Function.Name != "" {
					names[tc.Index] = tc.Function.Name
				}
				// EVT-09: arguments arriving in pieces after the call was
				// named: the model is composing them.
				if tc.ID == "" && tc.Function.Name == "" && tc.Function.Arguments != "" && !composing[tc.Index] {
					composing[tc.Index] = true
					t.Emit(Event{ToolInput: &ToolInput{Name: names[tc.Index]}})
				}
			}
		}
	}
	if err := stream.Err(); err != nil {
		return openai.ChatCompletionMessage{}, modelError(ctx, err)
	}
	if len(acc.Choices) == 0 {
		return openai.ChatCompletionMessage{}, nil
	}
	return acc.Choices[0].Message, nil
}

// act carries out one tool call of the model: the service tools become a
// step or a prompt event, any other is one of the run's tools.
func (m *remoteModel) act(ctx context.Context, t Turn, name, args string) (string, error) {
	switch name {
	case modelserver.StepTool:
		var a modelserver.StepArgs
		if err := json.Unmarshal([]byte(args), &a); err != nil {
			return "", fmt.Errorf("the model called %s with arguments that do not decode: %v", name, err)
		}
		t.Emit(Event{Step: &Step{Description: a.Description}})
		return `{"ok":true}`, nil
	case modelserver.AskTool:
		var a modelserver.AskArgs
		if err := json.Unmarshal([]byte(args), &a); err != nil {
			return "", fmt.Errorf("the model called %s with arguments that do not decode: %v", name, err)
		}
		t.Emit(askEvent(a.Message, a.Fields, a.Sensitive))
		return `{"ok":true}`, nil
	}
	return t.Call(ctx, name, json.RawMessage(args))
}

// firstChunk reports waitingOnModel once if no chunk has arrived when late
// is called, and never after arrived.
type firstChunk struct {
	mu      sync.Mutex
	started bool
	emit    func(Event)
}

func (f *firstChunk) late() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.started {
		f.started = true
		f.emit(Event{WaitingOnModel: true})
	}
}

func (f *firstChunk) arrived() {
	f.mu.Lock()
	f.started = true
	f.mu.Unlock()
}

// modelError turns a failed model call into the run's error: the model's
// own message where it gave one (so @fail reads the same as in process).
func modelError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return stopped(ctx)
	}
	var apierr *openai.Error
	if errors.As(err, &apierr) {
		if apierr.Message != "" {
			return errors.New(apierr.Message)
		}
		return fmt.Errorf("model: %s", apierr.Error())
	}
	var serr *ssestream.StreamError
	if errors.As(err, &serr) {
		var body struct {
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(serr.Event.Data, &body) == nil && body.Error.Message != "" {
			return errors.New(body.Error.Message)
		}
		return fmt.Errorf("model: %s", serr.Message)
	}
	return fmt.Errorf("model: %w", err)
}
