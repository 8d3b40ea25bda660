// Command kubecause exports cause-labelled metrics of Kubernetes Events and checks istiod-remote
// endpoints. See README.md and docs/.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/alecthomas/kingpin/v2"
	"github.com/prometheus/common/promslog"
	promslogflag "github.com/prometheus/common/promslog/flag"
	"github.com/prometheus/common/version"
	"github.com/prometheus/exporter-toolkit/web"
	webflag "github.com/prometheus/exporter-toolkit/web/kingpinflag"
	"k8s.io/klog/v2"

	"github.com/kubecause/kubecause/exporter/causes"
	_ "github.com/kubecause/kubecause/exporter/cmd/kubecause/hangup" // SIGHUP ignored from the start
	"github.com/kubecause/kubecause/exporter/endpointcheck"
	"github.com/kubecause/kubecause/exporter/events"
	"github.com/kubecause/kubecause/exporter/explain"
	"github.com/kubecause/kubecause/exporter/kube"
)

// DefaultRunbookURLPattern points at the runbooks of this repository; %s is the runbook page.
const DefaultRunbookURLPattern = "https://github.com/kubecause/kubecause/blob/main/docs/runbooks/%s.md"

type options struct {
	kube            kube.Options
	events          events.Options
	causesFile      string
	checksFile      string
	checksEnabled   bool
	runbookPattern  string
	configCheck     bool
	metricsPath     string
	explain         explain.Options
	memLimit        bool
	memLimitRatio   float64
	writeTimeout    time.Duration
	maxRequests     int      // --web.max-requests
	maxPageRequests int      // --web.max-page-requests
	healthAddress   string   // --web.health-listen-address
	listenAddresses []string // --web.listen-address

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
	app.Flag("events.field-selector", "Server-side field selector of the Event watch. The default is one watch of every Event but the Normal reasons written at every pod start, scale and attach; type=Warning is one watch for Warnings and one per --events.normal-reason (each a watch that etcd and kube-apiserver pay at every write).").Default(events.DefaultFieldSelector).StringVar(&o.events.FieldSelector)
	app.Flag("events.normal-reason", "Also count Normal Events with this reason (repeatable). The kubelet reports SandboxChanged and image pull BackOff as Normal, the PV controller a claim without StorageClass (FailedBinding), the node controller and the kubelet node conditions (NodeNotReady, NodeNotSchedulable, NodeHas…Pressure).").Default(events.DefaultNormalReasons...).StringsVar(&o.events.NormalReasons)
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
	serve.Flag("events.namespace", "Watch only this namespace (repeatable; default: all namespaces).").StringsVar(&o.events.Namespaces)
	serve.Flag("events.exclude-namespace", "Do not watch this namespace (repeatable).").StringsVar(&o.events.ExcludedNamespaces)
	serve.Flag("events.max-series", "Cap on label sets of kubecause_events_total and kubecause_objects_affected_total.").Default("10000").IntVar(&o.events.MaxSeries)
	serve.Flag("object-view.max-series", "Cap on series of the per-object view (kubecause_object_events).").Default("10000").IntVar(&o.events.MaxObjectSeries)
	serve.Flag("object-view.max-targets", "Cap on distinct values of the target label of the per-object view; past it, target=\"_overflow\".").Default("1000").IntVar(&o.events.MaxTargets)
	serve.Flag("events.snapshot-file", "File in which to keep the counting state (each live Event's last counted count, the counters) across restarts, so that occurrences while kubecause is away are counted (docs/metrics.md); on a volume that survives a container restart (the chart's emptyDir). Default: none, a restart takes the live Events as a baseline.").PlaceHolder("PATH").StringVar(&o.events.SnapshotFile)
	serve.Flag("events.snapshot-interval", "How often to write --events.snapshot-file (and at SIGTERM).").Default("30s").DurationVar(&o.events.SnapshotInterval)
	serve.Flag("endpoint-checks.config", "Endpoint check configuration (docs/istiod-remote.md); default: discover the istiod-remote layout.").StringVar(&o.checksFile)
	serve.Flag("endpoint-checks.enabled", "Run endpoint checks.").Default("true").BoolVar(&o.checksEnabled)
	serve.Flag("config.check", "Validate the configuration files and exit.").BoolVar(&o.configCheck)

	ex := explain.AddCommand(app, &o.explain, &o.events.Namespaces)

	cmd, err := app.Parse(explain.Args(args))
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
		o.explain.Kube, o.explain.Events, o.explain.RunbookPattern = o.kube, o.events, o.runbookPattern
		if err := explain.Run(context.Background(), o.explain, table, os.Stdin, os.Stdout); err != nil {
			fmt.Fprintf(os.Stderr, "kubecause explain: %v\n", err)
			return 1
		}
		return 0
	}
	if o.configCheck {
		return checkConfig(o, *webFlags.WebConfigFile, logger)
	}
	return runExporter(o, table, tableSource, webFlags, logger)
}

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
		errs = append(errs, validateWeb(o)...)
	}
	if !utf8.ValidString(o.runbookPattern) {
		fail("--runbook.url-pattern %q is not valid UTF-8", o.runbookPattern)
	} else if o.runbookPattern != "" {
		if u, err := url.Parse(strings.Replace(o.runbookPattern, "%s", "page", 1)); err != nil || !u.IsAbs() {
			fail("--runbook.url-pattern %q is not an absolute URL (with %%s for the runbook page)", o.runbookPattern)
		}
	}
	// The Event watch's options check themselves: the engine's caps only for serving.
	if serving {
		errs = append(errs, o.events.Validate())
	} else {
		errs = append(errs, o.events.ValidateSelection())
	}
	return errors.Join(errs...)
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
