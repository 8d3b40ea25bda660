//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubecause/kubecause/e2e/framework"
	"github.com/kubecause/kubecause/exporter/causes"
	"github.com/kubecause/kubecause/exporter/causes/corpus"
	"github.com/kubecause/kubecause/exporter/pages"
)

// controllerManagedAttach is the Node annotation (k8s.io/kubernetes pkg/volume/util
// ControllerManagedAttachAnnotation) by which a kubelet hands its node's attach and detach to the
// attach-detach controller; the controller manages only the nodes that carry it.
const controllerManagedAttach = "volumes.kubernetes.io/controller-managed-attach-detach"

// TestMultiAttach: seed S8 (003_c26990852f50eed5, a volume still attached elsewhere → Multi-Attach)
// written by the real attach-detach controller of kube-controller-manager v1.37.2, not by the
// test. The controller decides from API objects alone — the Nodes that carry the
// controller-managed annotation, the pods bound to them, their claims and PVs, the CSIDriver and
// the VolumeAttachments — so the two nodes here are Node objects the test registers: no kubelet
// or container runtime runs (a second kubelet cannot join beside the real node on this host, and
// none is needed for what the controller reads). The one thing the test does in place of a
// component is the CSI driver's external-attacher sidecar: once the controller has created the
// VolumeAttachment for node 1, the test sets its status.attached to true. Everything else —
// binding the claim, creating the VolumeAttachment, marking the volume attached in node 1's
// status, refusing node 2 and the FailedAttachVolume Warning on pod B — is kube-controller-manager's
// (pkg/controller/volume/attachdetach/reconciler reportMultiAttachError, pkg/volume/csi
// csi_attacher.go). kubecause, watching as in the other tests, counts the Warning as
// volume_multi_attach on /metrics and shows it on /problems.
func TestMultiAttach(t *testing.T) {
	start := time.Now()
	ctx := testContext(t)
	cluster, dir, bins := startCluster(t)
	cb, err := framework.FindControllerBinaries()
	check(t, err)
	kcmVersion := controllerManagerVersion(t, cb.ControllerManager)
	ctl, err := framework.StartControllers(cb, cluster, dir)
	check(t, err)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("kube-controller-manager log:\n%s", ctl.ControllerManager.Log(8000))
		}
		ctl.Stop()
	})
	k, err := framework.StartKubecause(bins.Kubecause, cluster.KubeconfigPath, dir, "kubecause", "--no-endpoint-checks.enabled")
	check(t, err)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("kubecause log:\n%s", k.Log(4000))
		}
		_ = k.Stop()
	})
	t.Logf("apiserver, kube-controller-manager %s (every controller) and kubecause up in %s", kcmVersion, time.Since(start).Round(time.Millisecond))

	const (
		ns     = "shop"
		driver = "disk.csi.example.com"
		handle = "vol-0f3c9e1d2b4a6c8e7"
		pvName = "orders-db"
		claim  = "orders-db"
		node1  = "worker-1"
		node2  = "worker-2"
		// A rollout of a Deployment whose pods share one ReadWriteOnce claim: the old pod holds
		// the volume on node 1 while the new one is placed on node 2.
		podA = "orders-db-6d4f8b7c9-k2x7q"
		podB = "orders-db-7b9c5d6f8-p4m2n"
	)
	c := cluster.Client
	check(t, cluster.EnsureNamespaces(ctx, ns))
	for _, n := range []string{node1, node2} {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n,
			Annotations: map[string]string{controllerManagedAttach: "true"},
			Labels:      map[string]string{corev1.LabelHostname: n}}}
		_, err := c.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
		check(t, err)
	}
	attachRequired := true
	_, err = c.StorageV1().CSIDrivers().Create(ctx, &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: driver},
		Spec: storagev1.CSIDriverSpec{AttachRequired: &attachRequired}}, metav1.CreateOptions{})
	check(t, err)
	noClass := ""
	_, err = c.CoreV1().PersistentVolumes().Create(ctx, &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: pvName},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			StorageClassName:              noClass,
			ClaimRef:                      &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: ns, Name: claim},
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{
				Driver: driver, VolumeHandle: handle, FSType: "ext4"}},
		},
	}, metav1.CreateOptions{})
	check(t, err)
	_, err = c.CoreV1().PersistentVolumeClaims(ns).Create(ctx, &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: claim},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: &noClass,
			VolumeName:       pvName,
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")}},
		},
	}, metav1.CreateOptions{})
	check(t, err)
	// The persistentvolume-controller binds them (the attach-detach controller uses bound claims only).
	check(t, framework.Poll(ctx, 60*time.Second, func() (bool, error) {
		pvc, err := c.CoreV1().PersistentVolumeClaims(ns).Get(ctx, claim, metav1.GetOptions{})
		return err == nil && pvc.Status.Phase == corev1.ClaimBound, nil
	}))

	pod := func(name, node string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"app": "orders-db"}},
			Spec: corev1.PodSpec{
				NodeName:   node,
				Containers: []corev1.Container{{Name: "postgres", Image: "postgres:17", VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/var/lib/postgresql/data"}}}},
				Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
					PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}},
			},
		}
	}
	_, err = c.CoreV1().Pods(ns).Create(ctx, pod(podA, node1), metav1.CreateOptions{})
	check(t, err)

	// The controller's CSI attacher creates the VolumeAttachment for node 1 and waits for its
	// status.attached; the external-attacher would set it after ControllerPublishVolume.
	var va storagev1.VolumeAttachment
	check(t, framework.Poll(ctx, 60*time.Second, func() (bool, error) {
		vas, err := c.StorageV1().VolumeAttachments().List(ctx, metav1.ListOptions{})
		if err != nil || len(vas.Items) == 0 {
			return false, nil
		}
		va = vas.Items[0]
		return true, nil
	}))
	if va.Spec.NodeName != node1 || va.Spec.Attacher != driver || va.Spec.Source.PersistentVolumeName == nil || *va.Spec.Source.PersistentVolumeName != pvName {
		t.Fatalf("VolumeAttachment %s: node %q, attacher %q, source %v; want %s, %s, PV %s", va.Name, va.Spec.NodeName, va.Spec.Attacher, va.Spec.Source, node1, driver, pvName)
	}
	t.Logf("kube-controller-manager created VolumeAttachment %s (node %s, attacher %s, PV %s)", va.Name, va.Spec.NodeName, va.Spec.Attacher, pvName)
	va.Status.Attached = true // the external-attacher's part, the only one the test plays
	_, err = c.StorageV1().VolumeAttachments().UpdateStatus(ctx, &va, metav1.UpdateOptions{})
	check(t, err)
	// The controller reads the attachment back and records the volume as attached to node 1 in
	// the Node's status (what kubelets wait for before mounting).
	uniqueName := corev1.UniqueVolumeName("kubernetes.io/csi/" + driver + "^" + handle)
	check(t, framework.Poll(ctx, 60*time.Second, func() (bool, error) {
		n, err := c.CoreV1().Nodes().Get(ctx, node1, metav1.GetOptions{})
		return err == nil && slices.ContainsFunc(n.Status.VolumesAttached, func(v corev1.AttachedVolume) bool { return v.Name == uniqueName }), nil
	}))
	t.Logf("node %s status: volume %s attached", node1, uniqueName)

	// Pod B needs the same ReadWriteOnce volume on node 2.
	_, err = c.CoreV1().Pods(ns).Create(ctx, pod(podB, node2), metav1.CreateOptions{})
	check(t, err)
	var ev corev1.Event
	check(t, framework.Poll(ctx, 60*time.Second, func() (bool, error) {
		evs, err := c.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + podB})
		if err != nil {
			return false, nil
		}
		for _, e := range evs.Items {
			if e.Reason == "FailedAttachVolume" {
				ev = e
				return true, nil
			}
		}
		return false, nil
	}))
	t.Logf("real Event on pod %s: %s %s from %s (count %d): %q", podB, ev.Type, ev.Reason, eventComponent(ev), ev.Count, ev.Message)
	// kube-controller-manager v1.37 words it "Waiting for detach" (reconciler.go
	// reportMultiAttachError; "Multi-Attach error" before 1.37), and names the pods of the
	// namespace that hold the volume on the other node.
	want := fmt.Sprintf("Waiting for detach for volume %q Volume is already used by pod(s) %s", pvName, podA)
	if ev.Type != corev1.EventTypeWarning || eventComponent(ev) != "attachdetach-controller" || ev.Message != want {
		t.Errorf("got %s from %q: %q\nwant Warning from attachdetach-controller: %q", ev.Type, eventComponent(ev), ev.Message, want)
	}
	// The controller refused node 2: no second attachment.
	vas, err := c.StorageV1().VolumeAttachments().List(ctx, metav1.ListOptions{})
	check(t, err)
	if len(vas.Items) != 1 {
		t.Errorf("want the one VolumeAttachment for %s, got %d", node1, len(vas.Items))
	}

	// kubecause counts it with its cause, exactly as often as the apiserver's Event records.
	counted := map[string]string{"namespace": ns, "kind": "Pod", "reason": "FailedAttachVolume", "type": "Warning",
		"component": "attachdetach-controller", "cause": "volume_multi_attach"}
	var got float64
	if err := framework.Poll(ctx, 30*time.Second, func() (bool, error) {
		fams, err := k.Metrics()
		if err != nil {
			return false, nil
		}
		got, _ = framework.MetricValue(fams, "kubecause_events_total", counted)
		view, _ := framework.MetricValue(fams, "kubecause_object_events", map[string]string{"namespace": ns, "kind": "Pod", "name": podB, "reason": "FailedAttachVolume", "cause": "volume_multi_attach"})
		return got == float64(occurrences(ev)) && view == float64(occurrences(ev)), nil
	}); err != nil {
		t.Fatalf("%s = %g, the Event records %d occurrence(s): %v", sel("kubecause_events_total", counted), got, occurrences(ev), err)
	}
	t.Logf("kubecause: %s = %g, kubecause_object_events for pod %s with cause volume_multi_attach", sel("kubecause_events_total", counted), got, podB)
	var list pages.ProblemList
	check(t, getJSON(k.URL("/problems?format=json&namespace="+ns), &list))
	if i := slices.IndexFunc(list.Problems, func(p pages.Problem) bool {
		return p.Kind == "Pod" && p.Name == podB && p.Reason == "FailedAttachVolume" && p.Cause == "volume_multi_attach"
	}); i < 0 {
		t.Errorf("/problems lacks pod %s with cause volume_multi_attach: %+v", podB, list.Problems)
	} else {
		t.Logf("/problems: %+v", list.Problems[i])
	}

	recordControllerMessage(t, ev, kcmVersion)
	t.Logf("TestMultiAttach took %s", time.Since(start).Round(time.Millisecond))
}

