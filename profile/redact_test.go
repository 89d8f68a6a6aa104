package profile

import (
	"strings"
	"testing"
)

func testKeys() *Profile {
	return &Profile{Keys: Keys{Agent: "sk-svc-alice-kagent-3f9a1c7e5b2d4860", Alias: "sk-svc-alice-kalias-8d2e6f1a9c3b7054",
		Expired: "plainkeywithoutdashes"}}
}

// leaks returns the first FragmentMin-long piece of a secret found in s.
func leaks(p *Profile, s string) string {
	for _, k := range p.Secrets() {
		sec := secretOf(k)
		for i := 0; i+FragmentMin <= len(sec); i++ {
			if strings.Contains(s, sec[i:i+FragmentMin]) {
				return sec[i : i+FragmentMin]
			}
		}
	}
	return ""
}

func TestRedactorWholeKeys(t *testing.T) {
	p := testKeys()
	got := p.RedactEnv("Bearer sk-svc-alice-kagent-3f9a1c7e5b2d4860, sk-svc-alice-kalias-8d2e6f1a9c3b7054 plainkeywithoutdashes")
	want := "Bearer $INVOKECONF_KEYS_AGENT, $INVOKECONF_KEYS_ALIAS $INVOKECONF_KEYS_EXPIRED"
	if got != want {
		t.Fatalf("RedactEnv = %q, want %q", got, want)
	}
}

