//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/kubecause/kubecause/e2e/framework"
	"github.com/kubecause/kubecause/e2e/scenarios"
)

// TestSeedScenarios plays every seed scenario with an Event or state signal into one cluster,
// as the kubelet, the controllers and the scheduler would write them. Each pod is owned by the
// workload its name says (a Deployment through its ReplicaSet, a StatefulSet, a DaemonSet).
// Two alerting chains evaluate the same rules on the same scrapes: Prometheus 2 (Debian) and
// Prometheus 3, each with its own Alertmanager holding the mixin's inhibition rules. Per
// scenario and chain: the exact occurrence counts in Prometheus, the alert the pager receives
// (labels, the pod's node and owning workload, the runbook section of the cause), that it
// resolves once the state is fixed, and that the scenario paged exactly once. Finally every
// rule of every group (the 1m SLO groups too) has evaluated without error on both.
func TestSeedScenarios(t *testing.T) {
	ctx := testContext(t)
	scs := scenarios.SeedScenarios()
	s := startStack(t, framework.StackOptions{Namespaces: scenarios.Namespaces(scs), Prometheus3: true, InhibitRules: true})
	owners := &podOwners{client: s.Cluster.Client, of: map[string]workloadRef{}}
	s.Objects.PodOwners = owners.create
	for _, sc := range scs {
		check(t, sc.Play(ctx, s))
	}
	for _, sc := range scs {
		t.Run(sc.ID+"/fires", func(t *testing.T) {
			t.Logf("%s: %s", sc.ID, sc.Title)
			for _, pg := range s.Pagers {
				t.Run(pg.Name, func(t *testing.T) {
					for _, o := range sc.Occurrences {
						v, err := pg.Prometheus.API.WaitValue(ctx, o.Selector(), o.Count, metricTimeout)
						if err != nil {
							t.Fatalf("%s: want %s == %g: %v", pg, o.Selector(), o.Count, err)
						}
						t.Logf("%s: %s = %s", pg, o.Selector(), v)
					}
					expectPaged(ctx, t, s, pg, sc.Alerts, owners)
				})
			}
		})
	}
	for _, sc := range scs {
		check(t, sc.Fix(ctx, s))
	}
	for _, sc := range scs {
		t.Run(sc.ID+"/resolves", func(t *testing.T) {
			for _, pg := range s.Pagers {
				t.Run(pg.Name, func(t *testing.T) {
					for _, a := range sc.Alerts {
						got, err := pg.Webhook.WaitResolved(resolveTimeout, a.Match())
						check(t, err)
						t.Logf("%s %s: %v", pg, sc.ID, got)
						pagedOnce(t, pg, a)
					}
				})
			}
		})
	}
	// Nothing but the expected alerts reached either pager (a burn alert inhibited by the
	// specific alerts, no duplicate from another rule).
	for _, pg := range s.Pagers {
		summary := map[string]int{}
		for _, n := range pg.Webhook.All() {
			summary[fmt.Sprintf("%s %s", n.Labels["alertname"], n.Status)]++
			if n.Status != "firing" {
				continue
			}
			expected := false
			for _, sc := range scs {
				for _, a := range sc.Alerts {
					expected = expected || labelsInclude(n.Labels, a.Match())
				}
			}
			if !expected {
				t.Errorf("%s: unexpected page %v", pg, n)
			}
		}
		t.Logf("%s: all notifications by alert and status: %v", pg, summary)
	}
	rules, err := s.RulesHealthy(ctx)
	check(t, err)
	t.Logf("every rule evaluated without error: %v", rules)
}

