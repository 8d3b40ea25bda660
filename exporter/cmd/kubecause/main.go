// Command kubecause exports cause-labelled metrics of Kubernetes Events and checks istiod-remote
// endpoints. See README.md and docs/.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/KimMachineGun/automemlimit/memlimit"
	"github.com/alecthomas/kingpin/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	versioncollector "github.com/prometheus/client_golang/prometheus/collectors/version"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/promslog"
	promslogflag "github.com/prometheus/common/promslog/flag"
	"github.com/prometheus/common/version"
	"github.com/prometheus/exporter-toolkit/web"
	webflag "github.com/prometheus/exporter-toolkit/web/kingpinflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/klog/v2"

	"github.com/kubecause/kubecause/exporter/causes"
	"github.com/kubecause/kubecause/exporter/endpointcheck"
	"github.com/kubecause/kubecause/exporter/events"
	"github.com/kubecause/kubecause/exporter/explain"
	"github.com/kubecause/kubecause/exporter/kube"
	kcweb "github.com/kubecause/kubecause/exporter/web"
)

// DefaultRunbookURLPattern points at the runbooks of this repository; %s is the runbook page.
const DefaultRunbookURLPattern = "https://github.com/kubecause/kubecause/blob/main/docs/runbooks/%s.md"

type options struct {
	kube            kube.Options
	namespaces      []string
	excluded        []string
	fieldSelector   string
	normalReasons   []string
	maxSeries       int
	maxObjectSeries int
	maxTargets      int
	causesFile      string
	checksFile      string
	checksEnabled   bool
	runbookPattern  string
	configCheck     bool
	metricsPath     string
	explainFile     string
	explainOutput   string
	explainUnknown  bool
	memLimit        bool
	memLimitRatio   float64
	writeTimeout    time.Duration
	maxRequests     int      // --web.max-requests
	maxPageRequests int      // --web.max-page-requests
	healthAddress   string   // --web.health-listen-address
	listenAddresses []string // --web.listen-address
	// --events.snapshot-file and --events.snapshot-interval (exporter/events/snapshot.go).
	snapshotFile     string
	snapshotInterval time.Duration

	// --web.external-url, its path, and whether --runbook.url-pattern was given (pages.go).
	externalURL       string
	routePrefix       string
	runbookPatternSet bool
}

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	var o options
	app := kingpin.New("kubecause", "Exports why Kubernetes pods are stuck: cause-labelled Event metrics and istiod-remote endpoint checks.")
	app.Version(version.Print("kubecause"))
	app.HelpFlag.Short('h')
	logCfg := &promslog.Config{}
	promslogflag.AddFlags(app, logCfg)

	app.Flag("kubeconfig", "Path to a kubeconfig file (default: the files in $KUBECONFIG, then ~/.kube/config, then the in-cluster service account).").StringVar(&o.kube.Kubeconfig)
	app.Flag("context", "Kubeconfig context to use.").StringVar(&o.kube.Context)
	app.Flag("events.field-selector", "Server-side field selector for Events.").Default("type=Warning").StringVar(&o.fieldSelector)
	app.Flag("events.normal-reason", "Also count Normal Events with this reason (repeatable). The kubelet reports SandboxChanged and image pull BackOff as Normal, the PV controller a claim without StorageClass (FailedBinding), the node controller and the kubelet node conditions (NodeNotReady, NodeNotSchedulable, NodeHas…Pressure).").Default("SandboxChanged", "BackOff", "FailedBinding", "NodeNotReady", "NodeNotSchedulable", "NodeHasDiskPressure", "NodeHasInsufficientMemory", "NodeHasInsufficientPID").StringsVar(&o.normalReasons)
	app.Flag("runbook.url-pattern", "Runbook URL pattern; %s is the runbook page.").Default(DefaultRunbookURLPattern).IsSetByUser(&o.runbookPatternSet).StringVar(&o.runbookPattern)
	app.Flag("web.external-url", "The URL under which users reach kubecause (e.g. through a proxy). Runbook URLs then point at the runbooks kubecause serves there, unless --runbook.url-pattern is given; its path is the prefix of /runbooks/ and /problems.").StringVar(&o.externalURL)
	app.Flag("auto-gomemlimit", "Set the Go memory limit (GOMEMLIMIT) to a share of the container's memory limit (cgroup), unless GOMEMLIMIT is set.").Default("true").BoolVar(&o.memLimit)
	app.Flag("auto-gomemlimit.ratio", "Share of the container's memory limit given to the Go memory limit, in (0, 1].").Default("0.9").FloatVar(&o.memLimitRatio)
	app.Flag("causes.file", "Cause table to use instead of the built-in one (docs/causes.md).").StringVar(&o.causesFile)

	// The exporter's flags are the application's own, so `kubecause --help` lists them and
	// `kubecause --web.listen-address=…` runs the exporter. The run command is kept (and is the
	// default) so that `kubecause run …` still works; explain has flags of its own.
	runCmd := app.Command("run", "Run the exporter (the default command; it takes the flags above).").Default()
	serve := app
	webFlags := webflag.AddFlags(serve, ":9737")
	serve.Flag("web.health-listen-address", "Address of a second, plain-HTTP listener serving only /healthz and /readyz, for probes that need no credentials when --web.config.file sets TLS or basic auth (e.g. :9738). Default: none.").PlaceHolder("HOST:PORT").StringVar(&o.healthAddress)
	serve.Flag("web.write-timeout", "Longest time to write a response (a scrape of /metrics included); a scrape not read within it is aborted.").Default("1m").DurationVar(&o.writeTimeout)
	serve.Flag("web.max-requests", "Most responses of the telemetry path served at once; a scrape past it is refused with 503 (kubecause_http_requests_refused_total).").Default("40").IntVar(&o.maxRequests)
	serve.Flag("web.max-page-requests", "Most responses of /problems and /runbooks/ served at once; a request past it is refused with 503 (kubecause_http_requests_refused_total).").Default("8").IntVar(&o.maxPageRequests)
	serve.Flag("web.telemetry-path", "Path under which to expose metrics.").Default("/metrics").StringVar(&o.metricsPath)
	serve.Flag("events.namespace", "Watch only this namespace (repeatable; default: all namespaces).").StringsVar(&o.namespaces)
	serve.Flag("events.exclude-namespace", "Do not watch this namespace (repeatable).").StringsVar(&o.excluded)
	serve.Flag("events.max-series", "Cap on label sets of kubecause_events_total and kubecause_objects_affected_total.").Default("10000").IntVar(&o.maxSeries)
	serve.Flag("object-view.max-series", "Cap on series of the per-object view (kubecause_object_events).").Default("10000").IntVar(&o.maxObjectSeries)
	serve.Flag("object-view.max-targets", "Cap on distinct values of the target label of the per-object view; past it, target=\"_overflow\".").Default("1000").IntVar(&o.maxTargets)
	serve.Flag("events.snapshot-file", "File in which to keep the counting state (each live Event's last counted count, the counters) across restarts, so that occurrences while kubecause is away are counted (docs/metrics.md); on a volume that survives a container restart (the chart's emptyDir). Default: none, a restart takes the live Events as a baseline.").PlaceHolder("PATH").StringVar(&o.snapshotFile)
	serve.Flag("events.snapshot-interval", "How often to write --events.snapshot-file (and at SIGTERM).").Default("30s").DurationVar(&o.snapshotInterval)
	serve.Flag("endpoint-checks.config", "Endpoint check configuration (docs/istiod-remote.md); default: discover the istiod-remote layout.").StringVar(&o.checksFile)
	serve.Flag("endpoint-checks.enabled", "Run endpoint checks.").Default("true").BoolVar(&o.checksEnabled)
	serve.Flag("config.check", "Validate the configuration files and exit.").BoolVar(&o.configCheck)

	ex := app.Command("explain", "Explain Events offline: one row per Event with its cause and runbook.")
	ex.Flag("file", "File with `kubectl get events -A -o json` output; - for stdin. Without it, the live cluster is read.").Short('f').StringVar(&o.explainFile)
	ex.Flag("output", "Output format: table or json.").Short('o').Default("table").EnumVar(&o.explainOutput, "table", "json")
	ex.Flag("unclassified", "Instead of one row per Event, list the templates of the messages no rule classifies (names, UIDs, IPs, numbers, quoted strings and paths masked), most frequent first: what to write a rule for (docs/causes.md).").BoolVar(&o.explainUnknown)
	ex.Flag("namespace", "Live cluster: only this namespace.").Short('n').StringsVar(&o.namespaces)

	cmd, err := app.Parse(stdinArgs(args))
	if err != nil {
		fmt.Fprintf(os.Stderr, "kubecause: %v (try --help)\n", err)
		return 2
	}
	o.listenAddresses = *webFlags.WebListenAddresses
	prefix, urlErr := externalURL(&o)
	o.routePrefix = prefix
	if err := errors.Join(urlErr, validateFlags(o, cmd == runCmd.FullCommand())); err != nil {
		fmt.Fprintf(os.Stderr, "kubecause: invalid flags:\n%v\n", err)
		return 2
	}
	logger := promslog.New(logCfg)
	klog.SetSlogLogger(logger.With("component", "client-go"))
	o.kube.UserAgent = "kubecause/" + version.Version

	table, tableSource, err := loadTable(o.causesFile)
	if err != nil {
		logger.Error("invalid cause table", "err", err)
		return 1
	}
	switch cmd {
	case ex.FullCommand():
		return runExplain(o, table)
	}
	if o.configCheck {
		return checkConfig(o, *webFlags.WebConfigFile, logger)
	}
	return runExporter(o, table, tableSource, webFlags, logger)
}

