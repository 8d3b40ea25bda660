package pages

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
)

// Handlers limited by Guard.Limit, the handler label of kubecause_http_requests_refused_total.
const (
	HandlerMetrics = "metrics" // --web.telemetry-path
	HandlerPages   = "pages"   // /problems, /runbooks/ and the landing page
)

// Reasons of a refusal, the reason label of kubecause_http_requests_refused_total.
const (
	// RefusedBusy: as many responses of the handler as its limit were in flight (HTTP 503).
	RefusedBusy = "busy"
	// RefusedQueryTooLong: a /problems filter longer than MaxQueryBytes (HTTP 400).
	RefusedQueryTooLong = "query_too_long"
)

// Guard counts the requests refused by the limits of kubecause's HTTP handlers. Its label values
// are the constants above: at most four series.
type Guard struct {
	refused *prometheus.CounterVec
}

// NewGuard returns a Guard with every series of its counter exported at 0.
func NewGuard() *Guard {
	g := &Guard{refused: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kubecause_http_requests_refused_total",
		Help: "HTTP requests refused before any work: reason=busy (HTTP 503) when as many responses of the handler as --web.max-requests (metrics) or --web.max-page-requests (pages) were in flight, reason=query_too_long (HTTP 400) for a /problems filter longer than its limit.",
	}, []string{"handler", "reason"})}
	g.refused.WithLabelValues(HandlerMetrics, RefusedBusy)
	g.refused.WithLabelValues(HandlerPages, RefusedBusy)
	g.refused.WithLabelValues(HandlerPages, RefusedQueryTooLong)
	return g
}

// Collector is the Guard's counter, to register.
func (g *Guard) Collector() prometheus.Collector { return g.refused }

func (g *Guard) refuse(handler, reason string) {
	if g != nil {
		g.refused.WithLabelValues(handler, reason).Inc()
	}
}

// Limit serves at most max requests of h at once; one more is refused at once with 503 Service
// Unavailable (and counted), not queued: a response in flight holds its memory until its reader
// has taken it or --web.write-timeout cuts it, so a bound on responses in flight is a bound on
// the memory slow or stalled readers can hold. Each handler has a limit of its own: pages in
// flight never refuse a scrape, nor scrapes a page.
//
// (promhttp.HandlerOpts.MaxRequestsInFlight does the same for a promhttp handler, but the /metrics
// response writes the per-object view after promhttp's part, outside that handler.)
func (g *Guard) Limit(handler string, max int, h http.Handler) http.Handler {
	return g.limit(handler, newSlots(max), h)
}

func newSlots(max int) chan struct{} { return make(chan struct{}, max) }

// limit serves h within slots, which handlers may share.
func (g *Guard) limit(handler string, slots chan struct{}, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case slots <- struct{}{}:
			defer func() { <-slots }()
			h.ServeHTTP(w, r)
		default:
			g.refuse(handler, RefusedBusy)
			w.Header().Set("Retry-After", "1")
			http.Error(w, "too many requests in flight; retry later", http.StatusServiceUnavailable)
		}
	})
}
