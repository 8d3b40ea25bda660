//go:build e2e

package e2e

import (
	"context"
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
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

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
// the VolumeAttachments — so the nodes here are Node objects the test registers: no kubelet or
// container runtime runs (a second kubelet cannot join beside the real node on this host, and
// none is needed for what the controller reads). The test does in place of a component only what
// the controller reads from one: the CSI driver's external-attacher sidecar (once the controller
// has created a VolumeAttachment, the test sets its status.attached), and, for the seed's dead
// node, the last status node 1's kubelet reported (the volume in use, status.volumesInUse).
// Everything else — binding the claims, creating the VolumeAttachments, marking the volumes
// attached in the Node's status, refusing the second node and the FailedAttachVolume Warnings —
// is kube-controller-manager's (pkg/controller/volume/attachdetach/reconciler
// reportMultiAttachError, pkg/volume/csi csi_attacher.go). Three ways a pod meets a volume held
// on another node, one Warning each:
//   - a rollout of a Deployment whose pods share a ReadWriteOnce claim: the new pod on node 2,
//     the old one holding the volume on node 1 ("Volume is already used by pod(s) <old pod>");
//   - a second PV for the same disk (same CSI volume handle), bound in another namespace: its pod
//     on node 3 ("Volume is already used by 1 pod(s) in different namespaces");
//   - the seed's drift: node 1 died with the volume mounted, its pod was force-deleted and
//     replaced on node 2 ("Volume is already exclusively attached to one node, waiting on detach
//     …").
//
// kubecause, watching as in the other tests, counts each Warning as volume_multi_attach on
// /metrics and shows it on /problems; each message is held in the real-message fixture.
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
		driver = "disk.csi.example.com"
		node1  = "worker-1"
		node2  = "worker-2"
		node3  = "worker-3"
		// The rollout: the old and the new pod of Deployment orders-db in shop.
		ordersDisk = "vol-0f3c9e1d2b4a6c8e7"
		oldPod     = "orders-db-6d4f8b7c9-k2x7q"
		newPod     = "orders-db-7b9c5d6f8-p4m2n"
		// The second PV for the orders disk, bound in reports.
		reportPod = "orders-report-29170560-x7k2p"
		// The seed's StatefulSet pod in apps.
		mysqlDisk = "vol-07a1b2c3d4e5f6a7b"
	)
	c := cluster.Client
	e := &attachEnv{t: t, ctx: ctx, c: c, k: k, driver: driver}
	check(t, cluster.EnsureNamespaces(ctx, "shop", "reports", "apps"))
	for _, n := range []string{node1, node2, node3} {
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
	e.claim("shop", "orders-db", "orders-db", ordersDisk)
	e.claim("reports", "orders-db", "orders-db-copy", ordersDisk)
	e.claim("apps", "data-mysql-0", "mysql-data", mysqlDisk)

	// Node 1 runs the old orders-db pod and mysql-0; the controller attaches both volumes there.
	e.pod("shop", oldPod, node1, "orders-db")
	e.pod("apps", "mysql-0", node1, "data-mysql-0")
	e.attach(node1, "orders-db")
	e.attach(node1, "mysql-data")
	// What node 1's kubelet reports once it has mounted them (status.volumesInUse, patched as the
	// kubelet patches its status; the controller patches volumesAttached beside it): while a
	// volume is in use there the controller does not detach it (until maxWaitForUnmountDuration,
	// 6 min, on an unhealthy node). Without it, deleting mysql-0 below detaches its volume at once
	// and the controller attaches it to node 2: no Warning.
	inUse, err := json.Marshal(map[string]any{"status": map[string]any{
		"volumesInUse": []corev1.UniqueVolumeName{e.uniqueName(ordersDisk), e.uniqueName(mysqlDisk)}}})
	check(t, err)
	_, err = c.CoreV1().Nodes().Patch(ctx, node1, types.StrategicMergePatchType, inUse, metav1.PatchOptions{}, "status")
	check(t, err)

	var msgs []corev1.Event
	// The rollout's new pod needs the orders volume on node 2.
	msgs = append(msgs, e.warning(e.pod("shop", newPod, node2, "orders-db"),
		fmt.Sprintf("Waiting for detach for volume %q Volume is already used by pod(s) %s", "orders-db", oldPod)))
	// The second PV of the orders disk, in reports, on node 3: the controller names no pod of
	// another namespace.
	msgs = append(msgs, e.warning(e.pod("reports", reportPod, node3, "orders-db"),
		fmt.Sprintf("Waiting for detach for volume %q Volume is already used by %d pod(s) in different namespaces", "orders-db-copy", 1)))
	// The seed: node 1 dies with the mysql volume in use; mysql-0 is force-deleted (kubectl delete
	// pod --force --grace-period=0, as nothing on a dead node confirms a graceful one) and the
	// StatefulSet's new mysql-0 lands on node 2.
	zero := int64(0)
	check(t, c.CoreV1().Pods("apps").Delete(ctx, "mysql-0", metav1.DeleteOptions{GracePeriodSeconds: &zero}))
	msgs = append(msgs, e.warning(e.pod("apps", "mysql-0", node2, "data-mysql-0"),
		fmt.Sprintf("Waiting for detach for volume %q Volume is already exclusively attached to one node, waiting on detach before it can be attached to another node", "mysql-data")))

	// The controller refused both other nodes: only node 1's two attachments exist.
	vas, err := c.StorageV1().VolumeAttachments().List(ctx, metav1.ListOptions{})
	check(t, err)
	for _, va := range vas.Items {
		if va.Spec.NodeName != node1 {
			t.Errorf("VolumeAttachment %s for %s: the controller attached a ReadWriteOnce volume to a second node", va.Name, va.Spec.NodeName)
		}
	}
	if len(vas.Items) != 2 {
		t.Errorf("want node 1's 2 VolumeAttachments, got %d", len(vas.Items))
	}

	// kubecause counts each Warning with its cause, as often as the apiserver's Event records it,
	// and lists the pod on /problems.
	for _, ev := range msgs {
		e.counted(ev)
	}
	for _, ev := range msgs {
		recordControllerMessage(t, ev, kcmVersion)
	}
	t.Logf("TestMultiAttach took %s", time.Since(start).Round(time.Millisecond))
}

