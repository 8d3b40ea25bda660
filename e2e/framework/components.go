package framework

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"sigs.k8s.io/yaml"
)

// KSMResources are the kube-state-metrics resources the mixin reads.
const KSMResources = "pods,persistentvolumeclaims,services,endpoints,nodes,replicasets,deployments,daemonsets,statefulsets,jobs,cronjobs"

// Component is a started child process with the address it serves on.
type Component struct {
	*Process
	Addr string // host:port
	hold net.Listener
}

// StopHoldingPort stops the component for an outage and keeps its address bound until it is
// restarted: make test runs several e2e processes at once, and a port left free could be taken
// by another test's server, which Prometheus would then scrape as this one come back. A
// connection to the held port is closed at once, so a scrape fails as against a stopped server.
func (c *Component) StopHoldingPort() error {
	if err := c.Stop(); err != nil {
		return err
	}
	l, err := holdPort(c.Addr)
	if err != nil {
		return fmt.Errorf("holding %s while %s is stopped: %w", c.Addr, c.Name, err)
	}
	c.hold = l
	return nil
}

// holdPort binds addr and closes every connection to it at once, until the listener is closed.
func holdPort(addr string) (net.Listener, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			_ = conn.Close()
		}
	}()
	return l, nil
}

// release lets go of a port held by StopHoldingPort.
func (c *Component) release() {
	if c.hold != nil {
		_ = c.hold.Close()
		c.hold = nil
	}
}

// URL is http://Addr + path.
func (c *Component) URL(path string) string { return "http://" + c.Addr + path }

// StartKubeStateMetrics runs kube-state-metrics against kubeconfig on 127.0.0.1.
func StartKubeStateMetrics(bin, kubeconfig, logDir string) (*Component, error) {
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	tport, err := FreePort()
	if err != nil {
		return nil, err
	}
	p := NewProcess("kube-state-metrics", logDir, bin,
		"--host=127.0.0.1", fmt.Sprintf("--port=%d", port),
		"--telemetry-host=127.0.0.1", fmt.Sprintf("--telemetry-port=%d", tport),
		"--kubeconfig="+kubeconfig, "--resources="+KSMResources)
	c := &Component{Process: p, Addr: fmt.Sprintf("127.0.0.1:%d", port)}
	if err := RestartKubeStateMetrics(c); err != nil {
		return nil, err
	}
	return c, nil
}

// RestartKubeStateMetrics starts the (stopped) kube-state-metrics again on the same address and
// waits until it serves /metrics, which it does once its informers have synced.
func RestartKubeStateMetrics(c *Component) error {
	c.release()
	if err := c.Start(); err != nil {
		return err
	}
	if err := WaitHTTP(c.URL("/metrics"), 60*time.Second, c.Process); err != nil {
		_ = c.Stop()
		return err
	}
	return nil
}

// Kubecause is one kubecause replica.
type Kubecause struct {
	Component
}

// StartKubecause runs the kubecause binary against kubeconfig and waits for /readyz.
// name distinguishes replicas in log file names ("kubecause", "kubecause-1", …).
func StartKubecause(bin, kubeconfig, logDir, name string, extraArgs ...string) (*Kubecause, error) {
	addr, err := FreeAddr()
	if err != nil {
		return nil, err
	}
	return StartKubecauseOn(addr, bin, kubeconfig, logDir, name, extraArgs...)
}

// StartKubecauseOn starts kubecause listening on addr and waits until it is ready.
func StartKubecauseOn(addr, bin, kubeconfig, logDir, name string, extraArgs ...string) (*Kubecause, error) {
	k := NewKubecauseOn(addr, bin, kubeconfig, logDir, name, extraArgs...)
	if err := k.Restart(); err != nil {
		return nil, err
	}
	return k, nil
}

// NewKubecauseOn describes a kubecause replica listening on addr without starting it (Restart
// starts it).
func NewKubecauseOn(addr, bin, kubeconfig, logDir, name string, extraArgs ...string) *Kubecause {
	args := append([]string{"--web.listen-address=" + addr, "--kubeconfig=" + kubeconfig, "--log.level=debug"}, extraArgs...)
	return &Kubecause{Component{Process: NewProcess(name, logDir, bin, args...), Addr: addr}}
}

// Restart starts the (stopped) process again on the same address and waits for /readyz.
func (k *Kubecause) Restart() error {
	if err := k.Start(); err != nil {
		return err
	}
	if err := WaitHTTP(k.URL("/readyz"), 60*time.Second, k.Process); err != nil {
		_ = k.Stop()
		return err
	}
	return nil
}

// Metrics scrapes kubecause's /metrics and parses it.
func (k *Kubecause) Metrics() (map[string]*dto.MetricFamily, error) {
	return ScrapeMetrics(k.URL("/metrics"))
}

