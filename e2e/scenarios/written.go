package scenarios

import (
	"context"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubecause/kubecause/e2e/framework"
)

type podPlay struct {
	ns, name, node string
	opts           framework.PodOptions
}

func (p podPlay) create(ctx context.Context, s *framework.Stack) (*corev1.Pod, error) {
	o := p.opts
	if o.Node == "" && p.node != "" {
		o.Node = p.node
	}
	return s.Objects.CreatePod(ctx, p.ns, p.name, o)
}

func getPod(ctx context.Context, s *framework.Stack, ns, name string) (*corev1.Pod, error) {
	return s.Cluster.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
}

// kubeletScenario creates a pod in the given waiting state ("Running": running, not ready)
// and writes the kubelet's Events: each message once, then a count patch to counts[i].
func kubeletScenario(id, title, ns, pod, node, waiting string, events [][3]string, counts []int32, occ []Occurrences, alerts []ExpectedAlert) Scenario {
	return Scenario{
		ID: id, Title: title, Namespace: ns, Occurrences: occ, Alerts: alerts,
		Play: func(ctx context.Context, s *framework.Stack) error {
			p, err := podPlay{ns: ns, name: pod, node: node}.create(ctx, s)
			if err != nil {
				return err
			}
			if waiting == "Running" {
				p, err = s.Objects.SetRunningNotReady(ctx, p, "10.244.0.17")
			} else {
				p, err = s.Objects.SetWaiting(ctx, p, waiting, "")
			}
			if err != nil {
				return err
			}
			k := framework.Kubelet(s.Cluster.Client, node)
			for i, e := range events {
				ev, err := k.Emit(ctx, framework.PodRef(p), e[0], e[1], e[2])
				if err != nil {
					return err
				}
				if i < len(counts) && counts[i] > 1 {
					if err := ev.SetCount(ctx, counts[i]); err != nil {
						return err
					}
				}
			}
			return nil
		},
		Fix: func(ctx context.Context, s *framework.Stack) error {
			p, err := getPod(ctx, s, ns, pod)
			if err != nil {
				return err
			}
			_, err = s.Objects.SetRunning(ctx, p, "10.244.0.17")
			return err
		},
	}
}

func podAlert(name, ns, pod, cause string) ExpectedAlert {
	return ExpectedAlert{Name: name, Labels: map[string]string{"namespace": ns, "pod": pod, "cause": cause}, Runbook: strings.ToLower(name) + ".md#" + cause}
}

const warning = corev1.EventTypeWarning

