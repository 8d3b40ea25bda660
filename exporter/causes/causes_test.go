package causes

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestDefaultTableIsValid(t *testing.T) {
	tab, err := Parse(DefaultYAML())
	if err != nil {
		t.Fatalf("the built-in table does not parse: %v", err)
	}
	if tab.Version() == "" {
		t.Error("the built-in table has no version")
	}
	if Default() == nil {
		t.Fatal("Default() returned nil")
	}
}

// TestReleasedCausesKept is the compatibility contract of cause names, which users query by: the
// causes released in table 1.0.0 stay, in their categories and runbook pages (anchor = name),
// until a major version. It is not a second definition: a new cause needs no edit here, and the
// mixin, the docs and the SLO sets are derived from causes.yaml.
func TestReleasedCausesKept(t *testing.T) {
	pages := map[string]string{
		"volume": "kubecausepodvolumefailing", "sandbox": "kubecausepodsandboxfailing",
		"image": "kubecausepodimagepullfailing", "probe": "kubecausepodprobefailing",
		"container": "kubecausecontainerfailing", "eviction": "kubecausepodevicted",
		"scheduling": "kubecausepodunschedulable", "storage": "kubecausepvcprovisioningfailing",
		"other": "kubecauseunclassifiedevents",
		// Events of the Node object (table 1.1.0).
		"node": "kubecausenodenotready", "node_pressure": "kubecausenodepressure",
		// Events of the workload controllers (table 1.4.0).
		"workload": "kubecauseworkloadfailing",
	}
	want := map[string][]string{
		"volume": {"configmap_not_found", "secret_not_found", "config_key_missing", "mount_timeout",
			"volume_multi_attach", "volume_attach_failed", "subpath_failed", "pvc_not_found", "volume_mount_failed"},
		"sandbox": {"disk_full", "memory_limit_too_small", "sandbox_changed", "sandbox_name_conflict",
			"runtime_shim_error", "runtime_timeout", "cni_error", "selinux_denied", "sandbox_failed"},
		"image": {"image_auth_failed", "image_not_found", "image_insecure_registry", "image_registry_tls",
			"image_registry_unreachable", "image_pull_rate_limited", "image_pull_timeout", "image_pull_backoff",
			"image_never_pull", "image_invalid_name", "image_pull_failed"},
		"container": {"crash_loop_backoff", "container_config_error", "container_create_failed",
			"image_wrong_architecture", "oom_killed", "hook_failed"},
		"eviction": {"evicted_memory", "evicted_disk", "evicted_ephemeral_storage_limit", "evicted_pids", "evicted_other"},
		"scheduling": {"scheduling_insufficient_resources", "scheduling_node_selector_mismatch",
			"scheduling_taint_not_tolerated", "scheduling_pvc_unbound", "scheduling_volume_node_affinity",
			"scheduling_no_nodes", "scheduling_port_conflict", "scheduling_failed"},
		"storage": {"no_storage_class", "provisioning_failed"},
		"other":   {"unknown"},
		// Table 1.4.0; the KubecauseWorkloadFailing alert selects by these names.
		"workload": {"quota_exceeded", "quota_validation_failed", "limitrange_violation", "admission_webhook_denied",
			"admission_webhook_unavailable", "pod_security_violation", "service_account_missing", "workload_create_timeout",
			"workload_create_failed", "job_backoff_limit_exceeded", "job_deadline_exceeded", "job_pod_failure_policy",
			"daemonset_pod_failed"},
	}
	for _, p := range []string{"liveness", "readiness", "startup"} {
		for _, k := range []string{"connection_refused", "timeout", "http_status", "exec_failed", "failed"} {
			want["probe"] = append(want["probe"], p+"_probe_"+k)
		}
	}
	tab := Default()
	for cat, names := range want {
		for _, n := range names {
			c, ok := tab.Cause(n)
			if !ok {
				t.Errorf("cause %q is missing", n)
				continue
			}
			if c.Category != cat {
				t.Errorf("cause %q: category %q, want %q", n, c.Category, cat)
			}
			if c.Runbook != pages[cat]+"#"+n {
				t.Errorf("cause %q: runbook %q, want %q", n, c.Runbook, pages[cat]+"#"+n)
			}
		}
	}
	for _, c := range tab.Causes() {
		if pages[c.Category] == "" {
			t.Errorf("cause %q has category %q, which has no runbook page", c.Name, c.Category)
		}
	}
	for _, n := range []string{"mount_timeout", "sandbox_changed", "image_pull_backoff", "daemonset_pod_failed"} {
		if c, _ := tab.Cause(n); !c.Symptom {
			t.Errorf("cause %q should be marked as a symptom", n)
		}
	}
	if c, _ := tab.Cause("disk_full"); c.Symptom {
		t.Error("disk_full is a root cause, not a symptom")
	}
}