// ScrapeMetrics fetches a Prometheus text exposition and parses it.
func ScrapeMetrics(url string) (map[string]*dto.MetricFamily, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	return p.TextToMetricFamilies(resp.Body)
}

// MetricValue sums the samples of family name whose labels include every pair of match
// (counter, gauge or untyped). found is false when no sample matches.
func MetricValue(fams map[string]*dto.MetricFamily, name string, match map[string]string) (v float64, found bool) {
	f, ok := fams[name]
	if !ok {
		return 0, false
	}
next:
	for _, m := range f.GetMetric() {
		labels := map[string]string{}
		for _, lp := range m.GetLabel() {
			labels[lp.GetName()] = lp.GetValue()
		}
		for k, want := range match {
			if labels[k] != want {
				continue next
			}
		}
		found = true
		switch {
		case m.Counter != nil:
			v += m.GetCounter().GetValue()
		case m.Gauge != nil:
			v += m.GetGauge().GetValue()
		case m.Untyped != nil:
			v += m.GetUntyped().GetValue()
		}
	}
	return v, found
}

// PrometheusConfig is what StartPrometheus generates.
type PrometheusConfig struct {
	KubecauseTargets []string // host:port of each replica
	KSMTarget        string
	Alertmanager     string   // host:port
	RuleFiles        []string // rule files as loaded
	// Cluster is set as the `cluster` target label on every scraped series (the mixin's
	// clusterLabel), as a multi-cluster setup's relabelling would; empty: no such label.
	Cluster string
	// ResendDelay is how often Prometheus sends an unchanged firing alert again (0: 1 s). An
	// alert is valid at Alertmanager for 4 times that (the 1 s evaluation interval being
	// shorter): an evaluation stall longer than that resolves every alert there.
	ResendDelay time.Duration
}

// Prometheus is a running Prometheus with its HTTP API client.
type Prometheus struct {
	Component
	API *PromAPI
}

// Prometheus3Bin is the Prometheus 3 server: $PROMETHEUS3_BIN, else what
// hack/deps/22-prometheus3.sh built ($KUBECAUSE_CACHE/bin/prometheus3).
func Prometheus3Bin() (string, error) {
	if b := firstExecutable(os.Getenv("PROMETHEUS3_BIN"), filepath.Join(CacheDir(), "bin", "prometheus3")); b != "" {
		return b, nil
	}
	return "", errors.New("missing binary prometheus3 (Prometheus 3): run hack/deps/22-prometheus3.sh (make deps) or set PROMETHEUS3_BIN")
}

// StartPrometheus writes prometheus.yml (1 s scrape and evaluation interval) and starts
// Prometheus on listen ("" = a free port). name names its directory under workDir and its log.
func StartPrometheus(name, bin, workDir, logDir, listen string, cfg PrometheusConfig) (*Prometheus, error) {
	if listen == "" {
		var err error
		if listen, err = FreeAddr(); err != nil {
			return nil, err
		}
	}
	dir := filepath.Join(workDir, name)
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		return nil, err
	}
	var b strings.Builder
	b.WriteString("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n")
	if len(cfg.RuleFiles) > 0 {
		b.WriteString("rule_files:\n")
		for _, f := range cfg.RuleFiles {
			fmt.Fprintf(&b, "  - %q\n", f)
		}
	}
	if cfg.Alertmanager != "" {
		fmt.Fprintf(&b, "alerting:\n  alertmanagers:\n    - static_configs:\n        - targets: [%q]\n", cfg.Alertmanager)
	}
	b.WriteString("scrape_configs:\n")
	labels := ""
	if cfg.Cluster != "" {
		labels = fmt.Sprintf("        labels: {cluster: %q}\n", cfg.Cluster)
	}
	if len(cfg.KubecauseTargets) > 0 {
		b.WriteString("  - job_name: kubecause\n    static_configs:\n      - targets:\n")
		for _, t := range cfg.KubecauseTargets {
			fmt.Fprintf(&b, "          - %q\n", t)
		}
		b.WriteString(labels)
	}
	if cfg.KSMTarget != "" {
		// honor_labels keeps the namespace/pod labels of the objects kube-state-metrics reports.
		fmt.Fprintf(&b, "  - job_name: kube-state-metrics\n    honor_labels: true\n    static_configs:\n      - targets: [%q]\n%s", cfg.KSMTarget, labels)
	}
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, []byte(b.String()), 0o644); err != nil {
		return nil, err
	}
	resend := cfg.ResendDelay
	if resend <= 0 {
		resend = time.Second
	}
	p := NewProcess(name, logDir, bin,
		"--config.file="+cfgPath,
		"--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+listen,
		"--rules.alert.resend-delay="+model.Duration(resend).String(),
		"--web.enable-lifecycle",
		"--log.level=info")
	pr := &Prometheus{Component: Component{Process: p, Addr: listen}, API: &PromAPI{Base: "http://" + listen}}
	if err := p.Start(); err != nil {
		return nil, err
	}
	if err := WaitHTTP(pr.URL("/-/ready"), 60*time.Second, p); err != nil {
		_ = p.Stop()
		return nil, err
	}
	return pr, nil
}

