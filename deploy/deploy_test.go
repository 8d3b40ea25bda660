package deploy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubecause/kubecause/internal/repo"
)

// The tests render the Helm chart and the kustomize overlays with the pinned tools that
// hack/deps/30-deploy-tools.sh builds, and check what a cluster admin reviews before applying them.

// into converts a rendered object into a typed API struct.
func into(t *testing.T, o Object, v any) {
	t.Helper()
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", o.ID(), err)
	}
}

var (
	renderOnce   sync.Once
	rendered     []Rendering
	renderFailed error
)

// renderings renders every installation once per test binary.
func renderings(t *testing.T) []Rendering {
	t.Helper()
	renderOnce.Do(func() { rendered, renderFailed = Renderings() })
	if renderFailed != nil {
		t.Fatal(renderFailed)
	}
	return rendered
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := repo.Root()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// readOnlyVerbs are the only verbs any Role or ClusterRole may grant.
var readOnlyVerbs = []string{"get", "list", "watch"}

// allowedResources are what the checks read: Events (core/v1: events.k8s.io Events are the same objects),
// and for the endpoint checks Services, Endpoints, EndpointSlices and Pods. Keyed "group/resource".
var allowedResources = map[string]bool{
	"/events":   true,
	"/services": true, "/endpoints": true, "/pods": true, "discovery.k8s.io/endpointslices": true,
}

// rbacProblems lists what is wrong with the rules of a Role or ClusterRole.
func rbacProblems(rules []rbacv1.PolicyRule) []string {
	var problems []string
	for i, r := range rules {
		for _, v := range r.Verbs {
			if !slices.Contains(readOnlyVerbs, v) {
				problems = append(problems, fmt.Sprintf("rule %d grants verb %q (only get/list/watch allowed)", i, v))
			}
		}
		if len(r.NonResourceURLs) > 0 {
			problems = append(problems, fmt.Sprintf("rule %d grants non-resource URLs %v", i, r.NonResourceURLs))
		}
		if len(r.ResourceNames) > 0 && len(r.Resources) == 0 {
			problems = append(problems, fmt.Sprintf("rule %d has resourceNames but no resources", i))
		}
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				if res == "secrets" || res == "*" || g == "*" {
					problems = append(problems, fmt.Sprintf("rule %d grants %q in group %q (no Secrets, no wildcards)", i, res, g))
					continue
				}
				if !allowedResources[g+"/"+res] {
					problems = append(problems, fmt.Sprintf("rule %d grants %s/%s, which no check reads", i, g, res))
				}
			}
		}
	}
	return problems
}

// podSpecOf returns the pod template of a workload object, nil for other kinds.
func podSpecOf(t *testing.T, o Object) *corev1.PodSpec {
	switch o.Kind() {
	case "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job":
		var w struct {
			Spec struct {
				Template corev1.PodTemplateSpec `json:"template"`
			} `json:"spec"`
		}
		into(t, o, &w)
		return &w.Spec.Template.Spec
	case "CronJob":
		var w struct {
			Spec struct {
				JobTemplate struct {
					Spec struct {
						Template corev1.PodTemplateSpec `json:"template"`
					} `json:"spec"`
				} `json:"jobTemplate"`
			} `json:"spec"`
		}
		into(t, o, &w)
		return &w.Spec.JobTemplate.Spec.Template.Spec
	case "Pod":
		var p corev1.Pod
		into(t, o, &p)
		return &p.Spec
	}
	return nil
}