func TestCausesListsEveryRuleCauseOnce(t *testing.T) {
	tab := Default()
	declared := map[string]bool{}
	for _, c := range tab.Causes() {
		if declared[c.Name] {
			t.Errorf("Causes() lists %q twice", c.Name)
		}
		declared[c.Name] = true
	}
	if !declared[Unknown] {
		t.Error("Causes() lacks the fallback cause")
	}
	for _, r := range tab.Rules() {
		cs := tab.RuleCauses(r.ID)
		if len(cs) == 0 {
			t.Errorf("rule %q has no causes", r.ID)
		}
		for _, c := range cs {
			if !declared[c] {
				t.Errorf("rule %q produces %q, which Causes() does not list", r.ID, c)
			}
		}
	}
	if got := tab.RuleCauses("probe.timeout"); strings.Join(got, ",") != "liveness_probe_timeout,readiness_probe_timeout,startup_probe_timeout" {
		t.Errorf("RuleCauses(probe.timeout) = %v", got)
	}
	if got := tab.RuleCauses("no.such.rule"); got != nil {
		t.Errorf("RuleCauses of an unknown rule = %v, want nil", got)
	}
	// Callers may not change the table through returned slices.
	cs := tab.Causes()
	cs[0].Name = "changed"
	rs := tab.Rules()
	rs[0].Reasons[0] = "changed"
	if tab.Causes()[0].Name == "changed" || tab.Rules()[0].Reasons[0] == "changed" {
		t.Error("Causes() or Rules() expose the table's own slices")
	}
}

