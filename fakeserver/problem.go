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
	var b []byte
	if s.defect(defOpenaiErrors) {
		b, _ = json.Marshal(map[string]any{"error": map[string]any{
			"message": detail, "type": "invalid_request_error", "code": status}})
		w.Header().Set("Content-Type", "application/json")
	} else if s.variant(varProblemErrorMessage) {
		b, _ = json.Marshal(map[string]any{"error": map[string]any{"message": detail, "status": status}})
		w.Header().Set("Content-Type", "application/problem+json")
	} else {
		b, _ = json.Marshal(problemBody{Type: "about:blank", Title: http.StatusText(status), Status: status, Detail: detail})
		if s.variant(varProblemExtraMembers) {
			b = withExtraMembers(b)
		}
		w.Header().Set("Content-Type", "application/problem+json")
	}
	w.Header().Del(hdrThreadID)
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
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
