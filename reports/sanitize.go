package reports

import (
	"net/http"

	"github.com/invokeconf/invokeconf/internal/safetext"
	"github.com/invokeconf/invokeconf/outcome"
	"github.com/invokeconf/invokeconf/runner"
)

// printable makes target bytes safe for every writer (safetext.Clean): no
// report turns into invalid XML or JSON, and no terminal obeys an escape code.
func printable(s string) string { return safetext.Clean(s) }

// sanitize makes what a scenario's target sent printable: its message, its
// structured failure and the response side of its transcript. What the
// harness sent stays as it was, so the curl commands reproduce it byte for
// byte.
func sanitize(s runner.ScenarioResult) runner.ScenarioResult {
	s.Name, s.Error = printable(s.Name), printable(s.Error)
	if f := s.Failure; f != nil {
		s.Failure = &outcome.Failure{Check: printable(f.Check), Expected: printable(f.Expected),
			Actual: printable(f.Actual), Spec: printable(f.Spec)}
	}
	if len(s.Transcript) > 0 {
		tr := append(s.Transcript[:0:0], s.Transcript...)
		for i := range tr {
			tr[i].RespBody, tr[i].Error, tr[i].Elapsed = printable(tr[i].RespBody), printable(tr[i].Error), printable(tr[i].Elapsed)
			tr[i].RespHeader = printableHeader(tr[i].RespHeader)
		}
		s.Transcript = tr
	}
	return s
}

func printableHeader(h http.Header) http.Header {
	if h == nil {
		return nil
	}
	out := make(http.Header, len(h))
	for k, vs := range h {
		for _, v := range vs {
			out[printable(k)] = append(out[printable(k)], printable(v))
		}
	}
	return out
}
