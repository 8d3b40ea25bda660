//go:build compat

package compat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/kubecause/kubecause/e2e/framework"
)

// TestShippedAlertmanagerConfigOnRelease runs the Alertmanager $ALERTMANAGER_BIN and its amtool
// $AMTOOL_BIN (default: those on PATH) with the shipped configuration
// (rules/alertmanager/alertmanager.yml: route, grouping, inhibition rules):
//   - amtool check-config accepts it;
//   - for each inhibition rule, an alert its source matchers select mutes one its target
//     matchers select (Alertmanager's API reports the target suppressed, inhibited by the
//     source), while the same target in another cluster is active and is delivered through the
//     shipped route to the receiver; no muted target is ever delivered.
func TestShippedAlertmanagerConfigOnRelease(t *testing.T) {
	am := binary(t, "ALERTMANAGER_BIN", "alertmanager", "prometheus-alertmanager")
	amtool := binary(t, "AMTOOL_BIN", "amtool")
	root, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	out, _ := exec.Command(am, "--version").CombinedOutput()
	t.Logf("%s", firstLine(out))
	shipped := filepath.Join(root, "rules", "alertmanager", "alertmanager.yml")
	if out, err := exec.Command(amtool, "check-config", shipped).CombinedOutput(); err != nil {
		t.Errorf("amtool check-config %s: %v\n%s", shipped, err, out)
	}

	hook, err := framework.StartWebhook()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hook.Close() })
	cfg, err := framework.ShippedAlertmanagerConfig(root, hook.URL, framework.ShippedRouteTimers)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	c, err := framework.StartAlertmanagerConfig("alertmanager", am, dir, dir, "", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop() })

	var doc struct {
		InhibitRules []struct {
			Equal          []string `json:"equal"`
			SourceMatchers []string `json:"source_matchers"`
			TargetMatchers []string `json:"target_matchers"`
		} `json:"inhibit_rules"`
	}
	if err := yaml.Unmarshal(cfg, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.InhibitRules) == 0 {
		t.Fatal("the shipped configuration has no inhibition rule")
	}
	type pair struct{ source, target, control map[string]string }
	var pairs []pair
	var alerts []map[string]string
	for i, r := range doc.InhibitRules {
		src := labelsFor(t, r.SourceMatchers)
		tgt := labelsFor(t, r.TargetMatchers)
		for _, l := range r.Equal {
			switch {
			case src[l] != "" && tgt[l] == "":
				tgt[l] = src[l]
			case tgt[l] != "" && src[l] == "":
				src[l] = tgt[l]
			case src[l] == "":
				src[l], tgt[l] = "equal-"+l, "equal-"+l
			}
			if src[l] != tgt[l] {
				t.Fatalf("inhibition rule %d: equal label %s is %q on the source, %q on the target", i, l, src[l], tgt[l])
			}
		}
		// Every rule in a cluster of its own, so that one rule's source mutes only its own target.
		src["cluster"], tgt["cluster"] = fmt.Sprintf("rule-%d", i), fmt.Sprintf("rule-%d", i)
		ctl := map[string]string{}
		for k, v := range tgt {
			ctl[k] = v
		}
		ctl["cluster"] = fmt.Sprintf("control-%d", i)
		pairs = append(pairs, pair{src, tgt, ctl})
		alerts = append(alerts, src, tgt, ctl)
	}
	if err := postAlerts(c, alerts); err != nil {
		t.Fatal(err)
	}

	for i, p := range pairs {
		err := framework.Poll(t.Context(), 60*time.Second, func() (bool, error) {
			srcs, err := framework.AlertmanagerAlerts(c, p.source)
			if err != nil || len(srcs) != 1 {
				return false, nil
			}
			tgts, err := framework.AlertmanagerAlerts(c, p.target)
			if err != nil || len(tgts) != 1 {
				return false, nil
			}
			st := tgts[0].Status
			return st.State == "suppressed" && len(st.InhibitedBy) == 1 && st.InhibitedBy[0] == srcs[0].Fingerprint, nil
		})
		if err != nil {
			got, _ := framework.AlertmanagerAlerts(c, p.target)
			t.Errorf("inhibition rule %d: target %v not muted by source %v: %+v", i, p.target, p.source, got)
		}
	}
	for i, p := range pairs {
		if _, err := hook.WaitFiring(2*time.Minute, p.control); err != nil {
			t.Errorf("inhibition rule %d: the unmuted target %v was not delivered through the shipped route: %v", i, p.control, err)
		}
	}
	for i, p := range pairs {
		if got := hook.Firing(p.target); len(got) > 0 {
			t.Errorf("inhibition rule %d: the muted target %v was delivered: %v", i, p.target, got)
		}
	}
	t.Logf("%d inhibition rules: each source muted its target; %d unmuted targets delivered, no muted one", len(pairs), len(pairs))
}

func binary(t *testing.T, env string, names ...string) string {
	t.Helper()
	if p := os.Getenv(env); p != "" {
		return p
	}
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	t.Fatalf("none of %v on PATH and %s unset (make deps, hack/compat-deps.sh)", names, env)
	return ""
}

func firstLine(b []byte) string {
	s, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	return s
}

var plainAlternative = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// labelsFor returns labels that every matcher accepts: an equality's value, a regexp's first
// alternative, and for a negative matcher a value it does not reject.
func labelsFor(t *testing.T, matchers []string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, m := range matchers {
		mm := matcherRe.FindStringSubmatch(m)
		if mm == nil || mm[0] != m {
			t.Fatalf("matcher %s: not name op \"value\"", m)
		}
		name, op, value := mm[1], mm[2], mm[3]
		var v string
		switch op {
		case "=":
			v = value
		case "=~":
			v, _, _ = strings.Cut(value, "|")
			if !plainAlternative.MatchString(v) {
				t.Fatalf("matcher %s: its first alternative %q is not a plain value", m, v)
			}
		default:
			v = "compat-" + name
		}
		re := regexp.MustCompile("^(?:" + map[bool]string{true: regexp.QuoteMeta(value), false: value}[op == "=" || op == "!="] + ")$")
		if re.MatchString(v) == (op == "!=" || op == "!~") {
			t.Fatalf("matcher %s does not accept %q", m, v)
		}
		if prev, ok := out[name]; ok && prev != v {
			t.Fatalf("matchers %v: two values for %s", matchers, name)
		}
		out[name] = v
	}
	return out
}

// postAlerts sends alerts firing for an hour through Alertmanager's API, as Prometheus does.
func postAlerts(c *framework.Component, alerts []map[string]string) error {
	type alert struct {
		Labels   map[string]string `json:"labels"`
		StartsAt time.Time         `json:"startsAt"`
		EndsAt   time.Time         `json:"endsAt"`
	}
	now := time.Now()
	var body []alert
	for _, l := range alerts {
		body = append(body, alert{Labels: l, StartsAt: now, EndsAt: now.Add(time.Hour)})
	}
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	resp, err := http.Post(c.URL("/api/v2/alerts"), "application/json", bytes.NewReader(b))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("POST /api/v2/alerts: %s", resp.Status)
	}
	return nil
}