func TestParseErrorsNameTheField(t *testing.T) {
	const causes = `
causes:
  - {name: a_cause, category: things, meaning: Something broke., runbook: "page#a_cause"}
  - {name: unknown, category: other, meaning: Nothing matched., runbook: "other#unknown"}
`
	cases := []struct {
		name, yaml string
		wants      []string
	}{
		{"no version", causes + "rules: []", []string{"version: missing"}},
		{"unknown cause", "version: '1'\n" + causes + `
rules:
  - {id: r.one, pattern: x, cause: no_such_cause}`, []string{`rules[0] (id "r.one"): cause: "no_such_cause" is not declared`}},
		{"duplicate rule id", "version: '1'\n" + causes + `
rules:
  - {id: r.one, pattern: x, cause: a_cause}
  - {id: r.one, pattern: y, cause: a_cause}`, []string{`rules[1] (id "r.one"): id: duplicate`}},
		{"bad regexp", "version: '1'\n" + causes + `
rules:
  - {id: r.bad, pattern: "a(b", cause: a_cause}`, []string{`rules[0] (id "r.bad"): pattern: error parsing regexp`}},
		{"missing id and pattern", "version: '1'\n" + causes + `
rules:
  - {cause: a_cause}`, []string{`rules[0] (id ""): id: missing`, `rules[0] (id ""): pattern: missing`}},
		{"missing cause", "version: '1'\n" + causes + `
rules:
  - {id: r.x, pattern: x}`, []string{`rules[0] (id "r.x"): cause: missing`}},
		{"cause without runbook", `
version: '1'
causes:
  - {name: a_cause, category: things, meaning: Something broke.}
  - {name: unknown, category: other, meaning: Nothing matched., runbook: "other#unknown"}
rules: []`, []string{`causes[0] (name "a_cause"): runbook: missing`}},
		{"runbook without anchor", `
version: '1'
causes:
  - {name: a_cause, category: things, meaning: Something broke., runbook: page}
  - {name: unknown, category: other, meaning: Nothing matched., runbook: "other#unknown"}
rules: []`, []string{`causes[0] (name "a_cause"): runbook: must be "<page>#<anchor>"`}},
		{"bad podStart", `
version: '1'
causes:
  - {name: a_cause, category: things, meaning: Something broke., runbook: "page#a_cause", podStart: node}
  - {name: unknown, category: other, meaning: Nothing matched., runbook: "other#unknown"}
rules: []`, []string{`causes[0] (name "a_cause"): podStart: must be "platform" or "workload", got "node"`}},
		{"runbook URL without host", `
version: '1'
causes:
  - {name: a_cause, category: things, meaning: Something broke., runbook: "https:///a_cause"}
  - {name: unknown, category: other, meaning: Nothing matched., runbook: "other#unknown"}
rules: []`, []string{`causes[0] (name "a_cause"): runbook: not a valid URL: "https:///a_cause"`}},
		{"bad symptomOf", `
version: '1'
causes:
  - {name: a_cause, category: things, meaning: Something broke., runbook: "page#a_cause", symptomOf: "PVC pending"}
  - {name: unknown, category: other, meaning: Nothing matched., runbook: "other#unknown"}
rules: []`, []string{`causes[0] (name "a_cause"): symptomOf: must match ^[a-z][a-z0-9_]*$`}},
		{"no unknown", `
version: '1'
causes:
  - {name: a_cause, category: things, meaning: Something broke., runbook: "page#a_cause"}
rules: []`, []string{`the fallback cause "unknown" must be declared`}},
		{"duplicate cause, bad name, missing meaning", `
version: '1'
causes:
  - {name: a_cause, category: things, meaning: x, runbook: "p#a"}
  - {name: a_cause, category: things, meaning: x, runbook: "p#a"}
  - {name: Bad-Name, category: things, meaning: x, runbook: "p#a"}
  - {name: unknown, category: other, runbook: "other#unknown"}
rules: []`, []string{`causes[1] (name "a_cause"): name: duplicate`, `causes[2] (name "Bad-Name"): name: must match`, `causes[3] (name "unknown"): meaning: missing`}},
		{"template without group", "version: '1'\n" + causes + `
rules:
  - {id: r.t, pattern: "x", cause: "{kind}_cause", values: {kind: [a]}}`, []string{`rules[0] (id "r.t"): pattern: has no named group (?P<kind>`}},
		{"template without values", "version: '1'\n" + causes + `
rules:
  - {id: r.t, pattern: "(?P<kind>a)", cause: "{kind}_cause"}`, []string{`rules[0] (id "r.t"): values: kind: missing`}},
		{"template value without cause", "version: '1'\n" + causes + `
rules:
  - {id: r.t, pattern: "(?P<kind>a|b)", cause: "{kind}_cause", values: {kind: [a, b]}}`, []string{`rules[0] (id "r.t"): cause: "b_cause" (for kind=b) is not declared`}},
		{"values without template", "version: '1'\n" + causes + `
rules:
  - {id: r.v, pattern: "x", cause: a_cause, values: {kind: [a]}}`, []string{`rules[0] (id "r.v"): values: only allowed`}},
		{"unknown field", "version: '1'\n" + causes + `
rules:
  - {id: r.x, patern: x, cause: a_cause}`, []string{`unknown field "patern"`}},
		{"generic not a bool", `
version: '1'
causes:
  - {name: a_cause, category: things, meaning: Something broke., runbook: "page#a_cause", generic: "sometimes"}
  - {name: unknown, category: other, meaning: Nothing matched., runbook: "other#unknown"}
rules: []`, []string{`cannot decode`, `generic`}},
		{"not yaml", "version: [", []string{"cannot decode"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.yaml))
			if err == nil {
				t.Fatal("Parse succeeded, want an error")
			}
			for _, w := range c.wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\ndoes not contain %q", err, w)
				}
			}
		})
	}
}

