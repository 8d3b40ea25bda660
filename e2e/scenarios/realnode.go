package scenarios

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	nodev1 "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubecause/kubecause/e2e/framework"
)

// RealScenarios are the seed scenarios this host can make real (docs/e2e.md lists the others).
func RealScenarios() []Scenario {
	return []Scenario{
		realS1(), realS6(), realS11(), realCommandNotFound(), realS4(),
		realS12NotFound(), realS12Auth(), realS12Unreachable(), realS12Insecure(), realSchedulingCPU(), realSchedulingSelector(),
		realS2(), realS3(), realS18(), realS5(), realS19(), realOOMKilled(), realS10(), realS14(), realS7(),
		realQuota(),
	}
}

// IncidentPrelude are the scenarios played and resolved on the incident's node before its
// kube-state-metrics outage, so that the outage has something gone to bring back: a pod the fix
// deletes (S11), a workload's pod the fix repairs (S1), a workload short of pods (QUOTA).
func IncidentPrelude() []Scenario {
	return []Scenario{realS1(), realS11(), realQuota()}
}

// RealNodeScenarios change the node for every pod (its network, its taints, its kubelet): the
// test plays, checks and fixes them one at a time after the others.
func RealNodeScenarios() []Scenario {
	return []Scenario{realS18LowOnDisk(), realS18DiskPressure(), realS10Pull(), realSchedulingTaint(), realS13(), realS15(), realS17()}
}

// pod is a pod of the test image on the real node's scheduler.
func pod(ns, name string, mutate ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"app": name}},
		Spec: corev1.PodSpec{
			// No cluster DNS runs: pods use the node's resolver (else MissingClusterDNS Events).
			DNSPolicy:                     corev1.DNSDefault,
			TerminationGracePeriodSeconds: ptr(int64(1)),
			Containers: []corev1.Container{{
				Name: "main", Image: framework.TestappImage, ImagePullPolicy: corev1.PullIfNotPresent,
			}},
		},
	}
	for _, m := range mutate {
		m(p)
	}
	return p
}

func createPod(ctx context.Context, s *framework.Stack, p *corev1.Pod) error {
	_, err := s.Cluster.Client.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("creating pod %s/%s: %w", p.Namespace, p.Name, err)
	}
	return nil
}

func deletePod(ctx context.Context, s *framework.Stack, ns, name string) error {
	return s.Cluster.Client.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: ptr(int64(0))})
}

// deletePodAndWait deletes a pod and waits until it is gone (its name free again).
func deletePodAndWait(ctx context.Context, s *framework.Stack, ns, name string) error {
	if err := deletePod(ctx, s, ns, name); err != nil {
		return err
	}
	return framework.Poll(ctx, 60e9, func() (bool, error) {
		_, err := s.Cluster.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}

// waitPodRunning waits until the pod runs.
func waitPodRunning(ctx context.Context, s *framework.Stack, ns, name string, timeout time.Duration) error {
	err := framework.Poll(ctx, timeout, func() (bool, error) {
		p, err := s.Cluster.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		return err == nil && p.Status.Phase == corev1.PodRunning, nil
	})
	if err != nil {
		return fmt.Errorf("pod %s/%s never ran: %w", ns, name, err)
	}
	return nil
}

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

// S6: a sidecar whose readiness endpoint never listens, probed as Istio's proxy is
// (HTTP GET :15021/healthz/ready), beside an application whose own readiness port is closed.
func realS6() Scenario {
	const ns, sidecar, app = "real-s6", "sidecar-not-ready", "app-port-closed"
	probe := func(port int32, path string) *corev1.Probe {
		h := corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(port)}}
		if path != "" {
			h = corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromInt32(port)}}
		}
		return &corev1.Probe{ProbeHandler: h, PeriodSeconds: 1, FailureThreshold: 1}
	}
	return Scenario{
		ID: "S6", Title: "readiness probes refused (sidecar and application)", Namespace: ns,
		Play: func(ctx context.Context, s *framework.Stack) error {
			if err := createPod(ctx, s, pod(ns, sidecar, func(p *corev1.Pod) {
				p.Spec.Containers[0].Args = []string{"-listen=:8080"}
				p.Spec.Containers[0].ReadinessProbe = probe(15021, "/healthz/ready")
			})); err != nil {
				return err
			}
			return createPod(ctx, s, pod(ns, app, func(p *corev1.Pod) {
				p.Spec.Containers[0].Args = []string{"-listen=:8080"}
				p.Spec.Containers[0].ReadinessProbe = probe(9090, "")
			}))
		},
		Fix: func(ctx context.Context, s *framework.Stack) error {
			if err := deletePod(ctx, s, ns, sidecar); err != nil {
				return err
			}
			return deletePod(ctx, s, ns, app)
		},
		Expect: []RealEvent{
			{Kind: "Pod", Object: sidecar, Reason: "Unhealthy", Cause: "istio_sidecar_not_ready"},
			{Kind: "Pod", Object: app, Reason: "Unhealthy", Cause: "readiness_probe_connection_refused"},
		},
		Alerts: []ExpectedAlert{podAlert("KubecausePodProbeFailing", ns, app, "readiness_probe_connection_refused")},
	}
}

