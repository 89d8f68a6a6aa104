// Package modelserver is the scripted model server behind `invokeconf model`:
// an OpenAI-compatible chat-completions API whose "model" follows the agent
// script language (package agentscript) written in the last user message.
//
// A vendor points their service's agent at it (base URL + model name); from
// then on the agent does on cue what a scenario's prompt says: it echoes a
// prompt without directives, streams content in chunks with pauses, calls
// tools with the given arguments and goes on after the results come back,
// lists the tools it was offered, and fails. The server is stateless: how far
// a script has got is read from the conversation each request carries.
//
// How each directive is expressed (docs/vendor-guide.md has the table):
//
//	(no directive)   the whole last user message as the content, verbatim
//	@say TEXT        a content delta with TEXT (non-streaming: appended to the content)
//	@pause D         nothing is sent for D
//	@waiting         the response is held back for Config.Waiting before anything is sent
//	                 (later in a response: a quiet gap of that length)
//	@toolinput NAME  the arguments of the following @tool NAME are streamed in pieces
//	@tool NAME JSON  a tool call of NAME with JSON as its arguments; finish_reason tool_calls
//	@tools           a content delta "tools:a,b" naming the tools the request offers
//	@step TEXT       a call of the service tool invokeconf_step {"description": TEXT}
//	@ask ... MSG     a call of the service tool invokeconf_ask {"message", "fields", "sensitive"}
//	@fail MESSAGE    a model error with MESSAGE: HTTP 500 before anything was sent,
//	                 an error event once a stream has begun
//
// A request the server cannot follow gets a 400 in the OpenAI error
// envelope, never a hang: a script that does not parse, @step or @ask
// without their service tool, @toolinput not followed by its @tool, a
// conversation that does not fit the script. A @tool (or @toolinput) of a
// tool the request does not offer fails where it comes, like @fail but with
// a 400 (or an error event once the stream has begun).
package modelserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	sse "github.com/tmaxmax/go-sse"

	"github.com/invokeconf/invokeconf/agentscript"
	"github.com/invokeconf/invokeconf/internal/httpserve"
)

// Names and defaults.
const (
	// DefaultModel is the model name the server lists. It answers requests
	// for any model name.
	DefaultModel = "invokeconf-script"
	// DefaultWaiting is how long @waiting holds a response back.
	DefaultWaiting = time.Second
	// DefaultToolInputGap separates the streamed pieces of tool arguments.
	DefaultToolInputGap = 50 * time.Millisecond
	// StepTool is the service tool by which the server expresses @step. A
	// model cannot show a step; a service that lets its model open one
	// offers a tool of this name.
	StepTool = "invokeconf_step"
	// AskTool is the service tool by which the server expresses @ask (a
	// request for user input, such as an OAuth login).
	AskTool = "invokeconf_ask"

	maxBody = 8 << 20
)

// Config configures a Server.
type Config struct {
	// Model is the model name listed by GET /v1/models; "" means
	// DefaultModel.
	Model string
	// Waiting is how long @waiting holds a response back; 0 means
	// DefaultWaiting.
	Waiting time.Duration
	// ToolInputGap separates streamed pieces of tool arguments; 0 means
	// DefaultToolInputGap.
	ToolInputGap time.Duration
	// Logger receives one line per request; nil discards. API keys are
	// never logged.
	Logger *slog.Logger
}

// Server is the scripted model server. It is an http.Handler.
type Server struct {
	cfg     Config
	log     *slog.Logger
	mux     *http.ServeMux
	created int64
}