// attachEnv creates the objects of TestMultiAttach and checks what the controller and kubecause make of them.
type attachEnv struct {
	t      *testing.T
	ctx    context.Context
	c      kubernetes.Interface
	k      *framework.Kubecause
	driver string
	// handles maps PV names to their CSI volume handles.
	handles map[string]string
}

// uniqueName is the attach-detach controller's name of a CSI volume (kubernetes.io/csi/<driver>^<handle>).
func (e *attachEnv) uniqueName(handle string) corev1.UniqueVolumeName {
	return corev1.UniqueVolumeName("kubernetes.io/csi/" + e.driver + "^" + handle)
}

// claim creates a ReadWriteOnce CSI PV for the disk handle and its claim ns/name, and waits until
// the persistentvolume-controller has bound them (the attach-detach controller uses bound claims
// only).
func (e *attachEnv) claim(ns, name, pv, handle string) {
	t, ctx := e.t, e.ctx
	t.Helper()
	noClass := ""
	size := corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")}
	_, err := e.c.CoreV1().PersistentVolumes().Create(ctx, &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: pv},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      size,
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			StorageClassName:              noClass,
			ClaimRef:                      &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: ns, Name: name},
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{
				Driver: e.driver, VolumeHandle: handle, FSType: "ext4"}},
		},
	}, metav1.CreateOptions{})
	check(t, err)
	_, err = e.c.CoreV1().PersistentVolumeClaims(ns).Create(ctx, &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: &noClass,
			VolumeName:       pv,
			Resources:        corev1.VolumeResourceRequirements{Requests: size},
		},
	}, metav1.CreateOptions{})
	check(t, err)
	if err := framework.Poll(ctx, 60*time.Second, func() (bool, error) {
		pvc, err := e.c.CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, metav1.GetOptions{})
		return err == nil && pvc.Status.Phase == corev1.ClaimBound, nil
	}); err != nil {
		t.Fatalf("claim %s/%s not bound to PV %s: %v", ns, name, pv, err)
	}
	if e.handles == nil {
		e.handles = map[string]string{}
	}
	e.handles[pv] = handle
}

// pod creates a pod bound to node that mounts claim.
func (e *attachEnv) pod(ns, name, node, claim string) *corev1.Pod {
	e.t.Helper()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.PodSpec{
			NodeName:   node,
			Containers: []corev1.Container{{Name: "db", Image: "postgres:17", VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/var/lib/postgresql/data"}}}},
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}},
		},
	}
	p, err := e.c.CoreV1().Pods(ns).Create(e.ctx, p, metav1.CreateOptions{})
	check(e.t, err)
	return p
}

