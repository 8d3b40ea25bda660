package framework

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// RealScenario is a seed scenario played on the real node: the test creates the workload as a
// user would, and the kubelet, the runtime, the scheduler or the controllers write the Events.
type RealScenario struct {
	ID, Title string
	// Namespace holds the scenario's objects, and nothing else, so its Events can be summed.
	Namespace string
	// Play creates the broken workload; Fix repairs or removes it.
	Play, Fix func(ctx context.Context, s *Stack) error
	// Expect are the Events a component must write, and kubecause's cause for each.
	Expect []RealEvent
	// Alerts must reach the pager (labels are a subset match) and resolve after Fix.
	Alerts []ExpectedAlert
}

// RealEvent is an Event a real component writes about Object in the scenario's namespace.
type RealEvent struct {
	Kind, Object, Reason string
	// Cause is what kubecause must call it.
	Cause string
}

// RealScenarioNamespaces lists the scenarios' namespaces.
func RealScenarioNamespaces(scs []RealScenario) []string {
	var out []string
	for _, sc := range scs {
		out = append(out, sc.Namespace)
	}
	return out
}

// RealScenarios are the seed scenarios this host can make real (docs/e2e.md lists the others).
func RealScenarios() []RealScenario {
	return []RealScenario{
		realS1(), realS6(), realS11(), realCommandNotFound(), realS4(),
		realS12NotFound(), realS12Auth(), realS12Unreachable(), realSchedulingCPU(), realSchedulingSelector(),
		realS2(), realS18(),
	}
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
				Name: "main", Image: TestappImage, ImagePullPolicy: corev1.PullIfNotPresent,
			}},
		},
	}
	for _, m := range mutate {
		m(p)
	}
	return p
}

func createPod(ctx context.Context, s *Stack, p *corev1.Pod) error {
	_, err := s.Cluster.Client.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("creating pod %s/%s: %w", p.Namespace, p.Name, err)
	}
	return nil
}

func deletePod(ctx context.Context, s *Stack, ns, name string) error {
	return s.Cluster.Client.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: ptr(int64(0))})
}

// S1: a Deployment's pods mount a ConfigMap that does not exist; creating it fixes them.
func realS1() RealScenario {
	const ns, deploy, cm = "real-s1", "app", "app-config"
	return RealScenario{
		ID: "S1", Title: "ConfigMap missing (Deployment)", Namespace: ns,
		Play: func(ctx context.Context, s *Stack) error {
			tmpl := pod(ns, "", func(p *corev1.Pod) {
				p.Spec.Volumes = []corev1.Volume{{Name: "cfg", VolumeSource: corev1.VolumeSource{
					ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: cm}}}}}
				p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "cfg", MountPath: "/etc/app"}}
			})
			d := &appsv1.Deployment{
				ObjectMeta: metav1.ObjectMeta{Name: deploy, Namespace: ns},
				Spec: appsv1.DeploymentSpec{
					Replicas: ptr(int32(1)),
					Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": deploy}},
					Template: corev1.PodTemplateSpec{
						ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": deploy}},
						Spec:       tmpl.Spec,
					},
				},
			}
			if _, err := s.Cluster.Client.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
				return err
			}
			return nil
		},
		Fix: func(ctx context.Context, s *Stack) error {
			_, err := s.Cluster.Client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: cm, Namespace: ns}, Data: map[string]string{"app.yaml": "ok: true\n"}}, metav1.CreateOptions{})
			return err
		},
		Expect: []RealEvent{{Kind: "Pod", Object: "*", Reason: "FailedMount", Cause: "configmap_not_found"}},
		Alerts: []ExpectedAlert{{Name: "KubecausePodVolumeFailing", Labels: map[string]string{"namespace": ns, "cause": "configmap_not_found"},
			Runbook: "kubecausepodvolumefailing.md#configmap_not_found"}},
	}
}

// S6: the readiness probe's port is closed (the sidecar never listens).
func realS6() RealScenario {
	const ns, name = "real-s6", "probe-refused"
	return RealScenario{
		ID: "S6", Title: "readiness probe connection refused", Namespace: ns,
		Play: func(ctx context.Context, s *Stack) error {
			return createPod(ctx, s, pod(ns, name, func(p *corev1.Pod) {
				p.Spec.Containers[0].Args = []string{"-listen=:8080"}
				p.Spec.Containers[0].ReadinessProbe = &corev1.Probe{
					ProbeHandler:  corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(15021)}},
					PeriodSeconds: 1, FailureThreshold: 1,
				}
			}))
		},
		Fix:    func(ctx context.Context, s *Stack) error { return deletePod(ctx, s, ns, name) },
		Expect: []RealEvent{{Kind: "Pod", Object: name, Reason: "Unhealthy", Cause: "readiness_probe_connection_refused"}},
		Alerts: []ExpectedAlert{podAlert("KubecausePodProbeFailing", ns, name, "readiness_probe_connection_refused")},
	}
}

