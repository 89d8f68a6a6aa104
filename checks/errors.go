package checks

import (
	"encoding/json"
	"fmt"

	"github.com/invokeconf/invokeconf/outcome"
	"github.com/invokeconf/invokeconf/traffic"
)

var errorChecks = []Check{
	MissingKey,
	MalformedKey,
	ProblemFormat,
}

// refused checks that an invoke call whose key has shape want was answered
// 401. A 400 or 404 is decided only for an {id} that an earlier call of the
// recording resolved (the spec does not rank resolving {id} against
// checking the key); a 5xx is never (a server failure can come first).
func refused(x *View, h *History, want traffic.Auth, what string) error {
	inv, ok := InvokeOf(x)
	if !ok {
		return skip("not an invoke call")
	}
	if x.Response == nil {
		return skip("no response")
	}
	if err := requestGap(x, "Authorization"); err != nil {
		return err
	}
	if a, _ := traffic.ClassifyAuth(x.Request.Header.Values("Authorization")); a != want {
		return skip("the key is not %s", what)
	}
	switch s := x.Response.Status; {
	case s == 401:
		return nil
	case (s == 400 || s == 404) && !h.Resolved(inv) || s >= 500:
		return skip("answered %d, which the spec does not rank against 401", s)
	default:
		return outcome.Failf(fmt.Sprintf("the status for a %s key", what), "401", "%d", s)
	}
}

// MissingKey: ERR-02. An invoke call without Authorization is 401.
var MissingKey = Check{Rule: "ERR-02", Spec: "401: Bearer missing, malformed, unknown or expired", Judge: missingKey}

func missingKey(x *View, h *History) error {
	return refused(x, h, traffic.AuthMissing, "missing")
}

// MalformedKey: ERR-03. An invoke call whose Authorization is not
// "Bearer sk-svc-<user>-<key>-<secret>" is 401.
var MalformedKey = Check{Rule: "ERR-03", Spec: "401: Bearer missing, malformed, unknown or expired", Judge: malformedKey}

func malformedKey(x *View, h *History) error {
	return refused(x, h, traffic.AuthMalformed, "malformed")
}

// ProblemFormat: ERR-10. An invoke error body is not the OpenAI error
// envelope {"error": {"message", "type", "param", "code"}}; the problem
// format's shape is not shown, so nothing else is asked of it. Many
// problem formats also carry error.message: only a body with message and
// type as strings and param or code beside them is the OpenAI envelope.
var ProblemFormat = Check{Rule: "ERR-10", Spec: "Errors before streaming use the platform's problem format (not the OpenAI error envelope).", Judge: problemFormat}

func problemFormat(x *View, _ *History) error {
	if _, ok := InvokeOf(x); !ok {
		return skip("not an invoke call")
	}
	if x.Response == nil || x.Response.Status < 400 {
		return skip("not an error")
	}
	b, err := body(x, true)
	if err != nil {
		return err
	}
	if isOpenAIError(b) {
		return outcome.Failf(fmt.Sprintf("the %d error body", x.Response.Status),
			"the platform's problem format, not the OpenAI error envelope {\"error\":{\"message\",\"type\",\"param\",\"code\"}}",
			"%s", quote(b))
	}
	return nil
}

func isOpenAIError(body []byte) bool {
	var v struct {
		Error map[string]json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &v) != nil || v.Error == nil {
		return false
	}
	isString := func(name string) bool {
		raw := v.Error[name]
		return len(raw) > 0 && raw[0] == '"'
	}
	_, param := v.Error["param"]
	_, code := v.Error["code"]
	return isString("message") && isString("type") && (param || code)
}