// podScenario is one broken pod that the fix deletes: mutate breaks it (it may read the stack,
// e.g. for a registry's address), the component writes an Event of reason with cause about it,
// and alert (if any) pages with the cause's runbook section.
func podScenario(id, title, ns, name string, mutate func(*framework.Stack, *corev1.Pod) error, reason, cause, alert string) Scenario {
	sc := Scenario{
		ID: id, Title: title, Namespace: ns,
		Play: func(ctx context.Context, s *framework.Stack) error {
			p := pod(ns, name)
			if err := mutate(s, p); err != nil {
				return err
			}
			return createPod(ctx, s, p)
		},
		Fix:    func(ctx context.Context, s *framework.Stack) error { return deletePod(ctx, s, ns, name) },
		Expect: []RealEvent{{Kind: "Pod", Object: name, Reason: reason, Cause: cause}},
	}
	if alert != "" {
		sc.Alerts = []ExpectedAlert{podAlert(alert, ns, name, cause)}
	}
	return sc
}

// createDeployment creates a Deployment of replicas pods with spec, selected by app=name.
func createDeployment(ctx context.Context, s *framework.Stack, ns, name string, replicas int32, spec corev1.PodSpec) error {
	sel := map[string]string{"app": name}
	_, err := s.Cluster.Client.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: sel}, Spec: spec},
		},
	}, metav1.CreateOptions{})
	return err
}

// container is the pod's only container.
func container(p *corev1.Pod) *corev1.Container { return &p.Spec.Containers[0] }

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

// S12: an image tag that the (local) registry does not have.
func realS12NotFound() Scenario {
	return podScenario("S12a", "image not found in the registry", "real-s12-notfound", "missing-tag", func(s *framework.Stack, p *corev1.Pod) error {
		container(p).Image = s.Registry.Addr + "/kubecause/testapp:no-such-tag"
		return nil
	}, "Failed", "image_not_found", "KubecausePodImagePullFailing")
}

// S12: the registry needs credentials the pod does not have.
func realS12Auth() Scenario {
	return podScenario("S12c", "registry auth required", "real-s12-auth", "no-pull-secret", func(s *framework.Stack, p *corev1.Pod) error {
		container(p).Image = s.AuthRegistry.Addr + "/kubecause/testapp:e2e"
		return nil
	}, "Failed", "image_auth_failed", "KubecausePodImagePullFailing")
}

// S12: the registry cannot be reached (nothing listens on its port).
func realS12Unreachable() Scenario {
	return podScenario("S12b", "registry unreachable", "real-s12-unreachable", "registry-down", func(_ *framework.Stack, p *corev1.Pod) error {
		port, err := framework.FreePort()
		container(p).Image = fmt.Sprintf("127.0.0.1:%d/kubecause/testapp:e2e", port)
		return err
	}, "Failed", "image_registry_unreachable", "KubecausePodImagePullFailing")
}

// S12: the registry speaks plain HTTP and the node's runtime expects HTTPS (no insecure-registry
// setting for it). The open registry is named by another host, localhost:port, whose hosts.toml
// says https, as containerd assumes for any registry off the loopback.
func realS12Insecure() Scenario {
	return podScenario("S12d", "plain-HTTP registry, runtime expects HTTPS", "real-s12-insecure", "insecure-registry", func(s *framework.Stack, p *corev1.Pod) error {
		_, port, err := net.SplitHostPort(s.Registry.Addr)
		if err != nil {
			return err
		}
		host := net.JoinHostPort("localhost", port)
		container(p).Image = host + "/kubecause/testapp:e2e"
		return s.Node.ExpectTLSRegistry(host)
	}, "Failed", "image_insecure_registry", "KubecausePodImagePullFailing")
}

// FailedScheduling from the real scheduler: more CPU than the node has.
func realSchedulingCPU() Scenario {
	return podScenario("SCHED-CPU", "insufficient CPU", "real-sched-cpu", "fifty-cpus", func(_ *framework.Stack, p *corev1.Pod) error {
		container(p).Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50")}
		return nil
	}, "FailedScheduling", "scheduling_insufficient_resources", "KubecausePodUnschedulable")
}