// S11: limits.memory written as 1024m (1.024 bytes): the runtime cannot create the sandbox.
func realS11() RealScenario {
	const ns, name = "real-s11", "milli-memory"
	return RealScenario{
		ID: "S11", Title: "memory limit 1024m", Namespace: ns,
		Play: func(ctx context.Context, s *Stack) error {
			return createPod(ctx, s, pod(ns, name, func(p *corev1.Pod) {
				p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1024m")}
			}))
		},
		Fix:    func(ctx context.Context, s *Stack) error { return deletePod(ctx, s, ns, name) },
		Expect: []RealEvent{{Kind: "Pod", Object: name, Reason: "FailedCreatePodSandBox", Cause: "memory_limit_too_small"}},
		Alerts: []ExpectedAlert{podAlert("KubecausePodSandboxFailing", ns, name, "memory_limit_too_small")},
	}
}

// A container whose command does not exist in its image.
func realCommandNotFound() RealScenario {
	const ns, name = "real-cmd", "no-such-command"
	return RealScenario{
		ID: "CMD", Title: "command not found", Namespace: ns,
		Play: func(ctx context.Context, s *Stack) error {
			return createPod(ctx, s, pod(ns, name, func(p *corev1.Pod) {
				p.Spec.Containers[0].Command = []string{"/nonexistent"}
			}))
		},
		Fix:    func(ctx context.Context, s *Stack) error { return deletePod(ctx, s, ns, name) },
		Expect: []RealEvent{{Kind: "Pod", Object: name, Reason: "Failed", Cause: "command_not_found"}},
		Alerts: []ExpectedAlert{podAlert("KubecauseContainerFailing", ns, name, "command_not_found")},
	}
}

// S4: the process exhausts its own open-file limit and panics; the kubelet backs off.
func realS4() RealScenario {
	const ns, name = "real-s4", "too-many-open-files"
	return RealScenario{
		ID: "S4", Title: "too many open files, panic, crash loop", Namespace: ns,
		Play: func(ctx context.Context, s *Stack) error {
			return createPod(ctx, s, pod(ns, name, func(p *corev1.Pod) {
				p.Spec.Containers[0].Args = []string{"-open-files", "-nofile=64"}
			}))
		},
		Fix:    func(ctx context.Context, s *Stack) error { return deletePod(ctx, s, ns, name) },
		Expect: []RealEvent{{Kind: "Pod", Object: name, Reason: "BackOff", Cause: "crash_loop_backoff"}},
	}
}

// S12: an image tag that the (local) registry does not have.
func realS12NotFound() RealScenario {
	const ns, name = "real-s12-notfound", "missing-tag"
	return RealScenario{
		ID: "S12a", Title: "image not found in the registry", Namespace: ns,
		Play: func(ctx context.Context, s *Stack) error {
			return createPod(ctx, s, pod(ns, name, func(p *corev1.Pod) {
				p.Spec.Containers[0].Image = s.Registry.Addr + "/kubecause/testapp:no-such-tag"
			}))
		},
		Fix:    func(ctx context.Context, s *Stack) error { return deletePod(ctx, s, ns, name) },
		Expect: []RealEvent{{Kind: "Pod", Object: name, Reason: "Failed", Cause: "image_not_found"}},
		Alerts: []ExpectedAlert{podAlert("KubecausePodImagePullFailing", ns, name, "image_not_found")},
	}
}

// S12: the registry needs credentials the pod does not have.
func realS12Auth() RealScenario {
	const ns, name = "real-s12-auth", "no-pull-secret"
	return RealScenario{
		ID: "S12c", Title: "registry auth required", Namespace: ns,
		Play: func(ctx context.Context, s *Stack) error {
			return createPod(ctx, s, pod(ns, name, func(p *corev1.Pod) {
				p.Spec.Containers[0].Image = s.AuthRegistry.Addr + "/kubecause/testapp:e2e"
			}))
		},
		Fix:    func(ctx context.Context, s *Stack) error { return deletePod(ctx, s, ns, name) },
		Expect: []RealEvent{{Kind: "Pod", Object: name, Reason: "Failed", Cause: "image_auth_failed"}},
		Alerts: []ExpectedAlert{podAlert("KubecausePodImagePullFailing", ns, name, "image_auth_failed")},
	}
}

// S12: the registry cannot be reached (nothing listens on its port).
func realS12Unreachable() RealScenario {
	const ns, name = "real-s12-unreachable", "registry-down"
	return RealScenario{
		ID: "S12b", Title: "registry unreachable", Namespace: ns,
		Play: func(ctx context.Context, s *Stack) error {
			port, err := FreePort()
			if err != nil {
				return err
			}
			return createPod(ctx, s, pod(ns, name, func(p *corev1.Pod) {
				p.Spec.Containers[0].Image = fmt.Sprintf("127.0.0.1:%d/kubecause/testapp:e2e", port)
			}))
		},
		Fix:    func(ctx context.Context, s *Stack) error { return deletePod(ctx, s, ns, name) },
		Expect: []RealEvent{{Kind: "Pod", Object: name, Reason: "Failed", Cause: "image_registry_unreachable"}},
		Alerts: []ExpectedAlert{podAlert("KubecausePodImagePullFailing", ns, name, "image_registry_unreachable")},
	}
}

