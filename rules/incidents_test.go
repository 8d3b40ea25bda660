package rules

import (
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	amlabels "github.com/prometheus/alertmanager/pkg/labels"
	"github.com/prometheus/common/model"
)

// What the on-call receives. The alerts promtool proves firing at each eval time of the
// incident tests (rules/tests/incidents.yaml) go through the shipped Alertmanager route and
// inhibition rules (rules/alertmanager/alertmanager.yml), matched with Alertmanager's own
// matcher parser. A group notifies when an alert that was not in it before fires in it (a
// first notification or an update), and sends a resolved notification when alerts of it
// resolve and none is new. An alert muted by inhibition leaves its group without a
// notification (Alertmanager leaves inhibited alerts out of what it sends).
//
// Each test's expectation is the list of notifications in the order the on-call gets them:
// "<eval time> firing|resolved <group>: <alert names>".
var incidentNotifications = map[string][]string{
	"incident: the registry is unreachable for pods of four Deployments": {
		"6m firing cause=image_registry_unreachable,target=registry.corp.example:5000: KubecauseIncident",
		"11m firing namespace=shop,workload=blog,workload_type=Deployment: KubecausePodImagePullFailing",
		"33m resolved cause=image_registry_unreachable,target=registry.corp.example:5000: KubecauseIncident",
	},
	"incident: a CNI rollout breaks pods on five nodes": {
		"6m firing cause=cni_error,target=calico: KubecauseIncident",
		"33m resolved cause=cni_error,target=calico: KubecauseIncident",
	},
	"incident: istiod-remote mismatch, sidecars of three workloads not ready": {
		"6m firing : KubecauseIstiodRemoteEndpointsMismatch",
	},
	"incident: kube-state-metrics stops for ten minutes in the middle of it": {
		"6m firing cause=image_registry_unreachable,target=registry.corp.example:5000: KubecauseIncident",
		"18m firing : KubecauseStateSourceMissing",
		"25m resolved : KubecauseStateSourceMissing",
		"45m resolved cause=image_registry_unreachable,target=registry.corp.example:5000: KubecauseIncident",
	},
	"incident: the CSI driver of three StatefulSets is not registered on their nodes": {
		"6m firing cause=csi_driver_not_registered,target=ebs.csi.aws.com: KubecauseIncident",
		"33m resolved cause=csi_driver_not_registered,target=ebs.csi.aws.com: KubecauseIncident",
	},
	"incident: a node's runtime disk is full under pods of three workloads": {
		"6m firing cause=disk_full,target=n4: KubecauseIncident",
		"33m resolved cause=disk_full,target=n4: KubecauseIncident",
	},
	"crash loops say why: OOM-killed or exiting": {
		"16m firing namespace=shop,workload=web,workload_type=Deployment: KubecauseContainerFailing",
	},
	"a claim that cannot be provisioned and the pod waiting for it: one notification": {
		"16m firing namespace=db: KubecausePVCProvisioningFailing",
	},
	"incident: a node's memory pressure evicts pods of three workloads, then clears": {
		"12m firing node=n5: KubecauseNodePressure",
		"30m resolved node=n5: KubecauseNodePressure",
	},
	"a node's memory pressure that clears by itself in minutes: its evictions page alone": {
		"20m firing node=n5: KubecausePodEvicted",
		"1h10m resolved node=n5: KubecausePodEvicted",
	},
	"incident: the registry outage's workloads recover one after another": {
		"6m firing cause=image_registry_unreachable,target=registry.corp.example:5000: KubecauseIncident",
		"38m resolved cause=image_registry_unreachable,target=registry.corp.example:5000: KubecauseIncident",
	},
	"a Deployment fixed before kube-state-metrics stops does not page again": {
		"6m firing cause=image_registry_unreachable,target=registry.corp.example:5000: KubecauseIncident",
		"11m firing namespace=shop,workload=blog,workload_type=Deployment: KubecausePodImagePullFailing",
		"17m resolved namespace=shop,workload=blog,workload_type=Deployment: KubecausePodImagePullFailing",
		"25m firing : KubecauseStateSourceMissing",
		"36m resolved : KubecauseStateSourceMissing",
	},
	"kubecause stops for eighteen minutes in the middle of it": {
		"6m firing cause=image_registry_unreachable,target=registry.corp.example:5000: KubecauseIncident",
		"11m firing namespace=shop,workload=blog,workload_type=Deployment: KubecausePodImagePullFailing",
		"17m resolved namespace=shop,workload=blog,workload_type=Deployment: KubecausePodImagePullFailing",
		"36m firing : KubecauseDown",
		"39m resolved : KubecauseDown",
	},
	// Before issue 38 each run's pod paged and resolved (four times), and the Jobs' DeadlineExceeded
	// paged beside them and was still firing 28 minutes after a run succeeded: 5 + 4.
	"a CronJob whose every run fails: one notification until a run succeeds": {
		"14m firing namespace=ops,workload=backup,workload_type=CronJob: KubecauseCronJobFailing",
		"1h8m resolved namespace=ops,workload=backup,workload_type=CronJob: KubecauseCronJobFailing",
	},
	"a CronJob whose runs fail is one workload": {
		"11m firing namespace=ops,workload=backup,workload_type=CronJob: KubecausePodImagePullFailing",
	},
	// Before issue 38 each namespace's claim paged at 16m (three notifications) and, when the
	// claims were bound at 31m, the three pods still unschedulable paged on their own at 33m.
	"incident: a StorageClass's provisioner is down under the claims of three StatefulSets": {
		"6m firing cause=provisioning_failed,target=fast: KubecauseIncident",
		"33m resolved cause=provisioning_failed,target=fast: KubecauseIncident",
	},
	// Before issue 38 the three workloads' probe alerts paged at 16m (three notifications) and
	// resolved at 1h0m, 17 minutes after the mismatch.
	"incident: istiod-remote mismatch, the mesh's probes fail with a bare HTTP status and outlast it": {
		"6m firing : KubecauseIstiodRemoteEndpointsMismatch",
		"43m resolved : KubecauseIstiodRemoteEndpointsMismatch",
	},
	// Before issue 38 the cause flipped to mount_timeout when the ConfigMap Event expired: the
	// alert resolved at 27m and paged again at 36m.
	"a pod whose root-cause Event expires while it still fails keeps its cause": {
		"11m firing namespace=shop,workload=report,workload_type=Deployment: KubecausePodVolumeFailing",
		"1h6m resolved namespace=shop,workload=report,workload_type=Deployment: KubecausePodVolumeFailing",
	},
}

