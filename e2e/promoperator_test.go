//go:build e2e

package e2e

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"

	"github.com/kubecause/kubecause/deploy"
	"github.com/kubecause/kubecause/e2e/framework"
	"github.com/kubecause/kubecause/internal/repo"
	"github.com/kubecause/kubecause/internal/testenv"
)

// What kube-prometheus-stack 88.5.3 (appVersion v0.93.1, the operator built here) creates for a
// release named kube-prometheus-stack with its default values: templates/prometheus/prometheus.yaml
// and templates/alertmanager/alertmanager.yaml with values.yaml's
// prometheus.prometheusSpec.{ruleSelector,serviceMonitorSelector,podMonitorSelector,probeSelector}NilUsesHelmValues: true
// (each selector `matchLabels: {release: <release>}`), every namespace selector `{}`,
// alertmanager.alertmanagerSpec.alertmanagerConfigSelector and alertmanagerConfigNamespaceSelector `{}`
// and no alertmanagerConfigMatcherStrategy (the operator's default, OnNamespace); image tags
// v3.14.0 and v0.34.0. Only the fields that decide what is selected and generated are written here.
const (
	kpsRelease   = "kube-prometheus-stack"
	kpsNamespace = "monitoring"
	kpsProm      = kpsRelease + "-prometheus"
	kpsAM        = kpsRelease + "-alertmanager"
)

func kpsObjects() []deploy.Object {
	labels := map[string]any{"app.kubernetes.io/instance": kpsRelease, "release": kpsRelease, "app.kubernetes.io/part-of": kpsRelease}
	releaseSel := map[string]any{"matchLabels": map[string]any{"release": kpsRelease}}
	meta := func(name string) map[string]any {
		return map[string]any{"name": name, "namespace": kpsNamespace, "labels": labels}
	}
	return []deploy.Object{
		{"apiVersion": "monitoring.coreos.com/v1", "kind": "Prometheus", "metadata": meta(kpsProm), "spec": map[string]any{
			"version":  "v3.14.0",
			"image":    "quay.io/prometheus/prometheus:v3.14.0-distroless",
			"replicas": 1,
			"alerting": map[string]any{"alertmanagers": []any{map[string]any{
				"namespace": kpsNamespace, "name": kpsAM, "port": "http-web", "apiVersion": "v2"}}},
			"serviceAccountName":              kpsProm,
			"serviceMonitorSelector":          releaseSel,
			"serviceMonitorNamespaceSelector": map[string]any{},
			"podMonitorSelector":              releaseSel,
			"podMonitorNamespaceSelector":     map[string]any{},
			"probeSelector":                   releaseSel,
			"probeNamespaceSelector":          map[string]any{},
			"ruleSelector":                    releaseSel,
			"ruleNamespaceSelector":           map[string]any{},
			"portName":                        "http-web",
		}},
		// alertmanager.config's default, in the Secret the chart writes (templates/alertmanager/secret.yaml).
		{"apiVersion": "v1", "kind": "Secret", "metadata": meta("alertmanager-" + kpsAM), "stringData": map[string]any{
			"alertmanager.yaml": `global:
  resolve_timeout: 5m
inhibit_rules:
  - source_matchers: ['severity = critical']
    target_matchers: ['severity =~ warning|info']
    equal: ['namespace', 'alertname']
  - source_matchers: ['severity = warning']
    target_matchers: ['severity = info']
    equal: ['namespace', 'alertname']
  - source_matchers: ['alertname = InfoInhibitor']
    target_matchers: ['severity = info']
    equal: ['namespace']
  - target_matchers: ['alertname = InfoInhibitor']
route:
  group_by: ['namespace']
  group_wait: 30s
  group_interval: 5m
  repeat_interval: 12h
  receiver: 'null'
  routes:
  - receiver: 'null'
    matchers:
      - alertname = "Watchdog"
receivers:
- name: 'null'
templates:
- '/etc/alertmanager/config/*.tmpl'
`}},
		{"apiVersion": "monitoring.coreos.com/v1", "kind": "Alertmanager", "metadata": meta(kpsAM), "spec": map[string]any{
			"version":                             "v0.34.0",
			"image":                               "quay.io/prometheus/alertmanager:v0.34.0",
			"replicas":                            1,
			"portName":                            "http-web",
			"alertmanagerConfigSelector":          map[string]any{},
			"alertmanagerConfigNamespaceSelector": map[string]any{},
		}},
	}
}