func TestLoadCustomTable(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "causes.yaml")
	src := `
version: "custom-7"
causes:
  - {name: oom_killed, category: container, meaning: OOM., runbook: "kubecausecontainerfailing#oom_killed", symptom: false}
  - {name: kind_probe_failed, category: probe, meaning: A probe failed., runbook: "probes#kind", generic: true}
  - {name: unknown, category: other, meaning: Nothing matched., runbook: "kubecauseunclassifiedevents#unknown"}
rules:
  - id: my.oom
    pattern: '(?i)out of memory'
    cause: oom_killed
  - id: my.probe
    reasons: [Unhealthy]
    pattern: '^(?P<k>\w+) probe failed'
    cause: '{k}_probe_failed'
    values: {k: [Kind]}
`
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	tab, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if tab.Version() != "custom-7" {
		t.Errorf("version %q", tab.Version())
	}
	if r := tab.Classify("Whatever", "Node ran OUT OF MEMORY"); r != (Result{Cause: "oom_killed", Rule: "my.oom"}) {
		t.Errorf("got %+v", r)
	}
	if r := tab.Classify("Unhealthy", "KIND probe failed: x"); r != (Result{Cause: "kind_probe_failed", Rule: "my.probe"}) {
		t.Errorf("template: got %+v", r)
	}
	// generic as written; unknown is generic without being marked (a table written before the
	// field stays valid).
	for name, want := range map[string]bool{"oom_killed": false, "kind_probe_failed": true, Unknown: true} {
		if c, _ := tab.Cause(name); c.Generic != want {
			t.Errorf("cause %s: generic %v, want %v", name, c.Generic, want)
		}
	}
	// A captured value not in values: the rule does not match.
	if r := tab.Classify("Unhealthy", "Other probe failed: x"); r.Cause != Unknown || r.Rule != "" {
		t.Errorf("value outside the list: got %+v", r)
	}
	if _, err := Load(filepath.Join(dir, "missing.yaml")); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("missing file: %v", err)
	}
	if err := os.WriteFile(path, []byte("version: '1'\ncauses: []\nrules: []\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("invalid file: error %v should name the file", err)
	}
}

func TestClassifyReasonIndex(t *testing.T) {
	tab := Default()
	// A reason-specific rule does not fire for other reasons...
	if r := tab.Classify("Scheduled", "0/3 nodes are available: 3 Insufficient cpu."); r.Cause != Unknown {
		t.Errorf("scheduler wording under another reason: %+v", r)
	}
	// ...while generic rules fire for reasons no rule names.
	if r := tab.Classify("SomeControllerError", `persistentvolumeclaim "x" not found`); r.Cause != "pvc_not_found" {
		t.Errorf("generic rule under an unindexed reason: %+v", r)
	}
	// A missing ConfigMap or Secret is named only in the Events where a pod waits on it (table
	// 1.11.0): a controller's own Event about a Secret it reads is not.
	if r := tab.Classify("SomeControllerError", `configmap "x" not found`); r.Cause != Unknown {
		t.Errorf("configmap under a controller's reason: %+v", r)
	}
}