// stdinArgs spells `-f -` as `--file=-`: the flag parser reads a lone "-" as an empty value, and
// explain would then read the live cluster instead of standard input.
func stdinArgs(args []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		if args[i] == "--" {
			return append(out, args[i:]...)
		}
		if (args[i] == "-f" || args[i] == "--file") && i+1 < len(args) && args[i+1] == "-" {
			out = append(out, "--file=-")
			i++
			continue
		}
		out = append(out, args[i])
	}
	return out
}

// maxInFlight bounds --web.max-requests and --web.max-page-requests: a stalled reader of /metrics
// holds up to ~1 MiB (a gzip compressor and a piece of the response, docs/performance.md), so
// 1,000 of them would take several times the chart's memory limit.
const maxInFlight = 200

// reservedPaths are served by kubecause itself and cannot be the telemetry path.
var reservedPaths = []string{"/healthz", "/readyz"}

// validateFlags checks every flag value that the flag parser lets through, before anything starts
// (in --config.check too), and reports all problems at once.
// Flags of the run command are checked only for it (serving).
func validateFlags(o options, serving bool) error {
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if o.memLimitRatio <= 0 || o.memLimitRatio > 1 {
		fail("--auto-gomemlimit.ratio must be in (0, 1], not %g", o.memLimitRatio)
	}
	if serving {
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
		if o.maxSeries < 1 {
			fail("--events.max-series must be at least 1, not %d", o.maxSeries)
		}
		if o.maxObjectSeries < 1 {
			fail("--object-view.max-series must be at least 1, not %d", o.maxObjectSeries)
		}
		if o.maxTargets < 1 {
			fail("--object-view.max-targets must be at least 1, not %d", o.maxTargets)
		}
		if o.snapshotInterval < time.Second {
			fail("--events.snapshot-interval must be at least 1s, not %s", o.snapshotInterval)
		}
		if o.healthAddress != "" {
			if err := healthAddress(o.healthAddress, o.listenAddresses); err != nil {
				fail("--web.health-listen-address %q: %v", o.healthAddress, err)
			}
		}
	}
	if !utf8.ValidString(o.runbookPattern) {
		fail("--runbook.url-pattern %q is not valid UTF-8", o.runbookPattern)
	} else if o.runbookPattern != "" {
		if u, err := url.Parse(strings.Replace(o.runbookPattern, "%s", "page", 1)); err != nil || !u.IsAbs() {
			fail("--runbook.url-pattern %q is not an absolute URL (with %%s for the runbook page)", o.runbookPattern)
		}
	}
	for _, ns := range append(append([]string(nil), o.namespaces...), o.excluded...) {
		if msgs := validation.IsDNS1123Label(ns); len(msgs) > 0 {
			fail("namespace %q (--events.namespace, --events.exclude-namespace, --namespace): %s", ns, strings.Join(msgs, "; "))
		}
	}
	for _, r := range o.normalReasons {
		if r == "" || strings.ContainsFunc(r, func(c rune) bool {
			return c == ',' || c == '=' || c == '!' || c == '\\' || !unicode.IsGraphic(c) || c == ' '
		}) {
			fail("--events.normal-reason %q: a reason is a word without commas, '=', '!', '\\' or spaces", r)
		}
	}
	// Selectors the apiserver would refuse are a configuration error, not something to retry forever.
	for _, sel := range events.WatchSelectors(o.fieldSelector, o.normalReasons, o.excluded) {
		if err := events.CheckSelector(sel); err != nil {
			fail("Event field selector %q (from --events.field-selector, --events.normal-reason, --events.exclude-namespace): %v", sel, err)
		}
	}
	return errors.Join(errs...)
}

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
	for _, page := range kcweb.Paths {
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

func loadTable(path string) (*causes.Table, string, error) {
	if path == "" {
		return causes.Default(), "builtin", nil
	}
	t, err := causes.Load(path)
	return t, path, err
}

// checkConfig validates every configuration file without starting (like `promtool check config`).
func checkConfig(o options, webConfig string, logger *slog.Logger) int {
	ok := true
	if o.checksFile != "" {
		if err := endpointcheck.CheckConfigFile(o.checksFile); err != nil {
			logger.Error("invalid endpoint check configuration", "file", o.checksFile, "err", err)
			ok = false
		}
	}
	if webConfig != "" {
		if err := web.Validate(webConfig); err != nil {
			logger.Error("invalid web configuration", "file", webConfig, "err", err)
			ok = false
		}
	}
	if !ok {
		return 1
	}
	logger.Info("configuration is valid", "causes_file", o.causesFile, "endpoint_checks_config", o.checksFile, "web_config", webConfig)
	return 0
}

func runExplain(o options, table *causes.Table) int {
	var evs []corev1.Event
	var err error
	switch o.explainFile {
	case "":
		evs, err = listLive(o)
	case "-":
		evs, err = explain.Decode(os.Stdin)
	default:
		f, ferr := os.Open(o.explainFile)
		if ferr != nil {
			fmt.Fprintf(os.Stderr, "kubecause explain: %v\n", ferr)
			return 1
		}
		defer f.Close()
		evs, err = explain.Decode(f)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "kubecause explain: %v\n", err)
		return 1
	}
	rows := explain.Explain(evs, table, o.runbookPattern)
	if o.explainUnknown {
		err = explain.PrintUnclassified(os.Stdout, explain.Unclassified(rows), o.explainOutput)
	} else {
		err = explain.Print(os.Stdout, rows, o.explainOutput)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "kubecause explain: %v\n", err)
		return 1
	}
	return 0
}