// TestPrometheusOperator installs the chart with helm next to a real prometheus-operator configured as
// kube-prometheus-stack configures it, with the values docs/install.md gives for kube-prometheus-stack,
// and checks what the operator makes of it: the ServiceMonitor becomes a scrape job in the generated
// Prometheus configuration, the PrometheusRule a rule file that the real promtool loads, and the shipped
// AlertmanagerConfig is merged into the generated Alertmanager configuration as docs/install.md says
// (OnNamespace: every route and rule restricted to the AlertmanagerConfig's namespace; None: global),
// which amtool of kube-prometheus-stack's Alertmanager accepts. Then the chart is upgraded without the
// release label: the operator drops the job and the rules, and the chart's notes say why, naming the
// selector and the missing label. No kubelet runs: the operator's output is the Secrets and ConfigMaps
// it writes.
func TestPrometheusOperator(t *testing.T) {
	ctx := testContext(t)
	po, err := framework.FindPromOperator()
	testenv.Require(t, err, "prometheus-operator, amtool and the CRDs", "make deps (hack/deps/24-prometheus-operator.sh)")
	helm, err := deploy.Tool("helm")
	testenv.Require(t, err, "helm", "make deps (hack/deps/30-deploy-tools.sh)")
	promtool := filepath.Join(framework.CacheDir(), "bin", "promtool3")
	_, err = os.Stat(promtool)
	testenv.Require(t, err, "promtool3", "make deps (hack/deps/22-prometheus3.sh)")
	root := must[string](t)(repo.Root())

	dir := t.TempDir()
	start := time.Now()
	c, err := framework.StartCluster(filepath.Join(dir, "cluster"), framework.ClusterOptions{LogDir: dir})
	if err != nil {
		t.Fatalf("starting kube-apiserver: %v", err)
	}
	t.Cleanup(func() { _ = c.Stop() })
	dyn := must[*dynamic.DynamicClient](t)(dynamic.NewForConfig(c.Config))
	disco := must[*discovery.DiscoveryClient](t)(discovery.NewDiscoveryClientForConfig(c.Config))
	a := &applier{dyn: dyn, mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disco))}
	installCRDFiles(ctx, t, a, dyn, po.CRDs)
	check(t, c.EnsureNamespaces(ctx, kpsNamespace, "kubecause"))

	op, err := framework.StartPromOperator(po.Operator, c.KubeconfigPath, dir)
	check(t, err)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("prometheus-operator log (tail):\n%s", op.Log(8000))
		}
		_ = op.Stop()
	})
	for _, o := range kpsObjects() {
		check(t, a.apply(ctx, o, false))
	}
	t.Logf("apiserver, CRDs, operator and kube-prometheus-stack's objects in %s", time.Since(start).Round(time.Millisecond))

	// helm with its own state, against the test's apiserver.
	helmEnv := append(os.Environ(), "KUBECONFIG="+c.KubeconfigPath,
		"HELM_CACHE_HOME="+filepath.Join(dir, "helm", "cache"), "HELM_CONFIG_HOME="+filepath.Join(dir, "helm", "config"),
		"HELM_DATA_HOME="+filepath.Join(dir, "helm", "data"))
	helmRun := func(args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(ctx, helm, args...)
		cmd.Dir, cmd.Env = root, helmEnv
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}

	// docs/install.md, "With prometheus-operator / kube-prometheus-stack".
	kpsValues := []string{"--set", "serviceMonitor.enabled=true", "--set", "serviceMonitor.labels.release=" + kpsRelease,
		"--set", "prometheusRule.enabled=true", "--set", "prometheusRule.labels.release=" + kpsRelease}
	notes := helmRun(append([]string{"install", "kubecause", "deploy/helm/kubecause", "--namespace", "kubecause"}, kpsValues...)...)
	t.Logf("helm install:\n%s", notes)
	for _, want := range []string{
		"ServiceMonitor kubecause/kubecause is selected by Prometheus " + kpsNamespace + "/" + kpsProm + ".",
		"PrometheusRule kubecause/kubecause is selected by Prometheus " + kpsNamespace + "/" + kpsProm + ".",
	} {
		if !strings.Contains(notes, want) {
			t.Errorf("the notes lack %q", want)
		}
	}
	if strings.Contains(notes, "WARNING") {
		t.Errorf("the notes warn with the release label set")
	}

	pr := must[*unstructuredObj](t)(getObj(ctx, dyn, "prometheusrules", "kubecause", "kubecause"))
	ruleKey := fmt.Sprintf("kubecause-kubecause-%s.yaml", pr.UID)
	wantGroups := ruleGroupNames(t, pr.Object)
	const job = "serviceMonitor/kubecause/kubecause/0"

	var promCfg map[string]any
	var ruleFile string
	err = framework.Poll(ctx, 60*time.Second, func() (bool, error) {
		promCfg = generatedPromConfig(ctx, t, c)
		ruleFile = ruleFileOf(ctx, t, c, ruleKey)
		return scrapeJob(promCfg, job) != nil && ruleFile != "", nil
	})
	if err != nil {
		t.Fatalf("the operator did not generate the scrape job %s and the rule file %s: %v (jobs %v)", job, ruleKey, err, scrapeJobNames(promCfg))
	}
	t.Run("ServiceMonitor: a scrape job of the kubecause Service", func(t *testing.T) {
		j := scrapeJob(promCfg, job)
		if j["honor_labels"] != true {
			t.Errorf("honor_labels = %v, want true (the series carry namespace and service labels of their own)", j["honor_labels"])
		}
		sd, _ := j["kubernetes_sd_configs"].([]any)
		if len(sd) != 1 || !strings.Contains(fmt.Sprint(sd[0]), "names:[kubecause]") || !strings.Contains(fmt.Sprint(sd[0]), "role:endpoint") {
			t.Errorf("kubernetes_sd_configs = %v, want the endpoints of namespace kubecause", sd)
		}
		var jobRelabel bool
		for _, r := range j["relabel_configs"].([]any) {
			m := r.(map[string]any)
			if m["target_label"] == "job" && m["replacement"] == "kubecause" {
				jobRelabel = true
			}
		}
		if !jobRelabel {
			t.Errorf("no relabelling to job=\"kubecause\" (the mixin's selector): %v", j["relabel_configs"])
		}
	})
	t.Run("PrometheusRule: the mixin's groups, loaded by promtool", func(t *testing.T) {
		var rf struct {
			Groups []struct {
				Name string `json:"name"`
			} `json:"groups"`
		}
		check(t, yaml.Unmarshal([]byte(ruleFile), &rf))
		var got []string
		for _, g := range rf.Groups {
			got = append(got, g.Name)
		}
		if !slices.Equal(got, wantGroups) {
			t.Errorf("rule file groups %v, want the PrometheusRule's %v", got, wantGroups)
		}
		f := filepath.Join(t.TempDir(), ruleKey)
		check(t, os.WriteFile(f, []byte(ruleFile), 0o644))
		out, err := exec.CommandContext(ctx, promtool, "check", "rules", f).CombinedOutput()
		if err != nil {
			t.Fatalf("promtool check rules on the operator's rule file: %v\n%s", err, out)
		}
		t.Logf("%s", bytes.TrimSpace(out))
	})

	t.Run("AlertmanagerConfig: merged as the docs say, accepted by amtool", func(t *testing.T) {
		amc := must[[]deploy.Object](t)(deploy.ParseManifests(must[[]byte](t)(os.ReadFile(filepath.Join(root, "rules", "alertmanager", "alertmanagerconfig.yaml")))))
		if len(amc) != 1 {
			t.Fatalf("%d objects in rules/alertmanager/alertmanagerconfig.yaml", len(amc))
		}
		amc[0]["metadata"].(map[string]any)["namespace"] = "kubecause"
		check(t, a.apply(ctx, amc[0], false))
		spec := amc[0]["spec"].(map[string]any)
		nInhibit := len(spec["inhibitRules"].([]any))
		receiver := "kubecause/" + amc[0].Meta("name") + "/kubecause"

		// OnNamespace (kube-prometheus-stack's default): every rule and the route only for namespace="kubecause".
		cfg := waitAMConfig(ctx, t, c, func(cfg amConfig) bool { return cfg.route(receiver) != nil })
		route := cfg.route(receiver)
		if !slices.Contains(route.Matchers, `namespace="kubecause"`) {
			t.Errorf("the AlertmanagerConfig's route has matchers %v, want namespace=\"kubecause\" added", route.Matchers)
		}
		if got := cfg.inhibitRulesWith(`namespace="kubecause"`); got != nInhibit {
			t.Errorf("%d inhibition rules restricted to namespace=\"kubecause\", want the AlertmanagerConfig's %d", got, nInhibit)
		}
		t.Logf("OnNamespace: route %+v; %d of %d inhibition rules restricted to namespace=\"kubecause\"",
			*route, cfg.inhibitRulesWith(`namespace="kubecause"`), len(cfg.InhibitRules))
		amtoolCheck(ctx, t, po.Amtool, cfg.raw)

		// None (docs/install.md for the node, incident and SLO alerts, which have no namespace): global.
		patch := []byte(`{"spec":{"alertmanagerConfigMatcherStrategy":{"type":"None"}}}`)
		_, err := dyn.Resource(gvr("alertmanagers")).Namespace(kpsNamespace).Patch(ctx, kpsAM, types.MergePatchType, patch, metav1.PatchOptions{})
		check(t, err)
		cfg = waitAMConfig(ctx, t, c, func(cfg amConfig) bool {
			r := cfg.route(receiver)
			return r != nil && !slices.Contains(r.Matchers, `namespace="kubecause"`)
		})
		if got := cfg.inhibitRulesWith(`namespace="kubecause"`); got != 0 {
			t.Errorf("strategy None: %d inhibition rules still restricted to namespace=\"kubecause\"", got)
		}
		if got := len(cfg.InhibitRules); got != nInhibit+4 {
			t.Errorf("strategy None: %d inhibition rules, want kube-prometheus-stack's 4 and the AlertmanagerConfig's %d", got, nInhibit)
		}
		t.Logf("None: route %+v; %d inhibition rules", *cfg.route(receiver), len(cfg.InhibitRules))
		amtoolCheck(ctx, t, po.Amtool, cfg.raw)
	})

	// The release label forgotten on the PrometheusRule, misspelt on the ServiceMonitor.
	notes = helmRun("upgrade", "kubecause", "deploy/helm/kubecause", "--namespace", "kubecause",
		"--set", "serviceMonitor.enabled=true", "--set", "serviceMonitor.labels.release=kube-prometheus",
		"--set", "prometheusRule.enabled=true")
	t.Logf("helm upgrade without the release label:\n%s", notes)
	err = framework.Poll(ctx, 60*time.Second, func() (bool, error) {
		promCfg = generatedPromConfig(ctx, t, c)
		return scrapeJob(promCfg, job) == nil && ruleFileOf(ctx, t, c, ruleKey) == "", nil
	})
	if err != nil {
		t.Fatalf("the operator still has the scrape job or the rule file without the label: %v", err)
	}
	for _, want := range []string{
		"WARNING: no Prometheus selects ServiceMonitor kubecause/kubecause",
		`Prometheus monitoring/kube-prometheus-stack-prometheus: serviceMonitorSelector {"matchLabels":{"release":"kube-prometheus-stack"}} does not match the ServiceMonitor's labels (missing label release=kube-prometheus-stack)`,
		"WARNING: no Prometheus selects PrometheusRule kubecause/kubecause",
		`Prometheus monitoring/kube-prometheus-stack-prometheus: ruleSelector {"matchLabels":{"release":"kube-prometheus-stack"}} does not match the PrometheusRule's labels (missing label release=kube-prometheus-stack)`,
		"--set prometheusRule.labels.release=<its release name>",
	} {
		if !strings.Contains(notes, want) {
			t.Errorf("the notes lack %q", want)
		}
	}

	// A Prometheus that takes rules only from labelled namespaces (kube-prometheus-stack's
	// prometheus.prometheusSpec.ruleNamespaceSelector), the labels right again: the notes blame the
	// namespace selector until the release namespace has the label, as the operator does.
	patch := []byte(`{"spec":{"ruleNamespaceSelector":{"matchLabels":{"monitoring":"enabled"}}}}`)
	_, err = dyn.Resource(gvr("prometheuses")).Namespace(kpsNamespace).Patch(ctx, kpsProm, types.MergePatchType, patch, metav1.PatchOptions{})
	check(t, err)
	notes = helmRun(append([]string{"upgrade", "kubecause", "deploy/helm/kubecause", "--namespace", "kubecause"}, kpsValues...)...)
	t.Logf("helm upgrade, the rules' namespace not selected:\n%s", notes)
	// The job comes back in the same sync that writes the rule ConfigMaps (they are written first).
	err = framework.Poll(ctx, 60*time.Second, func() (bool, error) {
		return scrapeJob(generatedPromConfig(ctx, t, c), job) != nil, nil
	})
	check(t, err)
	if ruleFileOf(ctx, t, c, ruleKey) != "" {
		t.Errorf("the operator loads the rules from namespace kubecause, which its ruleNamespaceSelector does not select")
	}
	for _, want := range []string{
		"ServiceMonitor kubecause/kubecause is selected by Prometheus " + kpsNamespace + "/" + kpsProm + ".",
		"WARNING: no Prometheus selects PrometheusRule kubecause/kubecause",
		`Prometheus monitoring/kube-prometheus-stack-prometheus: ruleNamespaceSelector {"matchLabels":{"monitoring":"enabled"}} does not match namespace kubecause`,
		"Label namespace kubecause as the namespace selector wants, or put the PrometheusRule in a namespace it selects (prometheusRule.namespace).",
	} {
		if !strings.Contains(notes, want) {
			t.Errorf("the notes lack %q", want)
		}
	}
	if strings.Contains(notes, "Set prometheusRule.labels") {
		t.Errorf("the notes ask for other labels, but the PrometheusRule's labels are selected")
	}
	ns := must[*corev1.Namespace](t)(c.Client.CoreV1().Namespaces().Get(ctx, "kubecause", metav1.GetOptions{}))
	ns.Labels["monitoring"] = "enabled"
	_ = must[*corev1.Namespace](t)(c.Client.CoreV1().Namespaces().Update(ctx, ns, metav1.UpdateOptions{}))
	err = framework.Poll(ctx, 60*time.Second, func() (bool, error) { return ruleFileOf(ctx, t, c, ruleKey) != "", nil })
	if err != nil {
		t.Fatalf("the operator did not load the rules once namespace kubecause has the label: %v", err)
	}
	notes = helmRun(append([]string{"upgrade", "kubecause", "deploy/helm/kubecause", "--namespace", "kubecause"}, kpsValues...)...)
	if want := "PrometheusRule kubecause/kubecause is selected by Prometheus " + kpsNamespace + "/" + kpsProm + "."; !strings.Contains(notes, want) {
		t.Errorf("with the namespace labelled, the notes lack %q:\n%s", want, notes)
	}
	t.Logf("whole test %s", time.Since(start).Round(time.Millisecond))
}

