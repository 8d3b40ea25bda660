package explain

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubecause/kubecause/exporter/causes"
	"github.com/kubecause/kubecause/exporter/causes/corpus"
	"path/filepath"
)

const pattern = "https://example.com/docs/runbooks/%s.md"

// What `kubectl get events -A -o json` prints: a List of core/v1 Events.
const coreList = `{
  "apiVersion": "v1",
  "kind": "List",
  "items": [
    {
      "apiVersion": "v1", "kind": "Event",
      "metadata": {"name": "mspider-mcpc-ckube-remote-7d9.17a", "namespace": "istio-system"},
      "involvedObject": {"kind": "Pod", "namespace": "istio-system", "name": "mspider-mcpc-ckube-remote-7d9"},
      "reason": "FailedMount", "type": "Warning", "count": 12,
      "message": "MountVolume.SetUp failed for volume \"remote-kube-api-server\" : configmap \"mspider-mcpc-remote-kube-api-server\" not found",
      "source": {"component": "kubelet", "host": "node-1"}
    },
    {
      "apiVersion": "v1", "kind": "Event",
      "metadata": {"name": "istio-ingressgateway-b8b.17b", "namespace": "istio-system"},
      "involvedObject": {"kind": "Pod", "namespace": "istio-system", "name": "istio-ingressgateway-b8b597c59-7gnwr"},
      "reason": "Unhealthy", "type": "Warning", "count": 3,
      "message": "Readiness probe failed: Get \"http://10.244.0.17:15021/healthz/ready\": dial tcp 10.244.0.17:15021: connect: connection refused"
    }
  ]
}`

// events.k8s.io/v1 objects: regarding, note, series, reportingController.
const eventsAPIList = `{"apiVersion":"events.k8s.io/v1","kind":"EventList","items":[
  {"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"etcd-0.1","namespace":"mesh"},
   "regarding":{"kind":"Pod","namespace":"mesh","name":"etcd-0"},"reason":"FailedScheduling","type":"Warning",
   "note":"0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
   "reportingController":"default-scheduler","series":{"count":7,"lastObservedTime":"2026-11-22T10:00:00.000000Z"}}]}`

func explainString(t *testing.T, input string) []Row {
	t.Helper()
	evs, err := Decode(strings.NewReader(input))
	if err != nil {
		t.Fatal(err)
	}
	return Explain(evs, causes.Default(), pattern)
}

func TestExplainCoreList(t *testing.T) {
	rows := explainString(t, coreList)
	if len(rows) != 2 {
		t.Fatalf("rows = %d", len(rows))
	}
	r := rows[0]
	if r.Namespace != "istio-system" || r.Kind != "Pod" || r.Name != "mspider-mcpc-ckube-remote-7d9" || r.Reason != "FailedMount" ||
		r.Cause != "configmap_not_found" || r.Count != 12 {
		t.Fatalf("row = %+v", r)
	}
	if r.RunbookURL != "https://example.com/docs/runbooks/kubecausepodvolumefailing.md#configmap_not_found" {
		t.Fatalf("runbook = %q", r.RunbookURL)
	}
	if rows[1].Cause != "istio_sidecar_not_ready" {
		t.Fatalf("probe cause = %q", rows[1].Cause)
	}
}

func TestExplainEventsAPIListAndBareArray(t *testing.T) {
	rows := explainString(t, eventsAPIList)
	if len(rows) != 1 || rows[0].Name != "etcd-0" || rows[0].Count != 7 || rows[0].Cause != "scheduling_pvc_unbound" {
		t.Fatalf("rows = %+v", rows)
	}
	var list struct{ Items []json.RawMessage }
	if err := json.Unmarshal([]byte(coreList), &list); err != nil {
		t.Fatal(err)
	}
	arr, _ := json.Marshal(list.Items)
	if rows := explainString(t, string(arr)); len(rows) != 2 || rows[0].Cause != "configmap_not_found" {
		t.Fatalf("bare array rows = %+v", rows)
	}
}

func TestExplainJSONOutputFields(t *testing.T) {
	var buf bytes.Buffer
	if err := Print(&buf, explainString(t, coreList), "json"); err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	if err := json.Unmarshal(buf.Bytes(), &out); err != nil {
		t.Fatalf("output is not a JSON array: %v\n%s", err, buf.String())
	}
	for _, k := range []string{"namespace", "kind", "name", "reason", "type", "message", "cause", "count", "runbook_url"} {
		if _, ok := out[0][k]; !ok {
			t.Errorf("field %q missing in %v", k, out[0])
		}
	}
}

