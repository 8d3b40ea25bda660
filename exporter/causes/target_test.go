package causes_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubecause/kubecause/exporter/causes"
	"github.com/kubecause/kubecause/exporter/causes/corpus"
)

// realLines are the corpus (the blind rounds included, all scored by now) and the real node's
// messages, each with where it was found.
func realLines(t *testing.T) []corpus.Line {
	t.Helper()
	blind, err := filepath.Glob(filepath.Join("testdata", "corpus", "blind*.yaml"))
	if err != nil || len(blind) == 0 {
		t.Fatalf("no blind rounds in testdata/corpus: %v", err)
	}
	var all []corpus.Line
	for _, f := range append([]string{filepath.Join("testdata", "corpus", "tuning.yaml"), filepath.Join("testdata", "corpus", "heldback.yaml")}, blind...) {
		l, err := corpus.Load(f)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, l...)
	}
	rn, err := corpus.LoadRealNode(filepath.Join("testdata", "real-node.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range rn.Messages {
		all = append(all, corpus.Line{Reason: m.Reason, Kind: m.Kind, Source: "real node", Cause: m.Cause, Message: m.Message})
	}
	return all
}

// The target of real messages: each case names a message of the corpus (exporter/causes/testdata:
// its source and a part of it), so every message tested is one a real component wrote.
func TestTargetOnRealMessages(t *testing.T) {
	cases := []struct {
		source, contains string
		cause, target    string
		node             bool
	}{
		// Registries: the host of the quoted image reference, docker.io for a bare name.
		{"real node", `Failed to pull image "127.0.0.1:34885/kubecause/testapp:e2e"`, "image_auth_failed", "127.0.0.1:34885", false},
		{"real node", `Back-off pulling image "localhost:43837/`, "image_pull_backoff", "localhost:43837", false},
		{"real node", `"localhost:43837/kubecause/testapp:e2e": failed to pull and unpack`, "image_insecure_registry", "localhost:43837", false},
		{"octarinesec/octarine-operator#15", `unauthorized: authentication required`, "image_auth_failed", "docker.io", false},
		{"kubernetes/website#14257", `rmeuser-auth:latest`, "image_auth_failed", "docker.io", false},
		{"UKHomeOffice/kb8or#68", `Failed to pull image "quay.io/`, "image_not_found", "quay.io", false},
		{"kubernetes/kubernetes#63393", `Failed to pull image "192.168.1.225:5000/`, "image_not_found", "192.168.1.225:5000", false},
		{"kubernetes/kubernetes#43924", `x509`, "image_registry_tls", "10.78.0.228:5000", false},
		{"kubernetes/minikube#14907", `"nginx:alpine"`, "image_registry_tls", "docker.io", false},
		{"seed runbook 004_92579b815601a815", `Failed to pull image "docker.com:8080/`, "image_auth_failed", "docker.com:8080", false},
		{"k3s-io/k3s#10926", `failed to get sandbox image "rancher/mirrored-pause:3.6"`, "sandbox_image_pull_failed", "docker.io", false},
		{"rancher/k3os#155", `failed to get sandbox image "k8s.gcr.io/pause:3.1"`, "sandbox_image_pull_failed", "k8s.gcr.io", false},
		// The pull failed because the node's disk is full: the incident is the node, not the registry.
		{"real node", `write /tmp/`, "disk_full", "", true},
		// CNI: the plugin's type, or the plugin the message names.
		{"real node", `plugin type="bridge" failed (add): failed to set bridge addr`, "cni_error", "bridge", false},
		{"k8snetworkplumbingwg/multus-cni#1165", `plugin type="multus-shim"`, "cni_error", "multus-shim", false},
		{"kata-containers/tests#5400", `plugin type="flannel"`, "cni_error", "flannel", false},
		{"kubernetes-sigs/nfs-subdir-external-provisioner#257", `plugin type="calico"`, "cni_error", "calico", false},
		{"kubernetes/kubernetes#62451", `/var/lib/calico/nodename`, "cni_error", "calico", false},
		// Cilium, whichever way the runtime wraps its plugin: the plugin type "cilium-cni", the agent,
		// its socket, the missing binary — all "cilium", so one Cilium outage is one incident.
		{"cilium/cilium#10627", `local cilium agent`, "cni_error", "cilium", false},
		{"cilium/cilium#28201", `plugin type=\"cilium-cni\" failed (add): unable to allocate IP`, "cni_error", "cilium", false},
		{"cilium/cilium#32399", `unable to create endpoint: Cilium API client timeout exceeded`, "cni_error", "cilium", false},
		{"cilium/cilium#23870", `failed to find plugin \"cilium-cni\" in path [/opt/kube/bin]`, "cni_error", "cilium", false},
		{"cilium/cilium#11497", `failed to find plugin \"cilium-cni\" in path [/home/kubernetes/bin]`, "cni_error", "cilium", false},
		{"cilium/cilium#9322", `unable to connect to Cilium daemon: failed to create cilium agent client`, "cni_error", "cilium", false},
		{"cilium/cilium#6801", `unable to connect to Cilium daemon: Failed to create cilium agent client`, "cni_error", "cilium", false},
		{"cilium/hubble#29", `Put http:///var/run/cilium/cilium.sock/v1/endpoint/`, "cni_error", "cilium", false},
		// dockershim's wrapper around the plugin's timeout names Cilium only capitalised: no target.
		{"cilium/cilium#16038", `Unable to create endpoint: Cilium API client timeout exceeded`, "cni_error", "", false},
		{"cisco-open/martian-bank-demo#50", `crd.projectcalico.org`, "cni_error", "calico", false},
		// host-local IPAM names no plugin.
		{"kubernetes/test-infra#13039", `no IP addresses available in range set`, "cni_error", "", false},
		// CSI drivers, NFS servers, StorageClasses and provisioners.
		{"kubernetes-csi/csi-driver-host-path#71", `driver name hostpath.csi.k8s.io`, "csi_driver_not_registered", "hostpath.csi.k8s.io", false},
		{"ctrox/csi-s3#98", `kubernetes.io/csi: attacher.MountDevice failed`, "csi_driver_not_registered", "ch.ctrox.csi.s3-driver", false},
		{"cubefs/cubefs-csi#51", `csi.lab.com`, "csi_driver_not_registered", "csi.lab.com", false},
		{"huggingface/dataset-viewer#270", `-t nfs svm`, "nfs_mount_failed", "svm-0adb40782285e2ec6.fs-0220b222fb471f3b9.fsx.us-east-1.amazonaws.com", false},
		{"kubernetes/kubernetes#108963", `192.168.43.16:/nfs_share`, "nfs_mount_failed", "192.168.43.16", false},
		{"rook/rook#8727", `StorageClass \"throwaway\"`, "provisioning_failed", "throwaway", false},
		{"storageos/charts#27", `StorageClass \"fast\"`, "provisioning_failed", "fast", false},
		{"kube-reporting/metering-operator#1515", `no volume plugin matched name`, "provisioning_failed", "kubernetes.io/no-provisioner", false},
		{"kubernetes-sigs/aws-ebs-csi-driver docs/modify-volume.md", `"ebs-sc" not found`, "no_storage_class", "ebs-sc", false},
		{"real node", `no storage class is set`, "no_storage_class", "", false},
		// Node causes: the Event's node.
		{"real node", `Node kubecause-node status is now: NodeNotReady`, "node_not_ready", "", true},
		{"real node", `The node had condition: [DiskPressure]`, "evicted_disk", "", true},
		{"real node", `Attempting to reclaim ephemeral-storage`, "node_disk_pressure", "", true},
		{"real node", `unable to store init state`, "disk_full", "", true},
		// No shared target: the workload's own mistake.
		{"real node", `configmap "app-config" not found`, "configmap_not_found", "", false},
		{"real node", `Pod ephemeral local storage usage exceeds`, "evicted_ephemeral_storage_limit", "", false},
	}
	lines := realLines(t)
	tab := causes.Default()
	for _, c := range cases {
		found := false
		for _, l := range lines {
			// The corpus keeps messages JSON-escaped in YAML; LoadCorpus unescapes them, so the
			// case's text matches either form.
			if !strings.HasPrefix(l.Source, c.source) ||
				!strings.Contains(l.Message, c.contains) && !strings.Contains(l.Message, strings.ReplaceAll(c.contains, `\"`, `"`)) {
				continue
			}
			found = true
			r := tab.Classify(l.Reason, l.Message)
			if r.Cause != c.cause || r.Target != c.target || r.TargetNode != c.node {
				t.Errorf("%s %q: Classify = cause %q target %q node %v, want %q %q %v",
					c.source, c.contains, r.Cause, r.Target, r.TargetNode, c.cause, c.target, c.node)
			}
		}
		if !found {
			t.Errorf("no corpus message from %s contains %q", c.source, c.contains)
		}
	}
}