// restrictedProblems lists where a pod falls short of Pod Security Standards "restricted" plus a
// read-only root filesystem, container by container (the container's settings override the pod's).
func restrictedProblems(spec *corev1.PodSpec) []string {
	var problems []string
	if spec.HostNetwork || spec.HostPID || spec.HostIPC {
		problems = append(problems, "pod uses host namespaces")
	}
	for _, v := range spec.Volumes {
		if v.HostPath != nil {
			problems = append(problems, fmt.Sprintf("volume %s is a hostPath", v.Name))
		}
	}
	psc := spec.SecurityContext
	if psc == nil {
		psc = &corev1.PodSecurityContext{}
	}
	containers := append(append([]corev1.Container{}, spec.InitContainers...), spec.Containers...)
	for _, c := range containers {
		sc := c.SecurityContext
		if sc == nil {
			sc = &corev1.SecurityContext{}
		}
		bad := func(format string, args ...any) {
			problems = append(problems, fmt.Sprintf("container %s: ", c.Name)+fmt.Sprintf(format, args...))
		}
		nonRoot := psc.RunAsNonRoot
		if sc.RunAsNonRoot != nil {
			nonRoot = sc.RunAsNonRoot
		}
		if nonRoot == nil || !*nonRoot {
			bad("runAsNonRoot is not true")
		}
		uid := psc.RunAsUser
		if sc.RunAsUser != nil {
			uid = sc.RunAsUser
		}
		if uid != nil && *uid == 0 {
			bad("runs as UID 0")
		}
		if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
			bad("readOnlyRootFilesystem is not true")
		}
		if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			bad("allowPrivilegeEscalation is not false")
		}
		if sc.Privileged != nil && *sc.Privileged {
			bad("privileged")
		}
		if sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") {
			bad("capabilities do not drop ALL")
		} else if len(sc.Capabilities.Add) > 0 {
			bad("adds capabilities %v", sc.Capabilities.Add)
		}
		seccomp := psc.SeccompProfile
		if sc.SeccompProfile != nil {
			seccomp = sc.SeccompProfile
		}
		if seccomp == nil || seccomp.Type != corev1.SeccompProfileTypeRuntimeDefault {
			bad("seccompProfile is not RuntimeDefault")
		}
	}
	return problems
}

// probeAndResourceProblems lists containers without the readiness (synced) and liveness probes and
// without resource requests and a memory limit.
func probeAndResourceProblems(spec *corev1.PodSpec) []string {
	var problems []string
	for _, c := range spec.Containers {
		if p := c.ReadinessProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/readyz" {
			problems = append(problems, fmt.Sprintf("container %s: no readiness probe on /readyz", c.Name))
		}
		if p := c.LivenessProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/healthz" {
			problems = append(problems, fmt.Sprintf("container %s: no liveness probe on /healthz", c.Name))
		}
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			if q, ok := c.Resources.Requests[r]; !ok || q.IsZero() {
				problems = append(problems, fmt.Sprintf("container %s: no %s request", c.Name, r))
			}
		}
		if q, ok := c.Resources.Limits[corev1.ResourceMemory]; !ok || q.IsZero() {
			problems = append(problems, fmt.Sprintf("container %s: no memory limit", c.Name))
		}
	}
	return problems
}

func TestRBACIsReadOnly(t *testing.T) {
	for _, r := range renderings(t) {
		t.Run(r.Name, func(t *testing.T) {
			roles := 0
			for _, o := range r.Objects {
				switch o.Kind() {
				case "Role", "ClusterRole":
					roles++
					var role rbacv1.ClusterRole // same rules field as Role
					into(t, o, &role)
					if role.AggregationRule != nil {
						t.Errorf("%s: aggregation rules are not allowed", o.ID())
					}
					for _, p := range rbacProblems(role.Rules) {
						t.Errorf("%s: %s", o.ID(), p)
					}
				case "Secret":
					// Only the web config the user gave may be rendered into a Secret.
					if !strings.HasSuffix(o.Meta("name"), "-web-config") {
						t.Errorf("%s: unexpected Secret", o.ID())
					}
				}
			}
			if roles == 0 {
				t.Errorf("no Role or ClusterRole rendered")
			}
		})
	}
}

func TestPodsAreRestricted(t *testing.T) {
	for _, r := range renderings(t) {
		t.Run(r.Name, func(t *testing.T) {
			workloads, hooks := 0, 0
			for _, o := range r.Objects {
				spec := podSpecOf(t, o)
				if spec == nil {
					continue
				}
				// The helm test pod runs once and exits: restricted like the exporter, but no probes.
				for _, p := range restrictedProblems(spec) {
					t.Errorf("%s: %s", o.ID(), p)
				}
				if IsHook(o) {
					hooks++
					continue
				}
				workloads++
				for _, p := range probeAndResourceProblems(spec) {
					t.Errorf("%s: %s", o.ID(), p)
				}
			}
			if workloads != 1 {
				t.Errorf("%d workloads rendered, want the one Deployment", workloads)
			}
			if want := map[bool]int{true: 1, false: 0}[r.HelmTest]; hooks != want {
				t.Errorf("%d helm test pods rendered, want %d", hooks, want)
			}
		})
	}
}

// find returns the objects of a kind.
func find(objs []Object, kind string) []Object {
	var out []Object
	for _, o := range objs {
		if o.Kind() == kind {
			out = append(out, o)
		}
	}
	return out
}