func TestExplainTable(t *testing.T) {
	var buf bytes.Buffer
	if err := Print(&buf, explainString(t, coreList), "table"); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "NAMESPACE") {
		t.Fatalf("table:\n%s", buf.String())
	}
	for _, want := range []string{"Pod/mspider-mcpc-ckube-remote-7d9", "configmap_not_found", "12", "kubecausepodvolumefailing.md#configmap_not_found"} {
		if !strings.Contains(lines[1], want) {
			t.Errorf("row %q lacks %q", lines[1], want)
		}
	}
}

func TestExplainMalformedInputNamesThePosition(t *testing.T) {
	for name, tc := range map[string]struct{ input, want string }{
		"syntax":     {"{\"kind\": \"List\",\n \"items\": [ {\"reason\": }\n]}", "line 2, column 24 (byte 41)"},
		"first byte": {"}", "line 1, column 1 (byte 1)"},
		"null item":  {`{"kind":"List","items":[null]}`, "item 0 is null"},
		"pod list": {`{"kind":"PodList","apiVersion":"v1","items":[{"metadata":{"name":"web-0","namespace":"apps"},"status":{"phase":"Pending"}}]}`,
			"input is a PodList, not a list of Events"},
		"pods without kind": {`[{"metadata":{"name":"web-0","namespace":"apps"},"status":{"phase":"Pending"}}]`, "item 0 is not an Event"},
		"type":              {`{"kind":"List","items":[{"reason": 5}]}`, "item 0"},
		"not list":          {`{"kind":"Pod","metadata":{}}`, `without "items"`},
		"empty":             {"  \n", "empty"},
		"not event":         {`[{"kind":"Pod"}]`, `kind "Pod" is not an Event`},
		"truncated":         {coreList[:len(coreList)/2], "malformed input"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Decode(strings.NewReader(tc.input))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

// TestExplainTableEscapesControlCharacters: whoever creates an Event chooses its reason and its
// object's name; the table must not hand their bytes to the terminal raw. JSON stays JSON.
func TestExplainTableEscapesControlCharacters(t *testing.T) {
	evil := strings.Replace(coreList, `"name": "mspider-mcpc-ckube-remote-7d9"`,
		`"name": "mspider-mcpc-ckube-remote-7d9\u001b]0;owned\u0007\n\u0000x\u202e"`, 1)
	evil = strings.Replace(evil, `"reason": "Unhealthy"`, `"reason": "Unhealthy\r\t\\"`, 1)
	rows := explainString(t, evil)
	var buf bytes.Buffer
	if err := Print(&buf, rows, "table"); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for i, r := range out {
		if r != '\n' && r != ' ' && !unicode.IsGraphic(r) {
			t.Fatalf("table writes %U raw at byte %d:\n%q", r, i, out)
		}
	}
	if lines := strings.Count(out, "\n"); lines != 3 {
		t.Errorf("table has %d lines, want 3 (a header and a row per Event):\n%s", lines, out)
	}
	for _, want := range []string{`Pod/mspider-mcpc-ckube-remote-7d9\x1b]0;owned\x07\n\x00x\u202e`, `Unhealthy\r\t\\`} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %s:\n%s", want, out)
		}
	}
	buf.Reset()
	if err := Print(&buf, rows, "json"); err != nil {
		t.Fatal(err)
	}
	var back []Row
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back[0].Name != rows[0].Name || back[1].Reason != rows[1].Reason {
		t.Errorf("JSON does not carry the strings as they are: %q %q", back[0].Name, back[1].Reason)
	}
}

// FuzzDecode: any input is either explained or refused with an error, never a panic; what is
// explained prints as a terminal-safe table and as JSON that reads back to the same rows. Fuzz
// further with
//
//	go test ./exporter/explain -run '^$' -fuzz FuzzDecode -fuzztime 30s
func FuzzDecode(f *testing.F) {
	for _, s := range []string{coreList, eventsAPIList, `{"items":[null]}`, `[{"kind":"Pod"}]`, "{\"kind\": \"List\",\n \"items\": [ {\"reason\": }\n]}",
		`[{"reason":"BackOff\u001b[2J","involvedObject":{"kind":"Pod","name":"a\u0000"}}]`} {
		f.Add([]byte(s))
	}
	table := causes.Default()
	f.Fuzz(func(t *testing.T, input []byte) {
		evs, err := Decode(bytes.NewReader(input))
		if err != nil {
			return
		}
		rows := Explain(evs, table, pattern)
		var buf bytes.Buffer
		if err := Print(&buf, rows, "table"); err != nil {
			t.Fatal(err)
		}
		for _, r := range buf.String() {
			if r != '\n' && r != ' ' && !unicode.IsGraphic(r) {
				t.Fatalf("table writes %U raw", r)
			}
		}
		if got := strings.Count(buf.String(), "\n"); got != len(rows)+1 {
			t.Fatalf("table has %d lines for %d rows", got, len(rows))
		}
		buf.Reset()
		if err := Print(&buf, rows, "json"); err != nil {
			t.Fatal(err)
		}
		var back []Row
		if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
			t.Fatalf("JSON output does not parse: %v", err)
		}
		if len(back) != len(rows) {
			t.Fatalf("JSON has %d rows, want %d", len(back), len(rows))
		}
	})
}