// TestRedactorPieces: any piece of a secret from FragmentMin characters on is
// hidden wherever it stands; shorter pieces and the public part stay.
func TestRedactorPieces(t *testing.T) {
	p := testKeys()
	r := p.Redactor()
	for _, k := range p.Secrets() {
		for i := 0; i < len(k); i++ {
			for j := i + 1; j <= len(k); j++ {
				in := "<" + k[i:j] + ">"
				got := r.Redact(in)
				if l := leaks(p, got); l != "" {
					t.Fatalf("Redact(%q) = %q leaks %q", in, got, l)
				}
			}
		}
	}
	for in, want := range map[string]string{
		"3f9a1":                       "3f9a1",
		"x3f9a1cy":                    "x[redacted]y",
		"3f9a1c7e5b2d4860":            "[redacted]",
		"3f9a1c 8d2e6f":               "[redacted] [redacted]",
		"sk-svc-alice-kagent-3f9a1c7": "sk-svc-alice-kagent-[redacted]",
		"keywit":                      "[redacted]",
		"nothing here":                "nothing here",
	} {
		if got := r.Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestRedactorCutsAfterRedacting: a key at every offset around a cut leaves
// no piece of its secret.
func TestRedactorCutsAfterRedacting(t *testing.T) {
	p := testKeys()
	r := p.Redactor()
	const n = 300
	for _, k := range p.Secrets() {
		for off := n - len(k) - 2; off <= n+2; off++ {
			in := strings.Repeat("a", off) + k + strings.Repeat("b", 50)
			got := r.Cut(in, n, "...")
			if l := leaks(p, got); l != "" {
				t.Fatalf("key at %d: Cut leaks %q: %q", off, l, got[n-60:])
			}
			// The old order, cut then redact, leaks: the test can fail.
			if pub := len(k) - len(secretOf(k)); off == n-pub-10 && leaks(p, strings.ReplaceAll(in[:n], k, "KEY")) == "" {
				t.Fatalf("cutting first and then replacing whole keys should leak at %d", off)
			}
		}
	}
	if got := r.Cut("short", n, "..."); got != "short" {
		t.Errorf("Cut of a short text = %q", got)
	}
}

func TestRedactKeepsPublicPart(t *testing.T) {
	p := &Profile{Keys: Keys{Agent: "sk-svc-alice-k1-topsecret1"}}
	got := p.Redact("Bearer sk-svc-alice-k1-topsecret1 and ecret1x")
	if got != "Bearer sk-svc-alice-k1-REDACTED and [redacted]x" {
		t.Fatalf("Redact = %q", got)
	}
}

// startLeak returns what of a secret's start follows its key's public part
// in s: a key cut in two that left even one character of its secret.
func startLeak(p *Profile, s string) string {
	for _, k := range p.Secrets() {
		sec := secretOf(k)
		pub := k[:len(k)-len(sec)]
		if sec == k {
			continue
		}
		for rest := s; ; {
			i := strings.Index(rest, pub)
			if i < 0 {
				break
			}
			rest = rest[i+len(pub):]
			if rest != "" && rest[0] == sec[0] {
				return pub + rest[:min(len(rest), len(sec))]
			}
		}
	}
	return ""
}

// TestRedactorHidesACutKeysStart: a text that holds a key cut in two (a
// bounded read stopped inside it) shows the key's public part and nothing
// of its secret, however little of it is left, at the text's end or
// inside it.
func TestRedactorHidesACutKeysStart(t *testing.T) {
	p := testKeys()
	for _, r := range []*Redactor{p.Redactor(), newRedactor(p.Secrets(), RedactKey)} {
		for _, k := range p.Secrets() {
			for n := 1; n < len(k); n++ {
				for _, in := range []string{"body " + k[:n], "body " + k[:n] + " and more", k[:n] + "\n" + k} {
					got := r.Redact(in)
					if l := startLeak(p, got); l != "" {
						t.Fatalf("Redact(%q) = %q leaks %q", in, got, l)
					}
					if l := leaks(p, got); l != "" {
						t.Fatalf("Redact(%q) = %q leaks %q", in, got, l)
					}
				}
			}
		}
	}
	for in, want := range map[string]string{
		"body sk-svc-alice-kagent-3f9a":       "body sk-svc-alice-kagent-[redacted]",
		"sk-svc-alice-kagent-3 and more":      "sk-svc-alice-kagent-[redacted] and more",
		"sk-svc-alice-kag":                    "sk-svc-alice-kag",
		"sk-svc-alice-kagent-x":               "sk-svc-alice-kagent-x",
		"sk-svc-alice-kagent-3f9a1c7e5b2d486": "sk-svc-alice-kagent-[redacted]",
	} {
		if got := p.Redactor().Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
	if got := p.Redact("Bearer sk-svc-alice-kagent-3f9a1c7e5b2d4860"); got != "Bearer sk-svc-alice-kagent-REDACTED" {
		t.Errorf("a whole key: %q", got)
	}
}

// TestRedactorCutNeverSplitsAKey: a target that reflects a key into a long
// body, at every offset around the cut and around the end of what is
// redacted before the cut, with and without earlier copies of keys (whose
// markers are shorter than the keys, so redacting moves later text
// forward), leaves nothing of any secret: not a piece, not a start, and of
// a key without a public part not even its first two characters.
func TestRedactorCutNeverSplitsAKey(t *testing.T) {
	p := testKeys()
	r := p.Redactor()
	const n = 300
	for _, k := range p.Secrets() {
		for copies := 0; copies <= 12; copies += 4 {
			head := strings.Repeat(p.Keys.Agent+" ", copies)
			for off := n - len(k) - 2; off <= n+r.maxLen+len(k)+2; off++ {
				pad := max(0, off-len(head))
				in := head + strings.Repeat(".", pad) + k + strings.Repeat(".", 50)
				got := r.Cut(in, n, " [cut]")
				if l := leaks(p, got); l != "" {
					t.Fatalf("%d copies, key at %d: Cut leaks %q: %q", copies, off, l, got)
				}
				if l := startLeak(p, got); l != "" {
					t.Fatalf("%d copies, key at %d: Cut leaks the start %q: %q", copies, off, l, got)
				}
				if k == p.Keys.Expired && strings.Contains(got, k[:2]) {
					t.Fatalf("%d copies, key at %d: Cut leaks the start of a bare key: %q", copies, off, got)
				}
				if len(got) > n+len(" [cut]") {
					t.Fatalf("Cut kept %d bytes", len(got))
				}
			}
		}
	}
}