type unstructuredObj struct {
	UID    types.UID
	Object map[string]any
}

func gvr(resource string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: "monitoring.coreos.com", Version: "v1", Resource: resource}
}

func getObj(ctx context.Context, dyn dynamic.Interface, resource, ns, name string) (*unstructuredObj, error) {
	u, err := dyn.Resource(gvr(resource)).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return &unstructuredObj{UID: u.GetUID(), Object: u.Object}, nil
}

func ruleGroupNames(t *testing.T, pr map[string]any) []string {
	t.Helper()
	var names []string
	for _, g := range pr["spec"].(map[string]any)["groups"].([]any) {
		names = append(names, g.(map[string]any)["name"].(string))
	}
	if len(names) == 0 {
		t.Fatal("the PrometheusRule has no groups")
	}
	return names
}

func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	r, err := gzip.NewReader(bytes.NewReader(b))
	check(t, err)
	out, err := io.ReadAll(r)
	check(t, err)
	return out
}

// generatedPromConfig is the configuration the operator generated for kube-prometheus-stack's
// Prometheus (Secret prometheus-<name>, prometheus.yaml.gz); nil before it exists.
func generatedPromConfig(ctx context.Context, t *testing.T, c *framework.Cluster) map[string]any {
	t.Helper()
	s, err := c.Client.CoreV1().Secrets(kpsNamespace).Get(ctx, "prometheus-"+kpsProm, metav1.GetOptions{})
	if err != nil || len(s.Data["prometheus.yaml.gz"]) == 0 {
		return nil
	}
	var cfg map[string]any
	check(t, yaml.Unmarshal(gunzip(t, s.Data["prometheus.yaml.gz"]), &cfg))
	return cfg
}