func listLive(o options) ([]corev1.Event, error) {
	client, _, err := kube.ClientFor(o.kube)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	namespaces := o.namespaces
	if len(namespaces) == 0 {
		namespaces = []string{""}
	}
	var all []corev1.Event
	for _, ns := range namespaces {
		for _, sel := range events.WatchSelectors(o.fieldSelector, o.normalReasons, nil) {
			evs, err := explain.List(ctx, client, ns, sel)
			if err != nil {
				return nil, err
			}
			all = append(all, evs...)
		}
	}
	return all, nil
}

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
		MaxSeries:       o.maxSeries,
		MaxObjectSeries: o.maxObjectSeries,
		MaxTargets:      o.maxTargets,
		NormalReasons:   o.normalReasons,
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
	snapshots := events.OpenSnapshots(engine, o.snapshotFile, events.SnapshotIdentity(restCfg.Host), o.snapshotInterval, logger)
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
	guard := kcweb.NewGuard()
	reg.MustRegister(guard.Collector())

	namespaces := o.namespaces
	if len(namespaces) == 0 {
		namespaces = []string{""} // all
	}
	selectors := events.WatchSelectors(o.fieldSelector, o.normalReasons, o.excluded)
	for _, ns := range namespaces {
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
		"field_selectors", selectors, "namespaces", o.namespaces)

	// The health listener is bound before the main one, so that a bad address ends the start at once.
	var health *http.Server
	errc := make(chan error, 2)
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
	mux.Handle(o.metricsPath, guard.Limit(kcweb.HandlerMetrics, o.maxRequests, events.Handler(reg, engine, promhttp.HandlerOpts{
		ErrorHandling: promhttp.ContinueOnError,
		ErrorLog:      slog.NewLogLogger(logger.Handler(), slog.LevelError),
		Timeout:       30 * time.Second,
	})))
	addHealthHandlers(mux, engine.Synced)
	// Runbooks and live problems (exporter/web), under the path of --web.external-url.
	pages := registerPages(mux, o.routePrefix, engine, table, o.runbookPattern, guard, o.maxPageRequests)
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
			}, pages...),
		})
		if err != nil {
			logger.Error("landing page", "err", err)
			return 1
		}
		mux.Handle("/", landing)
	}
	// WriteTimeout ends a response that a stalled reader does not take: the scrape fails visibly
	// (events.Handler aborts it) and holds nothing of kubecause's past it.
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, WriteTimeout: o.writeTimeout, IdleTimeout: 2 * time.Minute}
	go func() { errc <- web.ListenAndServe(srv, webFlags, logger) }()
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
		_ = srv.Shutdown(sctx)
		if health != nil {
			_ = health.Shutdown(sctx)
		}
		snapshots.Wait(10 * time.Second)
	}
	return 0
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

