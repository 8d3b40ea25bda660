package causes

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// Template on real messages of the corpus (sources in testdata/corpus).
func TestTemplate(t *testing.T) {
	cases := []struct{ in, want string }{
		{ // kubernetes-csi/csi-driver-host-path#71
			`MountVolume.MountDevice failed for volume "pvc-4d70c760-a4b0-11e9-8376-1866da0e836f" : driver name hostpath.csi.k8s.io not found in the list of registered CSI drivers`,
			`MountVolume.MountDevice failed for volume "<q>" : driver name hostpath.csi.k8s.io not found in the list of registered CSI drivers`,
		},
		{ // kubernetes/kubernetes#107260
			`Readiness probe failed: Get "http://172.17.0.31:15021/healthz/ready": dial tcp 172.17.0.31:15021: connect: connection refused`,
			`Readiness probe failed: Get "<q>": dial tcp <ip>: connect: connection refused`,
		},
		{ // kubernetes/test-infra#13039, with the aggregation prefix
			`(combined from similar events): Failed create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox "42bf93c90d996c112f711d9bddbd40fbb03e0a5a8eeccee5f38a98c4a494ca90": failed to allocate for range 0: no IP addresses available in range set: 10.60.28.1-10.60.28.254`,
			`Failed create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox "<q>": failed to allocate for range <n>: no IP addresses available in range set: <ip>-<ip>`,
		},
		{ // robusta-dev/holmesgpt fixture: a pod name with its UID
			`Back-off restarting failed container main in pod giant-narwhal-6958c5bdd8-69gtn_app-02(8209d63f-aa89-450d-9813-d555ddcaa175)`,
			`Back-off restarting failed container main in pod <name>(<uid>)`,
		},
		{ // argoproj/argo-workflows#190: the scheduler's old format, numbers masked
			`No nodes are available that match all of the following predicates:: Insufficient cpu (9), Insufficient memory (15), MatchNodeSelector (18).`,
			`No nodes are available that match all of the following predicates:: Insufficient cpu (<n>), Insufficient memory (<n>), MatchNodeSelector (<n>).`,
		},
		{ // kubernetes/kubernetes#26873: quotes escaped inside a quoted error
			`Error syncing pod, skipping: failed to "StartContainer" for "POD" with ImagePullBackOff: "Back-off pulling image \"gcr.io/google_containers/pause:2.0\""`,
			`Error syncing pod, skipping: failed to "<q>" for "<q>" with ImagePullBackOff: "<q>"`,
		},
		{ // rootsongjc/kubernetes-handbook#313: a UID glued to "pod", a cgroup path
			`unable to ensure pod container exists: failed to create container for [kubepods besteffort podc6eeec88-8664-11e9-9524-5254007057ba] : mkdir /sys/fs/cgroup/memory/kubepods/besteffort/podc6eeec88-8664-11e9-9524-5254007057ba: no space left on device`,
			`unable to ensure pod container exists: failed to create container for [kubepods besteffort pod<uid>] : mkdir <path>: no space left on device`,
		},
		{ // neondatabase/autoscaling#374
			`Node didn't have enough resource: cpu, requested: 1000, used: 94939, capacity: 95690`,
			`Node didn't have enough resource: cpu, requested: <n>, used: <n>, capacity: <n>`,
		},
		{ // kubernetes/kubernetes#45670: a boot ID is a UID
			`Node node2 has been rebooted, boot id: 7bd36c0b-2be5-4b67-8a62-95e1fa614499`,
			`Node node2 has been rebooted, boot id: <uid>`,
		},
		{ // kubernetes/kubernetes#108963: a multi-line NFS message becomes one line, cut at
			// MaxTemplateBytes
			"MountVolume.SetUp failed for volume \"pv01\" : mount failed: exit status 32\nMounting command: mount\nMounting arguments: -t nfs 192.168.43.16:/nfs_share /var/lib/kubelet/pods/c9c0e520-2c9c-4970-b41e-90d4d6d38ead/volumes/kubernetes.io~nfs/pv01\nOutput: mount.nfs: access denied by server while mounting 192.168.43.16:/nfs_share",
			`MountVolume.SetUp failed for volume "<q>" : mount failed: exit status <n> Mounting command: mount Mounting arguments: -t nfs <ip>:<path> <path> Output: mount.nfs: access denied by server while mountin`,
		},
		{ // kubernetes/kubernetes#115469: a duration in seconds
			`Successfully pulled image "docker.io/istio/proxyv2:1.9.6" in 8.906551224s`,
			`Successfully pulled image "<q>" in <n>`,
		},
		// Words that only look like names stay.
		{`0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector.`, `<n>/<n> nodes are available: <n> node(s) didn't match Pod's node affinity/selector.`},
		{"", ""},
	}
	for _, c := range cases {
		if got := Template(c.in); got != c.want {
			t.Errorf("Template(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

// Occurrences of one failure that differ only in names, IDs and numbers share a template; the
// failure's words survive, so different failures do not.
func TestTemplateGroups(t *testing.T) {
	// ceph/ceph-csi#4375 and rook/rook#11372
	a := Template(`MountVolume.MountDevice failed for volume "pvc-7e9588ad-19d1-4099-bd49-30fd2b9f0d42" : rpc error: code = Internal desc = rbd image k8s-dev/csi-vol-dea80a4e-85b6-46e2-9d08-ffba10ef7825 is still being used`)
	b := Template(`MountVolume.MountDevice failed for volume "pvc-b38f1217-e007-433f-bc62-15b66e6671db" : rpc error: code = Internal desc = rbd image replicapool/csi-vol-e4d2d56e-70d5-11eb-9a1b-9ef3bde4434c is still being used`)
	if strings.Replace(a, "k8s-dev", "replicapool", 1) != b {
		t.Errorf("same failure, different templates beyond the pool name:\n%s\n%s", a, b)
	}
	if !strings.Contains(a, "is still being used") || !strings.Contains(a, "rpc error: code = Internal") {
		t.Errorf("the failure's words were masked: %s", a)
	}
	if Template(`Error: secret "smtp-account" not found`) == Template(`Error: configmap "smtp-account" not found`) {
		t.Error("a Secret and a ConfigMap not found must not share a template")
	}
}

// A template is bounded and valid UTF-8 whatever the input.
func TestTemplateBounds(t *testing.T) {
	long := strings.Repeat("Ünïcödé failure without anything to mask ", 400)
	got := Template(long)
	if len(got) > MaxTemplateBytes || !utf8.ValidString(got) || got == "" {
		t.Errorf("len %d, valid %v", len(got), utf8.ValidString(got))
	}
	if got := Template("bad \xff\xfe bytes"); !utf8.ValidString(got) || got != "bad \uFFFD bytes" {
		t.Errorf("invalid UTF-8: %q", got)
	}
	// Idempotent: masking a template again changes nothing, so templates can be re-keyed.
	for _, l := range tuningLines(t) {
		once := Template(l.Message)
		if twice := Template(once); twice != once {
			t.Errorf("not idempotent:\n%s\n%s", once, twice)
		}
	}
}

func BenchmarkTemplate(b *testing.B) {
	msg := `(combined from similar events): Failed create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox "42bf93c90d996c112f711d9bddbd40fbb03e0a5a8eeccee5f38a98c4a494ca90": failed to allocate for range 0: no IP addresses available in range set: 10.60.28.1-10.60.28.254`
	b.ReportAllocs()
	for b.Loop() {
		Template(msg)
	}
}
