package fakeserver

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestVariantsShowOnTheWire: each variant of the response forms, SSE framing
// and event objects changes the bytes it claims to, so the variant test
// proves something about the suite and never passes a no-op.
func TestVariantsShowOnTheWire(t *testing.T) {
	tests := []struct {
		variant, accept string
		header          func(http.Header) string // "" when the header is as wanted
		want, notWant   []string
	}{
		{"extra-members", "application/json", nil, []string{`"x_vendor"`, `"object":"list"`}, nil},
		{"charset-utf8", "text/event-stream", ctIs("text/event-stream; charset=utf-8"), nil, nil},
		{"charset-utf8", "application/json", ctIs("application/json; charset=utf-8"), nil, nil},
		{"ping-lone-line", "text/event-stream", nil, []string{": ping\nid: "}, []string{": ping\n\n"}},
		{"sse-comments", "text/event-stream", nil, []string{": progress\nid: "}, nil},
		{"sse-crlf", "text/event-stream", nil, []string{"event: start\r\ndata: {}\r\n\r\n"}, nil},
		{"sse-cr", "text/event-stream", nil, []string{"event: start\rdata: {}\r\r"}, []string{"\n"}},
		{"sse-no-space", "text/event-stream", nil, []string{"event:start\n", "\nid:run_", "\ndata:{"}, []string{"data: "}},
		{"sse-event-message", "text/event-stream", nil, []string{"\nevent: message\nretry: 3000\ndata: {"}, nil},
		{"sse-bom", "text/event-stream", nil, []string{"\xEF\xBB\xBFevent: start\n"}, nil},
		{"sse-mixed-endings", "text/event-stream", nil, []string{"event: start\r\ndata: {}\n\r", "\r\n", "\r"}, nil},
		{"sse-data-lines", "text/event-stream", nil, []string{"event: start\ndata\ndata: \ndata: {}\n\n", "\ndata: {\ndata:  \"content\": \"hi\",\n"}, nil},
		{"sse-ignored-fields", "text/event-stream", nil, []string{"event: progress\nid\nretry: soon\n\n", "x-seq: 1\nflag\n: inside a frame\nevent: start\n",
			"id: \x00ignored\nid: run_", "\nevent: \ndata: {"}, nil},
		{"omit-empty-fields", "application/json", nil, nil, []string{`"content":""`, `"runComplete":false`, `"sensitive":false`}},
		{"richer-nulls", "application/json", nil, []string{`"toolCall":{}`, `"waitingOnModel":false`, `"username":null`, `"content":null`}, nil},
		{"richer-numeric-flags", "application/json", nil, []string{`"waitingOnModel":0`, `"replayComplete":0`, `"sensitive":0`}, []string{`"waitingOnModel":false`, `"waitingOnModel":true`, `"sensitive":false`}},
		{"other-field-types", "application/json", nil, []string{`"time":1`, `"error":{"`, `"fields":[{"`, `"toolInput":"{`}, []string{`"time":"`}},
		{"numeric-thread-ids", "application/json", nil, []string{`"threadID":`}, []string{`"threadID":"`}},
		{"no-input-username", "application/json", nil, nil, []string{`"input":"`, `"username"`}},
		{"signals-when-slow", "application/json", nil, []string{`"toolCall"`}, []string{`"waitingOnModel"`}},
	}
	for _, tt := range tests {
		t.Run(tt.variant+" "+tt.accept, func(t *testing.T) {
			ts, p := newTestServer(t, Config{Variants: []string{tt.variant}, Keepalive: 50 * time.Millisecond})
			tool := ""
			for _, name := range p.Agents.Main.Tools {
				if _, cred := p.Agents.Main.CredentialTools[name]; !cred {
					tool = name
				}
			}
			script := "@waiting\n@say hi\n@toolinput " + tool + " {\"a\":1}\n@tool " + tool + " {\"a\":1}\n@step S\n@ask fields=f M\n@pause 120ms\n@fail boom"
			resp := post(t, ts.URL+"/api/invoke/"+p.Agents.Main.ID, p.Keys.Agent, tt.accept, script)
			defer resp.Body.Close()
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
			if tt.header != nil {
				if msg := tt.header(resp.Header); msg != "" {
					t.Error(msg)
				}
			}
			for _, w := range tt.want {
				if !strings.Contains(string(b), w) {
					t.Errorf("the body lacks %q:\n%s", w, b)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(string(b), w) {
					t.Errorf("the body holds %q:\n%s", w, b)
				}
			}
		})
	}
}

func ctIs(want string) func(http.Header) string {
	return func(h http.Header) string {
		if got := h.Get("Content-Type"); got != want {
			return "Content-Type " + got + ", want " + want
		}
		return ""
	}
}

// TestHeaderCaseVariant: header-case writes the names in lower case (the
// client would canonicalise them, so the handler's own map is read).
func TestHeaderCaseVariant(t *testing.T) {
	s := testServer(t, Config{Variants: []string{"header-case"}})
	p := s.cfg.Profile
	req := httptest.NewRequest("POST", "/api/invoke/"+p.Agents.Main.ID, strings.NewReader("echo"))
	req.Header.Set("Authorization", "Bearer "+p.Keys.Agent)
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	if _, ok := rec.Header()["x-svc-thread-id"]; !ok {
		t.Fatalf("header names as written: %v", rec.Header())
	}
	if _, ok := rec.Header()["X-Svc-Thread-Id"]; ok {
		t.Fatalf("the canonical name is still written: %v", rec.Header())
	}
}