// SeedScenarios are the seed scenarios with an Event or state signal (see the seeds' README).
func SeedScenarios() []Scenario {
	sc := []Scenario{
		kubeletScenario("S1", "hosted mesh ckube-remote: ConfigMap not pushed yet", "istio-system", "mspider-mcpc-ckube-remote-6b8d7c9f5-m2x7q", "mesh-cp-worker-1", "ContainerCreating",
			[][3]string{
				{warning, "FailedMount", `MountVolume.SetUp failed for volume "remote-kube-api-server" : configmap "mspider-mcpc-remote-kube-api-server" not found`},
				{warning, "FailedMount", `Unable to attach or mount volumes: unmounted volumes=[remote-kube-api-server], unattached volumes=[remote-kube-api-server kube-api-access-ljncs ckube-config]: timed out waiting for the condition`},
			}, []int32{3, 1},
			[]Occurrences{{"istio-system", "Pod", "FailedMount", "configmap_not_found", 3}, {"istio-system", "Pod", "FailedMount", "mount_timeout", 1}},
			[]ExpectedAlert{podAlert("KubecausePodVolumeFailing", "istio-system", "mspider-mcpc-ckube-remote-6b8d7c9f5-m2x7q", "configmap_not_found")}),
		kubeletScenario("S6", "istio-ingressgateway readiness probe refused (no MetalLB)", "istio-system", "istio-ingressgateway-7c6f9d8b5-q4w2e", "member-worker-1", "Running",
			[][3]string{{warning, "Unhealthy", `Readiness probe failed: Get "http://10.244.0.17:15021/healthz/ready": dial tcp 10.244.0.17:15021: connect: connection refused`}}, []int32{12},
			[]Occurrences{{"istio-system", "Pod", "Unhealthy", "istio_sidecar_not_ready", 12}},
			[]ExpectedAlert{podAlert("KubecausePodProbeFailing", "istio-system", "istio-ingressgateway-7c6f9d8b5-q4w2e", "istio_sidecar_not_ready")}),
		kubeletScenario("S5", "flannel CrashLoopBackOff after reboot (no default route)", "kube-flannel", "kube-flannel-ds-jqgsm", "arm-node-1", "CrashLoopBackOff",
			[][3]string{{warning, "BackOff", `Back-off restarting failed container kube-flannel in pod kube-flannel-ds-jqgsm_kube-flannel(5e5d7f1e-2b1c-4e7a-9d3f-0a1b2c3d4e5f)`}}, []int32{7},
			[]Occurrences{{"kube-flannel", "Pod", "BackOff", "crash_loop_backoff", 7}},
			[]ExpectedAlert{podAlert("KubecauseContainerFailing", "kube-flannel", "kube-flannel-ds-jqgsm", "crash_loop_backoff")}),
		kubeletScenario("S8", "volume still attached to the dead node (Multi-Attach)", "apps", "mysql-0", "worker-2", "ContainerCreating",
			[][3]string{{warning, "FailedAttachVolume", `Multi-Attach error for volume "pvc-0a5c3d8e-3a4e-4c1f-9d2e-6f2b0e4a7c11" Volume is already exclusively attached to one node and can't be attached to another`}}, nil,
			[]Occurrences{{"apps", "Pod", "FailedAttachVolume", "volume_multi_attach", 1}},
			[]ExpectedAlert{podAlert("KubecausePodVolumeFailing", "apps", "mysql-0", "volume_multi_attach")}),
		kubeletScenario("S9", "subPath mount of a changed ConfigMap", "apps", "manage-5d7f8c9b6-x8k2l", "worker-1", "RunContainerError",
			[][3]string{{warning, "Failed", `Error: failed to create containerd task: OCI runtime create failed: container_linux.go:345: starting container process caused "process_linux.go:424: container init caused \"rootfs_linux.go:58: mounting \\\"/var/lib/kubelet/pods/211d53f4-d08c-11e9-b0a7-b6655eaf02a6/volume-subpaths/manage-config-volume/manage/0\\\" to rootfs \\\"/run/containerd/io.containerd.runtime.v1.linux/k8s.io/e6746201faa1/rootfs\\\" at \\\"/run/containerd/io.containerd.runtime.v1.linux/k8s.io/e6746201faa1/rootfs/app/resources/application.properties\\\" caused \\\"no such file or directory\\\"\"": unknown`}}, []int32{4},
			[]Occurrences{{"apps", "Pod", "Failed", "subpath_failed", 4}},
			[]ExpectedAlert{podAlert("KubecausePodVolumeFailing", "apps", "manage-5d7f8c9b6-x8k2l", "subpath_failed")}),
		kubeletScenario("S10", "runtime data dir full", "apps", "apigateway-6dc48bf8b6-l8xrw", "worker-3", "ContainerCreating",
			[][3]string{{warning, "FailedCreatePodSandBox", `Failed create pod sandbox: rpc error: code = Unknown desc = failed to create a sandbox for pod "apigateway-6dc48bf8b6-l8xrw": Error response from daemon: mkdir /var/lib/docker/aufs/mnt/1f09d6c1c9f24e8daaea5bf33a4230de7dbc758e3b22785e8ee21e3e3d921214-init: no space left on device`}}, []int32{30},
			[]Occurrences{{"apps", "Pod", "FailedCreatePodSandBox", "disk_full", 30}},
			[]ExpectedAlert{podAlert("KubecausePodSandboxFailing", "apps", "apigateway-6dc48bf8b6-l8xrw", "disk_full")}),
		kubeletScenario("S11", "memory limit 1024m kills the pause container", "apps", "web-0", "worker-1", "ContainerCreating",
			[][3]string{
				{warning, "FailedCreatePodSandBox", `Failed create pod sandbox: rpc error: code = Unknown desc = failed to start sandbox container for pod "web-0": Error response from daemon: OCI runtime create failed: container_linux.go:348: starting container process caused "process_linux.go:301: running exec setns process for init caused \"signal: killed\"": unknown`},
				{corev1.EventTypeNormal, "SandboxChanged", `Pod sandbox changed, it will be killed and re-created.`},
			}, []int32{5, 5},
			[]Occurrences{{"apps", "Pod", "FailedCreatePodSandBox", "memory_limit_too_small", 5}},
			[]ExpectedAlert{podAlert("KubecausePodSandboxFailing", "apps", "web-0", "memory_limit_too_small")}),
		kubeletScenario("S12", "pull secret missing: no basic auth credentials", "game", "game-2048-6f7d9c8b5-kq2n4", "worker-2", "ImagePullBackOff",
			[][3]string{
				{warning, "Failed", `Failed to pull image "docker.com:8080/public/2048:latest": rpc error: code = Unknown desc = Error response from daemon: Get http://docker.com:8080/v2/public/2048/manifests/latest: no basic auth credentials`},
				{corev1.EventTypeNormal, "BackOff", `Back-off pulling image "docker.com:8080/public/2048:latest"`},
			}, []int32{4, 9},
			[]Occurrences{{"game", "Pod", "Failed", "image_auth_failed", 4}},
			[]ExpectedAlert{podAlert("KubecausePodImagePullFailing", "game", "game-2048-6f7d9c8b5-kq2n4", "image_auth_failed")}),
		kubeletScenario("S13", "CNI cannot allocate a pod IP", "apps", "web-1", "worker-4", "ContainerCreating",
			[][3]string{{warning, "FailedCreatePodSandBox", `Failed create pod sandbox: rpc error: code = Unknown desc = NetworkPlugin cni failed to set up pod "web-1_apps" network: failed to allocate for range 0: no IP addresses available in range set: 10.244.1.1-10.244.1.254`}}, []int32{6},
			[]Occurrences{{"apps", "Pod", "FailedCreatePodSandBox", "cni_error", 6}},
			[]ExpectedAlert{podAlert("KubecausePodSandboxFailing", "apps", "web-1", "cni_error")}),
		kubeletScenario("S15", "sandbox name already in use", "apps", "lomp-ext-d8c8b8c46-4v8tl", "worker-5", "ContainerCreating",
			[][3]string{{warning, "FailedCreatePodSandBox", `Failed create pod sandbox: rpc error: code = Unknown desc = failed to create a sandbox for pod "lomp-ext-d8c8b8c46-4v8tl": Error response from daemon: Conflict. The container name "/k8s_POD_lomp-ext-d8c8b8c46-4v8tl_apps_65046a06-f795-11e9-9bb6-b67fb7a70bad_0" is already in use by container "30aa3f5847e0ce89e9d411e76783ba14accba7eb7743e605a10a9a8e4d3b2c1f". You have to remove (or rename) that container to be able to reuse that name.`}}, []int32{2},
			[]Occurrences{{"apps", "Pod", "FailedCreatePodSandBox", "sandbox_name_conflict", 2}},
			[]ExpectedAlert{podAlert("KubecausePodSandboxFailing", "apps", "lomp-ext-d8c8b8c46-4v8tl", "sandbox_name_conflict")}),
		kubeletScenario("S16", "SELinux enforcing denies keycreate", "kube-system", "ecc-hostpath-provisioner-8jbhf", "worker-6", "ContainerCreating",
			[][3]string{{warning, "FailedCreatePodSandBox", `Failed to create pod sandbox: rpc error: code = Unknown desc = failed to start sandbox container for pod "ecc-hostpath-provisioner-8jbhf": Error response from daemon: OCI runtime create failed: container_linux.go:349: starting container process caused "process_linux.go:449: container init caused \"write /proc/self/attr/keycreate: permission denied\"": unknown`}}, nil,
			[]Occurrences{{"kube-system", "Pod", "FailedCreatePodSandBox", "selinux_denied", 1}},
			[]ExpectedAlert{podAlert("KubecausePodSandboxFailing", "kube-system", "ecc-hostpath-provisioner-8jbhf", "selinux_denied")}),
	}
	sc = append(sc,
		kubeletScenario("S4", "remote ckube panics: too many open files (inotify limits)", "istio-system", "mspider-mcpc-ckube-remote-5447c5bcfc-25t7t", "mesh-cp-worker-2", "CrashLoopBackOff",
			[][3]string{{warning, "BackOff", `Back-off restarting failed container ckube in pod mspider-mcpc-ckube-remote-5447c5bcfc-25t7t_istio-system(0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0)`}}, []int32{9},
			[]Occurrences{{"istio-system", "Pod", "BackOff", "crash_loop_backoff", 9}},
			[]ExpectedAlert{podAlert("KubecauseContainerFailing", "istio-system", "mspider-mcpc-ckube-remote-5447c5bcfc-25t7t", "crash_loop_backoff")}),
		kubeletScenario("S14", "leftover docker: ttrpc shim connection reset", "apps", "nginx-7db9fccd9b-2j6dh", "worker-7", "ContainerCreating",
			[][3]string{
				{warning, "FailedCreatePodSandBox", `Failed create pod sandbox: rpc error: code = Unknown desc = failed to start sandbox container for pod "nginx-7db9fccd9b-2j6dh": Error response from daemon: ttrpc: client shutting down: read unix @->@/containerd-shim/moby/de2bfeefc999af42783115acca62745e6798981dff75f4148fae8c086668f667/shim.sock: read: connection reset by peer: unknown`},
				{corev1.EventTypeNormal, "SandboxChanged", `Pod sandbox changed, it will be killed and re-created.`},
			}, []int32{3, 3},
			[]Occurrences{{"apps", "Pod", "FailedCreatePodSandBox", "runtime_shim_error", 3}},
			[]ExpectedAlert{podAlert("KubecausePodSandboxFailing", "apps", "nginx-7db9fccd9b-2j6dh", "runtime_shim_error")}),
		s2(), s3(), s18(), s19())
	return sc
}