// Kubernetes 1.0 and 1.1 spelled reasons with a lower-case first letter: the rules of FailedSync
// and failedScheduling's wordings read them too; a reason the table names itself keeps its rules.
func TestClassifyLowerCaseReason(t *testing.T) {
	tab := Default()
	for _, c := range []struct{ reason, message string }{
		{"FailedMount", `MountVolume.SetUp failed for volume "tls" : secret "web-tls" not found`},
		{"Unhealthy", `Liveness probe failed: Get http://10.2.1.7:8080/healthz: dial tcp 10.2.1.7:8080: connection refused`},
		{"Failed", `Error: ErrImagePull`},
	} {
		want := tab.Classify(c.reason, c.message)
		lower := strings.ToLower(c.reason[:1]) + c.reason[1:]
		if got := tab.Classify(lower, c.message); got != want || want.Cause == Unknown {
			t.Errorf("%s: %+v, %s: %+v", lower, got, c.reason, want)
		}
	}
	src := `
version: "1"
causes:
  - {name: oom_killed, category: container, meaning: OOM., runbook: "x#oom_killed"}
  - {name: disk_full, category: volume, meaning: Full., runbook: "x#disk_full"}
  - {name: unknown, category: other, meaning: Nothing matched., runbook: "x#unknown"}
rules:
  - {id: a, reasons: [Failed], cause: oom_killed}
  - {id: b, reasons: [failed], cause: disk_full}
`
	own, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if r := own.Classify("failed", "x"); r.Cause != "disk_full" {
		t.Errorf("a reason the table names: %+v", r)
	}
}

func TestMessageCap(t *testing.T) {
	tab := Default()
	pad := strings.Repeat("x", MaxMessageBytes)
	if r := tab.Classify("FailedMount", `configmap "a" not found `+pad); r.Cause != "configmap_not_found" {
		t.Errorf("signature at the start of a huge message: %+v", r)
	}
	// Past the first MaxMessageBytes bytes nothing is looked at.
	if r := tab.Classify("FailedCreatePodSandBox", pad+" no space left on device"); r.Cause != "sandbox_failed" {
		t.Errorf("signature past the cap: %+v", r)
	}
	// The prefix is stripped before the cap is applied.
	if r := tab.Classify("FailedCreatePodSandBox", CombinedPrefix+pad[:MaxMessageBytes-len("no space left on device")]+"no space left on device"); r.Cause != "disk_full" {
		t.Errorf("prefix counted against the cap: %+v", r)
	}
}

// reference is the plain definition of classification: rules in order, the rule's regexp on the
// first MaxMessageBytes bytes of the prefix-stripped message. Classify's prefilters, folded
// regexps and literal shortcuts must never change its answer.
type reference struct {
	rules []refRule
}

type refRule struct {
	Rule
	re      *regexp.Regexp
	reasons map[string]bool
	causes  []string
}

func newReference(t testing.TB, tab *Table) *reference {
	ref := &reference{}
	for _, r := range tab.Rules() {
		rr := refRule{Rule: r, causes: tab.RuleCauses(r.ID)}
		if r.Pattern != "" {
			rr.re = regexp.MustCompile(r.Pattern)
		}
		if len(r.Reasons) > 0 {
			rr.reasons = map[string]bool{}
			for _, x := range r.Reasons {
				rr.reasons[x] = true
			}
		}
		ref.rules = append(ref.rules, rr)
	}
	return ref
}

func (ref *reference) classify(reason, message string) Result {
	for strings.HasPrefix(message, CombinedPrefix) {
		message = message[len(CombinedPrefix):]
	}
	if len(message) > MaxMessageBytes {
		message = message[:MaxMessageBytes]
	}
	for _, r := range ref.rules {
		if r.reasons != nil && !r.reasons[reason] {
			continue
		}
		if r.re == nil {
			return Result{Cause: r.causes[0], Rule: r.ID}
		}
		m := r.re.FindStringSubmatch(message)
		if m == nil {
			continue
		}
		if len(r.Values) == 0 {
			return Result{Cause: r.Cause, Rule: r.ID}
		}
		for group, vals := range r.Values {
			got := m[r.re.SubexpIndex(group)]
			for i, v := range vals {
				if strings.EqualFold(v, got) {
					return Result{Cause: r.causes[i], Rule: r.ID}
				}
			}
		}
	}
	return Result{Cause: Unknown}
}

