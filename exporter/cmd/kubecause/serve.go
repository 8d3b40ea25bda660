package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/KimMachineGun/automemlimit/memlimit"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	versioncollector "github.com/prometheus/client_golang/prometheus/collectors/version"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/version"
	"github.com/prometheus/exporter-toolkit/web"

	"github.com/kubecause/kubecause/exporter/causes"
	"github.com/kubecause/kubecause/exporter/endpointcheck"
	"github.com/kubecause/kubecause/exporter/events"
	"github.com/kubecause/kubecause/exporter/kube"
	"github.com/kubecause/kubecause/exporter/pages"
)

// runExporter serves the telemetry path, /healthz, /readyz and the pages, and runs the Event
// watches and the endpoint checks, until SIGINT or SIGTERM.
func runExporter(o options, table *causes.Table, tableSource string, webFlags *web.FlagConfig, logger *slog.Logger) int {
	var checks *endpointcheck.Config
	if o.checksEnabled && o.checksFile != "" {
		c, err := endpointcheck.LoadConfig(o.checksFile)
		if err != nil {
			logger.Error("invalid endpoint check configuration", "file", o.checksFile, "err", err)
			return 1
		}
		checks = c
	}
	if webFlags.WebConfigFile != nil && *webFlags.WebConfigFile != "" {
		if err := web.Validate(*webFlags.WebConfigFile); err != nil {
			logger.Error("invalid web configuration", "file", *webFlags.WebConfigFile, "err", err)
			return 1
		}
	}
	client, restCfg, err := kube.ClientFor(o.kube)
	if err != nil {
		logger.Error("cannot configure the Kubernetes client", "err", err)
		return 1
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	defer ignoreHangup(logger)()

	var engine *events.Engine
	started := time.Now()
	engine = events.New(events.Config{
		Classifier:      table,
		MaxSeries:       o.events.MaxSeries,
		MaxObjectSeries: o.events.MaxObjectSeries,
		MaxTargets:      o.events.MaxTargets,
		NormalReasons:   o.events.NormalReasons,
		Logger:          logger,
		// Reading the initial lists is the peak of the run; once they are read, give the pages
		// back at once rather than over the next minutes (docs/performance.md).
		OnSynced: func() {
			go func() {
				debug.FreeOSMemory()
				logger.Info("initial Event lists read", "tracked_events", engine.Tracked(),
					"took", time.Since(started).Round(time.Millisecond))
			}()
		},
	})
	// Restored before the sources start; written every interval and at SIGTERM.
	snapshots := events.OpenSnapshots(engine, o.events.SnapshotFile, events.SnapshotIdentity(restCfg.Host), o.events.SnapshotInterval, logger)
	setGCPercent()
	if o.memLimit {
		setMemoryLimit(o.memLimitRatio, memlimit.FromCgroup, logger)
	}

	reg := prometheus.NewRegistry()
	reg.MustRegister(
		versioncollector.NewCollector("kubecause"),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	reg.MustRegister(engine.Collectors()...)
	reg.MustRegister(causes.NewCollector(table, tableSource, o.runbookPattern))
	guard := pages.NewGuard()
	reg.MustRegister(guard.Collector())
	auth := newAuthLimit()
	reg.MustRegister(auth.refused)

	selectors := o.events.Selectors()
	for _, ns := range o.events.Scopes() {
		for _, sel := range selectors {
			src := engine.NewSource(strings.TrimSpace(ns + " " + sel))
			go src.Watch(ctx, client, ns, sel, logger)
		}
	}
	go snapshots.Run(ctx)
	if o.checksEnabled {
		if err := startChecks(ctx, checks, client, o.kube.UserAgent, reg, logger); err != nil {
			logger.Error("cannot start endpoint checks", "err", err)
			return 1
		}
	}
	logger.Info("starting kubecause", "version", version.Info(), "build_context", version.BuildContext(),
		"causes_table", table.Version(), "causes_source", tableSource,
		"field_selectors", selectors, "namespaces", o.events.Namespaces)

	// The health listener is bound before the main one, so that a bad address ends the start at once.
	var health *http.Server
	errc := make(chan error, 1+max(1, len(*webFlags.WebListenAddresses)))
	if o.healthAddress != "" {
		ln, err := net.Listen("tcp", o.healthAddress)
		if err != nil {
			logger.Error("cannot listen on --web.health-listen-address", "address", o.healthAddress, "err", err)
			return 1
		}
		health = &http.Server{Handler: healthMux(engine.Synced), ReadHeaderTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
		logger.Info("serving /healthz and /readyz without TLS or authentication", "address", ln.Addr().String())
		go func() {
			if err := health.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
				errc <- fmt.Errorf("health listener: %w", err)
			}
		}()
	}

	mux := http.NewServeMux()
	mux.Handle(o.metricsPath, guard.Limit(pages.HandlerMetrics, o.maxRequests, metricsHandler(reg, engine, logger)))
	addHealthHandlers(mux, engine.Synced)
	// Runbooks and live problems (exporter/pages), under the path of --web.external-url.
	pageLinks := registerPages(mux, o.routePrefix, engine, table, o.runbookPattern, guard, o.maxPageRequests)
	if o.metricsPath != "/" {
		landing, err := web.NewLandingPage(web.LandingConfig{
			Name:        "kubecause",
			Description: "Why Kubernetes pods are stuck: cause-labelled Event metrics and istiod-remote endpoint checks",
			Version:     version.Info(),
			Profiling:   "false", // no /debug/pprof handlers are served
			Links: append([]web.LandingLinks{
				{Address: o.metricsPath, Text: "Metrics"},
				{Address: "/readyz", Text: "Readiness (initial Event list read)"},
				{Address: "/healthz", Text: "Liveness"},
			}, pageLinks...),
		})
		if err != nil {
			logger.Error("landing page", "err", err)
			return 1
		}
		mux.Handle("/", landing)
	}
	// WriteTimeout ends a response that a stalled reader does not take: the scrape fails visibly
	// (events.Handler aborts it) and holds nothing of kubecause's past it.
	listeners := auth.servers(func() *http.Server {
		return &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, WriteTimeout: o.writeTimeout, IdleTimeout: 2 * time.Minute}
	}, webFlags)
	for _, l := range listeners {
		go func() { errc <- web.ListenAndServe(l.srv, l.flags, logger) }()
	}
	select {
	case err := <-errc:
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("HTTP server failed", "err", err)
			return 1
		}
	case <-ctx.Done():
		logger.Info("shutting down")
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		for _, l := range listeners {
			_ = l.srv.Shutdown(sctx)
		}
		if health != nil {
			_ = health.Shutdown(sctx)
		}
		snapshots.Wait(10 * time.Second)
	}
	return 0
}

