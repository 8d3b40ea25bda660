package pages

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kubecause/kubecause/exporter/events"
)

// bigView is a per-object view of n entries, as the default cap of --object-view.max-series holds.
func bigView(n int) []events.Problem {
	v := make([]events.Problem, n)
	for i := range v {
		v[i] = events.Problem{Namespace: fmt.Sprintf("team-%d", i%50), Kind: "Pod", Name: fmt.Sprintf("workload-%d-7d9fc5b8c-x2k%d", i, i%97),
			Node: fmt.Sprintf("worker-%d", i%20), Reason: "FailedMount", Cause: "configmap_not_found", Events: 1, Occurrences: 3}
	}
	return v
}

// BenchmarkProblemsHostileQuery serves /problems?q=… over a view of 10,000 entries (the default
// cap) with a filter of 1 MiB (the most a request line can carry under net/http's default header
// limit) that matches nothing, and with one of 256 bytes (docs/performance.md, "Hostile clients").
func BenchmarkProblemsHostileQuery(b *testing.B) {
	view := bigView(10000)
	p := &Problems{Source: func() []events.Problem { return view }}
	for _, n := range []int{256, 1 << 20} {
		b.Run(fmt.Sprintf("q=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			target := "/problems?format=json&q=" + strings.Repeat("Q", n)
			var code int
			for range b.N {
				rec := httptest.NewRecorder()
				p.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
				code = rec.Code
			}
			b.ReportMetric(float64(code), "status")
		})
	}
}
