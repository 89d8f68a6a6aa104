// Package transcript holds the record of one HTTP exchange, as the steps
// keep it and the reports show it. It imports nothing of the project, so a
// report can read transcripts without depending on the step definitions.
package transcript

import "net/http"

// Exchange is one request and its response, as a report shows it.
type Exchange struct {
	// ID numbers the run's exchanges from 1 (the run's judgement of every
	// exchange names them by it); 0 when not numbered.
	ID         int         `json:"id,omitempty"`
	Method     string      `json:"method"`
	URL        string      `json:"url"`
	Header     http.Header `json:"header"`
	Body       string      `json:"body,omitempty"`
	Status     int         `json:"status,omitempty"`
	RespHeader http.Header `json:"respHeader,omitempty"`
	RespBody   string      `json:"respBody,omitempty"`
	Elapsed    string      `json:"elapsed,omitempty"`
	Error      string      `json:"error,omitempty"`
}