// New returns a Server.
func New(cfg Config) *Server {
	if cfg.Model == "" {
		cfg.Model = DefaultModel
	}
	if cfg.Waiting == 0 {
		cfg.Waiting = DefaultWaiting
	}
	if cfg.ToolInputGap == 0 {
		cfg.ToolInputGap = DefaultToolInputGap
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s := &Server{cfg: cfg, log: log, created: time.Now().Unix()}
	m := http.NewServeMux()
	m.HandleFunc("POST /v1/chat/completions", s.handleChat)
	m.HandleFunc("GET /v1/models", s.handleModels)
	m.HandleFunc("GET /v1/models/{model}", s.handleModel)
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		code := "unknown_url"
		writeError(w, &apiError{Status: http.StatusNotFound, Type: "invalid_request_error", Code: &code,
			Message: fmt.Sprintf("Unknown request URL: %s %s. The model server serves POST /v1/chat/completions and GET /v1/models.", r.Method, r.URL.Path)})
	})
	s.mux = m
	return s
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rec := &httpserve.StatusRecorder{ResponseWriter: w}
	s.mux.ServeHTTP(rec, r)
	s.log.Info("request", "method", r.Method, "path", r.URL.Path, "status", rec.Status, "elapsed", time.Since(start).Round(time.Millisecond))
}

func (s *Server) model(m string) map[string]any {
	return map[string]any{"id": m, "object": "model", "created": s.created, "owned_by": "invokeconf"}
}

func (s *Server) handleModels(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []any{s.model(s.cfg.Model)}})
}

func (s *Server) handleModel(w http.ResponseWriter, r *http.Request) {
	if m := r.PathValue("model"); m != s.cfg.Model {
		code := "model_not_found"
		writeError(w, &apiError{Status: http.StatusNotFound, Type: "invalid_request_error", Code: &code,
			Message: fmt.Sprintf("The model %q does not exist; this server lists %q (and answers chat completions for any model name)", m, s.cfg.Model)})
		return
	}
	writeJSON(w, http.StatusOK, s.model(s.cfg.Model))
}

// handleChat serves POST /v1/chat/completions.
func (s *Server) handleChat(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		writeError(w, badRequest(codeInvalidRequest, "", "read request body: %v", err))
		return
	}
	var req chatRequest
	if err := json.Unmarshal(body, &req); err != nil {
		writeError(w, badRequest(codeInvalidRequest, "", "the request body is not a chat-completions request in JSON: %v", err))
		return
	}
	if req.N != nil && *req.N != 1 {
		writeError(w, badRequest(codeInvalidRequest, "n", "n must be 1: a script has one answer"))
		return
	}
	conv, apiErr := readConversation(req.Messages)
	if apiErr != nil {
		writeError(w, apiErr)
		return
	}
	offered := map[string]bool{}
	var agentTools []string // what @tools lists: the offered tools but the service's own
	for _, t := range req.Tools {
		name := t.Function.Name
		if name == "" {
			continue
		}
		offered[name] = true
		if name != StepTool && name != AskTool {
			agentTools = append(agentTools, name)
		}
	}
	p, apiErr := newPlan(conv.prompt, offered)
	if apiErr != nil {
		writeError(w, apiErr)
		return
	}
	seg, apiErr := p.segmentFor(conv.calls)
	if apiErr != nil {
		writeError(w, apiErr)
		return
	}
	model := req.Model
	if model == "" {
		model = s.cfg.Model
	}
	head := responseHead{id: "chatcmpl-" + randomHex(12), created: time.Now().Unix(), model: model, promptBytes: conv.textBytes}
	pl := &player{s: s, ctx: r.Context(), offered: offered, agentTools: agentTools, model: model}
	if req.Stream {
		out := &streamSink{w: w, r: r, head: head,
			usage: req.StreamOptions != nil && req.StreamOptions.IncludeUsage}
		pl.play(seg, out)
		return
	}
	out := &wholeSink{w: w, head: head}
	pl.play(seg, out)
}

// responseHead is what every chunk or response of one answer carries.
type responseHead struct {
	id          string
	created     int64
	model       string
	promptBytes int
}

// sink receives what a segment makes the model say.
type sink interface {
	// begin starts the response (a stream's headers and role chunk).
	begin() error
	text(s string) error
	// call makes a whole tool call.
	call(id, name, args string) error
	// callStart opens a streamed tool call; callArgs adds to its arguments.
	callStart(id, name string) error
	callArgs(piece string) error
	// fail ends the response with an error.
	fail(e *apiError)
	// finish ends the response normally.
	finish(reason string)
}

// player plays one segment of a script into a sink.
type player struct {
	s          *Server
	ctx        context.Context
	offered    map[string]bool
	agentTools []string
	model      string // the model the request asked for, which @model reports
}