// attach waits for the controller's VolumeAttachment of PV pv to node, plays the external-attacher
// (status.attached: true, what the sidecar sets after the driver's ControllerPublishVolume), and
// waits until the controller records the volume as attached in the Node's status.
func (e *attachEnv) attach(node, pv string) {
	t, ctx := e.t, e.ctx
	t.Helper()
	var va storagev1.VolumeAttachment
	if err := framework.Poll(ctx, 60*time.Second, func() (bool, error) {
		vas, err := e.c.StorageV1().VolumeAttachments().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		i := slices.IndexFunc(vas.Items, func(va storagev1.VolumeAttachment) bool {
			return va.Spec.NodeName == node && va.Spec.Source.PersistentVolumeName != nil && *va.Spec.Source.PersistentVolumeName == pv
		})
		if i < 0 {
			return false, nil
		}
		va = vas.Items[i]
		return true, nil
	}); err != nil {
		t.Fatalf("no VolumeAttachment of PV %s to %s: %v", pv, node, err)
	}
	if va.Spec.Attacher != e.driver {
		t.Fatalf("VolumeAttachment %s: attacher %q, want %q", va.Name, va.Spec.Attacher, e.driver)
	}
	t.Logf("kube-controller-manager created VolumeAttachment %s (node %s, attacher %s, PV %s)", va.Name, node, va.Spec.Attacher, pv)
	va.Status.Attached = true
	_, err := e.c.StorageV1().VolumeAttachments().UpdateStatus(ctx, &va, metav1.UpdateOptions{})
	check(t, err)
	name := e.uniqueName(e.handles[pv])
	if err := framework.Poll(ctx, 60*time.Second, func() (bool, error) {
		n, err := e.c.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		return err == nil && slices.ContainsFunc(n.Status.VolumesAttached, func(v corev1.AttachedVolume) bool { return v.Name == name }), nil
	}); err != nil {
		t.Fatalf("node %s status: volume %s not attached: %v", node, name, err)
	}
	t.Logf("node %s status: volume %s attached", node, name)
}

// warning waits for the attach-detach controller's FailedAttachVolume Warning on pod p and
// checks its message, read verbatim from the apiserver, against want: the wording of
// kube-controller-manager v1.37 (reconciler.go reportMultiAttachError, "Waiting for detach";
// "Multi-Attach error" before 1.37).
func (e *attachEnv) warning(p *corev1.Pod, want string) corev1.Event {
	t, ctx := e.t, e.ctx
	t.Helper()
	ns, name := p.Namespace, p.Name
	var ev corev1.Event
	if err := framework.Poll(ctx, 60*time.Second, func() (bool, error) {
		evs, err := e.c.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
		if err != nil {
			return false, nil
		}
		for _, x := range evs.Items {
			// This incarnation of the pod (mysql-0 is created twice).
			if x.Reason == "FailedAttachVolume" && x.InvolvedObject.UID == p.UID {
				ev = x
				return true, nil
			}
		}
		return false, nil
	}); err != nil {
		t.Fatalf("no FailedAttachVolume Event on pod %s/%s: %v", ns, name, err)
	}
	t.Logf("real Event on pod %s/%s: %s %s from %s (count %d): %q", ns, name, ev.Type, ev.Reason, eventComponent(ev), ev.Count, ev.Message)
	if ev.Type != corev1.EventTypeWarning || eventComponent(ev) != "attachdetach-controller" || ev.Message != want {
		t.Errorf("got %s from %q: %q\nwant Warning from attachdetach-controller: %q", ev.Type, eventComponent(ev), ev.Message, want)
	}
	return ev
}

// counted waits until kubecause counts ev as volume_multi_attach, exactly as often as the Event
// records, in kubecause_events_total and on the pod's kubecause_object_events, and finds the pod
// on /problems with that cause.
func (e *attachEnv) counted(ev corev1.Event) {
	t := e.t
	t.Helper()
	ns, name := ev.InvolvedObject.Namespace, ev.InvolvedObject.Name
	total := map[string]string{"namespace": ns, "kind": "Pod", "reason": "FailedAttachVolume", "type": "Warning",
		"component": "attachdetach-controller", "cause": "volume_multi_attach"}
	view := map[string]string{"namespace": ns, "kind": "Pod", "name": name, "reason": "FailedAttachVolume", "cause": "volume_multi_attach"}
	want := float64(occurrences(ev))
	var got, gotView float64
	if err := framework.Poll(e.ctx, 30*time.Second, func() (bool, error) {
		fams, err := e.k.Metrics()
		if err != nil {
			return false, nil
		}
		got, _ = framework.MetricValue(fams, "kubecause_events_total", total)
		gotView, _ = framework.MetricValue(fams, "kubecause_object_events", view)
		return got == want && gotView == want, nil
	}); err != nil {
		t.Errorf("%s = %g, %s = %g; the Event records %g: %v", sel("kubecause_events_total", total), got, sel("kubecause_object_events", view), gotView, want, err)
		return
	}
	t.Logf("kubecause: %s = %g, %s = %g", sel("kubecause_events_total", total), got, sel("kubecause_object_events", view), gotView)
	var list pages.ProblemList
	check(t, getJSON(e.k.URL("/problems?format=json&namespace="+ns), &list))
	if i := slices.IndexFunc(list.Problems, func(p pages.Problem) bool {
		return p.Kind == "Pod" && p.Name == name && p.Reason == "FailedAttachVolume" && p.Cause == "volume_multi_attach"
	}); i < 0 {
		t.Errorf("/problems lacks pod %s/%s with cause volume_multi_attach: %+v", ns, name, list.Problems)
	} else {
		p := list.Problems[i]
		t.Logf("/problems: %s/%s %s %s count %d, runbook %s", p.Namespace, p.Name, p.Reason, p.Cause, p.Count, p.RunbookURL)
	}
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