// FailedScheduling from the real scheduler: a node selector no node matches.
func realSchedulingSelector() Scenario {
	return podScenario("SCHED-SEL", "node selector matches no node", "real-sched-selector", "wrong-zone", func(_ *framework.Stack, p *corev1.Pod) error {
		p.Spec.NodeSelector = map[string]string{"topology.kubernetes.io/zone": "nowhere"}
		return nil
	}, "FailedScheduling", "scheduling_node_selector_mismatch", "KubecausePodUnschedulable")
}

// S3: a LoadBalancer Service in a cluster with no load-balancer controller (no cloud provider,
// no MetalLB) never gets an address.
func realS3() Scenario {
	const ns, svc = "real-s3", "istiod-hosted-lb"
	return Scenario{
		ID: "S3", Title: "LoadBalancer Service without an address", Namespace: ns,
		Play: func(ctx context.Context, s *framework.Stack) error {
			_, err := s.Objects.CreateService(ctx, ns, svc, true, map[string]string{"app": svc}, 15012, 15017)
			return err
		},
		Fix: func(ctx context.Context, s *framework.Stack) error {
			return s.Cluster.Client.CoreV1().Services(ns).Delete(ctx, svc, metav1.DeleteOptions{})
		},
		Alerts: []ExpectedAlert{{Name: "KubecauseLoadBalancerNoAddress", Labels: map[string]string{"namespace": ns, "service": svc},
			Runbook: "kubecauseloadbalancernoaddress.md"}},
	}
}

// S18: a container writes more than its ephemeral-storage limit; the kubelet evicts the pod.
func realS18() Scenario {
	const ns = "real-s18"
	sc := podScenario("S18", "ephemeral-storage limit exceeded, evicted", ns, "fills-scratch", func(_ *framework.Stack, p *corev1.Pod) error {
		p.Spec.Volumes = []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
		c := container(p)
		c.VolumeMounts = []corev1.VolumeMount{{Name: "scratch", MountPath: "/scratch"}}
		c.Args = []string{"-fill-dir=/scratch", "-fill-mib=16"}
		c.Resources.Limits = corev1.ResourceList{corev1.ResourceEphemeralStorage: resource.MustParse("4Mi")}
		return nil
	}, "Evicted", "evicted_ephemeral_storage_limit", "")
	sc.Alerts = []ExpectedAlert{evictedAlert(ns, "evicted_ephemeral_storage_limit")}
	return sc
}

// evictedAlert is KubecausePodEvicted for a namespace and cause (it counts pods and names none).
func evictedAlert(ns, cause string) ExpectedAlert {
	return ExpectedAlert{Name: "KubecausePodEvicted", Labels: map[string]string{"namespace": ns, "cause": cause},
		Runbook: "kubecausepodevicted.md#" + cause}
}

// S18 under DiskPressure: the kubelet restarts with a nodefs.available threshold above what its
// filesystem has free (Node.SetDiskPressure; nothing is written to the disk). It reports
// DiskPressure and refuses to admit again the pods that were running (Evicted, "The node had
// condition: [DiskPressure]."), here a pod that wrote 8 MiB to an emptyDir, and every other pod
// on the node, as a kubelet restarted on a full disk does; the other node scenarios create
// theirs after this one. Fixed: the threshold restored, the node without pressure, the pod
// deleted.
func realS18DiskPressure() Scenario {
	const ns, name = "real-s18-pressure", "disk-hog"
	return Scenario{
		ID: "S18-PRESSURE", Title: "node under DiskPressure, pods evicted", Namespace: ns,
		Play: func(ctx context.Context, s *framework.Stack) error {
			if err := createPod(ctx, s, diskWriterPod(ns, name, 8)); err != nil {
				return err
			}
			if err := waitPodRunning(ctx, s, ns, name, 90*time.Second); err != nil {
				return err
			}
			return s.Node.SetDiskPressure(ctx, true)
		},
		Fix: fixDiskScenario(ns, name),
		Expect: []RealEvent{
			{Kind: "Pod", Object: name, Reason: "Evicted", Cause: "evicted_disk", Message: "The node had condition: [DiskPressure]"},
			{Kind: "Node", Object: "kubecause-node", Reason: "NodeHasDiskPressure", Cause: "node_disk_pressure", Namespace: "default"},
			{Kind: "Node", Object: "kubecause-node", Reason: "EvictionThresholdMet", Cause: "node_disk_pressure", Namespace: "default"},
		},
		Alerts: []ExpectedAlert{pressureAlert("DiskPressure")},
		// The node's pressure alert fires first (its `for` is shorter) and names why the pods
		// were evicted: the evictions are its detail (the shipped inhibition while it fires, the
		// rules' evictionsExplainedFor after it) and never reach the pager. The rules did see
		// them: the pod is failing with the eviction's cause on the node the alert names.
		Explained: []ExpectedAlert{evictedAlert(ns, "evicted_disk")},
		// After S18-LOW, whose notification (the pressure's or the eviction's) must have resolved
		// so that this pressure's is its own.
		MutesNode: true,
		Queries: []PromExpect{
			{Expr: `count(namespace_pod_cause:kubecause_pod_failing:max{namespace="` + ns + `",cause="evicted_disk",node="kubecause-node"})`, Want: 1},
			{Expr: `max(cluster_node:kubecause_node_pressure_held:max{node="kubecause-node"})`, Want: 1},
		},
		Fixed: []PromExpect{{Expr: `max(kube_node_status_condition{node="kubecause-node",condition="DiskPressure",status="true"})`, Want: 0}},
	}
}

