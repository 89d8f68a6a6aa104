package checks

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestRedactBodyText: under --redact-bodies a finding keeps no run of body
// text, raw or quoted as %q writes it, from either body; header values,
// URL parts and what a check writes of its own stay.
func TestRedactBodyText(t *testing.T) {
	const phrase = "the purple elephant sings at dawn"
	x := ex{
		url:    "http://svc.test/api/threads/thr_from_url_1/events?runID=run_from_query_1",
		prompt: "please say: " + phrase,
		resp:   hdr("X-SVC-Thread-Id", "thr_header_0001", "Content-Type", "text/event-stream"),
		chunks: whole("data: {\"content\":\"" + phrase + "\\nline \\\"two\\\"\",\"threadID\":\"thr_header_0001\",\"runID\":\"run_from_query_1\"}\n\n"),
	}.build()
	for _, c := range []struct {
		name, text string
		gone, kept []string
	}{
		{"unquoted", "saw " + phrase + " here", []string{"elephant"}, []string{"saw", " here"}},
		{"quoted", fmt.Sprintf("last frame %q", "data: {\"content\":\""+phrase+"\\nline \\\"two\\\"\"}"), []string{"purple", "elephant", `line \\\"two`}, []string{`last frame "` + BodyTextRedacted}},
		{"prompt", fmt.Sprintf("%q at least 1s after %q", "say: "+phrase, "x"), []string{"elephant"}, []string{" at least 1s after "}},
		{"header and url", `threadID "thr_header_0001", runID "run_from_query_1", path thr_from_url_1, status 200, 812 bytes`,
			nil, []string{"thr_header_0001", "run_from_query_1", "thr_from_url_1", "status 200, 812 bytes"}},
		{"short runs", "data: {} and 200", nil, []string{"data: {} and 200"}},
		{"a check's words", `content and threadID of event 2`, nil, []string{"content and threadID of event 2"}},
		{"not in a body", "an SSE stream: Content-Type text/event-stream", nil, []string{"an SSE stream: Content-Type text/event-stream"}},
	} {
		got := c.text
		RedactBodyText(x, &got)
		for _, g := range c.gone {
			if strings.Contains(got, g) {
				t.Errorf("%s: %q still holds %q", c.name, got, g)
			}
		}
		for _, k := range c.kept {
			if !strings.Contains(got, k) {
				t.Errorf("%s: %q lost %q", c.name, got, k)
			}
		}
		if (len(c.gone) > 0) != strings.Contains(got, BodyTextRedacted) {
			t.Errorf("%s: %q", c.name, got)
		}
	}
}

// TestJudgementRedactsBodies: a judgement told to redact bodies returns
// and keeps findings without body text; one not told quotes the body.
func TestJudgementRedactsBodies(t *testing.T) {
	const phrase = "the purple elephant sings at dawn"
	body := `{"error":{"message":"` + phrase + `","type":"server_error","param":null,"code":null}}`
	for _, redact := range []bool{false, true} {
		j := NewJudgement()
		if redact {
			j.RedactBodies()
		}
		x := ex{status: 500, resp: hdr("Content-Type", "application/json"), chunks: whole(body)}.build()
		fs := j.AddView(x)
		var err10 *Finding
		for i := range fs {
			if fs[i].Rule == "ERR-10" {
				err10 = &fs[i]
			}
		}
		if err10 == nil {
			t.Fatalf("redact %v: no ERR-10 finding in %v", redact, fs)
		}
		b, _ := json.Marshal(j.Summary())
		for what, text := range map[string]string{"finding": err10.String(), "summary": string(b)} {
			if strings.Contains(text, "elephant") != !redact {
				t.Errorf("redact %v: the %s holds the body: %v\n%s", redact, what, !redact, text)
			}
		}
		if redact && !strings.Contains(err10.Failure.Actual, BodyTextRedacted) {
			t.Errorf("actual %q says nothing of the redaction", err10.Failure.Actual)
		}
		// The check's own words stay, though the body holds pieces of them.
		if want := `{"error":{"message","type","param","code"}}`; !strings.Contains(err10.Failure.Expected, want) {
			t.Errorf("redact %v: expected %q lost %q", redact, err10.Failure.Expected, want)
		}
	}
}

// BenchmarkRedactBodyText: a finding on a 1 MiB answer.
func BenchmarkRedactBodyText(b *testing.B) {
	answer := strings.Repeat("data: {\"content\":\"some words of an answer\"}\n\n", 1<<20/46)
	x := ex{chunks: whole(answer)}.build()
	for i := 0; i < b.N; i++ {
		actual := fmt.Sprintf("last frame %q", answer[:300])
		RedactBodyText(x, &actual)
	}
}
