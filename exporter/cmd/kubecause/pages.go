package main

import (
	"fmt"
	"net/http"

	"github.com/prometheus/exporter-toolkit/web"

	"github.com/kubecause/kubecause/docs"
	"github.com/kubecause/kubecause/exporter/causes"
	"github.com/kubecause/kubecause/exporter/events"
	"github.com/kubecause/kubecause/exporter/pages"
)

// externalURL validates --web.external-url and, when it is set and --runbook.url-pattern is
// not, points the runbook URLs at the runbooks kubecause serves there. It returns the route
// prefix of kubecause's pages (the URL's path).
func externalURL(o *options) (prefix string, err error) {
	if o.externalURL == "" {
		return "", nil
	}
	u, prefix, err := pages.ParseExternalURL(o.externalURL)
	if err != nil {
		return "", fmt.Errorf("--web.external-url %q: %v", o.externalURL, err)
	}
	if !o.runbookPatternSet {
		o.runbookPattern = pages.RunbookPattern(u)
	}
	return prefix, nil
}

// registerPages serves the runbooks and the live problems under prefix and returns the landing
// page's links to them.
// At most maxInFlight page responses are served at once (refusals counted in guard).
func registerPages(mux *http.ServeMux, prefix string, engine *events.Engine, table *causes.Table, pattern string,
	guard *pages.Guard, maxInFlight int) []web.LandingLinks {
	runbooks := map[string]string{}
	for _, c := range table.Causes() {
		runbooks[c.Name] = causes.RunbookURL(pattern, c.Runbook)
	}
	pages.Register(mux, prefix, pages.NewRunbooks(docs.Runbooks), &pages.Problems{
		Source:     engine.Problems,
		RunbookURL: func(cause string) string { return runbooks[cause] },
		Guard:      guard,
	}, maxInFlight)
	return []web.LandingLinks{
		{Address: prefix + "/problems", Text: "Live problems", Description: "objects with a live Event, their cause and runbook (also as JSON)"},
		{Address: prefix + "/runbooks/", Text: "Runbooks", Description: "English and Chinese"},
	}
}