// diskWriterPod is a pod that writes mib MiB to an emptyDir and stays up.
func diskWriterPod(ns, name string, mib int) *corev1.Pod {
	return pod(ns, name, func(p *corev1.Pod) {
		p.Spec.Volumes = []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
		c := container(p)
		c.VolumeMounts = []corev1.VolumeMount{{Name: "scratch", MountPath: "/scratch"}}
		c.Args = []string{"-fill-dir=/scratch", fmt.Sprintf("-fill-mib=%d", mib)}
	})
}

// fixDiskScenario restores the kubelet's threshold (and the node's images), deletes the pod and
// waits until the node is without pressure.
func fixDiskScenario(ns, name string) func(context.Context, *framework.Stack) error {
	return func(ctx context.Context, s *framework.Stack) error {
		if err := s.Node.SetDiskPressure(ctx, false); err != nil {
			return err
		}
		if err := deletePod(ctx, s, ns, name); err != nil {
			return err
		}
		return waitNoDiskPressure(ctx, s)
	}
}

// waitNoDiskPressure waits until the node has neither the DiskPressure condition nor its taint,
// so the next node scenario's pod is admitted.
func waitNoDiskPressure(ctx context.Context, s *framework.Stack) error {
	return framework.Poll(ctx, 90e9, func() (bool, error) {
		n, err := s.Cluster.Client.CoreV1().Nodes().Get(ctx, s.Node.Name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeDiskPressure && c.Status == corev1.ConditionTrue {
				return false, nil
			}
		}
		for _, t := range n.Spec.Taints {
			if t.Key == corev1.TaintNodeDiskPressure {
				return false, nil
			}
		}
		return true, nil
	})
}

// S18 as a disk fills under running pods: the kubelet runs with a nodefs.available threshold
// 128 MiB below what its filesystem has free (Node.SetDiskHeadroom), and a pod writes 384 MiB
// to an emptyDir. The kubelet's eviction manager finds the node low on ephemeral-storage and
// evicts the pod using the most ("The node was low on resource: ephemeral-storage. Threshold
// quantity: …"); the emptyDir goes with it. 384 MiB is written to the machine's disk for
// seconds, nothing is filled. Fixed: the threshold restored, the pod deleted.
func realS18LowOnDisk() Scenario {
	const ns, name = "real-s18-low", "disk-filler"
	return Scenario{
		ID: "S18-LOW", Title: "node low on ephemeral-storage, the largest user evicted", Namespace: ns,
		Play: func(ctx context.Context, s *framework.Stack) error {
			if err := s.Node.SetDiskHeadroom(ctx, 128<<20); err != nil {
				return err
			}
			return createPod(ctx, s, diskWriterPod(ns, name, 384))
		},
		Fix: fixDiskScenario(ns, name),
		Expect: []RealEvent{
			{Kind: "Pod", Object: name, Reason: "Evicted", Cause: "evicted_disk", Message: "The node was low on resource: ephemeral-storage"},
		},
		// The kubelet may report DiskPressure while the disk is under its threshold, until the
		// evicted pod's emptyDir is gone (2 min at load, 9m41s in one cold run): then
		// KubecauseNodePressure pages for the node and the eviction is its detail, as the
		// mixin says (evictionsExplainedFor); otherwise the eviction pages. One notification.
		Alerts: []ExpectedAlert{explainedBy(evictedAlert(ns, "evicted_disk"), pressureAlert("DiskPressure"))},
		// Its pressure, when the kubelet reports it, mutes the node's pod alerts as S17's outage
		// does: the scenarios before it resolve first. It plays before S18-PRESSURE: a pressure
		// that paged explains the node's evictions for evictionsExplainedFor (1h), so after it
		// this eviction could not page on its own.
		MutesNode: true,
	}
}

// pressureAlert is the node's pressure alert for condition.
func pressureAlert(condition string) ExpectedAlert {
	return ExpectedAlert{Name: "KubecauseNodePressure", Labels: map[string]string{"node": "kubecause-node", "condition": condition},
		Runbook: "kubecausenodepressure.md#" + strings.ToLower(condition)}
}