// failure is the error a directive ends the response with, if any: @fail,
// or a call of a tool the request does not offer.
func (p *player) failure(d agentscript.Directive) *apiError {
	switch d.Kind {
	case agentscript.Fail:
		return scriptedFailure(d.Text)
	case agentscript.Tool, agentscript.ToolInput:
		return notOffered(d, p.offered)
	}
	return nil
}

// play runs the directives of seg in order. It stops quietly when the
// client goes away.
func (p *player) play(seg []agentscript.Directive, out sink) {
	// Leading @waiting: the model has not started responding.
	i := 0
	for ; i < len(seg) && seg[i].Kind == agentscript.Waiting; i++ {
		if !p.sleep(p.s.cfg.Waiting) {
			return
		}
	}
	if i < len(seg) {
		if e := p.failure(seg[i]); e != nil {
			out.fail(e) // before anything was sent: an HTTP error
			return
		}
	}
	if out.begin() != nil {
		return
	}
	reason := "stop"
	var pending []string // argument pieces of a streamed call still to send
	for _, d := range seg[i:] {
		if e := p.failure(d); e != nil {
			out.fail(e)
			return
		}
		var err error
		switch d.Kind {
		case agentscript.Say:
			err = out.text(d.Text)
		case agentscript.Tools:
			err = out.text(agentscript.FormatTools(p.agentTools))
		case agentscript.Model:
			err = out.text(agentscript.FormatModel(p.model))
		case agentscript.Pause:
			if !p.sleep(d.Duration) {
				return
			}
		case agentscript.Waiting:
			if !p.sleep(p.s.cfg.Waiting) {
				return
			}
		case agentscript.ToolInput:
			if pending != nil {
				continue // already composing this call
			}
			// The plan guarantees the segment ends with @tool of this name.
			last := seg[len(seg)-1]
			pieces := splitPieces(string(last.Args), 3)
			if err = out.callStart("call_"+randomHex(12), last.Name); err == nil {
				err = out.callArgs(pieces[0])
			}
			pending = pieces[1:]
		case agentscript.Tool:
			reason = "tool_calls"
			if pending == nil {
				err = out.call("call_"+randomHex(12), d.Name, string(d.Args))
				break
			}
			for _, piece := range pending {
				if !p.sleep(p.s.cfg.ToolInputGap) {
					return
				}
				if err = out.callArgs(piece); err != nil {
					break
				}
			}
		case agentscript.Step, agentscript.Ask:
			reason = "tool_calls"
			err = out.call("call_"+randomHex(12), callName(d), serviceCallArgs(d))
		}
		if err != nil {
			return // the client went away
		}
	}
	out.finish(reason)
}

// sleep waits for d; false when the client went away first.
func (p *player) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-p.ctx.Done():
		return false
	}
}