// S2: the hosted mesh's etcd PVC waits for a StorageClass that does not exist.
func s2() Scenario {
	const ns, claim = "istio-system", "data-mspider-mcpc-etcd-0"
	return Scenario{
		ID: "S2", Title: "hosted mesh etcd PVC: no StorageClass", Namespace: ns,
		Play: func(ctx context.Context, s *framework.Stack) error {
			pvc, err := s.Objects.CreatePVC(ctx, ns, claim, nil)
			if err != nil {
				return err
			}
			rec := &framework.Recorder{Client: s.Cluster.Client, Component: "persistentvolume-controller"}
			ev, err := rec.Emit(ctx, framework.Ref(pvc, "PersistentVolumeClaim", "v1"), warning, "FailedBinding", `no persistent volumes available for this claim and no storage class is set`)
			if err != nil {
				return err
			}
			return ev.SetCount(ctx, 5)
		},
		Fix: func(ctx context.Context, s *framework.Stack) error {
			pvc, err := s.Cluster.Client.CoreV1().PersistentVolumeClaims(ns).Get(ctx, claim, metav1.GetOptions{})
			if err != nil {
				return err
			}
			_, err = s.Objects.SetPVCPhase(ctx, pvc, corev1.ClaimBound)
			return err
		},
		Occurrences: []Occurrences{{ns, "PersistentVolumeClaim", "FailedBinding", "no_storage_class", 5}},
		Alerts: []ExpectedAlert{{Name: "KubecausePVCProvisioningFailing", Labels: map[string]string{"namespace": ns, "persistentvolumeclaim": claim, "cause": "no_storage_class"},
			Runbook: "kubecausepvcprovisioningfailing.md#no_storage_class"}},
	}
}