// setMemoryLimit sets the Go memory limit to ratio × the limit the provider reports (the
// container's cgroup limit), as Prometheus does with --auto-gomemlimit: near the container's
// limit the GC works harder instead of letting the process be OOM-killed — at a restart during
// an event storm, say. A GOMEMLIMIT set by the user, or no limit at all, leaves it alone; the
// library's AUTOMEMLIMIT variable (a ratio, or "off") overrides the ratio.
// It returns the limit set (0 when none).
func setMemoryLimit(ratio float64, provider memlimit.Provider, logger *slog.Logger) int64 {
	limit, err := memlimit.Set(memlimit.WithRatio(ratio), memlimit.WithProvider(provider),
		memlimit.WithLogger(logger.With("component", "automemlimit")))
	if err != nil {
		logger.Warn("could not set the Go memory limit from the container's", "err", err)
		return 0
	}
	// Set reports the limit in force even when it set none: with GOMEMLIMIT or AUTOMEMLIMIT=off
	// in the environment it leaves the limit alone, and a provider without a limit (no cgroup
	// limit) gives math.MaxInt64, Go's default of no limit.
	if _, userSet := os.LookupEnv("GOMEMLIMIT"); userSet || os.Getenv("AUTOMEMLIMIT") == "off" || limit == math.MaxInt64 {
		return 0
	}
	return limit
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