func scrapeJob(cfg map[string]any, name string) map[string]any {
	jobs, _ := cfg["scrape_configs"].([]any)
	for _, j := range jobs {
		if m, _ := j.(map[string]any); m["job_name"] == name {
			return m
		}
	}
	return nil
}

func scrapeJobNames(cfg map[string]any) []string {
	var names []string
	jobs, _ := cfg["scrape_configs"].([]any)
	for _, j := range jobs {
		names = append(names, fmt.Sprint(j.(map[string]any)["job_name"]))
	}
	return names
}

// ruleFileOf is the rule file key in the operator's rule ConfigMaps of kube-prometheus-stack's
// Prometheus (prometheus-<name>-rulefiles-N), "" when none holds it.
func ruleFileOf(ctx context.Context, t *testing.T, c *framework.Cluster, key string) string {
	t.Helper()
	cms, err := c.Client.CoreV1().ConfigMaps(kpsNamespace).List(ctx, metav1.ListOptions{})
	check(t, err)
	for _, cm := range cms.Items {
		if strings.HasPrefix(cm.Name, "prometheus-"+kpsProm+"-rulefiles-") && cm.Data[key] != "" {
			return cm.Data[key]
		}
	}
	return ""
}

// amConfig is the part of a generated alertmanager.yaml the test reads.
type amConfig struct {
	Route struct {
		Routes []amRoute `json:"routes"`
	} `json:"route"`
	InhibitRules []struct {
		SourceMatchers []string `json:"source_matchers"`
		TargetMatchers []string `json:"target_matchers"`
	} `json:"inhibit_rules"`
	raw []byte
}