func TestExporterObjects(t *testing.T) {
	for _, r := range renderings(t) {
		t.Run(r.Name, func(t *testing.T) {
			deps := find(r.Objects, "Deployment")
			if len(deps) != 1 {
				t.Fatalf("%d Deployments, want 1", len(deps))
			}
			var d appsv1.Deployment
			into(t, deps[0], &d)
			replicas := int32(1)
			if d.Spec.Replicas != nil {
				replicas = *d.Spec.Replicas
			}
			pdbs := find(r.Objects, "PodDisruptionBudget")
			if replicas > 1 && len(pdbs) != 1 {
				t.Errorf("%d replicas but %d PodDisruptionBudgets, want 1", replicas, len(pdbs))
			}
			if replicas == 1 && len(pdbs) != 0 {
				t.Errorf("a PodDisruptionBudget for a single replica blocks node drains")
			}

			// The ServiceAccount the pods run as exists and is what the bindings grant to.
			sa := d.Spec.Template.Spec.ServiceAccountName
			if len(find(r.Objects, "ServiceAccount")) != 1 || find(r.Objects, "ServiceAccount")[0].Meta("name") != sa {
				t.Errorf("ServiceAccount %q of the Deployment is not rendered", sa)
			}
			bindings := append(find(r.Objects, "ClusterRoleBinding"), find(r.Objects, "RoleBinding")...)
			if len(bindings) == 0 {
				t.Errorf("no (Cluster)RoleBinding")
			}
			for _, b := range bindings {
				var rb rbacv1.RoleBinding
				into(t, b, &rb)
				want := []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa, Namespace: d.Namespace}}
				if !reflect.DeepEqual(rb.Subjects, want) {
					t.Errorf("%s: subjects %+v, want %+v", b.ID(), rb.Subjects, want)
				}
			}

			// The Service selects the pods and exposes the named port.
			svcs := find(r.Objects, "Service")
			if len(svcs) != 1 {
				t.Fatalf("%d Services, want 1", len(svcs))
			}
			var svc corev1.Service
			into(t, svcs[0], &svc)
			for k, v := range svc.Spec.Selector {
				if d.Spec.Template.Labels[k] != v {
					t.Errorf("Service selector %s=%s does not match the pod labels", k, v)
				}
			}
			if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Name != "http" {
				t.Errorf("Service ports %+v, want one named http", svc.Spec.Ports)
			}

			sms := find(r.Objects, "ServiceMonitor")
			if r.ServiceMonitor != (len(sms) == 1) {
				t.Errorf("%d ServiceMonitors, want one: %v", len(sms), r.ServiceMonitor)
			}
			for _, sm := range sms {
				spec := sm["spec"].(map[string]any)
				sel := spec["selector"].(map[string]any)["matchLabels"].(map[string]any)
				for k, v := range sel {
					if svc.Labels[k] != v {
						t.Errorf("ServiceMonitor selects %s=%v, which the Service does not carry", k, v)
					}
				}
				ep := spec["endpoints"].([]any)[0].(map[string]any)
				if ep["port"] != "http" || ep["honorLabels"] != true {
					t.Errorf("ServiceMonitor endpoint %v: want port http and honorLabels (the series carry namespace labels)", ep)
				}
			}
		})
	}
}