// S3: the hosted istiod's LoadBalancer Service never gets an address (no MetalLB).
func s3() Scenario {
	const ns, svc = "istio-system", "istiod-mesh-1-hosted-lb"
	return Scenario{
		ID: "S3", Title: "istiod hosted LoadBalancer without an address", Namespace: ns,
		Play: func(ctx context.Context, s *framework.Stack) error {
			_, err := s.Objects.CreateService(ctx, ns, svc, true, map[string]string{"app": "istiod-mesh-1-hosted"}, 15012, 15017)
			return err
		},
		Fix: func(ctx context.Context, s *framework.Stack) error {
			cur, err := s.Cluster.Client.CoreV1().Services(ns).Get(ctx, svc, metav1.GetOptions{})
			if err != nil {
				return err
			}
			_, err = s.Objects.SetLoadBalancerIngress(ctx, cur, "10.6.10.200")
			return err
		},
		Alerts: []ExpectedAlert{{Name: "KubecauseLoadBalancerNoAddress", Labels: map[string]string{"namespace": ns, "service": svc}, Runbook: "kubecauseloadbalancernoaddress.md"}},
	}
}

// S18: the root disk is full; the kubelet evicts pods (DiskPressure).
func s18() Scenario {
	const ns = "logging"
	pods := []string{"fluentd-5x7kq", "fluentd-9m2wd"}
	return Scenario{
		ID: "S18", Title: "node root disk full: pods evicted (DiskPressure)", Namespace: ns,
		Play: func(ctx context.Context, s *framework.Stack) error {
			k := framework.Kubelet(s.Cluster.Client, "worker-8")
			for _, name := range pods {
				p, err := s.Objects.CreatePod(ctx, ns, name, framework.PodOptions{Node: "worker-8", Containers: []string{"fluentd"}})
				if err != nil {
					return err
				}
				msg := "The node was low on resource: ephemeral-storage. Threshold quantity: 1%, available: 0. Container fluentd was using 5Gi, request is 0, has larger consumption of ephemeral-storage. "
				if p, err = s.Objects.SetEvicted(ctx, p, msg); err != nil {
					return err
				}
				if _, err := k.Emit(ctx, framework.PodRef(p), warning, "Evicted", msg); err != nil {
					return err
				}
			}
			return nil
		},
		// Evicted pods are cleaned up once the disk is freed.
		Fix: func(ctx context.Context, s *framework.Stack) error {
			for _, name := range pods {
				if err := s.Cluster.Client.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
					return err
				}
			}
			return nil
		},
		Occurrences: []Occurrences{{ns, "Pod", "Evicted", "evicted_disk", 2}},
		Alerts: []ExpectedAlert{{Name: "KubecausePodEvicted", Labels: map[string]string{"namespace": ns, "cause": "evicted_disk"},
			Runbook: "kubecausepodevicted.md#evicted_disk"}},
	}
}