// TestUnclassifiedTemplates: --unclassified lists what no rule classifies, by reason and
// template, with the occurrences summed, most frequent first; classified Events are left out.
func TestUnclassifiedTemplates(t *testing.T) {
	// Messages a real kubelet 1.35.4 wrote (exporter/causes/testdata/real-node.yaml), and the
	// seed S5's Pulled.
	cgroup := `cgroup v1 detected. cgroup v1 support is deprecated and will be removed in a future release. Please migrate to cgroup v2. More information at https://git.k8s.io/enhancements/keps/sig-node/5573-remove-cgroup-v1`
	pulled := `Container image "k8s.gcr.io/etcd:3.5.0-0" already present on machine`
	evs := []corev1.Event{
		{InvolvedObject: corev1.ObjectReference{Kind: "Node", Name: "node-a"}, Reason: "CgroupV1", Type: "Warning", Message: cgroup, Count: 1},
		{InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "kube-system", Name: "etcd-a"}, Reason: "Pulled", Type: "Normal", Message: pulled, Count: 1},
		{InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "kube-system", Name: "etcd-b"}, Reason: "Pulled", Type: "Normal", Message: pulled, Count: 2},
		{InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "real-s18", Name: "fills-scratch"}, Reason: "Killing", Type: "Normal", Message: "Stopping container main", Count: 1},
		{InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "real-s1", Name: "app"}, Reason: "FailedMount", Type: "Warning",
			Message: `MountVolume.SetUp failed for volume "cfg" : configmap "app-config" not found`, Count: 8},
	}
	got := Unclassified(Explain(evs, causes.Default(), "%s"))
	if len(got) != 2 {
		t.Fatalf("entries = %+v, want Pulled and Killing only", got)
	}
	if got[0].Reason != "Pulled" || got[0].Count != 3 || got[0].Template != causes.Template(pulled) {
		t.Fatalf("first entry = %+v, want Pulled × 3", got[0])
	}
	if got[1].Reason != "Killing" || got[1].Count != 1 {
		t.Fatalf("second entry = %+v, want Killing × 1", got[1])
	}
	var b strings.Builder
	if err := PrintUnclassified(&b, got, "table"); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), "COUNT") || !strings.Contains(b.String(), "Pulled") {
		t.Fatalf("table:\n%s", b.String())
	}
}

// The workload controllers' Events (issue 25): `kubectl get events -o json | kubecause explain`
// names the ReplicaSet, StatefulSet, DaemonSet or Job, the cause and the runbook section.
// Messages from exporter/causes/testdata/corpus/tuning.yaml (their threads are cited there).
func TestExplainWorkloadControllers(t *testing.T) {
	const list = `{"apiVersion": "v1", "kind": "List", "items": [
  {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "nodejs-app-8665bd77fb.1", "namespace": "dev"},
   "involvedObject": {"kind": "ReplicaSet", "namespace": "dev", "name": "nodejs-app-8665bd77fb"},
   "reason": "FailedCreate", "type": "Warning", "count": 14, "source": {"component": "replicaset-controller"},
   "message": "Error creating: pods \"nodejs-app-8665bd77fb-2dd4n\" is forbidden: violates PodSecurity \"restricted:latest\": allowPrivilegeEscalation != false (container \"runtime\" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container \"runtime\" must set securityContext.capabilities.drop=[\"ALL\"]), runAsNonRoot != true (pod or container \"runtime\" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container \"runtime\" must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\")"},
  {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "gatekeeper-controller-manager.2", "namespace": "gatekeeper-system"},
   "involvedObject": {"kind": "StatefulSet", "namespace": "gatekeeper-system", "name": "gatekeeper-controller-manager"},
   "reason": "FailedCreate", "type": "Warning", "count": 23, "source": {"component": "statefulset-controller"},
   "message": "create Pod gatekeeper-controller-manager-1 in StatefulSet gatekeeper-controller-manager failed error: admission webhook \"validation.gatekeeper.sh\" denied the request: you must provide labels: {\"gatekeeper\"}"},
  {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "kube-proxy.3", "namespace": "kube-system"},
   "involvedObject": {"kind": "DaemonSet", "namespace": "kube-system", "name": "kube-proxy"},
   "reason": "FailedCreate", "type": "Warning", "count": 2, "source": {"component": "daemonset-controller"},
   "message": "Error creating: the server was unable to return a response in the time allotted, but may still be processing the request (post pods)"},
  {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "get-data.4", "namespace": "default"},
   "involvedObject": {"kind": "Job", "namespace": "default", "name": "get-data"},
   "reason": "BackoffLimitExceeded", "type": "Warning", "count": 1, "source": {"component": "job-controller"},
   "message": "Job has reached the specified backoff limit"}
]}`
	rows := explainString(t, list)
	want := []struct{ kind, name, cause string }{
		{"ReplicaSet", "nodejs-app-8665bd77fb", "pod_security_violation"},
		{"StatefulSet", "gatekeeper-controller-manager", "admission_webhook_denied"},
		{"DaemonSet", "kube-proxy", "workload_create_timeout"},
		{"Job", "get-data", "job_backoff_limit_exceeded"},
	}
	if len(rows) != len(want) {
		t.Fatalf("rows = %+v", rows)
	}
	for i, w := range want {
		r := rows[i]
		if r.Kind != w.kind || r.Name != w.name || r.Cause != w.cause {
			t.Errorf("row %d = %s/%s %q, want %s/%s %q", i, r.Kind, r.Name, r.Cause, w.kind, w.name, w.cause)
		}
		if u := "https://example.com/docs/runbooks/kubecauseworkloadfailing.md#" + w.cause; r.RunbookURL != u {
			t.Errorf("row %d: runbook %q, want %q", i, r.RunbookURL, u)
		}
	}
	var buf bytes.Buffer
	if err := Print(&buf, rows, "table"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "ReplicaSet/nodejs-app-8665bd77fb") || !strings.Contains(buf.String(), "pod_security_violation") {
		t.Errorf("table:\n%s", buf.String())
	}
}