// variants of a message that exercise the matcher's shortcuts: case, newlines, non-ASCII text,
// the two non-ASCII runes that fold onto ASCII letters, invalid UTF-8.
func variants(msg string) []string {
	out := []string{msg, strings.ToUpper(msg), strings.ToLower(msg)}
	if i := len(msg) / 2; i > 0 {
		out = append(out, msg[:i]+"\n"+msg[i:], msg[:i]+"é"+msg[i:], msg[:i]+"\xff"+msg[i:])
	}
	out = append(out,
		strings.ReplaceAll(msg, "k", "\u212A"), strings.ReplaceAll(msg, "s", "\u017F"),
		strings.ReplaceAll(msg, "K", "\u212A"), strings.ReplaceAll(msg, " ", "\n"))
	return out
}

func TestClassifyAgreesWithPlainRegexps(t *testing.T) {
	tab := Default()
	ref := newReference(t, tab)
	n := 0
	for _, g := range goldens {
		for _, m := range variants(g.message) {
			n++
			if got, want := tab.Classify(g.reason, m), ref.classify(g.reason, m); (Result{Cause: got.Cause, Rule: got.Rule}) != want {
				t.Errorf("%s: Classify(%q, %q) = %+v, plain regexps say %+v", g.name, g.reason, m, got, want)
			}
		}
	}
	if n < 4*len(goldens) {
		t.Fatalf("only %d variants", n)
	}
}

func TestRunbookURL(t *testing.T) {
	cases := []struct{ pattern, runbook, want string }{
		{"https://example.com/docs/runbooks/%s.md", "kubecausepodvolumefailing#configmap_not_found",
			"https://example.com/docs/runbooks/kubecausepodvolumefailing.md#configmap_not_found"},
		{"https://example.com/runbooks/", "page#anchor", "https://example.com/runbooks/page#anchor"},
		{"https://example.com/%s.md", "page", "https://example.com/page.md"},
		{"", "page#anchor", ""},
		{"https://example.com/%s.md", "", ""},
		// A user's cause that links its own wiki page: the link as it is, whatever the pattern.
		{"https://example.com/%s.md", "https://wiki.example.com/ops/argocd#sync-failed", "https://wiki.example.com/ops/argocd#sync-failed"},
		{"", "http://wiki.local/longhorn", "http://wiki.local/longhorn"},
	}
	for _, c := range cases {
		if got := RunbookURL(c.pattern, c.runbook); got != c.want {
			t.Errorf("RunbookURL(%q, %q) = %q, want %q", c.pattern, c.runbook, got, c.want)
		}
	}
}

func FuzzClassify(f *testing.F) {
	for _, g := range goldens {
		f.Add(g.reason, g.message)
	}
	f.Add("FailedMount", "\xff\xfe"+`configmap "\xc3" not found`)
	f.Add("Unhealthy", "Liveness probe failed: \u212Aconnection refused")
	f.Add("Failed", CombinedPrefix+CombinedPrefix+strings.Repeat("pull ", 2000)+"no such host")
	tab := Default()
	ref := newReference(f, tab)
	valid := map[string]bool{}
	for _, c := range tab.Causes() {
		valid[c.Name] = true
	}
	f.Fuzz(func(t *testing.T, reason, message string) {
		got := tab.Classify(reason, message)
		if !valid[got.Cause] {
			t.Fatalf("Classify(%q, %q) = %+v: not a cause of the table", reason, message, got)
		}
		if got.Rule == "" && got.Cause != Unknown {
			t.Fatalf("cause %q without a rule", got.Cause)
		}
		// The reference knows causes, not targets (TestTarget* hold those).
		if want := ref.classify(reason, message); (Result{Cause: got.Cause, Rule: got.Rule}) != want {
			t.Fatalf("Classify(%q, %q) = %+v, plain regexps say %+v", reason, message, got, want)
		}
		if !utf8.ValidString(got.Cause) || !utf8.ValidString(got.Rule) {
			t.Fatal("result is not valid UTF-8")
		}
	})
}
