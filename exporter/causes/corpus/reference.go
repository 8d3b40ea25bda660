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
	w("rule and cause it can produce), `kubecause_cause_info{cause,category,runbook_url}` lists the causes\n")
	w("and `kubecause_causes_table_info{version,source}` names the table in use (see [metrics](metrics.md)).\n")
	w("`runbook_url` is `--runbook.url-pattern` with `%%s` replaced by the runbook page, plus `#<anchor>`.\n")
	w("`kubecause explain` shows the cause, target and runbook of existing Events without running the exporter.\n\n")
	w("## Your own cause table\n\n")
	w("Start from a copy of `exporter/causes/causes.yaml` and pass it with `--causes.file=<path>`. The\n")
	w("file is checked when kubecause starts: unknown cause names, duplicate rule ids, invalid patterns,\n")
	w("missing fields and causes without a runbook are errors that name the rule (index and id) or cause\n")
	w("and the field, and kubecause does not start with an invalid table. Keep the causes your alerts and\n")
	w("dashboards use; you may add causes (with a `runbook` of the form `<page>#<anchor>`) and rules.\n")
	w("A cause's optional `target` says what shared thing it is about (the `target` label of the\n")
	w("per-object view): `registry`, `node`, or a regular expression with a named group `(?P<target>…)`\n")
	w("read from the message, e.g. `target: 'exceeded quota: (?P<target>[^,\\s]+)'`; anything else is an\n")
	w("error that names the cause.\n")
	w("A table is at most 256 KiB, and its patterns, the rules' and the targets', may expand to at most\n")
	w("100,000 regexp instructions together (a repeat is expanded: `\\pL{1000}` is a thousand; the\n")
	w("built-in table's take about 12,400); past it the table is refused, naming the rule or cause whose\n")
	w("pattern went past, so that no table, however written, takes more than ~70 MB and a second to load\n")
	w("(`docs/performance.md`, \"Hostile clients\").\n\n")
	w("```yaml\nversion: \"1.0.0-mycompany.1\"\ncauses:\n")
	w("  - name: configmap_not_found\n    category: volume\n    meaning: A ConfigMap the pod needs does not exist.\n")
	w("    runbook: kubecausepodvolumefailing#configmap_not_found\n  # ... every cause, including unknown\n")
	w("rules:\n  - id: volume.configmap_not_found      # stable: it is the rule label of kubecause_rule_hits_total\n")
	w("    reasons: [FailedMount, Failed]         # optional; empty = any reason\n")
	w("    pattern: '(?i)configmaps? \"[^\"]*\" not found'\n    cause: configmap_not_found\n")
	w("  - id: probe.timeout\n    reasons: [Unhealthy]\n")
	w("    pattern: '(?i)^(?P<probe>liveness|readiness|startup) probe failed:.*timeout'\n")
	w("    cause: '{probe}_probe_timeout'\n    values: {probe: [liveness, readiness, startup]}\n```\n\n")
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