// explain shows each Event's target: the registry of a pull failure, the node of a full disk, the
// Node of NodeNotReady. Messages of the e2e real node (exporter/causes/testdata/real-node.yaml).
func TestExplainTarget(t *testing.T) {
	rn, err := corpus.LoadRealNode(filepath.Join("..", "causes", "testdata", "real-node.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	real := func(prefix string) string {
		for _, m := range rn.Messages {
			if strings.HasPrefix(m.Message, prefix) {
				return m.Message
			}
		}
		t.Fatalf("no real-node message begins with %q", prefix)
		return ""
	}
	pod := corev1.ObjectReference{Kind: "Pod", Namespace: "shop", Name: "cart-1"}
	kubelet := corev1.EventSource{Component: "kubelet", Host: "worker-7"}
	evs := []corev1.Event{
		{InvolvedObject: pod, Reason: "Failed", Source: kubelet, Count: 1,
			Message: real(`Failed to pull image "127.0.0.1:34885/`)},
		{InvolvedObject: pod, Reason: "FailedCreatePodSandBox", Source: kubelet, Count: 1,
			Message: real(`Failed to create pod sandbox: rpc error: code = Unknown desc = failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: error during container init: unable to store init state`)},
		{InvolvedObject: corev1.ObjectReference{Kind: "Node", Name: "kubecause-node"}, Reason: "NodeNotReady",
			Source: corev1.EventSource{Component: "node-controller"}, Count: 1, Message: real("Node kubecause-node status is now: NodeNotReady")},
		{InvolvedObject: pod, Reason: "FailedMount", Source: kubelet, Count: 1, Message: real(`MountVolume.SetUp failed for volume "cfg" : configmap`)},
	}
	rows := Explain(evs, causes.Default(), pattern)
	want := [][2]string{{"image_auth_failed", "127.0.0.1:34885"}, {"disk_full", "worker-7"}, {"node_not_ready", "kubecause-node"}, {"configmap_not_found", ""}}
	for i, w := range want {
		if rows[i].Cause != w[0] || rows[i].Target != w[1] {
			t.Errorf("row %d: cause %q target %q, want %q %q", i, rows[i].Cause, rows[i].Target, w[0], w[1])
		}
	}
	var buf bytes.Buffer
	if err := Print(&buf, rows, "table"); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(buf.String(), "\n")
	if f := strings.Fields(lines[0]); len(f) < 5 || f[4] != "TARGET" {
		t.Errorf("header %q has no TARGET after CAUSE", lines[0])
	}
	for i, w := range want {
		target := w[1]
		if target == "" {
			target = "-"
		}
		if f := strings.Fields(lines[i+1]); len(f) < 5 || f[3] != w[0] || f[4] != target {
			t.Errorf("table row %q: want cause %s target %s", lines[i+1], w[0], target)
		}
	}
	buf.Reset()
	if err := Print(&buf, rows, "json"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"target": "127.0.0.1:34885"`) {
		t.Errorf("JSON lacks the target:\n%s", buf.String())
	}
}