// S19: a PVC stays Terminating because a finalizer keeps it.
func s19() Scenario {
	const ns, claim = "apps", "data-old-mysql-0"
	return Scenario{
		ID: "S19", Title: "PVC stuck Terminating (finalizer)", Namespace: ns,
		Play: func(ctx context.Context, s *framework.Stack) error {
			sc := "local-path"
			pvc, err := s.Objects.CreatePVC(ctx, ns, claim, &sc)
			if err != nil {
				return err
			}
			pvc.Finalizers = append(pvc.Finalizers, "kubernetes.io/pvc-protection")
			if _, err := s.Cluster.Client.CoreV1().PersistentVolumeClaims(ns).Update(ctx, pvc, metav1.UpdateOptions{}); err != nil {
				return err
			}
			return s.Cluster.Client.CoreV1().PersistentVolumeClaims(ns).Delete(ctx, claim, metav1.DeleteOptions{})
		},
		// The pod using it is gone: the protection controller removes the finalizer.
		Fix: func(ctx context.Context, s *framework.Stack) error {
			patch := []byte(`{"metadata":{"finalizers":null}}`)
			_, err := s.Cluster.Client.CoreV1().PersistentVolumeClaims(ns).Patch(ctx, claim, types.MergePatchType, patch, metav1.PatchOptions{})
			return err
		},
		Alerts: []ExpectedAlert{{Name: "KubecausePVCStuckTerminating", Labels: map[string]string{"namespace": ns, "persistentvolumeclaim": claim},
			Runbook: "kubecausepvcstuckterminating.md"}},
	}
}

func ptr[T any](v T) *T { return &v }
