package framework

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
)

// StackOptions configure StartStack.
type StackOptions struct {
	// WorkDir holds data and logs (required).
	WorkDir string
	// Namespaces are created after the apiserver starts (no controller would).
	Namespaces []string
	// APIServerArgs are extra kube-apiserver flags.
	APIServerArgs map[string]string
	// KubecauseArgs are extra kubecause flags; KubecauseReplicas (default 1; negative: none)
	// replicas run.
	KubecauseArgs     []string
	KubecauseReplicas int
	// KubecauseReplicaArgs[i] are extra flags of replica i only, after KubecauseArgs: two
	// replicas on different cause tables (--causes.file), as during a rolling upgrade.
	KubecauseReplicaArgs [][]string
	// KubecauseDeferred replicas, the last ones, get their address and scrape target but are
	// not started: the test starts them (Kubecause.Restart), as a rollout's new pods.
	KubecauseDeferred int
	// KubecauseRules, when set, are all kubecause may do (cluster-wide): it runs as its own user
	// instead of as the cluster's administrator.
	KubecauseRules []rbacv1.PolicyRule
	// RuleFiles are loaded by Prometheus; nil means the mixin's rules/generated/*.yaml.
	RuleFiles []string
	// MaxFor caps the alerts' `for` in the loaded rule copies (0: 5 s; negative: unchanged).
	MaxFor time.Duration
	// AlertFor sets the `for` of the named alerts in the loaded copies, after MaxFor.
	AlertFor map[string]time.Duration
	// AlertResendDelay is Prometheus' --rules.alert.resend-delay (0: 1 s); Alertmanager holds
	// a firing alert 4 times that long without news of it.
	AlertResendDelay time.Duration
	// PrometheusListen, AlertmanagerListen and KubecauseListen (the first replica) are
	// host:port ("" = free 127.0.0.1 ports).
	PrometheusListen   string
	AlertmanagerListen string
	KubecauseListen    string
	// ServeRunbooks points the alerts' runbook links at the runbooks the first kubecause replica
	// serves (--web.external-url), as an air-gapped install does, instead of the public
	// repository.
	ServeRunbooks bool
	// Cluster is the `cluster` label Prometheus adds to every scraped series ("" = "e2e").
	Cluster string
	// Prometheus3 adds a second alerting chain beside the Debian Prometheus 2: Prometheus 3
	// (hack/deps/22-prometheus3.sh) with its own Alertmanager and webhook receiver, scraping the
	// same targets and evaluating the same rule files. Stack.Pagers lists both chains.
	Prometheus3 bool
	// InhibitRules loads the mixin's inhibition rules (rules/alertmanager/inhibit-rules.yaml)
	// into every Alertmanager, as docs/alerts.md tells users to.
	InhibitRules bool
	// ShippedRoute runs every Alertmanager on the shipped rules/alertmanager/alertmanager.yml
	// (its route, grouping and inhibition rules; ShippedAlertmanagerConfig), the receiver
	// delivering to the webhook and the timers ShippedRouteTimers, instead of a route that
	// delivers every alert alone within a second. InhibitRules is then redundant.
	ShippedRoute bool
	// RealNode adds kube-controller-manager, kube-scheduler and one real node (containerd,
	// runc, CNI bridge, kubelet) with the test images imported, so Kubernetes writes the Events.
	RealNode bool
	// Logf reports progress (nil: silent).
	Logf func(format string, args ...any)
}