type amRoute struct {
	Receiver string   `json:"receiver"`
	Matchers []string `json:"matchers"`
}

func (c amConfig) route(receiver string) *amRoute {
	for i, r := range c.Route.Routes {
		if r.Receiver == receiver {
			return &c.Route.Routes[i]
		}
	}
	return nil
}

// inhibitRulesWith counts the inhibition rules whose source and target matchers both hold m.
func (c amConfig) inhibitRulesWith(m string) int {
	n := 0
	for _, r := range c.InhibitRules {
		if slices.Contains(r.SourceMatchers, m) && slices.Contains(r.TargetMatchers, m) {
			n++
		}
	}
	return n
}

// waitAMConfig polls the operator's generated Alertmanager configuration (Secret
// alertmanager-<name>-generated, alertmanager.yaml.gz) until ok holds.
func waitAMConfig(ctx context.Context, t *testing.T, c *framework.Cluster, ok func(amConfig) bool) amConfig {
	t.Helper()
	var cfg amConfig
	err := framework.Poll(ctx, 60*time.Second, func() (bool, error) {
		s, err := c.Client.CoreV1().Secrets(kpsNamespace).Get(ctx, "alertmanager-"+kpsAM+"-generated", metav1.GetOptions{})
		if err != nil || len(s.Data["alertmanager.yaml.gz"]) == 0 {
			return false, nil
		}
		raw := gunzip(t, s.Data["alertmanager.yaml.gz"])
		cfg = amConfig{}
		if err := yaml.Unmarshal(raw, &cfg); err != nil {
			return false, err
		}
		cfg.raw = raw
		return ok(cfg), nil
	})
	if err != nil {
		t.Fatalf("generated Alertmanager configuration: %v\n%s", err, cfg.raw)
	}
	return cfg
}

