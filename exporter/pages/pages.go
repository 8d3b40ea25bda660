package pages

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// ParseExternalURL checks a --web.external-url (the URL under which users reach kubecause, as
// Alertmanager's flag) and returns it without a trailing slash, with its path: the route prefix
// under which the pages are served ("" for none).
func ParseExternalURL(s string) (u *url.URL, prefix string, err error) {
	u, err = url.Parse(s)
	if err != nil {
		return nil, "", err
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, "", errors.New("must be an absolute http or https URL, such as https://kubecause.example.com")
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return nil, "", errors.New("must have no query, fragment or user information")
	}
	if strings.ContainsAny(u.Path, "{}%") {
		return nil, "", fmt.Errorf("path %q must be a plain URL path", u.Path)
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return u, u.Path, nil
}

// RunbookPattern is the --runbook.url-pattern that points at the runbooks served under u.
func RunbookPattern(u *url.URL) string {
	return strings.TrimRight(u.String(), "/") + "/runbooks/%s"
}

// Register serves the runbooks at <prefix>/runbooks/ and the live problems at <prefix>/problems.
// The prefix is the path of --web.external-url: a proxy forwards those paths unchanged, as to
// Alertmanager. At most maxInFlight responses of the two are served at once (Guard.Limit, counted
// in p.Guard as handler="pages"); 0 means no limit.
func Register(mux *http.ServeMux, prefix string, rb *Runbooks, p *Problems, maxInFlight int) {
	limit := func(h http.Handler) http.Handler { return h }
	if maxInFlight > 0 {
		slots := newSlots(maxInFlight)
		limit = func(h http.Handler) http.Handler { return p.Guard.limit(HandlerPages, slots, h) }
	}
	mux.Handle(prefix+"/runbooks/", limit(http.StripPrefix(prefix+"/runbooks", rb)))
	mux.Handle(prefix+"/problems", limit(p))
}

// Paths are the paths Register serves under a prefix; nothing else may use them.
var Paths = []string{"/runbooks", "/problems"}
