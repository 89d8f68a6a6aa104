// Package suggest finds the known name a mistyped one probably meant, for
// "did you mean" messages.
package suggest

import (
	"slices"
	"strings"
)

// DidYouMean returns " (did you mean X?)" when a known name is close to
// name, else "".
func DidYouMean(name string, known []string) string {
	if best := Closest(name, known); best != "" {
		return " (did you mean " + best + "?)"
	}
	return ""
}

// maxName bounds the names Closest compares: a longer one is no typo of a
// known name, and comparing it would cost its length times each known
// name's (a 64 KiB switch name took seconds).
const maxName = 256

// Closest returns the known name nearest to name by edit distance, ignoring
// case, when it is near enough to be a likely typo; "" otherwise. Only
// names whose lengths differ by no more than that are compared, and a name
// longer than maxName bytes is compared with none.
func Closest(name string, known []string) string {
	if len(name) > maxName {
		return ""
	}
	limit := max(2, len(name)/3)
	best, bestD := "", 0
	n := strings.ToLower(name)
	for _, k := range known {
		if len(k) > maxName || abs(len(k)-len(name)) > limit {
			continue // the distance is at least the difference in length
		}
		d := editDistance(n, strings.ToLower(k))
		// On a tie, a name with the same letters (a transposed pair) wins.
		if best == "" || d < bestD || d == bestD && sameLetters(n, strings.ToLower(k)) && !sameLetters(n, strings.ToLower(best)) {
			best, bestD = k, d
		}
	}
	if best == "" || bestD > limit || bestD == 0 && best == name {
		return ""
	}
	return best
}

func abs(n int) int { return max(n, -n) }

func sameLetters(a, b string) bool {
	x, y := []byte(a), []byte(b)
	slices.Sort(x)
	slices.Sort(y)
	return string(x) == string(y)
}

// editDistance counts insertions, deletions, substitutions and swaps of
// neighbours (optimal string alignment).
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
