//go:build compat

// Package compat holds the compatibility matrix's own cells (hack/compat.sh, docs/e2e.md,
// "Compatibility matrix"): what the e2e suite does not already cover once per version.
package compat

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/kubecause/kubecause/e2e/framework"
)

// targetLabels are what Prometheus (job, instance) or the user's relabelling (cluster) adds to
// kube-state-metrics' series; the rule tests' input series carry them, kube-state-metrics does not.
var targetLabels = map[string]bool{"job": true, "instance": true, "cluster": true}

// TestKubeStateMetricsSeries runs the kube-state-metrics binary $KUBE_STATE_METRICS_BIN (default
// make deps' release) against a real kube-apiserver holding pods, nodes, claims and workloads in
// the states the shipped rules read, and checks its /metrics against what the rules need:
//   - every kube_* family a rule of rules/generated/*.yaml names is exported;
//   - every kube_* selector of those rules, with its label matchers (job aside), selects a series;
//   - every label the rule tests (rules/tests/*.yaml) give a kube_* input series, target labels
//     aside, is a label that family has: the promtool tests feed the rules series of this
//     release's shape, not of another's.
func TestKubeStateMetricsSeries(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin := os.Getenv("KUBE_STATE_METRICS_BIN")
	if bin == "" {
		bin = filepath.Join(framework.CacheDir(), "bin", "kube-state-metrics-"+framework.KSMVersion)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("kube-state-metrics: %v (make deps, hack/compat-deps.sh)", err)
	}
	root, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	c, err := framework.StartCluster(filepath.Join(dir, "cluster"), framework.ClusterOptions{LogDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop() })
	writeRuleStates(ctx, t, c)

	port, err := framework.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	tport, err := framework.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	// kube-state-metrics' default resources, as kube-prometheus-stack runs it (jobs and
	// cronjobs included).
	ksm := framework.NewProcess("kube-state-metrics", dir, bin, "--host=127.0.0.1", fmt.Sprintf("--port=%d", port),
		"--telemetry-host=127.0.0.1", fmt.Sprintf("--telemetry-port=%d", tport), "--kubeconfig="+c.KubeconfigPath)
	if err := ksm.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ksm.Stop() })
	url := fmt.Sprintf("http://127.0.0.1:%d/metrics", port)
	if err := framework.WaitHTTP(url, 60*time.Second, ksm); err != nil {
		t.Fatalf("%v\n%s", err, ksm.Log(4000))
	}
	version, _ := framework.ScrapeMetrics(fmt.Sprintf("http://127.0.0.1:%d/metrics", tport))
	t.Logf("kube-state-metrics %s", buildVersion(version))

	need := ruleSelectors(t, root)
	var fams map[string]*dto.MetricFamily
	var missing []string
	// Its informers fill the series after its first list; poll until every family is there.
	err = framework.Poll(ctx, 60*time.Second, func() (bool, error) {
		fams, err = framework.ScrapeMetrics(url)
		if err != nil {
			return false, nil
		}
		missing = missing[:0]
		for _, s := range need {
			if len(matching(fams[s.family], s.matchers)) == 0 {
				missing = append(missing, s.text)
			}
		}
		return len(missing) == 0, nil
	})
	for _, m := range missing {
		t.Errorf("no series for the rules' selector %s", m)
	}
	if err != nil && len(missing) == 0 {
		t.Fatal(err)
	}
	families := map[string]bool{}
	for _, s := range need {
		families[s.family] = true
	}
	t.Logf("%d kube_* selectors of the rules (%d families) each select a series", len(need), len(families))

	checked := 0
	for fam, labels := range testInputLabels(t, root) {
		have := map[string]bool{}
		if f := fams[fam]; f != nil {
			for _, m := range f.Metric {
				for _, l := range m.Label {
					have[l.GetName()] = true
				}
			}
		}
		if len(have) == 0 {
			t.Errorf("the rule tests feed %s, which this kube-state-metrics does not export", fam)
			continue
		}
		for _, l := range labels {
			if !have[l] {
				t.Errorf("the rule tests give %s the label %q, which this kube-state-metrics does not export (it has %v)", fam, l, sortedKeys(have))
			}
		}
		checked++
	}
	t.Logf("the labels of the rule tests' input series of %d kube_* families are all exported", checked)
}

func buildVersion(fams map[string]*dto.MetricFamily) string {
	for name, f := range fams {
		if !strings.HasSuffix(name, "_build_info") {
			continue
		}
		for _, m := range f.Metric {
			for _, l := range m.Label {
				if l.GetName() == "version" {
					return l.GetValue()
				}
			}
		}
	}
	return "(no build_info)"
}