// explainedBy returns a, which the pager gets unless by pages instead.
func explainedBy(a, by ExpectedAlert) ExpectedAlert {
	a.ExplainedBy = &by
	return a
}

// S2: a PVC without a StorageClass and no PV: the PV controller reports it.
func realS2() Scenario {
	const ns, claim = "real-s2", "etcd-data"
	return Scenario{
		ID: "S2", Title: "PVC without StorageClass", Namespace: ns,
		Play: func(ctx context.Context, s *framework.Stack) error {
			_, err := s.Objects.CreatePVC(ctx, ns, claim, ptr(""))
			return err
		},
		Fix: func(ctx context.Context, s *framework.Stack) error {
			return s.Cluster.Client.CoreV1().PersistentVolumeClaims(ns).Delete(ctx, claim, metav1.DeleteOptions{})
		},
		Expect: []RealEvent{{Kind: "PersistentVolumeClaim", Object: claim, Reason: "FailedBinding", Cause: "no_storage_class"}},
		Alerts: []ExpectedAlert{{Name: "KubecausePVCProvisioningFailing", Labels: map[string]string{"namespace": ns, "persistentvolumeclaim": claim, "cause": "no_storage_class"},
			Runbook: "kubecausepvcprovisioningfailing.md#no_storage_class"}},
	}
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

// S19: a PVC in use by a running pod is deleted: the protection finalizer holds it Terminating
// until the pod goes.
func realS19() Scenario {
	const ns, pv, claim, user = "real-s19", "real-s19-local", "data", "uses-data"
	return Scenario{
		ID: "S19", Title: "PVC stuck Terminating behind pvc-protection", Namespace: ns,
		Play: func(ctx context.Context, s *framework.Stack) error {
			dir := filepath.Join(s.Opts.WorkDir, "hostpath-pv")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			_, err := s.Cluster.Client.CoreV1().PersistentVolumes().Create(ctx, &corev1.PersistentVolume{
				ObjectMeta: metav1.ObjectMeta{Name: pv},
				Spec: corev1.PersistentVolumeSpec{
					Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Mi")},
					AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
					PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: dir}},
				},
			}, metav1.CreateOptions{})
			if err != nil {
				return err
			}
			_, err = s.Cluster.Client.CoreV1().PersistentVolumeClaims(ns).Create(ctx, &corev1.PersistentVolumeClaim{
				ObjectMeta: metav1.ObjectMeta{Name: claim, Namespace: ns},
				Spec: corev1.PersistentVolumeClaimSpec{
					StorageClassName: ptr(""), VolumeName: pv,
					AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Mi")}},
				},
			}, metav1.CreateOptions{})
			if err != nil {
				return err
			}
			if err := createPod(ctx, s, pod(ns, user, func(p *corev1.Pod) {
				p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
					PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}}
				p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
			})); err != nil {
				return err
			}
			// Deleted once the pod runs: the pvc-protection finalizer then keeps it.
			if err := waitPodRunning(ctx, s, ns, user, 120*time.Second); err != nil {
				return err
			}
			return s.Cluster.Client.CoreV1().PersistentVolumeClaims(ns).Delete(ctx, claim, metav1.DeleteOptions{})
		},
		Fix: func(ctx context.Context, s *framework.Stack) error { return deletePod(ctx, s, ns, user) },
		Alerts: []ExpectedAlert{{Name: "KubecausePVCStuckTerminating", Labels: map[string]string{"namespace": ns, "persistentvolumeclaim": claim},
			Runbook: "kubecausepvcstuckterminating.md"}},
	}
}

// S13: the CNI's address range is used up: the pod that takes its last address runs, the next
// one gets no IP.
func realS13() Scenario {
	const ns, holder, next = "real-s13", "holder", "no-address"
	return Scenario{
		ID: "S13", Title: "CNI IP range exhausted", Namespace: ns,
		Play: func(ctx context.Context, s *framework.Stack) error {
			last, err := s.Node.LimitPodAddresses()
			if err != nil {
				return err
			}
			// containerd reloads the CNI configuration in the background after the change: a holder
			// set up before that got another address and is replaced until it holds the last one.
			var ip string
			for attempt := 1; ip != last; attempt++ {
				if attempt > 3 {
					return fmt.Errorf("pod %s/%s got %s three times, not the only address left %s: containerd did not load the limited range", ns, holder, ip, last)
				}
				if ip != "" {
					if err := deletePodAndWait(ctx, s, ns, holder); err != nil {
						return err
					}
				}
				if err := createPod(ctx, s, pod(ns, holder)); err != nil {
					return err
				}
				if err := framework.Poll(ctx, 120e9, func() (bool, error) {
					p, err := s.Cluster.Client.CoreV1().Pods(ns).Get(ctx, holder, metav1.GetOptions{})
					if err != nil || p.Status.Phase != corev1.PodRunning {
						return false, nil
					}
					ip = p.Status.PodIP
					return true, nil
				}); err != nil {
					return fmt.Errorf("pod %s/%s, to take the last address %s, never ran: %w", ns, holder, last, err)
				}
			}
			return createPod(ctx, s, pod(ns, next))
		},
		Fix: func(ctx context.Context, s *framework.Stack) error {
			if err := s.Node.RestorePodAddresses(); err != nil {
				return err
			}
			for _, name := range []string{holder, next} {
				if err := deletePod(ctx, s, ns, name); err != nil {
					return err
				}
			}
			return nil
		},
		Expect: []RealEvent{{Kind: "Pod", Object: next, Reason: "FailedCreatePodSandBox", Cause: "cni_error"}},
		// Only the pod without an address: exactly one alert for the namespace.
		Alerts: []ExpectedAlert{{Name: "KubecausePodSandboxFailing", Labels: map[string]string{"namespace": ns, "cause": "cni_error"},
			Runbook: "kubecausepodsandboxfailing.md#cni_error"}},
	}
}