func amtoolCheck(ctx context.Context, t *testing.T, amtool string, cfg []byte) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "alertmanager.yaml")
	check(t, os.WriteFile(f, cfg, 0o644))
	out, err := exec.CommandContext(ctx, amtool, "check-config", f).CombinedOutput()
	if err != nil {
		t.Fatalf("amtool check-config on the generated configuration: %v\n%s\n%s", err, out, cfg)
	}
}

// installCRDFiles applies CRD files for real and waits until each is established.
func installCRDFiles(ctx context.Context, t *testing.T, a *applier, dyn dynamic.Interface, files []string) {
	t.Helper()
	crdGVR := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	var kinds []schema.GroupKind
	for _, f := range files {
		objs := must[[]deploy.Object](t)(deploy.ParseManifests(must[[]byte](t)(os.ReadFile(f))))
		for _, o := range objs {
			check(t, a.apply(ctx, o, false))
			name := o.Meta("name")
			err := framework.Poll(ctx, 30*time.Second, func() (bool, error) {
				crd, err := dyn.Resource(crdGVR).Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					return false, nil
				}
				conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
				for _, cond := range conds {
					m, _ := cond.(map[string]any)
					if m["type"] == "Established" && m["status"] == "True" {
						return true, nil
					}
				}
				return false, nil
			})
			if err != nil {
				t.Fatalf("CRD %s not established: %v", name, err)
			}
			group, _, _ := unstructured.NestedString(o, "spec", "group")
			kind, _, _ := unstructured.NestedString(o, "spec", "names", "kind")
			kinds = append(kinds, schema.GroupKind{Group: group, Kind: kind})
		}
	}
	// Established is not yet served: discovery lists a new kind a moment later, and the mapper
	// caches what it read. Until discovery names every kind installed.
	err := framework.Poll(ctx, 30*time.Second, func() (bool, error) {
		a.mapper.Reset()
		for _, gk := range kinds {
			if _, err := a.mapper.RESTMapping(gk); err != nil {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("kinds %v established but not in discovery: %v", kinds, err)
	}
}
