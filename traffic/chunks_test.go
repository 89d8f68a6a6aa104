package traffic

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/invokeconf/invokeconf/profile"
)

// chunkings splits text into pieces: of each fixed size, and at random
// places (a fixed seed).
func chunkings(text string) map[string][]string {
	out := map[string][]string{}
	for _, size := range []int{1, 2, 3, 5, 7, 1024} {
		var ps []string
		for i := 0; i < len(text); i += size {
			ps = append(ps, text[i:min(i+size, len(text))])
		}
		out[fmt.Sprintf("by %d", size)] = ps
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for n := range 4 {
		var ps []string
		for i := 0; i < len(text); {
			j := min(i+1+rng.IntN(9), len(text))
			ps = append(ps, text[i:j])
			i = j
		}
		out[fmt.Sprintf("random %d", n)] = ps
	}
	return out
}

// TestKeysAreHiddenHoweverTheyArrive: a key, a piece of its secret, a
// hidden JSON member's value and a key of the spec's shape are hidden in a
// recorded body however its bytes arrive (a byte at a time, in pieces of
// every small size, at random), spill, and are cut by MaxRecord: the
// recorded text is always the redaction of the recorded bytes as a whole,
// no spill file ever holds a piece of the secret, and no piece of it is
// left.
func TestKeysAreHiddenHoweverTheyArrive(t *testing.T) {
	secret := key[strings.LastIndex(key, "-")+1:]
	texts := []string{
		"before " + key + " after",
		"the end is a cut key " + key[:len(key)-4],
		"a piece " + secret[3:14] + " alone, and the key's start sk-svc-alice-k1-" + secret[:4] + " cut",
		`{"items":[{"content":"x"}],"password": "hunter2hunter2", "n": 1}`,
		`data: {"content":"{\"token\":\"abcdefgh12\",\"k\":\"` + key + `\"}"}` + "\n\n",
		"unknown sk-svc-bob-k2-Other0Secret99 and " + key,
	}
	dir := t.TempDir() // each body removes its spill file in Finish
	for ti, text := range texts {
		for name, pieces := range chunkings(text) {
			for _, threshold := range []int64{0, 1, 8, 40} {
				for cut := 1; cut <= len(text)+1; cut++ {
					if cut <= len(text) && threshold != 8 && name != "by 1" {
						continue // every cut once, with a byte at a time and a small spill
					}
					rc := NewRecorder(int64(cut), nil)
					if threshold > 0 {
						rc.SpillDir, rc.SpillThreshold = dir, threshold
					}
					rc.Header(http.Header{"Authorization": {"Bearer " + key}})
					br := record(rc, time.Now(), pieces)
					if rc.SpillDir != "" {
						if held, _ := spillDirHolds(t, rc.SpillDir); pieceOf(held, secret) != "" || strings.Contains(held, "hunter2hunter2") {
							t.Fatalf("text %d %s, spill %d, cut %d: a spill file holds %q", ti, name, threshold, cut, held)
						}
					}
					body := br.Finish()
					got := string(body.Bytes())
					recorded := text[:min(cut, len(text))]
					if want := rc.Redactor.RedactString(recorded); got != want {
						t.Fatalf("text %d %s, spill %d, cut %d:\n got  %q\n want %q", ti, name, threshold, cut, got, want)
					}
					if p := pieceOf(got, secret); p != "" || strings.Contains(got, "sk-svc-alice-k1-"+secret[:1]) {
						t.Fatalf("text %d %s, spill %d, cut %d: %q keeps a piece of the secret", ti, name, threshold, cut, got)
					}
					for _, leak := range []string{"hunter2", "abcdefgh", "Other0Secret"} {
						if strings.Contains(got, leak) {
							t.Fatalf("text %d %s: %q keeps %q", ti, name, got, leak)
						}
					}
				}
			}
		}
	}
}

// pieceOf returns the first piece of secret of profile.FragmentMin
// characters that s holds.
func pieceOf(s, secret string) string {
	for i := 0; i+profile.FragmentMin <= len(secret); i++ {
		if strings.Contains(s, secret[i:i+profile.FragmentMin]) {
			return secret[i : i+profile.FragmentMin]
		}
	}
	return ""
}

// TestPassiveDocListsWhatIsHidden: docs/passive.md names every name hidden
// by default.
func TestPassiveDocListsWhatIsHidden(t *testing.T) {
	b, err := os.ReadFile("../docs/passive.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, n := range DefaultHidden {
		if !strings.Contains(doc, "`"+n+"`") {
			t.Errorf("docs/passive.md does not name %s among the names hidden by default", n)
		}
	}
}