// S15: the pod network is slower than the kubelet's runtime request timeout: the kubelet gives up
// on RunPodSandbox (DeadlineExceeded) while containerd still sets up the sandbox under its name,
// and the kubelet's retry, with the same name (attempt 0), gets containerd's own refusal
// `failed to reserve sandbox name "<pod>_<ns>_<uid>_0": name "…" is reserved for "<id>"`. The
// node's CNI chain ends with a plugin whose ADD does not finish (Node.SetSlowPodNetwork), the
// kubelet runs with runtimeRequestTimeout 10s; the fix restores both and deletes the pod.
func realS15() Scenario {
	const ns, name = "real-s15", "slow-net"
	return Scenario{
		ID: "S15", Title: "sandbox name still reserved: CNI slower than the runtime request timeout", Namespace: ns,
		Play: func(ctx context.Context, s *framework.Stack) error {
			if err := s.Node.SetSlowPodNetwork(ctx, true); err != nil {
				return err
			}
			if err := createPod(ctx, s, pod(ns, name)); err != nil {
				return err
			}
			// containerd loads the changed chain in the background: the pod must reach the plugin.
			if err := framework.Poll(ctx, 120e9, func() (bool, error) { return s.Node.SlowPodNetworkHeld(), nil }); err != nil {
				return fmt.Errorf("pod %s/%s never reached the slow CNI plugin: %w", ns, name, err)
			}
			return nil
		},
		Fix: func(ctx context.Context, s *framework.Stack) error {
			if err := s.Node.SetSlowPodNetwork(ctx, false); err != nil {
				return err
			}
			return deletePod(ctx, s, ns, name)
		},
		Expect: []RealEvent{{Kind: "Pod", Object: name, Reason: "FailedCreatePodSandBox", Cause: "sandbox_name_conflict",
			Message: "failed to reserve sandbox name"}},
		Alerts: []ExpectedAlert{{Name: "KubecausePodSandboxFailing", Labels: map[string]string{"namespace": ns, "cause": "sandbox_name_conflict"},
			Runbook: "kubecausepodsandboxfailing.md#sandbox_name_conflict"}},
	}
}