func TestRegistry(t *testing.T) {
	// What ParseNormalizedNamed makes of the references kubelet quotes, in kubelet's wordings
	// (pkg/kubelet/images/image_manager.go: "Back-off pulling image %q", "Failed to pull image
	// %q: %v"); the messages of real components are in TestTargetOnRealMessages.
	for msg, want := range map[string]string{
		`Back-off pulling image "nginx:1.25"`:                                       "docker.io",
		`Back-off pulling image "library/nginx"`:                                    "docker.io",
		`Failed to pull image "registry.example.com:5000/team/app:1.2": x`:          "registry.example.com:5000",
		`Failed to pull image "ghcr.io/o/r@sha256:` + strings.Repeat("a", 64) + `"`: "ghcr.io",
		// Quoted again inside an error (old kubelets' FailedSync): \"ref\".
		`failed pulling image \"k8s.gcr.io/pause:3.2\": x`: "k8s.gcr.io",
		// No reference, or one that does not parse.
		`Error: ErrImagePull`:                                       "",
		`Failed to pull image "UPPER/Case:1": x`:                    "",
		`Failed to apply default image tag "a:b:c": couldn't parse`: "",
	} {
		if got := causes.Registry(msg); got != want {
			t.Errorf("causes.Registry(%q) = %q, want %q", msg, got, want)
		}
	}
}

