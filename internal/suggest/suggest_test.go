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

func TestClosest(t *testing.T) {
	known := []string{"SSE-01", "SSE-05", "ERR-05", "ERR-10", "researchMode", "bundles"}
	for name, want := range map[string]string{
		"SSE-50": "SSE-05", "ERR-50": "ERR-05", "researchmod": "researchMode", "bundels": "bundles", "zzzzzz": "", "SSE-01": "",
	} {
		if got := Closest(name, known); got != want {
			t.Errorf("Closest(%q) = %q, want %q", name, got, want)
		}
	}
}