// FailedScheduling from the real scheduler: more CPU than the node has.
func realSchedulingCPU() RealScenario {
	const ns, name = "real-sched-cpu", "fifty-cpus"
	return RealScenario{
		ID: "SCHED-CPU", Title: "insufficient CPU", Namespace: ns,
		Play: func(ctx context.Context, s *Stack) error {
			return createPod(ctx, s, pod(ns, name, func(p *corev1.Pod) {
				p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50")}
			}))
		},
		Fix:    func(ctx context.Context, s *Stack) error { return deletePod(ctx, s, ns, name) },
		Expect: []RealEvent{{Kind: "Pod", Object: name, Reason: "FailedScheduling", Cause: "scheduling_insufficient_resources"}},
		Alerts: []ExpectedAlert{podAlert("KubecausePodUnschedulable", ns, name, "scheduling_insufficient_resources")},
	}
}

// FailedScheduling from the real scheduler: a node selector no node matches.
func realSchedulingSelector() RealScenario {
	const ns, name = "real-sched-selector", "wrong-zone"
	return RealScenario{
		ID: "SCHED-SEL", Title: "node selector matches no node", Namespace: ns,
		Play: func(ctx context.Context, s *Stack) error {
			return createPod(ctx, s, pod(ns, name, func(p *corev1.Pod) {
				p.Spec.NodeSelector = map[string]string{"topology.kubernetes.io/zone": "nowhere"}
			}))
		},
		Fix:    func(ctx context.Context, s *Stack) error { return deletePod(ctx, s, ns, name) },
		Expect: []RealEvent{{Kind: "Pod", Object: name, Reason: "FailedScheduling", Cause: "scheduling_node_selector_mismatch"}},
		Alerts: []ExpectedAlert{podAlert("KubecausePodUnschedulable", ns, name, "scheduling_node_selector_mismatch")},
	}
}

// S2: a PVC without a StorageClass and no PV: the PV controller reports it.
func realS2() RealScenario {
	const ns, claim = "real-s2", "etcd-data"
	return RealScenario{
		ID: "S2", Title: "PVC without StorageClass", Namespace: ns,
		Play: func(ctx context.Context, s *Stack) error {
			_, err := s.Objects.CreatePVC(ctx, ns, claim, ptr(""))
			return err
		},
		Fix: func(ctx context.Context, s *Stack) error {
			return s.Cluster.Client.CoreV1().PersistentVolumeClaims(ns).Delete(ctx, claim, metav1.DeleteOptions{})
		},
		Expect: []RealEvent{{Kind: "PersistentVolumeClaim", Object: claim, Reason: "FailedBinding", Cause: "no_storage_class"}},
		Alerts: []ExpectedAlert{{Name: "KubecausePVCProvisioningFailing", Labels: map[string]string{"namespace": ns, "persistentvolumeclaim": claim, "cause": "no_storage_class"},
			Runbook: "kubecausepvcprovisioningfailing.md#no_storage_class"}},
	}
}

// S18: a container writes more than its ephemeral-storage limit; the kubelet evicts the pod.
func realS18() RealScenario {
	const ns, name = "real-s18", "fills-scratch"
	return RealScenario{
		ID: "S18", Title: "ephemeral-storage limit exceeded, evicted", Namespace: ns,
		Play: func(ctx context.Context, s *Stack) error {
			return createPod(ctx, s, pod(ns, name, func(p *corev1.Pod) {
				p.Spec.Volumes = []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
				c := &p.Spec.Containers[0]
				c.VolumeMounts = []corev1.VolumeMount{{Name: "scratch", MountPath: "/scratch"}}
				c.Args = []string{"-fill-dir=/scratch", "-fill-mib=16"}
				c.Resources.Limits = corev1.ResourceList{corev1.ResourceEphemeralStorage: resource.MustParse("4Mi")}
			}))
		},
		Fix:    func(ctx context.Context, s *Stack) error { return deletePod(ctx, s, ns, name) },
		Expect: []RealEvent{{Kind: "Pod", Object: name, Reason: "Evicted", Cause: "evicted_ephemeral_storage_limit"}},
	}
}

// StaticPodDir is where a test writes static pod manifests (seed S5).
func (n *Node) StaticPodDir() string { return n.ManifestDir }

// WriteStaticPod writes a manifest into the kubelet's staticPodPath.
func (n *Node) WriteStaticPod(name string, manifest []byte) error {
	return os.WriteFile(filepath.Join(n.ManifestDir, name+".yaml"), manifest, 0o644)
}
