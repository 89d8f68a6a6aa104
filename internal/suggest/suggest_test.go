package suggest

import (
	"strings"
	"testing"
)

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

// TestHugeNameCostsNothing: a name far longer than any known one (a 64 KiB
// switch name) is compared with none: no edit distance is computed, so it
// allocates nothing (the distance of a 64 KiB name took seconds and a row
// per byte).
func TestHugeNameCostsNothing(t *testing.T) {
	known := []string{"sse-crlf", "sse-cr", "no-close", strings.Repeat("long-name-", 20)}
	for _, name := range []string{strings.Repeat("x", 64<<10), strings.Repeat("sse-crlf", 40)} {
		if allocs := testing.AllocsPerRun(3, func() { _ = Closest(name, known) }); allocs > 1 {
			t.Errorf("a %d-byte name: %v allocations", len(name), allocs)
		}
	}
	if got := Closest(strings.Repeat("long-name-", 20)+"x", known); got != known[3] {
		t.Errorf("a long name one character off: %q", got)
	}
}

func BenchmarkClosestHugeName(b *testing.B) {
	name := strings.Repeat("x", 64<<10)
	known := []string{"sse-crlf", "sse-cr", "no-close", "variants", "defects"}
	for b.Loop() {
		_ = Closest(name, known)
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