// expectPaged waits for each alert on pg's pager and checks what the on-call reads: severity,
// summary, description, the runbook section and, on pod alerts, the pod's node and owning
// workload.
func expectPaged(ctx context.Context, t *testing.T, s *framework.Stack, pg *framework.Pager, alerts []scenarios.ExpectedAlert, owners *podOwners) {
	t.Helper()
	for _, a := range alerts {
		got, err := pg.Webhook.WaitFiring(alertTimeout, a.Match())
		if err != nil {
			t.Fatalf("%s: %v", pg, err)
		}
		if len(got) != 1 {
			t.Errorf("%s: %s: want exactly one alert matching %v, got %d: %v", pg, a.Name, a.Match(), len(got), got)
		}
		for _, n := range got {
			t.Logf("%s: alert received: %v", pg, n)
			if !a.RunbookOK(n.Annotations["runbook_url"]) {
				t.Errorf("%s: %s: runbook_url %q, want …/%s", pg, a.Name, n.Annotations["runbook_url"], a.Runbook)
			}
			if n.Labels["severity"] == "" || n.Annotations["summary"] == "" || n.Annotations["description"] == "" {
				t.Errorf("%s: %s: severity, summary and description must be set: %v %v", pg, a.Name, n.Labels, n.Annotations)
			}
			pod := a.Labels["pod"]
			if pod == "" {
				continue
			}
			p, err := s.Cluster.Client.CoreV1().Pods(a.Labels["namespace"]).Get(ctx, pod, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			w := owners.workload(p.Namespace, p.Name)
			want := map[string]string{"node": p.Spec.NodeName, "workload_type": w.kind, "workload": w.name}
			for k, v := range want {
				if n.Labels[k] != v {
					t.Errorf("%s: %s of %s/%s: label %s=%q, want %q (%v)", pg, a.Name, p.Namespace, p.Name, k, n.Labels[k], v, n)
				}
			}
			for _, v := range want {
				if !strings.Contains(n.Annotations["description"], v) {
					t.Errorf("%s: %s: the description does not name %q: %s", pg, a.Name, v, n.Annotations["description"])
				}
			}
		}
	}
}

// pagedOnce: the incident of alert a paged once on pg — one alert (for a pod alert: one alert of
// any name for that pod) that started firing once (never resolved and fired again).
func pagedOnce(t *testing.T, pg *framework.Pager, a scenarios.ExpectedAlert) {
	t.Helper()
	match := a.Match()
	if pod := a.Labels["pod"]; pod != "" {
		match = map[string]string{"namespace": a.Labels["namespace"], "pod": pod}
	}
	starts := map[string]int{}
	last := map[string]string{}
	names := map[string]string{}
	for _, n := range pg.Webhook.All() {
		if !labelsInclude(n.Labels, match) {
			continue
		}
		if n.Status == "firing" && last[n.Fingerprint] != "firing" {
			starts[n.Fingerprint]++
			names[n.Fingerprint] = n.String()
		}
		last[n.Fingerprint] = n.Status
	}
	if len(starts) != 1 {
		t.Errorf("%s: %s: want one alert for %v, got %d: %v", pg, a.Name, match, len(starts), names)
	}
	for fp, k := range starts {
		if k != 1 {
			t.Errorf("%s: %s paged %d times: %s", pg, a.Name, k, names[fp])
		}
	}
}

func labelsInclude(have, want map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

// workloadRef is a pod's owning workload as the on-call names it.
type workloadRef struct{ kind, name string }

// podOwners creates the workload a pod name implies before the pod, and owns the pod by it, as
// the controllers would: <deployment>-<replicaset hash>-<suffix> is a Deployment's pod
// through its ReplicaSet, <statefulset>-<ordinal> a StatefulSet's, <daemonset>-<suffix> a
// DaemonSet's; other names are bare pods. No controller runs, so these objects only own.
type podOwners struct {
	client kubernetes.Interface
	mu     sync.Mutex
	of     map[string]workloadRef // namespace/pod
}

var (
	deploymentPod  = regexp.MustCompile(`^(.+)-([0-9a-z]{8,10})-[0-9a-z]{5}$`)
	statefulSetPod = regexp.MustCompile(`^(.+)-[0-9]+$`)
	daemonSetPod   = regexp.MustCompile(`^(.+)-[0-9a-z]{5}$`)
)

func (o *podOwners) workload(ns, pod string) workloadRef {
	o.mu.Lock()
	defer o.mu.Unlock()
	if w, ok := o.of[ns+"/"+pod]; ok {
		return w
	}
	return workloadRef{"Pod", pod}
}

func (o *podOwners) create(ctx context.Context, ns, pod string) ([]metav1.OwnerReference, error) {
	apps := o.client.AppsV1()
	labels := map[string]string{"app": pod}
	template := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "registry.example/app:1.0"}}},
	}
	selector := &metav1.LabelSelector{MatchLabels: labels}
	var w workloadRef
	var owner metav1.OwnerReference
	switch {
	case deploymentPod.MatchString(pod):
		m := deploymentPod.FindStringSubmatch(pod)
		w = workloadRef{"Deployment", m[1]}
		d, err := getOrCreate(func() (*appsv1.Deployment, error) {
			return apps.Deployments(ns).Create(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: m[1], Namespace: ns},
				Spec: appsv1.DeploymentSpec{Selector: selector, Template: template}}, metav1.CreateOptions{})
		}, func() (*appsv1.Deployment, error) { return apps.Deployments(ns).Get(ctx, m[1], metav1.GetOptions{}) })
		if err != nil {
			return nil, err
		}
		rsName := m[1] + "-" + m[2]
		rs, err := getOrCreate(func() (*appsv1.ReplicaSet, error) {
			return apps.ReplicaSets(ns).Create(ctx, &appsv1.ReplicaSet{
				ObjectMeta: metav1.ObjectMeta{Name: rsName, Namespace: ns, OwnerReferences: []metav1.OwnerReference{controllerRef("Deployment", d.Name, d.UID)}},
				Spec:       appsv1.ReplicaSetSpec{Selector: selector, Template: template}}, metav1.CreateOptions{})
		}, func() (*appsv1.ReplicaSet, error) { return apps.ReplicaSets(ns).Get(ctx, rsName, metav1.GetOptions{}) })
		if err != nil {
			return nil, err
		}
		owner = controllerRef("ReplicaSet", rs.Name, rs.UID)
	case statefulSetPod.MatchString(pod):
		name := statefulSetPod.FindStringSubmatch(pod)[1]
		w = workloadRef{"StatefulSet", name}
		sts, err := getOrCreate(func() (*appsv1.StatefulSet, error) {
			return apps.StatefulSets(ns).Create(ctx, &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
				Spec: appsv1.StatefulSetSpec{Selector: selector, Template: template}}, metav1.CreateOptions{})
		}, func() (*appsv1.StatefulSet, error) { return apps.StatefulSets(ns).Get(ctx, name, metav1.GetOptions{}) })
		if err != nil {
			return nil, err
		}
		owner = controllerRef("StatefulSet", sts.Name, sts.UID)
	case daemonSetPod.MatchString(pod):
		name := daemonSetPod.FindStringSubmatch(pod)[1]
		w = workloadRef{"DaemonSet", name}
		ds, err := getOrCreate(func() (*appsv1.DaemonSet, error) {
			return apps.DaemonSets(ns).Create(ctx, &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
				Spec: appsv1.DaemonSetSpec{Selector: selector, Template: template}}, metav1.CreateOptions{})
		}, func() (*appsv1.DaemonSet, error) { return apps.DaemonSets(ns).Get(ctx, name, metav1.GetOptions{}) })
		if err != nil {
			return nil, err
		}
		owner = controllerRef("DaemonSet", ds.Name, ds.UID)
	default:
		return nil, nil
	}
	o.mu.Lock()
	o.of[ns+"/"+pod] = w
	o.mu.Unlock()
	return []metav1.OwnerReference{owner}, nil
}

// getOrCreate creates an object, or gets it when it exists (two pods of one workload).
func getOrCreate[T any](create, get func() (T, error)) (T, error) {
	v, err := create()
	if apierrors.IsAlreadyExists(err) {
		return get()
	}
	return v, err
}

func controllerRef(kind, name string, uid types.UID) metav1.OwnerReference {
	yes := true
	return metav1.OwnerReference{APIVersion: "apps/v1", Kind: kind, Name: name, UID: uid, Controller: &yes, BlockOwnerDeletion: &yes}
}