// splitPieces cuts s into at most n pieces of about equal length, at
// character boundaries. It returns at least one piece.
func splitPieces(s string, n int) []string {
	var out []string
	size := (len(s) + n - 1) / n
	for len(s) > 0 {
		cut := min(size, len(s))
		for cut < len(s) && !utf8.RuneStart(s[cut]) {
			cut++
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	if len(out) == 0 {
		out = []string{""}
	}
	return out
}

// streamSink writes a streaming response: server-sent events of chunks,
// ended by "data: [DONE]". go-sse writes the frames: here the bytes do not
// matter (one data line a frame), unlike the reference server's streams.
type streamSink struct {
	w     http.ResponseWriter
	r     *http.Request
	head  responseHead
	usage bool

	sess      *sse.Session // set when the stream has begun
	sentBytes int
}

func (o *streamSink) begin() error {
	if o.sess != nil {
		return nil
	}
	sess, err := sse.Upgrade(o.w, o.r)
	if err != nil {
		writeError(o.w, &apiError{Status: http.StatusInternalServerError, Type: "server_error", Message: "cannot stream: " + err.Error()})
		return err
	}
	h := o.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	// The session writes to the writer beneath the status recorder, so the
	// status goes through o.w first, for the request log.
	o.w.WriteHeader(http.StatusOK)
	o.sess = sess
	empty := ""
	return o.chunk(delta{Role: "assistant", Content: &empty}, nil)
}

func (o *streamSink) chunk(d delta, finish *string) error {
	return o.send(chunk{ID: o.head.id, Object: "chat.completion.chunk", Created: o.head.created, Model: o.head.model,
		Choices: []chunkChoice{{Delta: d, FinishReason: finish}}})
}

func (o *streamSink) send(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return o.data(string(b))
}

// data sends one event of data (JSON has no line breaks: one data line) and
// flushes it.
func (o *streamSink) data(s string) error {
	m := &sse.Message{}
	m.AppendData(s)
	if err := o.sess.Send(m); err != nil {
		return err
	}
	return o.sess.Flush()
}

func (o *streamSink) text(s string) error {
	o.sentBytes += len(s)
	return o.chunk(delta{Content: &s}, nil)
}

func (o *streamSink) call(id, name, args string) error {
	o.sentBytes += len(args)
	return o.chunk(delta{ToolCalls: []toolCallDelta{{ID: id, Type: "function", Function: functionDelta{Name: name, Arguments: args}}}}, nil)
}

func (o *streamSink) callStart(id, name string) error {
	return o.chunk(delta{ToolCalls: []toolCallDelta{{ID: id, Type: "function", Function: functionDelta{Name: name}}}}, nil)
}

func (o *streamSink) callArgs(piece string) error {
	o.sentBytes += len(piece)
	return o.chunk(delta{ToolCalls: []toolCallDelta{{Function: functionDelta{Arguments: piece}}}}, nil)
}

// fail: before the stream began, an HTTP 500; after, an error event (the
// form OpenAI-compatible clients read as a failed stream), and no [DONE].
func (o *streamSink) fail(e *apiError) {
	if o.sess == nil {
		writeError(o.w, e)
		return
	}
	_ = o.send(map[string]*apiError{"error": e})
}

func (o *streamSink) finish(reason string) {
	if o.chunk(delta{}, &reason) != nil {
		return
	}
	if o.usage {
		u := estimateUsage(o.head.promptBytes, o.sentBytes)
		if o.send(chunk{ID: o.head.id, Object: "chat.completion.chunk", Created: o.head.created, Model: o.head.model,
			Choices: []chunkChoice{}, Usage: &u}) != nil {
			return
		}
	}
	_ = o.data("[DONE]")
}

// wholeSink collects a non-streaming response.
type wholeSink struct {
	w       http.ResponseWriter
	head    responseHead
	content strings.Builder
	calls   []toolCall
}

func (o *wholeSink) begin() error          { return nil }
func (o *wholeSink) text(s string) error   { o.content.WriteString(s); return nil }
func (o *wholeSink) callArgs(string) error { return nil }

func (o *wholeSink) call(id, name, args string) error {
	o.calls = append(o.calls, toolCall{ID: id, Type: "function", Function: functionCall{Name: name, Arguments: args}})
	return nil
}

// callStart: a whole response has nothing to stream; the call is made when
// its @tool comes.
func (o *wholeSink) callStart(id, name string) error { return nil }

func (o *wholeSink) fail(e *apiError) { writeError(o.w, e) }

func (o *wholeSink) finish(reason string) {
	msg := responseMessage{Role: "assistant", ToolCalls: o.calls}
	if o.content.Len() > 0 || len(o.calls) == 0 {
		s := o.content.String()
		msg.Content = &s
	}
	sent := o.content.Len()
	for _, c := range o.calls {
		sent += len(c.Function.Arguments)
	}
	writeJSON(o.w, http.StatusOK, completion{ID: o.head.id, Object: "chat.completion", Created: o.head.created, Model: o.head.model,
		Choices: []completionChoice{{Message: msg, FinishReason: reason}}, Usage: estimateUsage(o.head.promptBytes, sent)})
}

// scriptedFailure is the model error of @fail.
func scriptedFailure(msg string) *apiError {
	code := codeScriptedFail
	return &apiError{Status: http.StatusInternalServerError, Message: msg, Type: "server_error", Code: &code}
}

func randomHex(n int) string {
	b := make([]byte, n/2)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}
