package suggest

import "testing"

func TestDidYouMean(t *testing.T) {
	known := []string{"sse-crlf", "sse-cr", "no-close", "variants", "defects"}
	tests := []struct{ name, want string }{
		{"sse-crfl", " (did you mean sse-crlf?)"},
		{"no-clos", " (did you mean no-close?)"},
		{"variant", " (did you mean variants?)"},
		{"SSE-CR", " (did you mean sse-cr?)"},
		{"sse-cr", ""},
		{"something-else-entirely", ""},
	}
	for _, tt := range tests {
		if got := DidYouMean(tt.name, known); got != tt.want {
			t.Errorf("%q: %q, want %q", tt.name, got, tt.want)
		}
	}
}
