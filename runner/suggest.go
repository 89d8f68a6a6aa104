package runner

import "strings"

// didYouMean returns " (did you mean X?)" when a known name is close to
// name, else "".
func didYouMean(name string, known []string) string {
	if best := Closest(name, known); best != "" {
		return " (did you mean " + best + "?)"
	}
	return ""
}

// Closest returns the known name nearest to name by edit distance, ignoring
// case, when it is near enough to be a likely typo; "" otherwise.
func Closest(name string, known []string) string {
	best, bestD := "", 0
	n := strings.ToLower(name)
	for _, k := range known {
		d := editDistance(n, strings.ToLower(k))
		if best == "" || d < bestD {
			best, bestD = k, d
		}
	}
	if best == "" || bestD > max(2, len(name)/3) || bestD == 0 && best == name {
		return ""
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
