//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubecause/kubecause/e2e/framework"
	"github.com/kubecause/kubecause/e2e/scenarios"
	"github.com/kubecause/kubecause/exporter/causes"
	"github.com/kubecause/kubecause/exporter/pages"
)

// The user's own cause: a directory a node agent shares with the workloads through a hostPath
// volume of type Directory (its socket directory) is missing on the node, because the agent does
// not run there (yet). The kubelet refuses the mount with its own message (k8s.io/kubernetes
// pkg/volume/hostpath: "hostPath type check failed, <path> is not a directory, unable to
// determine its type: path <path> does not exist"; "hostPath type check failed: <path> is not a
// directory" before 1.37), which the built-in table calls only volume_mount_failed, its generic
// fallback for any mount error: it says where, not why, and the path is no target. The user's
// cause names it and reads the directory as its target, so the pods of every workload that needs
// the agent are one incident.
const (
	userCause        = "node_agent_directory_missing"
	userCauseRunbook = "https://wiki.example.internal/runbooks/" + userCause
	userCauseNS      = "real-usercause"
)

// userCauseTable is the cause and its rule as the user adds them to a copy of the built-in table
// (docs/causes.md, "Your own cause table"): the rule first, so that the table's catch-all does
// not take the message.
var userCauseTable = [][2]string{
	{"\ncauses:\n", "\ncauses:\n" + `  - name: ` + userCause + `
    category: volume
    meaning: A directory a node agent shares with pods through a hostPath volume (its socket directory) is missing on the node - the agent does not run there.
    runbook: ` + userCauseRunbook + `
    podStart: platform
    target: 'hostPath type check failed[:,] (?P<target>/\S+) is not a directory'
`},
	{"\nrules:\n", "\nrules:\n" + `  - id: acme.node_agent_directory_missing
    reasons: [FailedMount]
    pattern: 'hostPath type check failed[:,] /\S+ is not a directory'
    cause: ` + userCause + `
`},
}