// metricsHandler serves the telemetry path. Without promhttp's Timeout: its http.TimeoutHandler
// answers a scraper that gives up at once and lets the gathering go on into a buffer that fails
// every write, so promhttp logged one error per family left (61 per scrape); the collectors read
// memory only, and --web.write-timeout bounds the response.
func metricsHandler(reg prometheus.Gatherer, engine *events.Engine, logger *slog.Logger) http.Handler {
	return events.Handler(reg, engine, promhttp.HandlerOpts{
		ErrorHandling: promhttp.ContinueOnError,
		ErrorLog:      slog.NewLogLogger(logger.Handler(), slog.LevelError),
	})
}

// addHealthHandlers registers /healthz (liveness: the process serves HTTP; it does not depend on
// the API server) and /readyz (200 once the initial list of Events is read).
func addHealthHandlers(mux *http.ServeMux, synced func() bool) {
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !synced() {
			http.Error(w, "initial list of Events not read yet\n", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
}

// healthMux is the handler of --web.health-listen-address: /healthz and /readyz, nothing else
// (every other path is 404), since that listener has neither TLS nor authentication.
func healthMux(synced func() bool) *http.ServeMux {
	mux := http.NewServeMux()
	addHealthHandlers(mux, synced)
	return mux
}

func startChecks(ctx context.Context, cfg *endpointcheck.Config, client kube.Client, userAgent string, reg *prometheus.Registry, logger *slog.Logger) error {
	if cfg == nil {
		cfg = &endpointcheck.Config{}
	}
	remote, err := cfg.RemoteClients(userAgent)
	if err != nil {
		return err
	}
	checker, err := endpointcheck.New(cfg, client, remote, logger.With("component", "endpoint-checks"))
	if err != nil {
		return err
	}
	reg.MustRegister(checker)
	go func() {
		if err := checker.Run(ctx); err != nil && ctx.Err() == nil {
			logger.Error("endpoint checks stopped", "err", err)
		}
	}()
	return nil
}