// Stack is the whole chain: apiserver+etcd, kube-state-metrics, kubecause, Prometheus,
// Alertmanager and the webhook receiver.
type Stack struct {
	Opts    StackOptions
	Bin     Binaries
	LogDir  string
	Cluster *Cluster
	Objects Objects
	KSM     *Component
	// Controllers and Node run with RealNode; Pause and Testapp are the images on the node.
	Controllers    *Controllers
	Node           *Node
	Pause, Testapp TestImage
	// Registry is open, AuthRegistry needs basic auth; both hold the test image.
	Registry, AuthRegistry *Registry
	Kubecause              []*Kubecause
	// Prometheus, Alertmanager and Webhook are the first alerting chain (Prometheus 2);
	// Pagers lists every chain, that one first (with Prometheus3 a second one).
	Prometheus   *Prometheus
	Alertmanager *Component
	Webhook      *Webhook
	Pagers       []*Pager
	// OriginalFor maps alert names to the `for` of the mixin when MaxFor shortened it.
	OriginalFor map[string]string
	// StartupTime is how long StartStack took.
	StartupTime time.Duration
}

// Pager is one alerting chain: a Prometheus evaluating the rules, its Alertmanager, and the
// webhook receiver that records what a pager gets.
type Pager struct {
	// Name is "prometheus" (Prometheus 2 from Debian) or "prometheus3"; Version is what the
	// server reports (e.g. "3.15.0").
	Name, Version string
	Prometheus    *Prometheus
	Alertmanager  *Component
	Webhook       *Webhook
}

func (p *Pager) String() string { return p.Name + " " + p.Version }

func (s *Stack) logf(format string, args ...any) {
	if s.Opts.Logf != nil {
		s.Opts.Logf(format, args...)
	}
}

