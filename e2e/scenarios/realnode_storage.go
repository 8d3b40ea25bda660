// Real-node scenarios of storage and disk: claims (S2, S19), ephemeral storage and disk pressure
// (S18), the runtime's disk (S10).

package scenarios

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubecause/kubecause/e2e/framework"
)

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
