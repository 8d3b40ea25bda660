package corpus

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/kubecause/kubecause/exporter/causes"
)

// ReferenceMarkdown renders the reference part of docs/causes.md for the table: how classification
// works, one row per cause and the rules in match order. runbookDir is the link prefix of runbook pages
// relative to the page (docs/causes.md links "runbooks/<page>.md#<anchor>").
func ReferenceMarkdown(t *causes.Table, runbookDir string) []byte {
	var b bytes.Buffer
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("# Causes\n\n")
	w("<!-- Generated from exporter/causes/causes.yaml by hack/generate/causes-doc.sh; do not edit. -->\n\n")
	w("kubecause gives every Event it counts a `cause` label: a name from a closed, versioned set, each with\n")
	w("a runbook section. This page lists the causes of the built-in cause table (version `%s`) and\n", t.Version())
	w("the rules that recognise them.\n\n")
	w("## How an Event is classified\n\n")
	w("- The input is the Event's `reason` and `message` (`note` for events.k8s.io Events).\n")
	w("- The prefix `%s` that client-go's aggregator puts in front of a message is stripped\n", strings.TrimSpace(causes.CombinedPrefix))
	w("  first (an aggregated Event has the same reason and cause as the Events it folds).\n")
	w("- Only the first %d bytes (4 KiB) of the message are looked at, so a huge message costs no more\n", causes.MaxMessageBytes)
	w("  than that; a signature further in is not seen. Invalid UTF-8 is matched as U+FFFD and never fails.\n")
	w("- The rules are tried **in order and the first match wins**. A rule applies to the Event reasons it\n")
	w("  lists (exact match), or to every reason when it lists none; a rule with reasons may leave out the\n")
	w("  pattern and then matches every message of those reasons. Specific rules come before generic ones:\n")
	w("  `no space left on device` inside a `FailedCreatePodSandBox` message is `disk_full`, not\n")
	w("  `sandbox_failed`.\n")
	w("- Patterns are [Go RE2 regular expressions](https://github.com/google/re2/wiki/Syntax) (linear time);\n")
	w("  `(?i)` makes one case-insensitive. Docker, containerd and CRI-O word the same failure differently;\n")
	w("  the built-in rules cover all three.\n")
	w("- A rule's cause may be a template with one `{group}` placeholder, filled from the pattern's named\n")
	w("  group `(?P<group>…)` and restricted to the listed `values` — the probe rules turn\n")
	w("  `Liveness probe failed:` into `liveness_probe_…`. Every final cause is still declared, so the set\n")
	w("  stays enumerable.\n")
	w("- No match gives `%s`; `kubecause_events_unclassified_total` counts those occurrences.\n", causes.Unknown)
	w("- Causes marked *symptom* are consequences of another cause (a timeout waiting for a volume, a\n")
	w("  sandbox being re-created, a pull back-off): look for the pod's other Events for the root cause.\n")
	w("- Causes marked *generic* (`generic: true` in the table; `%s` always is) are fallbacks: they say\n", causes.Unknown)
	w("  where something failed (the sandbox, a mount, a probe), not why. The rules that name a specific\n")
	w("  cause for the same reason come before them; the scores below do not count a generic cause as named.\n\n")
	w("`kubecause_rule_hits_total{rule,cause}` counts occurrences per rule (pre-initialised to 0 for every\n")
	w("rule and cause it can produce), `kubecause_cause_info` lists the causes with their properties\n")
	w("and `kubecause_causes_table_info{version,source}` names the table in use (see [metrics](metrics.md)).\n")
	w("`runbook_url` is `--runbook.url-pattern` with `%%s` replaced by the runbook page, plus `#<anchor>`\n")
	w("(a runbook given as an `https://` link is that link).\n")
	w("`kubecause explain` shows the cause, target and runbook of existing Events without running the exporter.\n\n")
	w("## Your own cause table\n")
	w("\n")
	w("Your cluster writes messages the built-in table does not name: an operator's, a CSI driver's, your\n")
	w("admission webhook's. A cause you add is counted, and the shipped rules page for it, group it into\n")
	w("incidents, count it in the pod-start SLO and link your runbook, with no change to the mixin: each\n")
	w("kubecause serves its table's properties as `kubecause_cause_info{cause,category,symptom,symptom_of,pod_start,target_kind,runbook_url}`\n")
	w("and the rules select causes by them (`docs/alerts.md`). Ten minutes, with the Longhorn CSI driver's\n")
	w("*no block device frontend* (quoted in longhorn/longhorn#1680), which the built-in table only calls\n")
	w("`csi_rpc_error`:\n")
	w("\n")
	w("1. **See what it says.** `kubectl get events -A -o json > events.json`, then\n")
	w("   `kubecause explain -f events.json` (one row per Event, its cause) and\n")
	w("   `kubecause explain -f events.json --unclassified --draft > draft.yaml`: for the ten commonest\n")
	w("   messages no rule classifies, a rule of their reason with the message as an anchored pattern\n")
	w("   (names, numbers, quoted strings masked) and a placeholder cause. It loads as it is.\n")
	w("2. **Copy the table** of your kubecause version:\n")
	w("   `curl -fsSLo my-causes.yaml https://raw.githubusercontent.com/kubecause/kubecause/v<version>/exporter/causes/causes.yaml`\n")
	w("   and give it a version above the one you copied, raising it at each edit (table 1.15.1 copied:\n")
	w("   `version: \"1.15.2\"`, then 1.15.3, …): where two kubecause replicas serve different tables during\n")
	w("   a rollout, the rules take the higher version's properties of a cause\n")
	w("   (`kubecause_causes_table_version`, major.minor.patch only: a suffix such as `-acme.1` does not\n")
	w("   rank a table, and two tables of equal rank may each be taken).\n")
	w("3. **Add the cause** under `causes:`. `category` picks the alert that shows it: `volume`, `sandbox`,\n")
	w("   `image` (pods that cannot start), `probe`, `container`, `scheduling`, `eviction`, `storage`\n")
	w("   (claims), `workload` (controllers); `other` has none. `podStart: platform` counts it against the\n")
	w("   pod-start SLO and lets it form an incident (`workload`: the workload's own mistake, its pod's\n")
	w("   alert only). `target` is the shared thing it is about, so pods of three workloads failing on one\n")
	w("   target are one incident: `node`, `registry`, or a pattern with `(?P<target>…)`. `runbook` is\n")
	w("   your page, an `https://` link (or `<page>#<anchor>` under `--runbook.url-pattern`):\n")
	w("\n")
	w("   ```yaml\n")
	w("   causes:\n")
	w("     - name: longhorn_no_block_frontend\n")
	w("       category: volume\n")
	w("       meaning: Longhorn has no block device for the volume on this node yet (its engine is not attached, or the volume is in maintenance).\n")
	w("       runbook: https://wiki.example.com/storage/longhorn#no-block-frontend\n")
	w("       podStart: platform\n")
	w("       target: node\n")
	w("   ```\n")
	w("4. **Add the rule** first under `rules:` (the first rule that matches wins, and the table's own\n")
	w("   catch-all rules, such as `volume.csi_rpc_error`, would take the message). Narrow the draft's\n")
	w("   pattern to the words that tell the failure:\n")
	w("\n")
	w("   ```yaml\n")
	w("   rules:\n")
	w("     - id: acme.longhorn_no_block_frontend   # the rule label of kubecause_rule_hits_total\n")
	w("       reasons: [FailedMount]                 # optional; empty = any reason\n")
	w("       pattern: 'desc = There is no block device frontend for volume '\n")
	w("       cause: longhorn_no_block_frontend\n")
	w("   ```\n")
	w("5. **Check it**: `kubecause --causes.file=my-causes.yaml --config.check` (every problem named, by\n")
	w("   rule index and id or cause and field), and `kubecause explain --causes.file=my-causes.yaml -f events.json`\n")
	w("   shows the Events with your cause and your runbook.\n")
	w("6. **Run it**: with Helm, `--set-file causes.config=my-causes.yaml` (the chart mounts it and passes\n")
	w("   `--causes.file`). Then `kubecause_cause_info{cause=\"longhorn_no_block_frontend\"}` is on\n")
	w("   `/metrics`, `cluster_cause:kubecause_cause_info:latest{cause=\"longhorn_no_block_frontend\"}` in\n")
	w("   Prometheus a minute later, and a pod that cannot mount its Longhorn volume pages\n")
	w("   KubecausePodVolumeFailing with your wiki as its runbook (three workloads on one node:\n")
	w("   KubecauseIncident), is on `/problems` and the dashboards, and counts in the pod-start SLO\n")
	w("   (`rules/tests/causes.yaml` proves it with the shipped rules).\n")
	w("\n")
	w("The file is checked when kubecause starts: unknown cause names, duplicate rule ids, invalid patterns,\n")
	w("missing fields and causes without a runbook are errors that name the rule (index and id) or cause\n")
	w("and the field, and kubecause does not start with an invalid table. Keep the causes your alerts and\n")
	w("dashboards use; rename none (cause names are label values queries use). A table is at most 256 KiB,\n")
	w("and its patterns, the rules' and the targets', may expand to at most 100,000 regexp instructions\n")
	w("together (a repeat is expanded: `\\pL{1000}` is a thousand; the built-in table's take about 11,500);\n")
	w("past it the table is refused, naming the rule or cause whose pattern went past, so that no table,\n")
	w("however written, takes more than ~70 MB and a second to load (`docs/performance.md`, \"Hostile\n")
	w("clients\"). A cause may also be a template (`cause: '{probe}_probe_timeout'`,\n")
	w("`values: {probe: [liveness, readiness, startup]}`), each of whose final causes is declared;\n")
	w("`symptom: true` shows a cause only when no root cause of the same object is live, and `symptomOf`\n")
	w("names a problem outside the object whose alert inhibits it (`pvc`, `istiod_remote`; the header of\n")
	w("`exporter/causes/causes.yaml` explains every field).\n")
	w("\n")
	w("**Versioning.** `version` is free text shown in `kubecause_causes_table_info`. The built-in table\n")
	w("bumps its minor version when rules or causes are added or changed and its major version when a\n")
	w("cause is renamed or removed, since cause names are label values that queries and alerts use.\n\n")

	// Rules per cause.
	rules := t.Rules()
	byCause := map[string][]causes.Rule{}
	for _, r := range rules {
		for _, c := range t.RuleCauses(r.ID) {
			byCause[c] = append(byCause[c], r)
		}
	}
	order := map[string]int{}
	for i, r := range rules {
		order[r.ID] = i + 1
	}
	w("## Causes\n\n")
	w("*pod start*: who fixes a cause that keeps a pod from starting — `platform` causes count against the\n")
	w("mixin's pod-start SLO, `workload` causes are the workload's own mistake (its pod alert names it).\n")
	w("The `workload` category's causes keep a pod from being created at all and are counted on the\n")
	w("controller (ReplicaSet, StatefulSet, DaemonSet, Job, …): the same column says who fixes them, but the\n")
	w("pod-start SLO counts pods only.\n\n")
	w("*target*: where the shared thing the cause is about is read from (the `target` label of\n")
	w("`kubecause_object_events`, see [metrics](metrics.md#the-target-label)): `registry`, `node`, or a\n")
	w("pattern whose group `(?P<target>…)` is read from the message.\n\n")
	w("| cause | category | meaning | recognised by (rule: reasons) | symptom | generic | pod start | target | runbook |\n")
	w("|---|---|---|---|---|---|---|---|---|\n")
	for _, c := range t.Causes() {
		var how []string
		for _, r := range byCause[c.Name] {
			reasons := "any reason"
			if len(r.Reasons) > 0 {
				reasons = strings.Join(r.Reasons, ", ")
			}
			how = append(how, fmt.Sprintf("#%d `%s`: %s", order[r.ID], r.ID, reasons))
		}
		if c.Name == causes.Unknown {
			how = append(how, "no rule matched")
		}
		symptom := ""
		if c.Symptom {
			symptom = "yes"
		}
		generic := ""
		if c.Generic {
			generic = "yes"
		}
		page, anchor, _ := strings.Cut(c.Runbook, "#")
		link := fmt.Sprintf("[%s](%s%s.md#%s)", c.Runbook, runbookDir, page, anchor)
		target := c.Target
		if target != "" && target != causes.TargetRegistry && target != causes.TargetNode {
			target = code(target)
		}
		w("| `%s` | %s | %s | %s | %s | %s | %s | %s | %s |\n", c.Name, c.Category, cell(c.Meaning), strings.Join(how, "<br>"), symptom, generic, c.PodStart, target, link)
	}
	w("\n## Rules in match order\n\n")
	w("| # | rule | reasons | message pattern | cause |\n|---|---|---|---|---|\n")
	for i, r := range rules {
		reasons := "any"
		if len(r.Reasons) > 0 {
			reasons = strings.Join(r.Reasons, ", ")
		}
		pattern := "any message"
		if r.Pattern != "" {
			pattern = code(r.Pattern)
		}
		w("| %d | `%s` | %s | %s | `%s` |\n", i+1, r.ID, reasons, pattern, r.Cause)
	}
	return b.Bytes()
}

// cell escapes text for a Markdown table cell.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// code renders s as a code span inside a table cell.
func code(s string) string {
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	pad := ""
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		pad = " "
	}
	return fence + pad + cell(s) + pad + fence
}