func TestTargetFieldValidated(t *testing.T) {
	base := "version: v\ncauses:\n- {name: unknown, category: other, meaning: m, runbook: p#a, target: %s}\nrules: []\n"
	for spec, want := range map[string]string{
		`registry`:                      "",
		`node`:                          "",
		`'quota: (?P<target>[^,]+),'`:   "",
		`'(?P<target>a)|(?P<target>b)'`: "",
		`nodes`:                         `causes[0] (name "unknown"): target: must be "registry", "node" or a regular expression with a named group (?P<target>…), got "nodes"`,
		`'quota: ([^,]+)'`:              `target: must be "registry", "node" or a regular expression with a named group (?P<target>…)`,
		`'(?P<target>'`:                 `target: neither "registry" nor "node", and not a valid regular expression`,
	} {
		_, err := causes.Parse([]byte(strings.Replace(base, "%s", spec, 1)))
		switch {
		case want == "" && err != nil:
			t.Errorf("target %s: %v", spec, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("target %s: error %v, want one containing %q", spec, err, want)
		}
	}
}

// A pattern target takes the first non-empty group named target; the table's cut and prefix
// stripping apply, so a target beyond the first 4 KiB is not read.
func TestTargetPattern(t *testing.T) {
	tab, err := causes.Parse([]byte(`version: v
causes:
- {name: unknown, category: other, meaning: m, runbook: p#a}
- {name: c, category: x, meaning: m, runbook: p#a, target: 'a=(?P<target>\w+)|b=(?P<target>\w+)'}
rules:
- {id: r, pattern: 'x', cause: c}
`))
	if err != nil {
		t.Fatal(err)
	}
	for msg, want := range map[string]string{
		"x b=two a=one":                         "two",
		causes.CombinedPrefix + "x a=one":       "one",
		"x nothing":                             "",
		"x" + strings.Repeat(" ", 5000) + "a=1": "",
	} {
		if r := tab.Classify("R", msg); r.Cause != "c" || r.Target != want {
			t.Errorf("Classify(%.30q) = %+v, want target %q", msg, r, want)
		}
	}
}

// The targets of the controllers' causes (a quota, an admission webhook), as the cause table
// declares them for quota_exceeded, admission_webhook_denied and admission_webhook_unavailable,
// on the apiserver's real wordings (cited per message).
func TestTargetControllerCauses(t *testing.T) {
	tab, err := causes.Parse([]byte(`version: v
causes:
- {name: unknown, category: other, meaning: m, runbook: p#a}
- name: quota_exceeded
  category: controller
  meaning: m
  runbook: p#a
  target: 'exceeded quota: (?P<target>[^,\s]+)|(?i:failed quota): (?P<target>[^:\s]+):'
- name: admission_webhook_denied
  category: controller
  meaning: m
  runbook: p#a
  target: 'admission webhook \\*"(?P<target>[^"\\]+)\\*" denied'
- name: admission_webhook_unavailable
  category: controller
  meaning: m
  runbook: p#a
  target: 'failed calling (?:admission )?webhook \\*"(?P<target>[^"\\]+)'
rules:
- {id: q, pattern: '(?i)exceeded quota|failed quota', cause: quota_exceeded}
- {id: d, pattern: 'admission webhook .* denied the request', cause: admission_webhook_denied}
- {id: u, pattern: 'failed calling (?:admission )?webhook', cause: admission_webhook_unavailable}
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ source, message, cause, target string }{
		{"openshiftio/openshift.io#4668", `Error creating: pods "jenkins-1-dr8p8" is forbidden: exceeded quota: compute-resources, requested: limits.cpu=2,limits.memory=1Gi, used: limits.cpu=2,limits.memory=1Gi, limited: limits.cpu=2,limits.memory=1Gi`,
			"quota_exceeded", "compute-resources"},
		{"kubernetes/website#641", `Error creating: pods "nginx-3137573019-" is forbidden: Failed quota: compute-resources: must specify limits.cpu,limits.memory,requests.cpu,requests.memory`,
			"quota_exceeded", "compute-resources"},
		{"kelseyhightower/grafeas-tutorial#8", `admission webhook "image-signature.hightowerlabs.com" denied the request without explanation`,
			"admission_webhook_denied", "image-signature.hightowerlabs.com"},
		{"kserve/kserve#580", `Error creating: Internal error occurred: failed calling webhook "inferenceservice.kfserving-webhook-server.pod-mutator": Post https://kfserving-webhook-server-service.kubeflow.svc:443/mutate-pods?timeout=30s: service "kfserving-webhook-server-service" not found`,
			"admission_webhook_unavailable", "inferenceservice.kfserving-webhook-server.pod-mutator"},
		{"notmattlucas/auto-tracing-webhook#5", `Error creating: Internal error occurred: failed calling webhook "auto-tracing-mutating-webhook.default.svc.cluster.local": Post "https://auto-tracing-mutating-webhook.default.svc:443/decorate?timeout=30s": dial tcp 10.103.71.227:443: connect: connection refused`,
			"admission_webhook_unavailable", "auto-tracing-mutating-webhook.default.svc.cluster.local"},
	} {
		if r := tab.Classify("FailedCreate", c.message); r.Cause != c.cause || r.Target != c.target {
			t.Errorf("%s: cause %q target %q, want %q %q", c.source, r.Cause, r.Target, c.cause, c.target)
		}
	}
}
