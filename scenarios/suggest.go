package scenarios

import "strings"

// suggest returns the option closest to got when it is close enough to be
// a likely typo, or "".
func suggest[T ~string](got string, options []T) string {
	g := strings.ToLower(got)
	best, bestDist := "", -1
	for _, o := range options {
		o := string(o)
		dist := distance(g, o)
		if strings.ReplaceAll(g, "-", "_") == o || strings.ReplaceAll(g, "_", "-") == o {
			dist = 0
		}
		if bestDist < 0 || dist < bestDist {
			best, bestDist = o, dist
		}
	}
	limit := 2
	if len(got) <= 4 {
		limit = 1
	}
	if bestDist < 0 || bestDist > limit {
		return ""
	}
	return best
}

// distance is the Damerau-Levenshtein (optimal string alignment) distance
// between a and b: insertions, deletions, substitutions and transpositions
// of adjacent bytes each cost 1.
func distance(a, b string) int {
	prev2 := make([]int, len(b)+1)
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
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