// controllerManagerVersion is what the binary says it is ("v1.37.2").
func controllerManagerVersion(t *testing.T, bin string) string {
	out, err := exec.Command(bin, "--version").Output()
	check(t, err)
	// "Kubernetes v1.37.2"
	return strings.TrimPrefix(strings.TrimSpace(string(out)), "Kubernetes ")
}

func getJSON(url string, v any) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// recordControllerMessage holds the classifier's real-message fixture to a message that
// kube-controller-manager wrote: the fixture must already hold it (by its masked text) with the
// cause the table gives it. With KUBECAUSE_REAL_MESSAGES set, it is merged into that file
// instead (as `make real-messages` does for the real node), new wordings with cause TODO.
func recordControllerMessage(t *testing.T, ev corev1.Event, kcmVersion string) {
	t.Helper()
	m := framework.RealMessage{RealNodeMessage: corpus.RealNodeMessage{Reason: ev.Reason, Type: ev.Type, Component: eventComponent(ev), Kind: ev.InvolvedObject.Kind, Message: ev.Message}}
	m.Kubecause = causes.Default().Classify(m.Reason, m.Message).Cause
	versions := map[string]string{"kubeControllerManager": kcmVersion}
	if path := os.Getenv("KUBECAUSE_REAL_MESSAGES"); path != "" {
		added, err := framework.MergeRealMessages(path, []framework.RealMessage{m}, versions)
		check(t, err)
		t.Logf("%s: %d new message(s) (cause to assign by hand: TODO)", path, added)
		return
	}
	root, err := framework.RepoRoot()
	check(t, err)
	fixture := filepath.Join(root, "exporter", "causes", "testdata", "real-node.yaml")
	b, err := os.ReadFile(fixture)
	check(t, err)
	cp := filepath.Join(t.TempDir(), "real-node.yaml")
	check(t, os.WriteFile(cp, b, 0o644))
	if _, err := framework.MergeRealMessages(cp, []framework.RealMessage{m}, versions); err != nil {
		t.Fatal(err)
	}
	merged, err := os.ReadFile(cp)
	check(t, err)
	if string(merged) != string(b) {
		t.Errorf("%s does not hold %s %s from %s %q (kubecause: %s) as seen with %q: record it with KUBECAUSE_REAL_MESSAGES=%s and assign its cause",
			fixture, m.Type, m.Reason, m.Component, m.Message, m.Kubecause, corpus.RecordingName(versions), fixture)
		return
	}
	t.Logf("%s holds it, seen with %s (the table's cause: %s)", fixture, corpus.RecordingName(versions), m.Kubecause)
}