// StartStack starts every component on 127.0.0.1. On error, what was started is stopped.
func StartStack(ctx context.Context, o StackOptions) (_ *Stack, err error) {
	if o.WorkDir == "" {
		return nil, errors.New("StackOptions.WorkDir is required")
	}
	if o.KubecauseReplicas == 0 {
		o.KubecauseReplicas = 1
	}
	if o.Cluster == "" {
		o.Cluster = "e2e"
	}
	if o.MaxFor == 0 {
		o.MaxFor = 5 * time.Second
	}
	start := time.Now()
	s := &Stack{Opts: o, LogDir: filepath.Join(o.WorkDir, "logs")}
	defer func() {
		if err != nil {
			err = fmt.Errorf("%w\n%s", err, s.Logs(3000))
			s.Stop()
		}
	}()
	if err := os.MkdirAll(s.LogDir, 0o755); err != nil {
		return nil, err
	}
	if s.Bin, err = FindBinaries(o.KubecauseReplicas > 0); err != nil {
		return nil, err
	}
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}

	t := time.Now()
	if s.Cluster, err = StartCluster(filepath.Join(o.WorkDir, "cluster"), ClusterOptions{APIServerArgs: o.APIServerArgs, LogDir: s.LogDir}); err != nil {
		return nil, err
	}
	s.Objects = Objects{Client: s.Cluster.Client}
	if err := s.Cluster.EnsureNamespaces(ctx, o.Namespaces...); err != nil {
		return nil, err
	}
	s.logf("kube-apiserver %s + etcd up at %s in %s", runKubeVersion(), s.Cluster.Config.Host, time.Since(t).Round(time.Millisecond))

	if o.RealNode {
		if err := s.startRealNode(ctx); err != nil {
			return nil, err
		}
	}

	t = time.Now()
	if s.KSM, err = StartKubeStateMetrics(s.Bin.KubeStateMetrics, s.Cluster.KubeconfigPath, s.LogDir); err != nil {
		return nil, err
	}
	s.logf("kube-state-metrics %s up at %s in %s", KSMVersion, s.KSM.Addr, time.Since(t).Round(time.Millisecond))

	kubeconfig := s.Cluster.KubeconfigPath
	if o.KubecauseRules != nil {
		if kubeconfig, err = s.Cluster.UserKubeconfig(ctx, "kubecause", o.KubecauseRules); err != nil {
			return nil, err
		}
	}
	firstAddr := o.KubecauseListen
	if firstAddr == "" {
		if firstAddr, err = FreeAddr(); err != nil {
			return nil, err
		}
	}
	external := "http://" + firstAddr
	kubecauseArgs := o.KubecauseArgs
	if o.ServeRunbooks {
		kubecauseArgs = append([]string{"--web.external-url=" + external}, kubecauseArgs...)
	}
	deferred := map[string]bool{}
	for i := 0; i < o.KubecauseReplicas; i++ {
		t = time.Now()
		name, addr := "kubecause", firstAddr
		if o.KubecauseReplicas > 1 {
			name = fmt.Sprintf("kubecause-%d", i)
		}
		if i > 0 {
			if addr, err = FreeAddr(); err != nil {
				return nil, err
			}
		}
		args := kubecauseArgs
		if i < len(o.KubecauseReplicaArgs) {
			args = append(append([]string(nil), args...), o.KubecauseReplicaArgs[i]...)
		}
		if i >= o.KubecauseReplicas-o.KubecauseDeferred {
			k := NewKubecauseOn(addr, s.Bin.Kubecause, kubeconfig, s.LogDir, name, args...)
			s.Kubecause = append(s.Kubecause, k)
			deferred[k.Addr] = true
			s.logf("%s at %s not started (deferred)", name, k.Addr)
			continue
		}
		k, err := StartKubecauseOn(addr, s.Bin.Kubecause, kubeconfig, s.LogDir, name, args...)
		if err != nil {
			return nil, err
		}
		s.Kubecause = append(s.Kubecause, k)
		s.logf("%s ready at %s in %s", name, k.Addr, time.Since(t).Round(time.Millisecond))
	}

	ruleFiles := o.RuleFiles
	if ruleFiles == nil {
		if ruleFiles, err = GeneratedRuleFiles(root); err != nil {
			return nil, err
		}
	}
	maxFor := o.MaxFor
	if maxFor < 0 {
		maxFor = 0
	}
	loaded, orig, err := PrepareRuleFiles(ruleFiles, filepath.Join(o.WorkDir, "rules"), maxFor)
	if err != nil {
		return nil, err
	}
	s.OriginalFor = orig
	if len(o.AlertFor) > 0 {
		if err := SetAlertFor(loaded, o.AlertFor); err != nil {
			return nil, err
		}
	}
	if o.ServeRunbooks {
		if err := linkServedRunbooks(loaded, external); err != nil {
			return nil, err
		}
	}
	var inhibit []byte
	if o.InhibitRules {
		if inhibit, err = os.ReadFile(filepath.Join(root, "rules", "alertmanager", "inhibit-rules.yaml")); err != nil {
			return nil, err
		}
	}
	chains := []struct{ name, bin, promListen, amListen string }{{"prometheus", s.Bin.Prometheus, o.PrometheusListen, o.AlertmanagerListen}}
	if o.Prometheus3 {
		bin, err := Prometheus3Bin()
		if err != nil {
			return nil, err
		}
		chains = append(chains, struct{ name, bin, promListen, amListen string }{"prometheus3", bin, "", ""})
	}
	for _, c := range chains {
		t = time.Now()
		pg := &Pager{Name: c.name}
		s.Pagers = append(s.Pagers, pg)
		if pg.Webhook, err = StartWebhook(); err != nil {
			return nil, err
		}
		amName := strings.Replace(c.name, "prometheus", "alertmanager", 1)
		if o.ShippedRoute {
			cfg, err := ShippedAlertmanagerConfig(root, pg.Webhook.URL, ShippedRouteTimers)
			if err != nil {
				return nil, err
			}
			pg.Alertmanager, err = StartAlertmanagerConfig(amName, s.Bin.Alertmanager, o.WorkDir, s.LogDir, c.amListen, cfg)
			if err != nil {
				return nil, err
			}
		} else if pg.Alertmanager, err = StartAlertmanager(amName, s.Bin.Alertmanager, o.WorkDir, s.LogDir, c.amListen, pg.Webhook.URL, inhibit); err != nil {
			return nil, err
		}
		pc := PrometheusConfig{KSMTarget: s.KSM.Addr, Alertmanager: pg.Alertmanager.Addr, RuleFiles: loaded, Cluster: o.Cluster, ResendDelay: o.AlertResendDelay}
		for _, k := range s.Kubecause {
			pc.KubecauseTargets = append(pc.KubecauseTargets, k.Addr)
		}
		if pg.Prometheus, err = StartPrometheus(c.name, c.bin, o.WorkDir, s.LogDir, c.promListen, pc); err != nil {
			return nil, err
		}
		if pg.Version, err = pg.Prometheus.Version(); err != nil {
			return nil, err
		}
		if len(s.Pagers) == 1 {
			s.Prometheus, s.Alertmanager, s.Webhook = pg.Prometheus, pg.Alertmanager, pg.Webhook
		}
		if err := waitTargetsUp(ctx, pg.Prometheus, deferred); err != nil {
			return nil, fmt.Errorf("%s: %w", pg, err)
		}
		if err := checkRulesHealthy(ctx, pg.Prometheus, len(loaded) > 0, false); err != nil {
			return nil, fmt.Errorf("%s: %w", pg, err)
		}
		s.logf("%s at %s (targets up, %d rule files, alert `for` capped at %s, set %v) and alertmanager at %s (inhibition rules: %v, shipped route: %v) in %s",
			pg, pg.Prometheus.Addr, len(loaded), maxFor, o.AlertFor, pg.Alertmanager.Addr, o.InhibitRules || o.ShippedRoute, o.ShippedRoute, time.Since(t).Round(time.Millisecond))
	}
	s.StartupTime = time.Since(start)
	return s, nil
}