// TestRealNodeUserCause is issue 37's proof on a real node: a cause that exists only in the
// user's cause file (--causes.file), with the shipped rules and Alertmanager route unchanged.
// The pods of three Deployments mount an agent's directory that is missing on the node; the
// kubelet's FailedMount carries the user's cause with the directory as its target, and the
// on-call gets the incident of that target (its description linking the user's runbook) and
// not the per-pod alerts it inhibits (which link it too); the pod-start SLO counts the three pods
// (podStart: platform), and /problems shows them and their incident with the user's runbook.
// The user then fixes the cause (the directory exists): the incident resolves, once.
func TestRealNodeUserCause(t *testing.T) {
	ctx := testContext(t)
	const ns = userCauseNS
	table := filepath.Join(t.TempDir(), "causes.yaml")
	tab := writeUserTable(t, table, causes.Default().Version()+"-acme.1", userCauseTable...)
	s := startRealNodeStack(t, []string{ns}, "--causes.file="+table)
	dir := filepath.Join(s.Opts.WorkDir, "agent", "sockets") // never created: the agent does not run
	for _, d := range incidentDeployments {
		spec := corev1.PodSpec{
			DNSPolicy:                     corev1.DNSDefault,
			TerminationGracePeriodSeconds: ptrTo(int64(1)),
			Containers: []corev1.Container{{Name: "main", Image: framework.TestappImage, ImagePullPolicy: corev1.PullIfNotPresent,
				VolumeMounts: []corev1.VolumeMount{{Name: "agent-sockets", MountPath: "/run/agent", ReadOnly: true}}}},
			Volumes: []corev1.Volume{{Name: "agent-sockets", VolumeSource: corev1.VolumeSource{
				HostPath: &corev1.HostPathVolumeSource{Path: dir, Type: ptrTo(corev1.HostPathDirectory)}}}},
		}
		check(t, createIncidentDeployment(ctx, s, ns, d, spec))
	}
	start := time.Now()

	ev := waitRealEvent(t, s, ns, scenarios.RealEvent{Kind: "Pod", Object: "*", Reason: "FailedMount", Message: dir + " is not a directory"})
	t.Logf("%s wrote %s %s on Pod/%s: %q", eventComponent(ev), ev.Type, ev.Reason, ev.InvolvedObject.Name, ev.Message)
	if got := causes.Default().Classify(ev.Reason, ev.Message); got.Cause != "volume_mount_failed" {
		t.Errorf("the built-in table calls %q %s, not its generic volume_mount_failed: this test's premise (a message it does not name) no longer holds", ev.Message, got.Cause)
	}
	if got := tab.Classify(ev.Reason, ev.Message); got.Cause != userCause || got.Target != dir {
		t.Errorf("the user's table gives %q cause %s target %q, want %s target %q", ev.Message, got.Cause, got.Target, userCause, dir)
	}
	// kubecause counts each pod's Event under the user's cause and the directory as target.
	pods := waitObjectTargets(t, s, ns, "FailedMount", userCause, dir, len(incidentDeployments))
	checkExactCount(t, s, ns, ns, "FailedMount")

	// The pod-start SLO: three pods began to show a platform root cause. Asked within 5 minutes
	// of the first, when the record counts a new series by its whole value (no extrapolation).
	promValue(t, s, fmt.Sprintf(`sum(max without (instance, pod) (kubecause_objects_affected_total{namespace=%q,kind="Pod",cause=%q}))`, ns, userCause),
		float64(len(incidentDeployments)))
	slo, err := s.Prometheus.API.WaitValue(ctx, `cluster:kubecause_pod_start_errors:count5m`, float64(len(incidentDeployments)), 3*time.Minute)
	if err != nil {
		t.Fatalf("the pod-start SLO does not count the user's cause: %v", err)
	}
	ratio := promQuery(t, s, `cluster:kubecause_pod_start_error:ratio_rate5m`)
	t.Logf("pod-start SLO %s after the first failure: errors %s, error ratio %s", time.Since(start).Round(time.Second), slo, ratio)

	// The pager: the incident of the directory, naming the user's cause and runbook.
	incident := map[string]string{"alertname": "KubecauseIncident", "cause": userCause, "target": dir}
	got, err := s.Webhook.WaitFiring(alertTimeout, incident)
	check(t, err)
	for _, n := range got {
		t.Logf("incident received %s after the Deployments were created: %v", time.Since(start).Round(time.Second), n)
		if d := n.Annotations["description"]; !strings.Contains(d, "the runbook of the cause: "+userCauseRunbook) ||
			!strings.Contains(d, fmt.Sprintf("of %d workloads", len(incidentDeployments))) {
			t.Errorf("KubecauseIncident description %q: want %d workloads and the user's runbook %s", d, len(incidentDeployments), userCauseRunbook)
		}
	}
	if len(got) != 1 {
		t.Errorf("want one incident of %v, got %d: %v", incident, len(got), got)
	}
	// The per-pod alerts fire, link the user's runbook, and are held muted by the incident.
	perPod := map[string]string{"alertname": "KubecausePodVolumeFailing", "namespace": ns, "cause": userCause, "target": dir}
	promValue(t, s, fmt.Sprintf(`count(ALERTS{alertname="KubecausePodVolumeFailing",alertstate="firing",namespace=%q,cause=%q,target=%q})`, ns, userCause, dir),
		float64(len(incidentDeployments)))
	for _, pod := range pods {
		a := promAlert(t, s, map[string]string{"alertname": "KubecausePodVolumeFailing", "namespace": ns, "pod": pod}, "", func(framework.ActiveAlert) bool { return true })
		if u := a.Annotations["runbook_url"]; u != userCauseRunbook {
			t.Errorf("KubecausePodVolumeFailing of %s: runbook_url %q, want the user's %s", pod, u, userCauseRunbook)
		}
	}
	check(t, waitInhibited(ctx, s, perPod, incident, len(incidentDeployments)))

	checkUserCauseProblems(t, s, ns, dir, pods)

	// The user's fix: the agent's directory exists on the node (as the agent creates it when it
	// runs there). The kubelet's next mount attempt succeeds, the pods start, and the incident
	// resolves with one resolved notification; the per-pod alerts it muted resolve unsent.
	check(t, os.MkdirAll(dir, 0o755))
	fixed := time.Now()
	resolved, err := s.Webhook.WaitResolved(resolveTimeout, incident)
	check(t, err)
	t.Logf("incident resolved %s after the directory was created: %v", time.Since(fixed).Round(time.Second), resolved)
	sent := map[string]int{}
	for _, n := range s.Webhook.All() {
		if n.Labels["alertname"] == incident["alertname"] && n.Labels["cause"] == userCause && n.Labels["target"] == dir {
			sent[n.Status]++
		}
		if n.Labels["namespace"] == ns {
			t.Errorf("a per-pod notification reached the pager although the incident inhibits it: %v", n)
		}
	}
	if sent["resolved"] != 1 {
		t.Errorf("the incident of %s: %d resolved notifications, want one (firing: %d)", dir, sent["resolved"], sent["firing"])
	}
	recordRealMessages(t, s)
	t.Logf("the user's cause %s: paged as one incident of %s, its runbook linked, counted in the SLO, on /problems, resolved by the fix; %s after the Deployments were created",
		userCause, dir, time.Since(start).Round(time.Second))
}