// selector is one kube_* selector of a rule: its family and its label matchers.
type selector struct {
	text     string
	family   string
	matchers []matcher
}

type matcher struct {
	name, op string
	value    *regexp.Regexp // anchored, for = and != as well
}

var (
	selectorRe = regexp.MustCompile(`\b(kube_[a-z_]+)\s*(\{[^}]*\})?`)
	matcherRe  = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"`)
)

// ruleSelectors reads every kube_* selector of the generated rule files' expressions.
func ruleSelectors(t *testing.T, root string) []selector {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(root, "rules", "generated", "*.yaml"))
	if len(paths) == 0 {
		t.Fatal("no rules/generated/*.yaml")
	}
	seen := map[string]bool{}
	var out []selector
	for _, p := range paths {
		var f struct {
			Groups []struct {
				Rules []struct {
					Expr string `json:"expr"`
				} `json:"rules"`
			} `json:"groups"`
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal(b, &f); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		for _, g := range f.Groups {
			for _, r := range g.Rules {
				for _, m := range selectorRe.FindAllStringSubmatch(r.Expr, -1) {
					text := m[1] + m[2]
					if seen[text] {
						continue
					}
					seen[text] = true
					s := selector{text: text, family: m[1]}
					for _, mm := range matcherRe.FindAllStringSubmatch(m[2], -1) {
						if targetLabels[mm[1]] {
							continue
						}
						v := mm[3]
						if mm[2] == "=" || mm[2] == "!=" {
							v = regexp.QuoteMeta(v)
						}
						re, err := regexp.Compile("^(?:" + v + ")$")
						if err != nil {
							t.Fatalf("%s: matcher %s: %v", p, mm[0], err)
						}
						s.matchers = append(s.matchers, matcher{name: mm[1], op: mm[2], value: re})
					}
					out = append(out, s)
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].text < out[j].text })
	return out
}

// matching returns f's series that every matcher accepts (a missing label is "", as in PromQL).
func matching(f *dto.MetricFamily, ms []matcher) []*dto.Metric {
	if f == nil {
		return nil
	}
	var out []*dto.Metric
	for _, m := range f.Metric {
		labels := map[string]string{}
		for _, l := range m.Label {
			labels[l.GetName()] = l.GetValue()
		}
		ok := true
		for _, mt := range ms {
			hit := mt.value.MatchString(labels[mt.name])
			if mt.op == "!=" || mt.op == "!~" {
				hit = !hit
			}
			ok = ok && hit
		}
		if ok {
			out = append(out, m)
		}
	}
	return out
}

var seriesRe = regexp.MustCompile(`^\s*(kube_[a-z_]+)\{([^}]*)\}`)

// testInputLabels: for every kube_* family the rule tests feed, the label names their input
// series give it, target labels aside.
func testInputLabels(t *testing.T, root string) map[string][]string {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(root, "rules", "tests", "*.yaml"))
	labels := map[string]map[string]bool{}
	for _, p := range paths {
		var f struct {
			Tests []struct {
				InputSeries []struct {
					Series string `json:"series"`
				} `json:"input_series"`
			} `json:"tests"`
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal(b, &f); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		for _, tc := range f.Tests {
			for _, s := range tc.InputSeries {
				m := seriesRe.FindStringSubmatch(s.Series)
				if m == nil {
					continue
				}
				if labels[m[1]] == nil {
					labels[m[1]] = map[string]bool{}
				}
				for _, mm := range matcherRe.FindAllStringSubmatch(m[2], -1) {
					// exported_<label>: a target label that collided with the series' own, as a
					// scrape without honor_labels renames it (KubecauseStateSeriesMissing's test).
					if !targetLabels[mm[1]] && !strings.HasPrefix(mm[1], "exported_") {
						labels[m[1]][mm[1]] = true
					}
				}
			}
		}
	}
	if len(labels) == 0 {
		t.Fatal("no kube_* input series in rules/tests/*.yaml")
	}
	out := map[string][]string{}
	for fam, ls := range labels {
		out[fam] = sortedKeys(ls)
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// writeRuleStates writes what the rules read, as the controllers and the kubelet would: a node
// NotReady, under memory pressure and cordoned; a Deployment's ReplicaSet whose pod crash-loops
// after an OOM kill, its init container waiting, on a Pending claim; a CronJob whose run
// succeeded, its Job, complete, and its unschedulable pod; an evicted pod; a claim being deleted;
// a LoadBalancer Service with its address; a StatefulSet and a DaemonSet.
func writeRuleStates(ctx context.Context, t *testing.T, c *framework.Cluster) {
	t.Helper()
	const ns = "shop"
	if err := c.EnsureNamespaces(ctx, ns); err != nil {
		t.Fatal(err)
	}
	cl := c.Client
	o := framework.Objects{Client: cl}
	check := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	now := metav1.Now()

	node, err := cl.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a"},
		Spec: corev1.NodeSpec{Unschedulable: true}}, metav1.CreateOptions{})
	check(node, err)
	node.Status.Conditions = []corev1.NodeCondition{
		{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, Reason: "NodeStatusUnknown", Message: "Kubelet stopped posting node status.", LastHeartbeatTime: now, LastTransitionTime: now},
		{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionTrue, Reason: "KubeletHasInsufficientMemory", Message: "kubelet has insufficient memory available", LastHeartbeatTime: now, LastTransitionTime: now},
		{Type: corev1.NodeDiskPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasNoDiskPressure", Message: "kubelet has no disk pressure", LastHeartbeatTime: now, LastTransitionTime: now},
		{Type: corev1.NodePIDPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientPID", Message: "kubelet has sufficient PID available", LastHeartbeatTime: now, LastTransitionTime: now},
	}
	node.Status.NodeInfo = corev1.NodeSystemInfo{KubeletVersion: "v1.32.13", ContainerRuntimeVersion: "containerd://2.4.2", OSImage: "Debian GNU/Linux 12 (bookworm)", KernelVersion: "6.1.0-28-amd64"}
	node.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "192.0.2.10"}}
	check(cl.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{}))

	labels := map[string]string{"app": "web"}
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "registry.example/app:1.0"}}}}
	dep, err := cl.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr(int32(1)), Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: tmpl}}, metav1.CreateOptions{})
	check(dep, err)
	rs, err := cl.AppsV1().ReplicaSets(ns).Create(ctx, &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web-7f9c6b5f4",
		OwnerReferences: []metav1.OwnerReference{owner("apps/v1", "Deployment", dep.Name, dep.UID)}},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr(int32(1)), Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: tmpl}}, metav1.CreateOptions{})
	check(rs, err)
	check(o.CreatePVC(ctx, ns, "data-web", nil))

	web := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-7f9c6b5f4-kx2lp", Namespace: ns, Labels: labels,
		OwnerReferences: []metav1.OwnerReference{owner("apps/v1", "ReplicaSet", rs.Name, rs.UID)}},
		Spec: corev1.PodSpec{NodeName: "node-a",
			InitContainers: []corev1.Container{{Name: "migrate", Image: "registry.example/migrate:1.0"}},
			Containers:     []corev1.Container{{Name: "main", Image: "registry.example/app:1.0", VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}}},
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data-web"}}}}}}
	web, err = cl.CoreV1().Pods(ns).Create(ctx, web, metav1.CreateOptions{})
	check(web, err)
	web.Status = corev1.PodStatus{Phase: corev1.PodRunning, HostIP: "192.0.2.10", PodIP: "10.244.1.10", StartTime: &now,
		Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady", LastTransitionTime: now}},
		InitContainerStatuses: []corev1.ContainerStatus{{Name: "migrate", Image: "registry.example/migrate:1.0",
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}}},
		ContainerStatuses: []corev1.ContainerStatus{{Name: "main", Image: "registry.example/app:1.0", RestartCount: 4,
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff",
				Message: "back-off 1m20s restarting failed container=main pod=web-7f9c6b5f4-kx2lp_shop(" + string(web.UID) + ")"}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "OOMKilled", ExitCode: 137, StartedAt: now, FinishedAt: now}}}}}
	check(cl.CoreV1().Pods(ns).UpdateStatus(ctx, web, metav1.UpdateOptions{}))

	cj, err := cl.BatchV1().CronJobs(ns).Create(ctx, &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "nightly"},
		Spec: batchv1.CronJobSpec{Schedule: "0 2 * * *", JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: jobTemplate()}}}}, metav1.CreateOptions{})
	check(cj, err)
	job, err := cl.BatchV1().Jobs(ns).Create(ctx, &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "nightly-29410560",
		OwnerReferences: []metav1.OwnerReference{owner("batch/v1", "CronJob", cj.Name, cj.UID)}},
		Spec: batchv1.JobSpec{Template: jobTemplate()}}, metav1.CreateOptions{})
	check(job, err)
	// The Job controller's order: SuccessCriteriaMet, then Complete (required since 1.31).
	job.Status = batchv1.JobStatus{StartTime: &now, CompletionTime: &now, Succeeded: 1,
		Conditions: []batchv1.JobCondition{
			{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastProbeTime: now, LastTransitionTime: now},
			{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastProbeTime: now, LastTransitionTime: now}}}
	check(cl.BatchV1().Jobs(ns).UpdateStatus(ctx, job, metav1.UpdateOptions{}))
	// The cronjob controller records the run's completion on the CronJob.
	cj.Status = batchv1.CronJobStatus{LastScheduleTime: &now, LastSuccessfulTime: &now}
	check(cl.BatchV1().CronJobs(ns).UpdateStatus(ctx, cj, metav1.UpdateOptions{}))
	batch, err := cl.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "nightly-29410560-x7k2q",
		OwnerReferences: []metav1.OwnerReference{owner("batch/v1", "Job", job.Name, job.UID)}},
		Spec: jobTemplate().Spec}, metav1.CreateOptions{})
	check(batch, err)
	check(o.SetUnschedulable(ctx, batch, `0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.`))

	evicted, err := o.CreatePod(ctx, ns, "fluentd-6x9tq", framework.PodOptions{Node: "node-a"})
	check(evicted, err)
	check(o.SetEvicted(ctx, evicted, "The node was low on resource: ephemeral-storage. Threshold quantity: 1%, available: 0. Container fluentd was using 5Gi, request is 0, has larger consumption of ephemeral-storage. "))

	// A claim in use being deleted: the protection finalizer holds it with its deletionTimestamp.
	old, err := o.CreatePVC(ctx, ns, "data-old", nil)
	check(old, err)
	old.Finalizers = []string{"kubernetes.io/pvc-protection"}
	check(cl.CoreV1().PersistentVolumeClaims(ns).Update(ctx, old, metav1.UpdateOptions{}))
	check(nil, cl.CoreV1().PersistentVolumeClaims(ns).Delete(ctx, old.Name, metav1.DeleteOptions{}))

	svc, err := o.CreateService(ctx, ns, "web", true, labels, 80)
	check(svc, err)
	check(o.SetLoadBalancerIngress(ctx, svc, "203.0.113.7"))

	sts, err := cl.AppsV1().StatefulSets(ns).Create(ctx, &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "db"},
		Spec: appsv1.StatefulSetSpec{Replicas: ptr(int32(1)), ServiceName: "db", Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "db"}}, Spec: tmpl.Spec}}}, metav1.CreateOptions{})
	check(sts, err)
	ds, err := cl.AppsV1().DaemonSets(ns).Create(ctx, &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "agent"},
		Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "agent"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "agent"}}, Spec: tmpl.Spec}}}, metav1.CreateOptions{})
	check(ds, err)
	// Pods in the mesh, of the StatefulSet and the DaemonSet: Istio's sidecar as a container, and
	// as a native sidecar (an init container that keeps running), as its injector writes them.
	always := corev1.ContainerRestartPolicyAlways
	meshed := func(name string, ref metav1.OwnerReference, spec corev1.PodSpec, status corev1.PodStatus) {
		t.Helper()
		p, err := cl.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns,
			OwnerReferences: []metav1.OwnerReference{ref}}, Spec: spec}, metav1.CreateOptions{})
		check(p, err)
		p.Status = status
		check(cl.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{}))
	}
	running := func(name, image string) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: name, Image: image, Ready: true,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}}
	}
	const proxy = "docker.io/istio/proxyv2:1.28.0"
	meshed("db-0", owner("apps/v1", "StatefulSet", sts.Name, sts.UID),
		corev1.PodSpec{NodeName: "node-a", Containers: []corev1.Container{{Name: "main", Image: "registry.example/app:1.0"}, {Name: "istio-proxy", Image: proxy}}},
		corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &now,
			ContainerStatuses: []corev1.ContainerStatus{running("main", "registry.example/app:1.0"), running("istio-proxy", proxy)}})
	meshed("agent-q8v4d", owner("apps/v1", "DaemonSet", ds.Name, ds.UID),
		corev1.PodSpec{NodeName: "node-a", InitContainers: []corev1.Container{{Name: "istio-proxy", Image: proxy, RestartPolicy: &always}},
			Containers: []corev1.Container{{Name: "main", Image: "registry.example/app:1.0"}}},
		corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &now,
			InitContainerStatuses: []corev1.ContainerStatus{running("istio-proxy", proxy)},
			ContainerStatuses:     []corev1.ContainerStatus{running("main", "registry.example/app:1.0")}})
}

func jobTemplate() corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
		Containers: []corev1.Container{{Name: "report", Image: "registry.example/report:1.0"}}}}
}

func owner(apiVersion, kind, name string, uid types.UID) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: uid, Controller: ptr(true)}
}

func ptr[T any](v T) *T { return &v }