// S17: the kubelet stops: the node-lifecycle controller marks the node NotReady.
func realS17() Scenario {
	return Scenario{
		ID: "S17", Title: "kubelet stopped, node NotReady", Namespace: "default",
		Play: func(ctx context.Context, s *framework.Stack) error { return s.Node.StopKubelet() },
		Fix: func(ctx context.Context, s *framework.Stack) error {
			if err := s.Node.StartKubelet(); err != nil {
				return err
			}
			return s.Node.WaitReady(ctx, 120e9)
		},
		Expect: []RealEvent{{Kind: "Node", Object: "kubecause-node", Reason: "NodeNotReady", Cause: "node_not_ready"}},
		Alerts: []ExpectedAlert{{Name: "KubecauseNodeNotReady", Labels: map[string]string{"node": "kubecause-node"},
			Runbook: "kubecausenodenotready.md"}},
		MutesNode: true,
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

// S10: the runtime's data directory is full. The pod's RuntimeClass selects a runc whose state
// root is SmallDiskDir, a 1 MiB tmpfs filled by the test, so the sandbox cannot be created;
// every other pod's runtime is untouched.
func realS10() Scenario {
	const ns, name = "real-s10", "runtime-disk-full"
	sc := podScenario("S10", "runtime data directory full (no space left on device)", ns, name, func(_ *framework.Stack, p *corev1.Pod) error {
		p.Spec.RuntimeClassName = ptr(framework.SmallDiskRuntimeClass)
		return nil
	}, "FailedCreatePodSandBox", "disk_full", "KubecausePodSandboxFailing")
	create := sc.Play
	sc.Play = func(ctx context.Context, s *framework.Stack) error {
		if err := s.Node.FillSmallDisk(); err != nil {
			return err
		}
		if _, err := s.Cluster.Client.NodeV1().RuntimeClasses().Create(ctx, &nodev1.RuntimeClass{
			ObjectMeta: metav1.ObjectMeta{Name: framework.SmallDiskRuntimeClass}, Handler: framework.SmallDiskRuntimeHandler}, metav1.CreateOptions{}); err != nil {
			return err
		}
		return create(ctx, s)
	}
	del := sc.Fix
	sc.Fix = func(ctx context.Context, s *framework.Stack) error {
		if err := del(ctx, s); err != nil {
			return err
		}
		return s.Node.FreeSmallDisk()
	}
	return sc
}

// S14: the runtime's shim dies while it creates the pod's sandbox: the pod's RuntimeClass selects
// a runc that kills its shim when asked to create a container (framework.ShimKillRuntimeHandler), so
// containerd loses the shim's ttrpc connection in the middle of the sandbox's task creation.
func realS14() Scenario {
	const ns, name = "real-s14", "shim-killed"
	sc := podScenario("S14", "the runtime shim killed while it creates the sandbox", ns, name, func(_ *framework.Stack, p *corev1.Pod) error {
		p.Spec.RuntimeClassName = ptr(framework.ShimKillRuntimeClass)
		return nil
	}, "FailedCreatePodSandBox", "runtime_shim_error", "KubecausePodSandboxFailing")
	create := sc.Play
	sc.Play = func(ctx context.Context, s *framework.Stack) error {
		if _, err := s.Cluster.Client.NodeV1().RuntimeClasses().Create(ctx, &nodev1.RuntimeClass{
			ObjectMeta: metav1.ObjectMeta{Name: framework.ShimKillRuntimeClass}, Handler: framework.ShimKillRuntimeHandler}, metav1.CreateOptions{}); err != nil {
			return err
		}
		return create(ctx, s)
	}
	return sc
}

// S10 as a full /var/lib/containerd shows itself first: pulls fail. containerd's ingest
// directory is a full 1 MiB tmpfs (FillContentStore) and the pod's image is one the node does
// not have yet (a variant of the test image in the local registry). Freeing the space lets the
// kubelet's next pull succeed and the pod run.
func realS10Pull() Scenario {
	const ns, name = "real-s10-pull", "pull-disk-full"
	return Scenario{
		ID: "S10-PULL", Title: "image pull into a full runtime disk (no space left on device)", Namespace: ns,
		Play: func(ctx context.Context, s *framework.Stack) error {
			img, err := s.Testapp.Variant("s10-pull")
			if err != nil {
				return err
			}
			ref, err := s.Registry.Push(img, "kubecause/testapp:s10-pull")
			if err != nil {
				return err
			}
			if err := s.Node.FillContentStore(); err != nil {
				return err
			}
			return createPod(ctx, s, pod(ns, name, func(p *corev1.Pod) { container(p).Image = ref }))
		},
		Fix: func(ctx context.Context, s *framework.Stack) error {
			if err := s.Node.FreeContentStore(); err != nil {
				return err
			}
			// The kubelet retries the pull after its back-off (at most 5 min).
			return waitPodRunning(ctx, s, ns, name, 6*time.Minute)
		},
		Expect: []RealEvent{{Kind: "Pod", Object: name, Reason: "Failed", Cause: "disk_full"}},
		Alerts: []ExpectedAlert{podAlert("KubecausePodSandboxFailing", ns, name, "disk_full")},
	}
}

// FailedScheduling from the real scheduler: the only node has a NoSchedule taint the pod does
// not tolerate (running pods stay). Removing the taint lets the pod run.
func realSchedulingTaint() Scenario {
	const ns, name = "real-sched-taint", "no-toleration"
	taint := corev1.Taint{Key: "kubecause.io/e2e-maintenance", Value: "true", Effect: corev1.TaintEffectNoSchedule}
	setTaint := func(ctx context.Context, s *framework.Stack, on bool) error {
		return framework.Poll(ctx, 30e9, func() (bool, error) {
			node, err := s.Cluster.Client.CoreV1().Nodes().Get(ctx, s.Node.Name, metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			var taints []corev1.Taint
			for _, t := range node.Spec.Taints {
				if t.Key != taint.Key {
					taints = append(taints, t)
				}
			}
			if on {
				taints = append(taints, taint)
			}
			node.Spec.Taints = taints
			_, err = s.Cluster.Client.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{})
			return err == nil, nil // a conflict with the kubelet's status update: retry
		})
	}
	return Scenario{
		ID: "SCHED-TAINT", Title: "untolerated NoSchedule taint", Namespace: ns,
		Play: func(ctx context.Context, s *framework.Stack) error {
			if err := setTaint(ctx, s, true); err != nil {
				return fmt.Errorf("tainting node %s: %w", s.Node.Name, err)
			}
			return createPod(ctx, s, pod(ns, name))
		},
		Fix: func(ctx context.Context, s *framework.Stack) error {
			if err := setTaint(ctx, s, false); err != nil {
				return fmt.Errorf("removing the taint of node %s: %w", s.Node.Name, err)
			}
			// Running before the next node scenario changes the node again.
			return waitPodRunning(ctx, s, ns, name, 90*time.Second)
		},
		Expect: []RealEvent{{Kind: "Pod", Object: name, Reason: "FailedScheduling", Cause: "scheduling_taint_not_tolerated"}},
		Alerts: []ExpectedAlert{podAlert("KubecausePodUnschedulable", ns, name, "scheduling_taint_not_tolerated")},
		// Fixed: the pod was scheduled and runs.
		Fixed: []PromExpect{{Expr: fmt.Sprintf(`max(kube_pod_status_phase{namespace=%q,pod=%q,phase="Running"})`, ns, name), Want: 1}},
	}
}

// S7 with the EndpointSlice controller: on the mesh control-plane cluster the istiod-remote
// endpoints must be the hosted istiod's pod IP. Broken: istiod-remote has no selector and a
// static address (a TEST-NET-1 address, never contacted: the check compares, it does not dial).
// Fixed as a user would: the Service selects the hosted istiod and the EndpointSlice controller
// writes its real pod IP.
func realS7() Scenario {
	const (
		ns     = "istio-system"
		meshID = "mesh1"
		hosted = "istiod-" + meshID + "-hosted"
		remote = "istiod-remote"
		wrong  = "192.0.2.10"
	)
	sel := map[string]string{"app": hosted}
	return Scenario{
		ID: "S7", Title: "istiod-remote endpoints: a static address instead of the hosted istiod's pod IP", Namespace: ns,
		Play: func(ctx context.Context, s *framework.Stack) error {
			tmpl := pod(ns, "", func(p *corev1.Pod) { p.Spec.Containers[0].Args = []string{"-listen=:15012"} })
			if err := createDeployment(ctx, s, ns, hosted, 1, tmpl.Spec); err != nil {
				return err
			}
			if _, err := s.Objects.CreateService(ctx, ns, hosted, false, sel, 15012, 15017); err != nil {
				return err
			}
			if _, err := s.Objects.CreateService(ctx, ns, remote, false, nil, 15012, 15017); err != nil {
				return err
			}
			_, err := s.Objects.ApplyEndpointSlice(ctx, ns, remote, []string{wrong}, 15012, 15017)
			return err
		},
		Fix: func(ctx context.Context, s *framework.Stack) error {
			slices := s.Cluster.Client.DiscoveryV1().EndpointSlices(ns)
			list, err := slices.List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + remote})
			if err != nil {
				return err
			}
			for _, es := range list.Items {
				if es.Labels[discoveryv1.LabelManagedBy] != "endpointslice-controller.k8s.io" {
					if err := slices.Delete(ctx, es.Name, metav1.DeleteOptions{}); err != nil {
						return err
					}
				}
			}
			svc, err := s.Cluster.Client.CoreV1().Services(ns).Get(ctx, remote, metav1.GetOptions{})
			if err != nil {
				return err
			}
			svc.Spec.Selector = sel
			_, err = s.Cluster.Client.CoreV1().Services(ns).Update(ctx, svc, metav1.UpdateOptions{})
			return err
		},
		Alerts: []ExpectedAlert{{Name: "KubecauseIstiodRemoteEndpointsMismatch", Labels: map[string]string{"namespace": ns, "service": remote},
			Runbook: "kubecauseistiodremoteendpointsmismatch.md"}},
		Queries: []PromExpect{
			{Expr: `max(kubecause_endpoints_discovery_info{check="istiod-remote",mesh_id="` + meshID + `",role="control-plane"})`, Want: 1},
			{Expr: `max(kubecause_endpoints_match{namespace="istio-system",service="istiod-remote"})`, Want: 0},
			{Expr: `count(kubecause_endpoints_wrong_address{service="istiod-remote",address="` + wrong + `",problem="unexpected"})`, Want: 2},
		},
		Fixed: []PromExpect{
			{Expr: `max(kubecause_endpoints_match{namespace="istio-system",service="istiod-remote"})`, Want: 1},
			// The address kubecause now sees is the pod's, written by the EndpointSlice controller.
			{Expr: `count(kubecause_endpoints_wrong_address{service="istiod-remote"}) or vector(0)`, Want: 0},
		},
	}
}