// mixinObjects reads the mixin's generated output.
func mixinObjects(t *testing.T) (rule Object, dashboards map[string]Object) {
	t.Helper()
	root := repoRoot(t)
	dir := filepath.Join(root, "deploy", "helm", "kubecause", "files", "mixin")
	b, err := os.ReadFile(filepath.Join(dir, "prometheusrule.yaml"))
	if err != nil {
		t.Fatalf("the mixin's PrometheusRule: %v", err)
	}
	rules, err := ParseManifests(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) != 1 || rules[0].Kind() != "PrometheusRule" {
		t.Fatalf("files/mixin/prometheusrule.yaml: want one PrometheusRule, got %d objects", len(rules))
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dashboards = map[string]Object{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		objs, err := ParseManifests(b)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, o := range find(objs, "ConfigMap") {
			dashboards[o.Meta("name")] = o
		}
	}
	if len(dashboards) == 0 {
		t.Fatalf("no dashboard ConfigMaps in the chart's files/mixin")
	}
	return rules[0], dashboards
}

func TestMonitoringComesFromTheMixin(t *testing.T) {
	mixinRule, mixinDashboards := mixinObjects(t)
	for _, r := range renderings(t) {
		t.Run(r.Name, func(t *testing.T) {
			rules := find(r.Objects, "PrometheusRule")
			if r.PrometheusRule != (len(rules) > 0) {
				t.Errorf("%d PrometheusRules, want the mixin's: %v", len(rules), r.PrometheusRule)
			}
			for _, pr := range rules {
				if pr.Meta("name") != mixinRule.Meta("name") {
					t.Errorf("%s: name differs from the mixin's %q", pr.ID(), mixinRule.Meta("name"))
				}
				if !reflect.DeepEqual(pr["spec"], mixinRule["spec"]) {
					t.Errorf("%s: spec differs from the chart's files/mixin/prometheusrule.yaml:\n%s", pr.ID(), diffYAML(t, mixinRule["spec"], pr["spec"]))
				}
				labels, _ := pr["metadata"].(map[string]any)["labels"].(map[string]any)
				mixinLabels, _ := mixinRule["metadata"].(map[string]any)["labels"].(map[string]any)
				for k, v := range mixinLabels {
					if labels[k] != v {
						t.Errorf("%s: label %s=%v of the mixin is missing", pr.ID(), k, v)
					}
				}
			}

			var dashboards []Object
			var rulesCM []Object
			for _, cm := range find(r.Objects, "ConfigMap") {
				if strings.HasSuffix(cm.Meta("name"), "-prometheus") {
					rulesCM = append(rulesCM, cm)
				}
				if _, ok := mixinDashboards[cm.Meta("name")]; ok {
					dashboards = append(dashboards, cm)
				}
			}
			if r.Dashboards {
				if len(dashboards) != len(mixinDashboards) {
					t.Errorf("%d dashboard ConfigMaps, want the mixin's %d", len(dashboards), len(mixinDashboards))
				}
			} else if len(dashboards) != 0 {
				t.Errorf("dashboard ConfigMaps rendered although not enabled")
			}
			for _, cm := range dashboards {
				want := mixinDashboards[cm.Meta("name")]
				if !reflect.DeepEqual(cm["data"], want["data"]) {
					t.Errorf("%s: data differs from the mixin's", cm.ID())
				}
				labels, _ := cm["metadata"].(map[string]any)["labels"].(map[string]any)
				if labels["grafana_dashboard"] == nil {
					t.Errorf("%s: no grafana_dashboard label (the Grafana sidecar would not load it)", cm.ID())
				}
			}

			if r.RulesConfigMap != (len(rulesCM) == 1) {
				t.Fatalf("%d rule ConfigMaps for plain Prometheus, want one: %v", len(rulesCM), r.RulesConfigMap)
			}
			for _, cm := range rulesCM {
				data := cm["data"].(map[string]any)
				var file any
				if err := yaml.Unmarshal([]byte(data["kubecause.rules.yaml"].(string)), &file); err != nil {
					t.Fatalf("%s: kubecause.rules.yaml: %v", cm.ID(), err)
				}
				if !reflect.DeepEqual(file, mixinRule["spec"]) {
					t.Errorf("%s: kubecause.rules.yaml differs from the mixin's rule groups:\n%s", cm.ID(), diffYAML(t, mixinRule["spec"], file))
				}
				var scrape []map[string]any
				if err := yaml.Unmarshal([]byte(data["kubecause.scrape.yaml"].(string)), &scrape); err != nil {
					t.Fatalf("%s: kubecause.scrape.yaml: %v", cm.ID(), err)
				}
				if len(scrape) != 1 || scrape[0]["job_name"] != "kubecause" || scrape[0]["honor_labels"] != true {
					t.Errorf("%s: kubecause.scrape.yaml: want one job named kubecause with honor_labels", cm.ID())
				}
			}
		})
	}
}

// diffYAML shows the first differing lines of two values rendered as YAML.
func diffYAML(t *testing.T, want, got any) string {
	w, err := yaml.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	g, err := yaml.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	wl, gl := strings.Split(string(w), "\n"), strings.Split(string(g), "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var a, b string
		if i < len(wl) {
			a = wl[i]
		}
		if i < len(gl) {
			b = gl[i]
		}
		if a != b {
			return fmt.Sprintf("line %d: want %q, got %q", i+1, a, b)
		}
	}
	return "(equal as YAML, different types)"
}

func TestHelmLint(t *testing.T) {
	// No --kube-version, as CI pipelines and GitOps tools run it.
	out, err := Run("helm", "lint", "--strict", "deploy/helm/kubecause")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(out, []byte("0 chart(s) failed")) {
		t.Errorf("helm lint:\n%s", out)
	}
	// values.schema.json turns a mistyped value into an error instead of a silently ignored setting.
	for _, bad := range [][]string{{"--set", "serviceMonitor.enable=true"}, {"--set", "log.level=verbose"}, {"--set", "replicas=two"}} {
		if _, err := HelmTemplate("monitoring", bad...); err == nil || !strings.Contains(err.Error(), "schema") {
			t.Errorf("helm template %v: want a schema error, got %v", bad, err)
		}
	}

	// Every value the chart reads is documented in its README.
	readme, err := os.ReadFile(filepath.Join(repoRoot(t), "deploy", "helm", "kubecause", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	values, err := os.ReadFile(filepath.Join(repoRoot(t), "deploy", "helm", "kubecause", "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := yaml.Unmarshal(values, &v); err != nil {
		t.Fatal(err)
	}
	var missing []string
	for _, key := range leafKeys("", v) {
		if !bytes.Contains(readme, []byte("`"+key+"`")) {
			missing = append(missing, key)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("values not documented in deploy/helm/kubecause/README.md: %s", strings.Join(missing, ", "))
	}
}

// leafKeys lists the dotted keys of values, stopping at maps whose keys are data (labels, annotations,
// security contexts, resources, probe settings).
func leafKeys(prefix string, v map[string]any) []string {
	var keys []string
	for k, val := range v {
		key := strings.TrimPrefix(prefix+"."+k, ".")
		m, ok := val.(map[string]any)
		if !ok || len(m) == 0 || opaqueValues[key] {
			keys = append(keys, key)
			continue
		}
		keys = append(keys, leafKeys(key, m)...)
	}
	return keys
}

var opaqueValues = map[string]bool{
	"resources": true, "podSecurityContext": true, "securityContext": true, "nodeSelector": true,
	"probes.readiness": true, "probes.liveness": true,
	"networkPolicy.prometheus.namespaceSelector": true, "networkPolicy.prometheus.podSelector": true,
}

// The checkers above must catch what they look for: each bad manifest below yields a problem.
func TestCheckersCatchViolations(t *testing.T) {
	rbacBad := map[string][]rbacv1.PolicyRule{
		"write verb": {{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"get", "create"}}},
		"secrets":    {{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}}},
		"wildcard":   {{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"list"}}},
		"unneeded":   {{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"list"}}},
		"leases":     {{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get"}}},
	}
	for name, rules := range rbacBad {
		if len(rbacProblems(rules)) == 0 {
			t.Errorf("rbac %s: not caught", name)
		}
	}
	if p := rbacProblems([]rbacv1.PolicyRule{{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: readOnlyVerbs}}); len(p) != 0 {
		t.Errorf("read-only EndpointSlices flagged: %v", p)
	}

	good := func() *corev1.PodSpec {
		yes, no := true, false
		return &corev1.PodSpec{
			SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: &yes,
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
			Containers: []corev1.Container{{Name: "c", SecurityContext: &corev1.SecurityContext{
				ReadOnlyRootFilesystem: &yes, AllowPrivilegeEscalation: &no,
				Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}}},
		}
	}
	if p := restrictedProblems(good()); len(p) != 0 {
		t.Fatalf("restricted pod flagged: %v", p)
	}
	yes := true
	podBad := map[string]func(*corev1.PodSpec){
		"root":                 func(s *corev1.PodSpec) { s.SecurityContext.RunAsNonRoot = nil },
		"writable root fs":     func(s *corev1.PodSpec) { s.Containers[0].SecurityContext.ReadOnlyRootFilesystem = nil },
		"privilege escalation": func(s *corev1.PodSpec) { s.Containers[0].SecurityContext.AllowPrivilegeEscalation = &yes },
		"capabilities kept":    func(s *corev1.PodSpec) { s.Containers[0].SecurityContext.Capabilities = nil },
		"no seccomp":           func(s *corev1.PodSpec) { s.SecurityContext.SeccompProfile = nil },
		"unconfined seccomp": func(s *corev1.PodSpec) {
			s.Containers[0].SecurityContext.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}
		},
		"init container": func(s *corev1.PodSpec) { s.InitContainers = []corev1.Container{{Name: "init"}} },
		"host network":   func(s *corev1.PodSpec) { s.HostNetwork = true },
	}
	for name, mutate := range podBad {
		s := good()
		mutate(s)
		if len(restrictedProblems(s)) == 0 {
			t.Errorf("pod %s: not caught", name)
		}
	}
	if len(probeAndResourceProblems(good())) != 5 {
		t.Errorf("a container without probes and resources: want 5 problems, got %v", probeAndResourceProblems(good()))
	}
}

// The chart grants exactly the scope it is configured for.
func TestRBACScope(t *testing.T) {
	scope := func(objs []Object) (cluster []string, namespaced []string) {
		for _, o := range objs {
			switch o.Kind() {
			case "ClusterRole":
				cluster = append(cluster, o.Meta("name"))
			case "Role":
				namespaced = append(namespaced, o.Meta("namespace")+"/"+o.Meta("name"))
			}
		}
		sort.Strings(namespaced)
		return cluster, namespaced
	}
	args := func(t *testing.T, objs []Object) []string {
		for _, o := range objs {
			if o.Kind() == "Deployment" {
				var d appsv1.Deployment
				into(t, o, &d)
				return d.Spec.Template.Spec.Containers[0].Args
			}
		}
		t.Fatal("no Deployment")
		return nil
	}

	objs, err := HelmTemplate("monitoring")
	if err != nil {
		t.Fatal(err)
	}
	cluster, namespaced := scope(objs)
	if !reflect.DeepEqual(cluster, []string{"kubecause-events"}) || len(namespaced) != 0 {
		t.Errorf("default: ClusterRoles %v, Roles %v; want events cluster-wide and nothing else (no Istio assumed)", cluster, namespaced)
	}
	if a := args(t, objs); !slices.Contains(a, "--no-endpoint-checks.enabled") {
		t.Errorf("default: args %v lack --no-endpoint-checks.enabled", a)
	}

	objs, err = HelmTemplate("monitoring", "--set", "endpointChecks.enabled=true")
	if err != nil {
		t.Fatal(err)
	}
	cluster, namespaced = scope(objs)
	if !reflect.DeepEqual(cluster, []string{"kubecause-events"}) || !reflect.DeepEqual(namespaced, []string{"istio-system/kubecause-endpoint-checks"}) {
		t.Errorf("endpointChecks.enabled: ClusterRoles %v, Roles %v; want events cluster-wide and endpoint checks in istio-system", cluster, namespaced)
	}
	if a := args(t, objs); !slices.Contains(a, "--endpoint-checks.enabled") {
		t.Errorf("endpointChecks.enabled: args %v lack --endpoint-checks.enabled", a)
	}

	objs, err = HelmTemplate("monitoring", "--set", "events.namespaces={team-a,team-b}")
	if err != nil {
		t.Fatal(err)
	}
	cluster, namespaced = scope(objs)
	want := []string{"team-a/kubecause-events", "team-b/kubecause-events"}
	if len(cluster) != 0 || !reflect.DeepEqual(namespaced, want) {
		t.Errorf("events.namespaces: ClusterRoles %v, Roles %v; want only %v", cluster, namespaced, want)
	}
	a := args(t, objs)
	for _, w := range []string{"--events.namespace=team-a", "--events.namespace=team-b", "--no-endpoint-checks.enabled"} {
		if !slices.Contains(a, w) {
			t.Errorf("args %v lack %s", a, w)
		}
	}
}

// The plain-Prometheus ConfigMap's rule file is what Prometheus loads: promtool check rules passes.
// (Its scrape job uses kubernetes_sd_configs, which Debian's promtool is built without, so the job is
// checked structurally in TestMonitoringComesFromTheMixin.)
func TestPlainPrometheusRules(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatal("promtool not found: run make deps")
	}
	objs, err := KustomizeBuild("deploy/kustomize/overlays/prometheus")
	if err != nil {
		t.Fatal(err)
	}
	var data map[string]any
	for _, o := range find(objs, "ConfigMap") {
		if o.Meta("name") == "kubecause-prometheus" {
			data, _ = o["data"].(map[string]any)
		}
	}
	if data == nil {
		t.Fatal("no ConfigMap kubecause-prometheus in the prometheus overlay")
	}
	rules, _ := data["kubecause.rules.yaml"].(string)
	file := filepath.Join(t.TempDir(), "kubecause.rules.yaml")
	if err := os.WriteFile(file, []byte(rules), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(promtool, "check", "rules", "--lint-fatal", file).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool check rules: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "SUCCESS") {
		t.Errorf("promtool check rules:\n%s", out)
	}
	t.Logf("%s", bytes.TrimSpace(out))
}
