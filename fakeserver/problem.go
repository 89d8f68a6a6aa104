package fakeserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
)

// Spec: Errors. Errors before streaming use the platform's problem format
// (here RFC 9457 application/problem+json), not the OpenAI error envelope
// (ERR-10).

type problemBody struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail"`
}

// problem writes an error response.
func (s *view) problem(w http.ResponseWriter, status int, format string, args ...any) {
	detail := fmt.Sprintf(format, args...)
	b, _ := json.Marshal(problemBody{Type: "about:blank", Title: http.StatusText(status), Status: status, Detail: detail})
	p := &problemAnswer{status: status, detail: detail, contentType: "application/problem+json", body: b}
	rewriteIn(s.sw, problemRewrites, p)
	w.Header().Set("Content-Type", p.contentType)
	w.Header().Del(hdrThreadID)
	w.WriteHeader(status)
	_, _ = w.Write(append(p.body, '\n'))
}

// problemAnswer is an error answer on its way out: its status, its detail,
// and the body and Content-Type it goes out with; other says that a row put
// another format in the problem format's place.
type problemAnswer struct {
	status      int
	detail      string
	contentType string
	body        []byte
	other       bool
}

// problemRewrites are the output-only deviations of an error answer, in
// the order they apply: the first that replaces the problem format wins.
var problemRewrites = []rewrite[*problemAnswer]{
	{defOpenaiErrors, func(p *problemAnswer) {
		p.body, _ = json.Marshal(map[string]any{"error": map[string]any{
			"message": p.detail, "type": "invalid_request_error", "code": p.status}})
		p.contentType, p.other = "application/json", true
	}},
	{varProblemErrorMessage, func(p *problemAnswer) {
		if !p.other {
			p.body, _ = json.Marshal(map[string]any{"error": map[string]any{"message": p.detail, "status": p.status}})
			p.other = true
		}
	}},
	{varProblemExtraMembers, func(p *problemAnswer) {
		if !p.other {
			p.body = withExtraMembers(p.body)
		}
	}},
}

// problemErr writes err with its status (an *authError), or 500.
func (s *view) problemErr(w http.ResponseWriter, err error) {
	var ae *authError
	if errors.As(err, &ae) {
		s.problem(w, ae.status, "%s", ae.msg)
		return
	}
	s.problem(w, http.StatusInternalServerError, "%v", err)
}