type amRoute struct {
	Receiver string    `json:"receiver"`
	GroupBy  []string  `json:"group_by"`
	Matchers []string  `json:"matchers"`
	Routes   []amRoute `json:"routes"`
}

type amInhibitRule struct {
	SourceMatchers []string `json:"source_matchers"`
	TargetMatchers []string `json:"target_matchers"`
	Equal          []string `json:"equal"`
}

type amConfig struct {
	Route        amRoute         `json:"route"`
	InhibitRules []amInhibitRule `json:"inhibit_rules"`
}

func parseMatchers(t *testing.T, ms []string) amlabels.Matchers {
	t.Helper()
	var out amlabels.Matchers
	for _, s := range ms {
		m, err := amlabels.ParseMatcher(s)
		if err != nil {
			t.Fatalf("matcher %q: %v", s, err)
		}
		out = append(out, m)
	}
	return out
}

// groupOf returns the group key of an alert: the first child route whose matchers match (none
// of the shipped routes continues), its group_by labels and their values.
func groupOf(t *testing.T, r amRoute, ls model.LabelSet) string {
	for _, c := range r.Routes {
		if parseMatchers(t, c.Matchers).Matches(ls) {
			return groupOf(t, c, ls)
		}
	}
	var parts []string
	for _, l := range r.GroupBy {
		if l == "cluster" || l == "alertname" {
			continue // one cluster in these tests; the alert name is the key's last part
		}
		if v := ls[model.LabelName(l)]; v != "" {
			parts = append(parts, l+"="+string(v))
		}
	}
	sort.Strings(parts)
	// Every shipped route groups by alertname: alerts of two names are two groups, two
	// notifications, even where their other labels are the same.
	return strings.Join(parts, ",") + groupNameSep + string(ls["alertname"])
}

// groupNameSep separates a group key's labels from its alert name (printed after the colon).
const groupNameSep = "\x00"

