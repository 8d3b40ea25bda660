package main

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kubecause/kubecause/exporter/pages"
)

// validateWeb checks the flags of the exporter's HTTP server (the run command's; validateFlags).
func validateWeb(o options) []error {
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if err := telemetryPath(o.metricsPath, o.routePrefix); err != nil {
		fail("--web.telemetry-path %q: %v", o.metricsPath, err)
	}
	if o.writeTimeout < time.Second {
		fail("--web.write-timeout must be at least 1s, not %s", o.writeTimeout)
	}
	if o.maxRequests < 1 || o.maxRequests > maxInFlight {
		fail("--web.max-requests must be from 1 to %d, not %d", maxInFlight, o.maxRequests)
	}
	if o.maxPageRequests < 1 || o.maxPageRequests > maxInFlight {
		fail("--web.max-page-requests must be from 1 to %d, not %d", maxInFlight, o.maxPageRequests)
	}
	if o.healthAddress != "" {
		if err := healthAddress(o.healthAddress, o.listenAddresses); err != nil {
			fail("--web.health-listen-address %q: %v", o.healthAddress, err)
		}
	}
	return errs
}

// maxInFlight bounds --web.max-requests and --web.max-page-requests: a stalled reader of /metrics
// holds up to ~1 MiB (a gzip compressor and a piece of the response, docs/performance.md), so
// 1,000 of them would take several times the chart's memory limit.
const maxInFlight = 200

// reservedPaths are served by kubecause itself and cannot be the telemetry path.
var reservedPaths = []string{"/healthz", "/readyz"}

// telemetryPath checks a --web.telemetry-path: an absolute URL path that the HTTP mux can serve
// as given (no spaces, no wildcards) and that is not one of kubecause's own endpoints.
func telemetryPath(p, pagesPrefix string) error {
	if !strings.HasPrefix(p, "/") {
		return errors.New(`must begin with "/"`)
	}
	if strings.ContainsFunc(p, func(c rune) bool {
		return c <= ' ' || c == 0x7f || c == '{' || c == '}' || c == '?' || c == '#' || c == '%'
	}) {
		return errors.New("must be a plain URL path: no spaces, control characters, '{', '}', '?', '#' or '%'")
	}
	if u, err := url.Parse(p); err != nil || u.Path != p {
		return errors.New("is not a URL path")
	}
	// The mux answers a request for an unclean path with a redirect to the clean one: a telemetry
	// path with "..", "." or "//" would never be served.
	if c := path.Clean(p); c != strings.TrimSuffix(p, "/") && c != p {
		return fmt.Errorf("must be a clean path (no \"..\", \".\" or \"//\"; %q is what would be served)", c)
	}
	if slices.Contains(reservedPaths, strings.TrimSuffix(p, "/")) {
		return errors.New("is one of kubecause's own endpoints")
	}
	for _, page := range pages.Paths {
		if page = pagesPrefix + page; p == page || strings.HasPrefix(p, page+"/") {
			return fmt.Errorf("is under %s, one of kubecause's pages", page)
		}
	}
	return nil
}

// healthAddress checks a --web.health-listen-address: host:port with a numeric port, not the port
// of a --web.listen-address on an overlapping host (the second listener would fail to bind).
func healthAddress(addr string, listen []string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("not host:port (e.g. :9738): %w", err)
	}
	if n, err := strconv.ParseUint(port, 10, 16); err != nil || n == 0 {
		return fmt.Errorf("port %q is not a number from 1 to 65535", port)
	}
	for _, l := range listen {
		lhost, lport, err := net.SplitHostPort(l)
		if err != nil || lport != port {
			continue
		}
		if host == lhost || wildcardHost(host) || wildcardHost(lhost) {
			return fmt.Errorf("the port of --web.listen-address %q: the health listener needs a port of its own", l)
		}
	}
	return nil
}

// wildcardHost says whether a listen host stands for every address.
func wildcardHost(h string) bool {
	ip := net.ParseIP(h)
	return h == "" || (ip != nil && ip.IsUnspecified())
}
