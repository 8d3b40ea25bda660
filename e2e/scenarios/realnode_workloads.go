// Real-node scenarios of a workload's own configuration: a missing ConfigMap, a quota, a memory limit,
// a command, open files, an OOM kill, crash-looping static pods and DaemonSets.

package scenarios

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubecause/kubecause/e2e/framework"
)

// S1: a Deployment's pods mount a ConfigMap that does not exist; creating it fixes them.
func realS1() Scenario {
	const ns, deploy, cm = "real-s1", "app", "app-config"
	return Scenario{
		ID: "S1", Title: "ConfigMap missing (Deployment)", Namespace: ns,
		Play: func(ctx context.Context, s *framework.Stack) error {
			tmpl := pod(ns, "", func(p *corev1.Pod) {
				p.Spec.Volumes = []corev1.Volume{{Name: "cfg", VolumeSource: corev1.VolumeSource{
					ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: cm}}}}}
				p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "cfg", MountPath: "/etc/app"}}
			})
			return createDeployment(ctx, s, ns, deploy, 1, tmpl.Spec)
		},
		Fix: func(ctx context.Context, s *framework.Stack) error {
			_, err := s.Cluster.Client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: cm, Namespace: ns}, Data: map[string]string{"app.yaml": "ok: true\n"}}, metav1.CreateOptions{})
			return err
		},
		Expect: []RealEvent{{Kind: "Pod", Object: "*", Reason: "FailedMount", Cause: "configmap_not_found"}},
		// The page names the node and the owning workload (through the ReplicaSet).
		Alerts: []ExpectedAlert{{Name: "KubecausePodVolumeFailing", Labels: map[string]string{"namespace": ns, "cause": "configmap_not_found",
			"node": "kubecause-node", "workload": deploy, "workload_type": "Deployment"},
			Runbook: "kubecausepodvolumefailing.md#configmap_not_found"}},
	}
}

// A namespace's ResourceQuota allows one pod; its Deployment asks for two. The real ReplicaSet
// controller creates the first and writes FailedCreate ("exceeded quota: pods-quota") for the
// second: no pod exists to alert on, the page names the Deployment, the cause and the quota
// (issue 25). Scaling the Deployment to what the quota allows fixes it.
func realQuota() Scenario {
	const ns, deploy, quota = "real-quota", "web", "pods-quota"
	return Scenario{
		ID: "QUOTA", Title: "ResourceQuota exhausted (Deployment)", Namespace: ns,
		Play: func(ctx context.Context, s *framework.Stack) error {
			if _, err := s.Cluster.Client.CoreV1().ResourceQuotas(ns).Create(ctx, &corev1.ResourceQuota{
				ObjectMeta: metav1.ObjectMeta{Name: quota, Namespace: ns},
				Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("1")}},
			}, metav1.CreateOptions{}); err != nil {
				return err
			}
			return createDeployment(ctx, s, ns, deploy, 2, pod(ns, "").Spec)
		},
		Fix: func(ctx context.Context, s *framework.Stack) error {
			sc, err := s.Cluster.Client.AppsV1().Deployments(ns).GetScale(ctx, deploy, metav1.GetOptions{})
			if err != nil {
				return err
			}
			sc.Spec.Replicas = 1
			_, err = s.Cluster.Client.AppsV1().Deployments(ns).UpdateScale(ctx, deploy, sc, metav1.UpdateOptions{})
			return err
		},
		Expect: []RealEvent{{Kind: "ReplicaSet", Object: "*", Reason: "FailedCreate", Cause: "quota_exceeded", Message: "exceeded quota: " + quota}},
		Alerts: []ExpectedAlert{{Name: "KubecauseWorkloadFailing", Labels: map[string]string{"namespace": ns, "cause": "quota_exceeded",
			"target": quota, "workload": deploy, "workload_type": "Deployment"},
			Runbook: "kubecauseworkloadfailing.md#quota_exceeded"}},
	}
}

// S11: limits.memory written as 1024m (1.024 bytes): the runtime cannot create the sandbox.
func realS11() Scenario {
	return podScenario("S11", "memory limit 1024m", "real-s11", "milli-memory", func(_ *framework.Stack, p *corev1.Pod) error {
		container(p).Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1024m")}
		return nil
	}, "FailedCreatePodSandBox", "memory_limit_too_small", "KubecausePodSandboxFailing")
}

// A container whose command does not exist in its image.
func realCommandNotFound() Scenario {
	return podScenario("CMD", "command not found", "real-cmd", "no-such-command", func(_ *framework.Stack, p *corev1.Pod) error {
		container(p).Command = []string{"/nonexistent"}
		return nil
	}, "Failed", "container_command_not_found", "KubecauseContainerFailing")
}