// waitObjectTargets waits until kubecause's per-object view holds n pods of ns with reason, cause
// and target, and returns their names.
func waitObjectTargets(t *testing.T, s *framework.Stack, ns, reason, cause, target string, n int) []string {
	t.Helper()
	var pods, seen []string
	err := framework.Poll(context.Background(), metricTimeout, func() (bool, error) {
		fams, err := s.Kubecause[0].Metrics()
		if err != nil {
			return false, nil
		}
		pods, seen = pods[:0], seen[:0]
		for _, m := range fams["kubecause_object_events"].GetMetric() {
			l := map[string]string{}
			for _, lp := range m.GetLabel() {
				l[lp.GetName()] = lp.GetValue()
			}
			if l["namespace"] != ns || l["kind"] != "Pod" || l["reason"] != reason {
				continue
			}
			seen = append(seen, fmt.Sprintf("%s cause=%s target=%s", l["name"], l["cause"], l["target"]))
			if l["cause"] == cause && l["target"] == target {
				pods = append(pods, l["name"])
			}
		}
		return len(pods) == n, nil
	})
	if err != nil {
		t.Fatalf("kubecause_object_events: want %d pods of %s with %s cause=%s target=%s, got %v", n, ns, reason, cause, target, seen)
	}
	t.Logf("kubecause_object_events: %v", seen)
	return pods
}

// checkUserCauseProblems reads /problems?format=json: the pods with the user's cause, target
// and runbook, and one incident of the target grouping them.
func checkUserCauseProblems(t *testing.T, s *framework.Stack, ns, target string, pods []string) {
	t.Helper()
	var list pages.ProblemList
	err := framework.Poll(context.Background(), metricTimeout, func() (bool, error) {
		resp, err := http.Get(s.Kubecause[0].URL("/problems?format=json&namespace=" + ns))
		if err != nil {
			return false, nil
		}
		defer resp.Body.Close()
		list = pages.ProblemList{}
		if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
			return false, err
		}
		n := 0
		for _, p := range list.Problems {
			if p.Cause == userCause {
				n++
			}
		}
		return n == len(pods), nil
	})
	if err != nil {
		t.Fatalf("/problems: want the %d pods of %s with cause %s: %v; got %+v", len(pods), ns, userCause, err, list.Problems)
	}
	for _, p := range list.Problems {
		if p.Cause != userCause {
			continue
		}
		if p.Kind != "Pod" || p.Target != target || p.RunbookURL != userCauseRunbook {
			t.Errorf("/problems row %+v: want a Pod, target %s, runbook %s", p, target, userCauseRunbook)
		}
	}
	var inc []pages.Incident
	for _, i := range list.Incidents {
		if i.Cause == userCause {
			inc = append(inc, i)
		}
	}
	if len(inc) != 1 || inc[0].Target != target || inc[0].Objects != len(pods) || inc[0].RunbookURL != userCauseRunbook {
		t.Errorf("/problems incidents of %s: %+v, want one of target %s with %d objects and runbook %s", userCause, inc, target, len(pods), userCauseRunbook)
	}
	t.Logf("/problems: %d rows of %s, incident %+v", len(pods), userCause, inc)
}