// startRealNode starts the controllers, builds the test images and starts the node.
func (s *Stack) startRealNode(ctx context.Context) error {
	b, err := FindNodeBinaries()
	if err != nil {
		return err
	}
	t := time.Now()
	if s.Controllers, err = StartControllers(b, s.Cluster, s.LogDir); err != nil {
		return err
	}
	s.logf("kube-controller-manager and kube-scheduler %s up in %s", KubeVersion, time.Since(t).Round(time.Millisecond))
	t = time.Now()
	if s.Pause, s.Testapp, err = BuildTestImages(filepath.Join(s.Opts.WorkDir, "images")); err != nil {
		return err
	}
	s.Node, err = StartNode(ctx, b, s.Cluster, NodeOptions{
		Dir:          filepath.Join(s.Opts.WorkDir, "node"),
		LogDir:       s.LogDir,
		Images:       []string{s.Pause.Tarball, s.Testapp.Tarball},
		SandboxImage: PauseImage,
	})
	if err != nil {
		return err
	}
	for _, r := range []struct {
		dst        **Registry
		name, user string
	}{{&s.Registry, "registry", ""}, {&s.AuthRegistry, "registry-auth", "kubecause"}} {
		pw := ""
		if r.user != "" {
			pw = "e2e-only-password"
		}
		if *r.dst, err = StartRegistry(filepath.Join(s.Opts.WorkDir, r.name), s.LogDir, r.name, r.user, pw); err != nil {
			return err
		}
		if _, err := (*r.dst).Push(s.Testapp, "kubecause/testapp:e2e"); err != nil {
			return err
		}
		if err := s.Node.TrustRegistry((*r.dst).Addr); err != nil {
			return err
		}
	}
	s.logf("node %s Ready (kubelet %s, containerd %s + runc, CNI bridge %s on %s) in %s",
		s.Node.Name, KubeletVersion, Containerd2Version, s.Node.Bridge, s.Node.PodSubnet, time.Since(t).Round(time.Millisecond))
	return nil
}