func inhibited(t *testing.T, rules []amInhibitRule, a model.LabelSet, firing []model.LabelSet) bool {
	for _, r := range rules {
		src, tgt := parseMatchers(t, r.SourceMatchers), parseMatchers(t, r.TargetMatchers)
		if !tgt.Matches(a) {
			continue
		}
		for _, s := range firing {
			if s.Equal(a) || !src.Matches(s) {
				continue
			}
			// Alertmanager: an alert matching both sides is not muted by one that also does.
			if src.Matches(a) && tgt.Matches(s) {
				continue
			}
			eq := true
			for _, l := range r.Equal {
				if s[model.LabelName(l)] != a[model.LabelName(l)] {
					eq = false
					break
				}
			}
			if eq {
				return true
			}
		}
	}
	return false
}

func TestIncidentNotifications(t *testing.T) {
	var am amConfig
	readYAML(t, filepath.Join("alertmanager", "alertmanager.yml"), &am)
	tests := unitTestFiles(t)["incidents.yaml"]
	if len(tests.Tests) == 0 {
		t.Fatal("no tests in rules/tests/incidents.yaml")
	}
	seen := map[string]bool{}
	for _, tc := range tests.Tests {
		seen[tc.Name] = true
		want, ok := incidentNotifications[tc.Name]
		if !ok {
			t.Errorf("%s: no expected notifications in incidentNotifications", tc.Name)
			continue
		}
		// Firing alerts per eval time; every time must list the same alert names, so that an
		// alert missing from the picture cannot hide a notification.
		firing := map[time.Duration][]model.LabelSet{}
		names := map[time.Duration][]string{}
		for _, art := range tc.AlertRuleTest {
			d, err := model.ParseDuration(art.EvalTime)
			if err != nil {
				t.Fatalf("%s: eval_time %q: %v", tc.Name, art.EvalTime, err)
			}
			at := time.Duration(d)
			names[at] = append(names[at], art.Alertname)
			for _, e := range art.ExpAlerts {
				ls := model.LabelSet{"alertname": model.LabelValue(art.Alertname)}
				for k, v := range e.ExpLabels {
					ls[model.LabelName(k)] = model.LabelValue(v)
				}
				firing[at] = append(firing[at], ls)
			}
		}
		var times []time.Duration
		for at := range names {
			times = append(times, at)
		}
		slices.Sort(times)
		first := slices.Sorted(slices.Values(names[times[0]]))
		for _, at := range times[1:] {
			if got := slices.Sorted(slices.Values(names[at])); !reflect.DeepEqual(got, first) {
				t.Errorf("%s: eval time %s lists alerts %v, the first lists %v", tc.Name, model.Duration(at), got, first)
			}
		}

		var got []string
		prev := map[string]map[model.Fingerprint]string{} // group -> notified alerts
		for _, at := range times {
			now := map[string]map[model.Fingerprint]string{}
			for _, a := range firing[at] {
				if inhibited(t, am.InhibitRules, a, firing[at]) {
					continue
				}
				g := groupOf(t, am.Route, a)
				if now[g] == nil {
					now[g] = map[model.Fingerprint]string{}
				}
				now[g][a.Fingerprint()] = string(a["alertname"])
			}
			firingNow := map[model.Fingerprint]bool{}
			for _, a := range firing[at] {
				firingNow[a.Fingerprint()] = true
			}
			groups := slices.Sorted(func(yield func(string) bool) {
				for g := range now {
					if !yield(g) {
						return
					}
				}
				for g := range prev {
					if _, ok := now[g]; !ok && !yield(g) {
						return
					}
				}
			})
			for _, g := range groups {
				var added, resolved []string
				for fp, n := range now[g] {
					if _, ok := prev[g][fp]; !ok {
						added = append(added, n)
					}
				}
				for fp, n := range prev[g] {
					if _, ok := now[g][fp]; !ok && !firingNow[fp] {
						resolved = append(resolved, n)
					}
				}
				key, _, _ := strings.Cut(g, groupNameSep)
				switch {
				case len(added) > 0:
					got = append(got, fmt.Sprintf("%s firing %s: %s", model.Duration(at), key, strings.Join(slices.Compact(slices.Sorted(slices.Values(added))), ",")))
				case len(resolved) > 0:
					got = append(got, fmt.Sprintf("%s resolved %s: %s", model.Duration(at), key, strings.Join(slices.Compact(slices.Sorted(slices.Values(resolved))), ",")))
				}
			}
			prev = now
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the on-call receives\n  %s\nwant\n  %s", tc.Name, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
		}
	}
	for name := range incidentNotifications {
		if !seen[name] {
			t.Errorf("incidentNotifications names %q, which is no test of rules/tests/incidents.yaml", name)
		}
	}
}