// S4: the process exhausts its own open-file limit and panics; the kubelet backs off.
func realS4() Scenario {
	return podScenario("S4", "too many open files, panic, crash loop", "real-s4", "too-many-open-files", func(_ *framework.Stack, p *corev1.Pod) error {
		container(p).Args = []string{"-open-files", "-nofile=64"}
		return nil
	}, "BackOff", "crash_loop_backoff", "KubecauseContainerFailing")
}

// S5: a static pod (from the kubelet's staticPodPath) and a DaemonSet whose containers exit
// at once: the kubelet backs off restarting them.
func realS5() Scenario {
	const ns, static, ds = "real-s5", "static-crash", "agent"
	return Scenario{
		ID: "S5", Title: "static pod and DaemonSet crash-looping", Namespace: ns,
		Play: func(ctx context.Context, s *framework.Stack) error {
			manifest := fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
  namespace: %s
spec:
  dnsPolicy: Default
  containers:
  - name: main
    image: %s
    imagePullPolicy: IfNotPresent
    args: ["-exit=1", "-after=1s"]
`, static, ns, framework.TestappImage)
			if err := os.WriteFile(filepath.Join(s.Node.ManifestDir, static+".yaml"), []byte(manifest), 0o644); err != nil {
				return err
			}
			tmpl := pod(ns, "", func(p *corev1.Pod) { p.Spec.Containers[0].Args = []string{"-exit=2", "-after=1s"} })
			d := &appsv1.DaemonSet{
				ObjectMeta: metav1.ObjectMeta{Name: ds, Namespace: ns},
				Spec: appsv1.DaemonSetSpec{
					Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": ds}},
					Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": ds}}, Spec: tmpl.Spec},
				},
			}
			_, err := s.Cluster.Client.AppsV1().DaemonSets(ns).Create(ctx, d, metav1.CreateOptions{})
			return err
		},
		Fix: func(ctx context.Context, s *framework.Stack) error {
			if err := os.Remove(filepath.Join(s.Node.ManifestDir, static+".yaml")); err != nil {
				return err
			}
			return s.Cluster.Client.AppsV1().DaemonSets(ns).Delete(ctx, ds, metav1.DeleteOptions{})
		},
		Expect: []RealEvent{
			// The mirror pod of a static pod is named <pod>-<node>.
			{Kind: "Pod", Object: static + "-kubecause-node", Reason: "BackOff", Cause: "crash_loop_backoff"},
			{Kind: "Pod", Object: "*", Reason: "BackOff", Cause: "crash_loop_backoff"},
		},
		Alerts: []ExpectedAlert{
			// The mirror pod is owned by its Node: the page names the node as its workload.
			{Name: "KubecauseContainerFailing", Labels: map[string]string{"namespace": ns, "pod": static + "-kubecause-node", "cause": "crash_loop_backoff",
				"node": "kubecause-node", "workload": "kubecause-node", "workload_type": "Node"},
				Runbook: "kubecausecontainerfailing.md#crash_loop_backoff"},
			// The DaemonSet's pod has a generated name: the page names its workload.
			{Name: "KubecauseContainerFailing", Labels: map[string]string{"namespace": ns, "cause": "crash_loop_backoff",
				"node": "kubecause-node", "workload": ds, "workload_type": "DaemonSet"},
				Runbook: "kubecausecontainerfailing.md#crash_loop_backoff"},
		},
	}
}

// OOMKilled: a container allocates more than its memory limit; the kernel kills it, the kubelet
// restarts it and backs off. The kubelet writes no Event naming the OOM kill: the BackOff is
// what kubecause counts (crash_loop_backoff), and the container's last state (kube-state-metrics)
// says OOMKilled, so the page names oom_killed (issue 25: without node-problem-detector).
func realOOMKilled() Scenario {
	const ns, name = "real-oom", "eats-memory"
	sc := podScenario("OOM", "memory limit exceeded, OOM-killed, crash loop", ns, name, func(_ *framework.Stack, p *corev1.Pod) error {
		c := container(p)
		c.Args = []string{"-alloc-mib=64"}
		c.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("32Mi")}
		return nil
	}, "BackOff", "crash_loop_backoff", "KubecauseContainerFailing")
	sc.Queries = []PromExpect{{Expr: fmt.Sprintf(`max(kube_pod_container_status_last_terminated_reason{namespace=%q,pod=%q,reason="OOMKilled"})`, ns, name), Want: 1}}
	sc.Alerts = []ExpectedAlert{podAlert("KubecauseContainerFailing", ns, name, "oom_killed")}
	return sc
}