// Version is the server's version (/api/v1/status/buildinfo), e.g. "2.42.0" or "3.15.0".
func (p *Prometheus) Version() (string, error) {
	resp, err := http.Get(p.URL("/api/v1/status/buildinfo"))
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var body struct {
		Data struct {
			Version string `json:"version"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return "", fmt.Errorf("buildinfo: %w", err)
	}
	return body.Data.Version, nil
}

// StartAlertmanager starts Alertmanager on listen ("" = a free port), routing every alert to
// webhookURL with resolved notifications, grouping per alert so each one is delivered at once.
// inhibitRules, when not empty, is a YAML document with a top-level inhibit_rules key (the
// mixin's rules/alertmanager/inhibit-rules.yaml) appended to the configuration. name names its
// directory under workDir and its log.
func StartAlertmanager(name, bin, workDir, logDir, listen, webhookURL string, inhibitRules []byte) (*Component, error) {
	cfg := fmt.Sprintf(`route:
  receiver: webhook
  group_by: ['...']
  group_wait: 1s
  group_interval: 1s
  repeat_interval: 4h
receivers:
  - name: webhook
    webhook_configs:
      - url: %q
        send_resolved: true
`, webhookURL) + string(inhibitRules)
	return StartAlertmanagerConfig(name, bin, workDir, logDir, listen, []byte(cfg))
}

// ShippedRouteTimers are the timers the e2e Alertmanager gives the shipped route
// (ShippedAlertmanagerConfig) instead of its 30s / 5m / 4h: the first notification of a group
// 10 s after its first alert (long enough for an incident whose `for` is shorter than its pods'
// alerts to arrive and mute them, as 30s is in production), changes of a group notified every
// 10 s, and the repeat of an unchanged group kept at 4h, longer than any test, so that a
// second notification of a group is a change, never a reminder.
var ShippedRouteTimers = map[string]string{"group_wait": "10s", "group_interval": "10s", "repeat_interval": "4h"}

// ShippedAlertmanagerConfig is the mixin's generated rules/alertmanager/alertmanager.yml (route,
// grouping, sub-routes, inhibition rules) as shipped, with two changes: its receivers deliver to
// webhookURL (with resolved notifications), and the route's timers, wherever set, are replaced
// by timers (group_wait, group_interval, repeat_interval).
func ShippedAlertmanagerConfig(root, webhookURL string, timers map[string]string) ([]byte, error) {
	path := filepath.Join(root, "rules", "alertmanager", "alertmanager.yml")
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	receivers, _ := doc["receivers"].([]any)
	if len(receivers) == 0 {
		return nil, fmt.Errorf("%s: no receiver", path)
	}
	for _, r := range receivers {
		rm, ok := r.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: receiver %v is not a map", path, r)
		}
		rm["webhook_configs"] = []any{map[string]any{"url": webhookURL, "send_resolved": true}}
	}
	route, ok := doc["route"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: no route", path)
	}
	var setTimers func(r map[string]any, top bool)
	setTimers = func(r map[string]any, top bool) {
		for k, v := range timers {
			if _, set := r[k]; set || top {
				r[k] = v
			}
		}
		subs, _ := r["routes"].([]any)
		for _, sub := range subs {
			if sm, ok := sub.(map[string]any); ok {
				setTimers(sm, false)
			}
		}
	}
	setTimers(route, true)
	return yaml.Marshal(doc)
}

// StartAlertmanagerConfig starts Alertmanager with the configuration cfg on listen ("" = a free
// port). name names its directory under workDir and its log.
func StartAlertmanagerConfig(name, bin, workDir, logDir, listen string, cfg []byte) (*Component, error) {
	if listen == "" {
		var err error
		if listen, err = FreeAddr(); err != nil {
			return nil, err
		}
	}
	dir := filepath.Join(workDir, name)
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		return nil, err
	}
	cfgPath := filepath.Join(dir, "alertmanager.yml")
	if err := os.WriteFile(cfgPath, cfg, 0o644); err != nil {
		return nil, err
	}
	p := NewProcess(name, logDir, bin,
		"--config.file="+cfgPath,
		"--storage.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+listen,
		"--cluster.listen-address=",
		"--log.level=info")
	c := &Component{Process: p, Addr: listen}
	if err := p.Start(); err != nil {
		return nil, err
	}
	if err := WaitHTTP(c.URL("/-/ready"), 60*time.Second, p); err != nil {
		_ = p.Stop()
		return nil, err
	}
	return c, nil
}