// waitTargetsUp waits until every scrape target but the deferred replicas' is up.
func waitTargetsUp(ctx context.Context, p *Prometheus, deferred map[string]bool) error {
	if len(deferred) == 0 {
		return p.API.WaitTargetsUp(ctx, 30*time.Second)
	}
	var last []Target
	err := Poll(ctx, 30*time.Second, func() (bool, error) {
		ts, err := p.API.Targets(ctx)
		if err != nil || len(ts) == 0 {
			return false, nil
		}
		last = ts
		for _, t := range ts {
			if t.Health != "up" && !deferred[t.Instance] {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("scrape targets not all up: %+v: %w", last, err)
	}
	return nil
}

// checkRulesHealthy waits until every rule has been evaluated once and none is unhealthy. With
// all, rules of groups with a long interval (the SLO windows' 1m) must have been evaluated too;
// otherwise those are skipped while not evaluated yet.
func checkRulesHealthy(ctx context.Context, p *Prometheus, expectRules, all bool) error {
	var bad []string
	timeout := 30 * time.Second
	if all {
		timeout = 2 * time.Minute
	}
	err := Poll(ctx, timeout, func() (bool, error) {
		groups, err := p.API.Rules(ctx)
		if err != nil {
			return false, nil
		}
		if expectRules && len(groups) == 0 {
			return false, nil
		}
		bad = bad[:0]
		for _, g := range groups {
			for _, r := range g.Rules {
				switch r.Health {
				case "ok":
				case "unknown":
					// Groups with a long interval (the SLO windows' 1m) are first evaluated up to
					// that long after loading.
					if !all && g.Interval > 5*time.Second {
						continue
					}
					return false, nil
				default:
					bad = append(bad, fmt.Sprintf("%s/%s: %s", g.Name, r.Name, r.LastError))
				}
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("rules not evaluated: %w", err)
	}
	if len(bad) > 0 {
		return fmt.Errorf("rules failing on the real Prometheus: %s", strings.Join(bad, "; "))
	}
	return nil
}

// RulesHealthy waits until every rule of every group (the 1m SLO groups too) of every pager's
// Prometheus has been evaluated, and fails if any evaluation failed. It returns the number of
// rules per pager.
func (s *Stack) RulesHealthy(ctx context.Context) (map[string]int, error) {
	n := map[string]int{}
	for _, pg := range s.Pagers {
		if err := checkRulesHealthy(ctx, pg.Prometheus, true, true); err != nil {
			return n, fmt.Errorf("%s: %w", pg, err)
		}
		groups, err := pg.Prometheus.API.Rules(ctx)
		if err != nil {
			return n, err
		}
		for _, g := range groups {
			n[pg.String()] += len(g.Rules)
		}
	}
	return n, nil
}

// Stop stops every component (reverse order). Safe to call on a partial stack.
func (s *Stack) Stop() {
	for i := len(s.Pagers) - 1; i >= 0; i-- {
		pg := s.Pagers[i]
		if pg.Prometheus != nil {
			_ = pg.Prometheus.Stop()
		}
		if pg.Alertmanager != nil {
			_ = pg.Alertmanager.Stop()
		}
		if pg.Webhook != nil {
			_ = pg.Webhook.Close()
		}
	}
	for _, k := range s.Kubecause {
		_ = k.Stop()
	}
	if s.KSM != nil {
		_ = s.KSM.Stop()
	}
	if s.Node != nil {
		s.Node.Stop()
	}
	for _, r := range []*Registry{s.Registry, s.AuthRegistry} {
		if r != nil {
			_ = r.Stop()
		}
	}
	s.Controllers.Stop()
	if s.Cluster != nil {
		_ = s.Cluster.Stop()
	}
}

// Logs returns the tail (max bytes each) of every component's log.
func (s *Stack) Logs(max int) string {
	files, _ := filepath.Glob(filepath.Join(s.LogDir, "*.log"))
	sort.Strings(files)
	var b strings.Builder
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if max > 0 && len(data) > max {
			data = data[len(data)-max:]
		}
		fmt.Fprintf(&b, "----- %s (last %d bytes) -----\n%s\n", filepath.Base(f), len(data), data)
	}
	return b.String()
}

// KubecauseTargets is the replicas' addresses.
func (s *Stack) KubecauseTargets() []string {
	out := make([]string, 0, len(s.Kubecause))
	for _, k := range s.Kubecause {
		out = append(out, k.Addr)
	}
	return out
}
