//go:build load

package load

import (
	"fmt"
	"strings"
	"testing"
)

// exposition is kube-apiserver v1.36's apiserver_watch_list_duration_seconds for Events (the
// format of its /metrics, labels as it writes them), with cumulative counts per bucket bound.
func exposition(counts map[string]int, pods int) string {
	var sb strings.Builder
	sb.WriteString("# TYPE apiserver_watch_list_duration_seconds histogram\n")
	for _, le := range []string{"0.05", "0.1", "0.2", "0.4", "0.6", "0.8", "1", "2", "4", "6", "8", "10", "15", "20", "30", "45", "60", "+Inf"} {
		fmt.Fprintf(&sb, "apiserver_watch_list_duration_seconds_bucket{group=\"\",resource=\"events\",scope=\"cluster\",version=\"v1\",le=%q} %d\n", le, counts[le])
		// Another resource's lists are not Events'.
		fmt.Fprintf(&sb, "apiserver_watch_list_duration_seconds_bucket{group=\"\",resource=\"pods\",scope=\"cluster\",version=\"v1\",le=%q} %d\n", le, pods)
	}
	return sb.String()
}

// cumulative turns per-bucket observations into Prometheus's cumulative counts.
func cumulative(obs map[string]int) map[string]int {
	out := map[string]int{}
	n := 0
	for _, le := range []string{"0.05", "0.1", "0.2", "0.4", "0.6", "0.8", "1", "2", "4", "6", "8", "10", "15", "20", "30", "45", "60", "+Inf"} {
		n += obs[le]
		out[le] = n
	}
	return out
}

func TestWatchLists(t *testing.T) {
	before := cumulative(map[string]int{"0.2": 18})
	for _, tc := range []struct {
		name                 string
		added                map[string]int
		n, over60, longestLE float64
	}{
		{"none", nil, 0, 0, 0},
		{"all within 10 s", map[string]int{"4": 3, "10": 6}, 9, 0, 10},
		{"some past 60 s", map[string]int{"45": 2, "+Inf": 7}, 9, 7, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obs := map[string]int{"0.2": 18}
			for le, v := range tc.added {
				obs[le] += v
			}
			n, over60, longest := watchLists([]byte(exposition(before, 7)), []byte(exposition(cumulative(obs), 12)))
			if n != tc.n || over60 != tc.over60 || longest != tc.longestLE {
				t.Errorf("watchLists = %v lists, %v past 60 s, longest ≤ %v s; want %v, %v, %v", n, over60, longest, tc.n, tc.over60, tc.longestLE)
			}
		})
	}
}
