package corpus

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"github.com/kubecause/kubecause/exporter/causes"
)

// firstHeldBack is the held-back set's first and only blind score, taken when the set was complete
// and before any rule was changed for it (see corpus_test.go for the thresholds derived from it).
var firstHeldBack = struct {
	version                                     string
	lines, named, namedRight, knowable, covered int
}{version: "1.1.0", lines: 148, named: 93, namedRight: 86, knowable: 93, covered: 86}

// blindRounds are the blind rounds of issue 26, oldest first (testdata/corpus/<file>): each scored
// once, when its lines were new to the table, and kept as taken — {named, named right, knowable,
// covered} as ScoreTable counts them. Each round is collected after the rules of its table were
// final, from threads no corpus file cites, and labelled before any table classified it
// (blind_test.go checks that, keeps its lines as scored and the table above its first score).
var blindRounds = []struct {
	file, version, date                         string
	lines, named, namedRight, knowable, covered int
}{
	{file: "blind.yaml", version: "1.5.0", date: "2026-11-25", lines: 160, named: 94, namedRight: 88, knowable: 101, covered: 88},
	{file: "blind2.yaml", version: "1.7.0", date: "2026-11-26", lines: 151, named: 100, namedRight: 95, knowable: 112, covered: 95},
	{file: "blind3.yaml", version: "1.8.0", date: "2026-11-26", lines: 31, named: 12, namedRight: 12, knowable: 13, covered: 12},
	{file: "blind4.yaml", version: "1.8.0", date: "2026-11-26", lines: 153, named: 59, namedRight: 55, knowable: 67, covered: 55},
	{file: "blind5.yaml", version: "1.9.0", date: "2026-11-26", lines: 199, named: 119, namedRight: 116, knowable: 130, covered: 116},
	{file: "blind6.yaml", version: "1.10.0", date: "2026-11-26", lines: 214, named: 140, namedRight: 131, knowable: 143, covered: 131},
	{file: "blind7.yaml", version: "1.11.0", date: "2026-11-26", lines: 228, named: 84, namedRight: 79, knowable: 85, covered: 79},
}

// before is how table 1.0.0, the table before the corpus existed, scores on the 480-line tuning set
// and the held-back set: {named right, named, covered, knowable} for each.
var before = struct{ tuning, held [4]int }{tuning: [4]int{171, 200, 171, 252}, held: [4]int{77, 84, 77, 93}}

// beforeTable is how table 1.7.0 (the table the second blind round measured) scores per class on
// the tuning and held-back sets as they are with table 1.8.0: for each category, {named right,
// named, covered, knowable} as ClassScores counts them. Measured with the table of commit d498c63
// (exporter/causes/causes.yaml) before the rules of 1.8.0 were written.
var beforeTable = struct {
	version      string
	tuning, held map[string][4]int
}{
	version: "1.7.0",
	tuning: map[string][4]int{
		"container": {27, 27, 27, 27}, "eviction": {12, 12, 12, 12}, "image": {35, 35, 35, 35},
		"node": {5, 5, 5, 5}, "node_pressure": {12, 12, 12, 12}, "probe": {29, 29, 29, 29},
		"sandbox": {47, 47, 47, 47}, "scheduling": {43, 44, 43, 44}, "storage": {6, 6, 6, 6},
		"volume": {90, 90, 90, 91}, "workload": {37, 37, 37, 37},
	},
	held: map[string][4]int{
		"container": {3, 3, 3, 3}, "eviction": {5, 5, 5, 5}, "image": {16, 16, 16, 16},
		"probe": {16, 16, 16, 17}, "sandbox": {17, 17, 17, 17}, "scheduling": {8, 8, 8, 8},
		"volume": {31, 31, 31, 31},
	},
}

// ClassScores scores the table per category: a line counts for precision under the category of
// the cause the table names (when it names a specific one), and for coverage under the category
// of its label (when that is a specific cause).
func ClassScores(t *causes.Table, lines []Line) map[string]*Score {
	out := map[string]*Score{}
	class := func(cause string) *Score {
		c, _ := t.Cause(cause)
		if out[c.Category] == nil {
			out[c.Category] = &Score{}
		}
		return out[c.Category]
	}
	for _, l := range lines {
		got := t.Classify(l.Reason, l.Message).Cause
		specific := l.Cause != LabelNone && l.Cause != LabelUnknowable && l.Cause != LabelOutOfScope && !IsGeneric(t, l.Cause)
		if specific {
			s := class(l.Cause)
			s.Knowable++
			if got == l.Cause {
				s.Covered++
			}
		}
		if !IsGeneric(t, got) {
			s := class(got)
			s.Named++
			if got == l.Cause {
				s.NamedRight++
			}
		}
	}
	return out
}

// classTable renders the per-class figures of the table before (beforeTable) and t on the tuning and
// held-back sets.
func classTable(t *causes.Table, tuning, heldBack []Line) string {
	var b strings.Builder
	ts, hs := ClassScores(t, tuning), ClassScores(t, heldBack)
	var classes []string
	for c := range beforeTable.tuning {
		classes = append(classes, c)
	}
	for c := range ts {
		if _, ok := beforeTable.tuning[c]; !ok {
			classes = append(classes, c)
		}
	}
	sort.Strings(classes)
	cell := func(right, of int) string {
		if of == 0 {
			return "–"
		}
		return fmt.Sprintf("%d/%d", right, of)
	}
	b.WriteString("| class | tuning precision | tuning coverage | held-back precision | held-back coverage |\n|---|---|---|---|---|\n")
	for _, c := range classes {
		var tn, hn Score
		if s := ts[c]; s != nil {
			tn = *s
		}
		if s := hs[c]; s != nil {
			hn = *s
		}
		tb, hb := beforeTable.tuning[c], beforeTable.held[c]
		fmt.Fprintf(&b, "| %s | %s → %s | %s → %s | %s → %s | %s → %s |\n", c,
			cell(tb[0], tb[1]), cell(tn.NamedRight, tn.Named), cell(tb[2], tb[3]), cell(tn.Covered, tn.Knowable),
			cell(hb[0], hb[1]), cell(hn.NamedRight, hn.Named), cell(hb[2], hb[3]), cell(hn.Covered, hn.Knowable))
	}
	return b.String()
}

// ScoresMarkdown renders the part of docs/causes.md that follows the table's reference: how the
// table scores on the corpus of real messages (tuning and held-back sets), what it deliberately
// does not cover, which Normal node Events to count, and how to turn an unclassified message
// template into a rule. The figures are computed, so the page cannot drift from the corpus.
func ScoresMarkdown(t *causes.Table, tuning, heldBack []Line, blinds [][]Line) []byte {
	var b bytes.Buffer
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	ts, hs := ScoreTable(t, tuning), ScoreTable(t, heldBack)
	all := append(append([]Line(nil), tuning...), heldBack...)

	w("\n## Measured on real messages\n\n")
	w("`exporter/causes/testdata/corpus` holds %d real Event messages, each kept byte for byte as found with\n", len(all))
	w("its source, reason, type, involved kind and the cause its text tells. They come from GitHub issue and\n")
	w("pull-request threads where users pasted `kubectl describe` or `kubectl get events` output, from the\n")
	w("documentation of storage drivers and tools, from the seed runbooks and from the real test node:\n\n")
	w("| source | lines |\n|---|---|\n")
	for _, kv := range sourceMix(all) {
		w("| %s | %d |\n", kv.k, kv.n)
	}
	w("\nA line is labelled with the cause its message tells, or `none` (not a failure), `unknowable` (a\n")
	w("failure whose text cannot tell why, e.g. `Failed create pod sandbox.`) or `out_of_scope` (below).\n")
	w("The rules are written against `tuning.yaml`. The %d lines of `heldback.yaml` were **held back**:\n", len(heldBack))
	w("collected after the rules of table %s were final, labelled before the table saw them, and scored\n", firstHeldBack.version)
	w("once: precision %.1f %% (%d/%d), specific coverage %.1f %% (%d/%d). That first score is the honest\n",
		percent(firstHeldBack.namedRight, firstHeldBack.named), firstHeldBack.namedRight, firstHeldBack.named,
		percent(firstHeldBack.covered, firstHeldBack.knowable), firstHeldBack.covered, firstHeldBack.knowable)
	w("estimate for messages the table has not seen. Its misses were then fixed in table 1.2.0 (old\n")
	w("Docker \"image … not found\" wordings, a volume \"already attached to a server\", the old\n")
	w("attach-detach controller's `Failed to attach volume` under `FailedMount`, AppArmor refusing an exec\n")
	w("probe, and scheduler messages that also list inter-pod affinity or topology spread), so the held-back\n")
	w("figures below are no longer blind; the test keeps them from falling under the first score. The\n")
	w("one held-back line still missed is an Azure Container Apps probe Event whose reason,\n")
	w("`PodUnhealthy`, is not Kubernetes' `Unhealthy`. For comparison, table 1.0.0 (before the corpus)\n")
	w("scored %.1f %% precision and %.1f %% coverage on the 480-line tuning set of table\n1.2.0, %.1f %% and %.1f %% on the held-back set.\n\n",
		percent(before.tuning[0], before.tuning[1]), percent(before.tuning[2], before.tuning[3]),
		percent(before.held[0], before.held[1]), percent(before.held[2], before.held[3]))
	w("Table 1.4.0 answers a second measurement on fresh messages from public threads (about 93 %% precision\n")
	w("and 84 %% specific coverage): scheduler messages listing several reasons (the rule below), claims being\n")
	w("deleted and VolumeBinding timeouts, gRPC probes and exec probes quoting a network error, the runtime\n")
	w("being unavailable (`runtime_unavailable`) and AppArmor (`apparmor_denied`, no longer `selinux_denied`).\n")
	w("Their messages were added to the tuning set; five held-back lines were relabelled to the two new\n")
	w("causes, which did not exist when the set was labelled (three FailedCreatePodSandBox lines of a missing\n")
	w("runtime handler or OCI runtime binary, two AppArmor probe lines).\n\n")
	w("- **Precision**: of the lines for which the table names a specific cause, the share where it is\n")
	w("  the right one (naming a cause for a `none` or `unknowable` line is wrong).\n")
	w("- **Specific coverage**: of the lines whose message tells a specific cause, the share that get it\n")
	w("  rather than a generic fallback (%s).\n\n", codeList(GenericCauses(t)))
	w("| set | lines | precision | specific coverage |\n|---|---|---|---|\n")
	w("| tuning | %d | %.1f %% (%d/%d) | %.1f %% (%d/%d) |\n", ts.Lines, ts.Precision(), ts.NamedRight, ts.Named, ts.Coverage(), ts.Covered, ts.Knowable)
	w("| held-back | %d | %.1f %% (%d/%d) | %.1f %% (%d/%d) |\n", hs.Lines, hs.Precision(), hs.NamedRight, hs.Named, hs.Coverage(), hs.Covered, hs.Knowable)
	// A blind round is scored once, when its lines were new to the table, and kept as taken: it is
	// the honest figure for the next message. Re-scoring it after tuning would not be.
	for i, r := range blindRounds {
		name := "blind"
		if i > 0 {
			name = fmt.Sprintf("blind round %d", i+1)
		}
		w("| %s (taken once, table %s, %s) | %d | %.1f %% (%d/%d) | %.1f %% (%d/%d) |\n", name, r.version, r.date, r.lines,
			percent(r.namedRight, r.named), r.namedRight, r.named, percent(r.covered, r.knowable), r.covered, r.knowable)
	}
	w("\n")
	w("The **blind** set (`testdata/corpus/blind.yaml`, issue 26) holds 160 real messages from threads no other\n")
	w("corpus file cites and whose masked messages none holds (`TestBlindCorpusUnseen`), labelled by hand\n")
	w("before any table classified them. Its score above was taken once, after the rules of table 1.5.0 were\n")
	w("final; it is below the tuning set's because the rules were written against the tuning lines. The 6\n")
	w("wrong names: an exec probe whose output quotes a deadline (named a timeout), an image whose\n")
	w("architecture is missing (named not found), a scheduler message with an unknown plugin's reason\n")
	w("(named by its taint group), an API-server timeout of a StatefulSet create, a shim that cannot find\n")
	w("crun (named runtime unavailable) and a cAdvisor line (named image filesystem not ready). The lines\n")
	w("stay as they are: a later table is measured on a new blind set.\n\n")
	w("**Table 1.7.0** answers that round's misses as classes, each rule justified by the component's own\n")
	w("wording and each class with tuning lines from threads no other corpus file cites: a sandbox (pause)\n")
	w("image pull in dockershim's and CRI-O's words (`failed to inspect sandbox image`, `Error initializing\n")
	w("source docker://…pause…`, any pull error of `FailedCreatePodSandBox`); Docker's registry pings that\n")
	w("span lines (`unable to ping registry endpoint …\\nv2 ping attempt failed with error: … dial tcp …`);\n")
	w("the pull's platform matchers (`no match for platform in manifest`, CRI-O's `no image found in manifest\n")
	w("list for architecture`) before a missing image; PodSecurityPolicy's `unable to admit pod` and the\n")
	w("SecurityContextDeny plugin's `SecurityContext.RunAsUser is forbidden`; CRI-O's `applying apparmor profile\n")
	w("to container` and containerd failing to load its default AppArmor profile (`get apparmor_parser version:\n")
	w("exec: \"apparmor_parser\": executable file not found`, which table 1.6.0 called the container's missing\n")
	w("command); a scheduler list with a group no rule knows is `scheduling_failed` instead of the taint or\n")
	w("selector listed next to it (below); and the API server's `The POST operation against Pod could not be\n")
	w("completed at this time` is `workload_create_failed`, not a timeout: on a create it is the storage\n")
	w("layer being unreachable (apiserver `InterpretCreateError`), answered at once (one tuning line relabelled).\n")
	w("Four misses are left as they are, the table's answer being defensible or the message not telling: an exec\n")
	w("probe whose own output says `context deadline exceeded` (named a timeout, as the set's other exec-probe\n")
	w("timeout is labelled), a shim that cannot find crun (`runtime_unavailable` by that cause's meaning: the\n")
	w("OCI runtime binary is missing), a cAdvisor `unable to find data for container /` of image GC (no\n")
	w("statistics yet), and `failed to create shim: not found` of kata (generic: the message does not say\n")
	w("which part is missing). A KubeBlocks re-post (`Pod …: Startup probe failed: …`) and a Kubernetes 1.0\n")
	bs := ScoreTable(t, blinds[0])
	w("`failedScheduling` stay `unknown`. Re-scored with table %s — no longer blind, for comparison only —\n", t.Version())
	w("the set gives %.1f %% (%d/%d) and %.1f %% (%d/%d).\n\n",
		bs.Precision(), bs.NamedRight, bs.Named, bs.Coverage(), bs.Covered, bs.Knowable)
	r2 := blindRounds[1]
	w("The **second blind round** (`testdata/corpus/blind2.yaml`) holds %d real messages from %d threads, collected\n", r2.lines, threadCount(blinds[1]))
	w("after the rules of table %s were final, from threads no other corpus file cites (not even the first\n", r2.version)
	w("round) and that were not read while those rules were written, labelled by hand and committed before any\n")
	w("table classified them. Scored once with table %s (%s): precision %.1f %% (%d/%d), specific coverage\n",
		r2.version, r2.date, percent(r2.namedRight, r2.named), r2.namedRight, r2.named)
	w("%.1f %% (%d/%d) — better precision than the first round, lower coverage, and short of the issue's 96 %% and\n",
		percent(r2.covered, r2.knowable), r2.covered, r2.knowable)
	w("92 %%. The 5 wrong names: a redis exec probe whose output is `Timed out` (twice, named a probe timeout),\n")
	w("an rbd `WaitForAttach` failing on the missing `rbd` binary (named an attach failure), a vSphere CSI\n")
	w("`disk … not attached to node` under `MountDevice` (named a CSI error; labelled an attach failure) and a\n")
	w("scheduler list of volume limits, taints, a cordon and `Too many pods` (named insufficient resources;\n")
	w("labelled `scheduling_failed`). Of the %d lines whose specific cause it missed, 3 are among these; the\n", r2.knowable-r2.covered)
	w("other %d got a generic answer or `unknown`: registries that refuse with a bare `denied` (ghcr.io,\n", r2.knowable-r2.covered-3)
	w("three times) or Artifact Registry's `Permission … denied on resource`; the scheduler's newer\n")
	w("`didn't match PersistentVolume's node affinity`; wordings of old\n")
	w("releases (Kubernetes 1.0's `image … not found`, docker-era `Killing container with id …` after a\n")
	w("failed probe, twice, the 2015 quota denials, twice, `1 MatchNodeSelector`, `pod has unbound\n")
	w("PersistentVolumeClaims (repeated 6 times)`); the API server's `securityContext.privileged: Forbidden:\n")
	w("disallowed by cluster policy`; and a CSI driver without CSIDriver object for an inline volume. These\n")
	w("lines too stay as they are; `TestBlindRoundsScore` keeps every round from falling below its first\n")
	w("score.\n\n")
	w("**Table 1.8.0** answers that round's misses as classes, each rule taken from the component's own wording:\n\n")
	w("- a probe timeout is claimed only from the kubelet's own words: an HTTP, TCP or gRPC probe's client error,\n")
	w("  the kubelet's exec deadline (`command \"…\" timed out`, written by its CRI client when `ExecSync` hits\n")
	w("  `timeoutSeconds`) or a probe that errored in the runtime. Whatever else an exec probe prints is its\n")
	w("  command's output: a script's `Timed out` or a client's `context deadline exceeded` is the command giving\n")
	w("  up by itself inside the probe's deadline, `*_probe_exec_failed`. This also answers the first round's\n")
	w("  exec probe and turns its verbose `grpc_health_probe` line (`health check rpc failed: … DeadlineExceeded`,\n")
	w("  labelled a timeout) into an exec failure; the tool's default `timeout: health rpc did not complete within\n")
	w("  1s`, the kubelet's native gRPC probe's words too, stays a timeout;\n")
	w("- a registry's `DENIED` error code as Docker and containerd print it (`…/manifests/v1: denied`, `denied:\n")
	w("  denied`, Artifact Registry's `Permission \"…\" denied on resource`) is `image_auth_failed`; a filesystem's\n")
	w("  `permission denied` has no colon before `denied`;\n")
	w("- a tool a volume plugin runs on the node that is missing (`executable file not found in $PATH` under\n")
	w("  `FailedMount`, the in-tree rbd plugin's `WaitForAttach` included) is `volume_mount_failed`, not an attach\n")
	w("  failure; a CSI node plugin's own `rpc error: … executable file not found` stays `csi_rpc_error`;\n")
	w("  a CSI node plugin that finds no disk to stage (`… not attached to node`) is `volume_attach_failed`;\n")
	w("  an inline volume of a driver without `CSIDriver` object (`(no CSIDriver object)`, pkg/volume/csi) is\n")
	w("  `csi_driver_not_registered`;\n")
	w("- the API server's own refusal of privileged containers (`securityContext.privileged: Forbidden: disallowed\n")
	w("  by cluster policy`, `--allow-privileged=false`) is `pod_security_violation`;\n")
	w("- the scheduler's newer `didn't match PersistentVolume's node affinity` is `scheduling_volume_node_affinity`,\n")
	w("  and resources are named only when no volume-limit, inter-pod affinity or spread group is listed next to\n")
	w("  them (below): the scheduler's preemption can act on all of those, so such a list does not say which blocks.\n\n")
	w("**Old releases.** A wording of a release no cluster runs gets a rule when its Event reason is still written\n")
	w("today, it cannot be mistaken for another failure, and it costs a few regexp instructions: Kubernetes 1.1's\n")
	w("quota denials (`cpu quota is 200m, current usage is 200m, requesting 100m.`, `cpu is limited by quota, must\n")
	w("make explicit request.`), the kubelet's `Killing` wordings before 1.14 after a failed liveness probe, and\n")
	w("1.8–1.10's `pod has unbound PersistentVolumeClaims`. Not worth a rule: the lower-case reasons of Kubernetes\n")
	w("1.0 and 1.1 (`failed`, `failedScheduling`): every rule names exact reasons, and doubling them for releases of\n")
	w("2015 is not worth the table's size; and the predicate names of 1.8–1.9 in the `0/N nodes are available`\n")
	w("form (`1 MatchNodeSelector`): they would cost the two selector and taint rules about 120 instructions, and\n")
	w("the message stays `scheduling_failed` — generic, not wrong. With these rules the table's patterns expand to\n")
	w("about 10,400 instructions (the load test keeps them under an eighth of the 100,000 a table may have).\n\n")
	w("**Left as they are**, the table's answer being defensible or the message not telling: a shim that cannot\n")
	w("find crun (`runtime_unavailable`: the OCI runtime binary is missing), a cAdvisor `unable to find data for\n")
	w("container /` of image GC (`image_fs_not_ready`: no statistics yet), kata's `failed to create shim: not\n")
	w("found` (generic: which part is missing is not said), a KubeBlocks re-post of a kubelet Event (`Pod …:\n")
	w("Startup probe failed: …`, an operator's Event: `unknown` by the precision guard), and Volcano's\n")
	w("`PodGroupPending` / `Unschedulable` gang messages (an operator's Events, `unknown`). The new tuning lines\n")
	w("(rook/rook#2039, ceph/ceph-csi#87, bitnami/charts#29985, xarg/rabbitmq-statefulset#4, Panfactum/stack#146)\n")
	w("come from threads no other corpus file cites. For a registry's bare `denied`, the missing `CSIDriver`\n")
	w("object, vSphere's `not attached to node`, the privileged refusal and the old `Killing` wordings no public\n")
	w("Event was found whose masked message a blind round does not already hold, so those rules rest on the\n")
	w("components' source wording (and the blind lines, which are not tuned against).\n\n")
	b2 := ScoreTable(t, blinds[1])
	w("Re-scored with table %s — no longer blind, for comparison only — the second round gives %.1f %% (%d/%d)\n",
		t.Version(), b2.Precision(), b2.NamedRight, b2.Named)
	w("and %.1f %% (%d/%d). Per class, table %s → %s (named right/named, covered/knowable; a line counts for\n",
		b2.Coverage(), b2.Covered, b2.Knowable, beforeTable.version, t.Version())
	w("precision under the class of the cause named, for coverage under the class of its label):\n\n")
	w("%s\n", classTable(t, tuning, heldBack))
	r3 := blindRounds[2]
	w("The **third blind round** (`testdata/corpus/blind3.yaml`) holds %d real messages from %d threads, collected\n", r3.lines, threadCount(blinds[2]))
	w("after the rules of table %s were final, from threads no other corpus file cites and that were not read\n", r3.version)
	w("while those rules were written, labelled by hand and committed before any table classified them. Scored\n")
	w("once with table %s (%s): precision %.1f %% (%d/%d), specific coverage %.1f %% (%d/%d). The one miss is\n",
		r3.version, r3.date, percent(r3.namedRight, r3.named), r3.namedRight, r3.named, percent(r3.covered, r3.knowable), r3.covered, r3.knowable)
	w("Docker's `Could not reach any registry endpoint` (1.9–1.10), left to the generic `image_pull_failed`; the\n")
	w("HPA, CronJob and Service-controller Events and the Normal lifecycle lines (%d of the %d) stay `unknown`, as\n",
		r3.lines-r3.knowable-countGeneric(t, blinds[2]), r3.lines)
	w("they should. **The round is small**: 31 lines, not the 150 issue 26 asks for. Most threads the search\n")
	w("reaches are already cited by the earlier rounds, and about two candidates in three from the others are,\n")
	w("masked, already in the corpus; collection stopped at what one session could gather. With 12 named and 13\n")
	w("knowable lines one miss moves the figures by 8 points, so this score says little on its own; the next\n")
	w("round should be larger, and drawn from sources the earlier rounds did not mine (newer releases' wordings,\n")
	w("operators' and controllers' Events).\n\n")
	r4 := blindRounds[3]
	w("The **fourth blind round** (`testdata/corpus/blind4.yaml`) holds %d real messages from %d threads and pages,\n", r4.lines, threadCount(blinds[3]))
	w("collected after the rules of table %s were final, from sources no other corpus file cites, labelled by hand\n", r4.version)
	w("and committed before any table classified them (where a paste left out the reason column and the message's\n")
	w("prefix names it, e.g. `MountVolume.` for `FailedMount`, the reason was filled in from it; the file's header\n")
	w("says so). As the third round advised, it draws mostly on sources the earlier rounds did not mine: operators'\n")
	w("and controllers' own Events (Karpenter, cluster-autoscaler, the AWS Load Balancer Controller, cert-manager,\n")
	w("Crossplane, Knative, KubeVirt and CDI, KServe, KubeRay, Karmada, Volcano, Flux, Tekton, OLM, sealed-secrets,\n")
	w("Longhorn, the PodDisruptionBudget and EndpointSlice controllers), newer CSI drivers (Secrets Store, S3 and GCS\n")
	w("FUSE, JuiceFS, TopoLVM), distributions and clouds (k3s, kind, microk8s, OpenShift, EKS Fargate), CRI-O's\n")
	w("short-name enforcement and DRA. 153 of 284 candidates survived the masked-message check. Scored once with\n")
	w("table %s (%s): precision %.1f %% (%d/%d), specific coverage %.1f %% (%d/%d) — the lowest coverage of\n",
		r4.version, r4.date, percent(r4.namedRight, r4.named), r4.namedRight, r4.named, percent(r4.covered, r4.knowable), r4.covered, r4.knowable)
	w("the rounds: these sources hold wordings no rule was written against. The 4 wrong names: Longhorn's CSI\n")
	w("`failed to attach … the volume is currently attached to different node` (named an attach failure; labelled a\n")
	w("multi-attach); a scheduler list of one volume node affinity conflict next to 18 `Insufficient cpu` and 21\n")
	w("`Insufficient memory` of 30 nodes (named `scheduling_volume_node_affinity` by the declared precedence below;\n")
	w("labelled insufficient resources, a labelling judgement kept as made); and two controller Events labelled\n")
	w("`out_of_scope`: a load-balancer IP allocator's `AllocationFailed` (`Failed to allocate IP for \"…\": no\n")
	w("available IPs`, named `cni_error`) and a VM import's `write /data/disk.img: no space left on device` into its\n")
	w("own volume (named `disk_full`, which is a node's disk). Of the %d knowable lines it missed, 2 are among these;\n", r4.knowable-r4.covered)
	w("the other %d got a generic answer or `unknown`: CRI-O's `short name mode is enforcing, but image name …\n", r4.knowable-r4.covered-2)
	w("returns ambiguous list` (four times, `image_pull_failed`; labelled `image_invalid_name`), the scheduler's\n")
	w("`waiting for ephemeral volume controller to create the persistentvolumeclaim` (twice, `scheduling_failed`;\n")
	w("labelled `scheduling_pvc_unbound`), microk8s' `transport is closing` under `FailedCreatePodSandBox` and\n")
	w("`Failed` (twice, generic; labelled `runtime_unavailable`), Docker's `unable to ping registry endpoint` without\n")
	w("a dial error (generic; labelled `image_registry_unreachable`), and a Camel K operator Event quoting the\n")
	w("kubelet's `back-off … restarting failed container` (`unknown`: an operator's Event). The other %d `none`,\n",
		r4.lines-r4.knowable-countGeneric(t, blinds[3])-2)
	w("`unknowable` and `out_of_scope` lines get no specific cause, as they should. No line was relabelled after\n")
	w("the score: the lines stay as they are, `TestBlindRoundsScore` keeps the table from falling below this first\n")
	w("score, and a table that answers these misses is to be measured on a new round.\n\n")
	b4 := ScoreTable(t, blinds[3])
	w("**Table 1.9.0** answers that round's misses as classes, not lines: each rule is taken from the component's own\n")
	w("wording, and its tuning lines come from sources no blind round cites and whose masked messages no blind round\n")
	w("holds (`TestBlindCorpusUnseen`); no blind line was copied or relabelled.\n\n")
	w("- CRI-O's short-name enforcement (CRI-O 1.34+, `short name mode is enforcing, but image name … returns ambiguous\n")
	w("  list`, internal/storage/image.go) is `image_invalid_name`, under `InspectFailed` as under `Failed`;\n")
	w("- the scheduler's `waiting for ephemeral volume controller to create the persistentvolumeclaim \"…\"`\n")
	w("  (VolumeBinding's PreFilter since 1.23, kubernetes/kubernetes#104605; with a node count at first, without one\n")
	w("  since the scheduler lists PreFilter rejections once, kubernetes/kubernetes#110894) is `scheduling_pvc_unbound`;\n")
	w("- `transport is closing` right after the kubelet's own prefix (`Failed (to) create pod sandbox: rpc error: code =\n")
	w("  Unavailable desc = transport is closing`, `Error: transport is closing`) is the kubelet's gRPC connection to the\n")
	w("  CRI socket closing, `runtime_unavailable`; the same words after another error (kata's `Failed to check if grpc\n")
	w("  server is working: …`, a connection inside the runtime) stay `sandbox_failed`;\n")
	w("- Docker's `unable to ping registry endpoint` (its v2 and v1 pings both failed) is `image_registry_unreachable`\n")
	w("  also when the lines with the dial error are cut off; a certificate error in the pings stays `image_registry_tls`;\n")
	w("- storage backends' own \"attached to another node\" wordings (Longhorn's `the volume is currently attached to\n")
	w("  different node …` and `… since it is already attached to the node …`, Portworx's `Volume is attached on another\n")
	w("  node`) are `volume_multi_attach`;\n")
	w("- `AllocationFailed` is a load balancer IP allocator's Event on a Service (MetalLB's controller, the Hetzner cloud\n")
	w("  controller manager), not a CNI plugin allocating a pod's IP: the table has no Service cause, so a precision\n")
	w("  guard before the CNI rule leaves it `unknown`.\n\n")
	w("Left as they are: the scheduler list whose one volume node affinity conflict the declared precedence names (the\n")
	w("precedence stays), the VM import's `no space left on device` in its own volume (`disk_full`: the message does not\n")
	w("say whose disk) and the Camel K operator's Event (`unknown`). For the CRI connection and Docker's one-line ping no\n")
	w("public Event was found that a blind round does not already hold, so those two rules rest on the kubelet's,\n")
	w("grpc-go's and Docker's wording (a golden test holds the kubelet's current prefix; two kata lines hold the\n")
	w("anchoring). Its patterns expanded to about 10,800 instructions. **Round 4's first score stays the honest\n")
	w("figure for table %s, the table it measured**; re-scored with table %s — no longer blind, for comparison only —\n", r4.version, t.Version())
	w("it gives %.1f %% (%d/%d) and %.1f %% (%d/%d). Table 1.9.0 is measured by the fifth round, below.\n\n",
		b4.Precision(), b4.NamedRight, b4.Named, b4.Coverage(), b4.Covered, b4.Knowable)
	r5 := blindRounds[4]
	w("The **fifth blind round** (`testdata/corpus/blind5.yaml`) holds %d real messages from %d threads, collected\n", r5.lines, threadCount(blinds[4]))
	w("after the rules of table %s were final by two collectors who split the GitHub owners (a–k, l–z), from threads no\n", r5.version)
	w("other corpus file cites, labelled by hand and committed before any table classified them: vendors' CSI drivers\n")
	w("(Azure File, Secrets Store providers, Linode, Scaleway, TrueNAS, QNAP, Synology, Trident, oVirt), custom and vendor\n")
	w("schedulers (Volcano, extenders, GPU admission), exec probes of packaged applications (Redis, Kafka, MongoDB, Vault),\n")
	w("device plugins, old OpenShift wordings, k3s, sysbox, and operators' Normal Events. 199 of 333 candidates survived\n")
	w("the masked-message check. Scored once with table %s (%s): **precision %.1f %% (%d/%d), specific coverage\n",
		r5.version, r5.date, percent(r5.namedRight, r5.named), r5.namedRight, r5.named)
	w("%.1f %% (%d/%d)** — precision above the issue's 96 %% on a full round for the first time, coverage still short of\n",
		percent(r5.covered, r5.knowable), r5.covered, r5.knowable)
	w("its 92 %%. The 3 wrong names: a Secrets Store provider whose node plugin socket does not answer (`connection\n")
	w("error: … dial unix …` under `MountVolume.SetUp`, named `csi_rpc_error`; labelled `csi_driver_not_registered`), an\n")
	w("old kubelet's HTTP liveness probe printing nginx's 404 page (named an exec probe failing; labelled the HTTP\n")
	w("status) and the in-tree iSCSI plugin's `WaitForAttach failed … iscsiadm: Could not create new interface` (named\n")
	w("an attach failure; labelled the generic mount failure: the tool on the node failed). Of the %d knowable lines it\n", r5.knowable-r5.covered)
	w("missed, 2 are among these; the other %d got a generic answer or `unknown`: Cilium's `unable to connect to Cilium\n", r5.knowable-r5.covered-2)
	w("daemon` under `FailedCreatePodSandBox` (`sandbox_failed`; labelled `cni_error`), CRI-O's `error reserving pod name\n")
	w("… for id …` (`sandbox_failed`; labelled `sandbox_name_conflict`), the scheduler's old `PersistentVolumeClaim is\n")
	w("not bound: \"…\"` (twice) and `running PreBind plugin \"VolumeBinding\": binding volumes: provisioning failed for\n")
	w("PVC` (`scheduling_failed`; labelled `scheduling_pvc_unbound`), the runtime's `Error: stat …/mount: no such file or\n")
	w("directory` of a CSI volume and `Error: open …/etc-hosts: no such file or directory` (`container_create_failed`;\n")
	w("labelled `container_config_error`), an old eviction `The node was low on resource: [DiskPressure].`\n")
	w("(`evicted_other`; labelled `evicted_disk`), a `Killing` Event whose whole message is `FailedPostStartHook`\n")
	w("(`unknown`; labelled `hook_failed`), vSphere with Tanzu's own probe wording (`readiness probe failed for container\n")
	w("kafka: exec probe failed with code 1. stderr: …`, twice, `unknown`) and OpenShift's `ProbeError` reason (`unknown`;\n")
	w("labelled a refused readiness probe). The %d `none`, `unknowable` and `out_of_scope` lines and the %d labelled\n",
		r5.lines-r5.knowable-countGeneric(t, blinds[4]), countGeneric(t, blinds[4]))
	w("with a generic cause get no wrong specific cause but the iSCSI line above. No line was relabelled after the\n")
	w("score; **this is the honest figure for table %s**, and a table that answers these misses is to be measured on a\n", r5.version)
	w("new round.\n\n")
	b5 := ScoreTable(t, blinds[4])
	w("**Table 1.10.0** answers that round's misses as classes, not lines, as table 1.9.0 did: each rule is taken from the\n")
	w("component's own wording, and its tuning lines come from threads no blind round cites and whose masked messages no\n")
	w("blind round holds (`TestBlindCorpusUnseen`); no blind line was copied or relabelled.\n\n")
	w("- CRI-O's name index (internal/lib/container_server.go `ReservePodName`, `ReserveContainerName`: `error reserving pod\n")
	w("  name %%q` in 1.11–1.13, `error reserving pod name … for id …` in 1.15–1.16, followed by the index's own `name is\n")
	w("  reserved` since 1.17; `ctr name` for a container) is `sandbox_name_conflict`, the counterpart of containerd's `is\n")
	w("  reserved for`: the kubelet retrying a request CRI-O has not finished;\n")
	w("- a CNI plugin's error inside CRI-O's own wrapper, `failed to create pod network sandbox <name>(<id>): …`\n")
	w("  (server/sandbox_network.go `networkStart`, without the `error adding pod … to CNI network` of newer ocicni), and\n")
	w("  Cilium's CNI plugin that cannot reach its agent's socket, `unable to connect to Cilium daemon` (`… Cilium agent`\n")
	w("  in newer releases; plugins/cilium-cni), are `cni_error`;\n")
	w("- the scheduler's `PersistentVolumeClaim is not bound: \"…\"` (the volume predicates of 1.4–1.12 — `VolumeZoneChecker`,\n")
	w("  `VolumeNodeChecker`, `MaxPDVolumeCountChecker` — at times inside `SchedulerPredicates failed due to …, which is\n")
	w("  unexpected.`) and VolumeBinding's PreBind `provisioning failed for PVC \"…\"` (binder.go `checkBindings`: the\n")
	w("  provisioner gave up on the selected node and removed its annotation, worded `selectedNode annotation value \"\" not\n")
	w("  set to scheduled node` in 1.16, kubernetes/kubernetes#83181) are `scheduling_pvc_unbound`: the pod cannot be\n")
	w("  placed because its claim stays unbound. `provisioning_failed` is the claim's own Event (storage, generic), which\n")
	w("  says why; the pod's Event says that the claim blocks it;\n")
	w("- a `Failed` message that is one path error and nothing else, `Error: stat <path>: no such file or directory` or\n")
	w("  `Error: open <pod dir>/etc-hosts: …`, is the kubelet's own (kubelet_pods.go `makeMounts`: a subPath's volume\n")
	w("  directory that is not there, read by `GetMode`; the pod's hosts file, `ensureHostsFile`), reported as\n")
	w("  `CreateContainerConfigError`: `container_config_error`. Runtimes wrap theirs (containerd `failed to stat %%q`, runc\n")
	w("  `error mounting …`, Docker `Error response from daemon: …`), which stay `container_create_failed`;\n")
	w("- kubelets of 1.5–1.8 rejected a pod at admission with `The node was low on resource: [<conditions>].`\n")
	w("  (eviction_manager.go `Admit`; `The node had condition: […]` since 1.9): `[MemoryPressure]` is `evicted_memory`, a\n")
	w("  list holding `DiskPressure` is `evicted_disk` (memory pressure rejects BestEffort pods only, disk pressure every pod);\n")
	w("- the kubelet's `Killing` Event of a container whose postStart hook failed says `FailedPostStartHook` and nothing else\n")
	w("  (kuberuntime_container.go `startContainer` → `killContainer`; `Killing container with id <id>:FailedPostStartHook`\n")
	w("  before 1.13): `hook_failed`, as are the pre-CRI kubelet's `PostStart handler: …` in its `Killing` and `FailedSync`\n")
	w("  Events (dockertools, 1.4–1.5);\n")
	w("- OpenShift's kubelet writes a `ProbeError` Event beside `Unhealthy` for a failing HTTP probe of a pod in an\n")
	w("  `openshift-*` namespace (openshift/kubernetes pkg/kubelet/prober/patch_prober.go, `<Probe> probe error:\n")
	w("  <output>\\nbody: <body>`): its output line is read as `Unhealthy`'s is (refused, timeout, status code, else the\n")
	w("  probe's generic failure), its body is not; `TerminatingPodProbeError`, a probe failing while the pod is deleted,\n")
	w("  stays `unknown`. Both Events are counted, so there a failing HTTP probe counts two occurrences under its\n")
	w("  cause (the probe alert fires on the pod either way; the occurrences its description shows are doubled);\n")
	w("- kubelets before 1.3 gave a failing HTTP probe's response body as its output (pkg/probe/http/http.go `DoHTTPProbe`,\n")
	w("  a status below 200 or from 400 on): an output that is an HTML document is the server's error page, the HTTP status\n")
	w("  cause of its probe, not an exec probe's output.\n\n")
	w("Left as they are: vSphere with Tanzu's probe wording (`readiness probe failed for container …: exec probe failed\n")
	w("with code 1. stderr: …`, twice) is the vSphere Pod Service's own, not the kubelet's, and no source of it was found to\n")
	w("take a rule from; the Secrets Store provider whose socket refuses (`connection error: … dial unix …`) is an RPC error\n")
	w("of a driver the kubelet still lists as registered (`csi_rpc_error`); the iSCSI `WaitForAttach failed … iscsiadm:\n")
	w("Could not create new interface` stays an attach failure, the kubelet's step. For CRI-O's network wrapper, the\n")
	w("kubelet's path errors, the old eviction lists, the `Killing` message of 1.13+ (nothing in it to mask), a refused\n")
	w("`ProbeError` and an HTML probe body no public Event was found that a blind round does not already hold once masked,\n")
	w("so those rules rest on the components' wording, each held by a golden test of it (exporter/causes/golden_test.go).\n")
	w("The tuning set holds CRI-O's container name form, Cilium's words behind dockershim's wrapper, the scheduler's claim\n")
	w("wordings, the pre-CRI kubelet's `Killing` Event of the Kubernetes documentation (its `FailedSync` masks to a tuning\n")
	w("line's and is a golden) and two `ProbeError` timeouts that OpenShift's CI quotes (openshift/origin\n")
	w("pkg/monitortestlibrary/pathologicaleventlibrary). The patterns now expand to\n")
	w("about 11,600 instructions. **Round 5's first score stays the honest figure for table %s, the table it measured**;\n", r5.version)
	w("re-scored with table %s — no longer blind, for comparison only — it gives %.1f %% (%d/%d) and %.1f %% (%d/%d).\n",
		t.Version(), b5.Precision(), b5.NamedRight, b5.Named, b5.Coverage(), b5.Covered, b5.Knowable)
	w("Table 1.10.0 is measured by the sixth round, below.\n\n")
	r6 := blindRounds[5]
	w("The **sixth blind round** (`testdata/corpus/blind6.yaml`) holds %d real messages from %d threads, collected\n", r6.lines, threadCount(blinds[5]))
	w("after the rules of table %s were final by three collectors (GitHub owners a–k in two passes, the second aimed at\n", r6.version)
	w("image pulls, node pressure, quota and Jobs, which the first lacked; l–z), from threads no other corpus file cites,\n")
	w("labelled by hand and committed before any table classified them: operators' and controllers' own Events (KubeVirt,\n")
	w("CDI, cert-manager, Kyverno, KubeBlocks, Karpenter, Kueue, the HPA, Scylla), vendors' CSI and CNI texts, GPU and\n")
	w("device plugins, Calico's own probes, CRI-O and kata, pulls from vendors' registries. 214 of about 457 candidates\n")
	w("survived the masked-message check; 23 more were dropped because their collector had seen part of the table's\n")
	w("rules before labelling them (the file's header says which). Scored once with table %s (%s): **precision %.1f %%\n",
		r6.version, r6.date, percent(r6.namedRight, r6.named))
	w("(%d/%d), specific coverage %.1f %% (%d/%d)** — below both of the issue's targets (96 %% and 92 %%), and below\n",
		r6.namedRight, r6.named, percent(r6.covered, r6.knowable), r6.covered, r6.knowable)
	w("round 5's precision. The 9 wrong names: calico-node's own readiness and liveness commands printing the refused\n")
	w("connection of what they query (`calico/node is not ready: … connect: connection refused`, three times, named the\n")
	w("refused probe; labelled the exec probe failing — its output is not the kubelet dialling the pod); two scheduler\n")
	w("lists that the declared precedence names for their resources (HwameiStor's own filter `not the published node`\n")
	w("beside `Insufficient cpu`, labelled the generic scheduling failure; `3 Insufficient nvidia.com/gpu` beside 10\n")
	w("tainted nodes, labelled the taint — labelling judgements against the precedence, kept as made); two CSI drivers\n")
	w("that are not running on the node (HwameiStor's socket refusing under `MountVolume.SetUp`, named `csi_rpc_error`,\n")
	w("round 5's miss again; Azure Disk's `CSINode … does not contain driver …` under `AttachVolume.Attach`, named an\n")
	w("attach failure; both labelled `csi_driver_not_registered`); cert-manager's `Error checking existing TLS\n")
	w("certificate: secret \"…\" not found` on a first issuance (named `secret_not_found`; labelled `none`: a controller's\n")
	w("Event, no pod waits on it); and kata's `timed out connecting to vsock` inside `DeadlineExceeded` (named\n")
	w("`runtime_timeout`; labelled the generic sandbox failure: a connection inside the runtime). Of the %d knowable\n", r6.knowable-r6.covered)
	w("lines it missed, 6 are among these; the other %d got a generic answer or `unknown`: CRI-O's `failed to get network\n", r6.knowable-r6.covered-6)
	w("status for pod sandbox` (`sandbox_failed`; labelled `cni_error`), two quota refusals inside a controller's own\n")
	w("wording (OpenShift's deployer `Stop retrying: couldn't create deployer pod … exceeded quota` under `FailedRetry`, a\n")
	w("`ReplicaSetCreateError` for `count/replicasets.apps`; `unknown`; labelled `quota_exceeded`), an old `InspectFailed`\n")
	w("`no registries configured while trying to pull an unqualified image` (`image_pull_failed`; labelled\n")
	w("`image_invalid_name`), a pull ending in the registry's `EOF` (`image_pull_failed`; labelled\n")
	w("`image_registry_unreachable`) and democratic-csi's `NodeExpand failed … rpc error` under `MountVolume.Setup`\n")
	w("(`volume_mount_failed`; labelled `csi_rpc_error`). The %d `none`, `unknowable` and `out_of_scope` lines and the\n",
		r6.lines-r6.knowable-countGeneric(t, blinds[5]))
	w("%d labelled with a generic cause get no wrong specific cause but cert-manager's, HwameiStor's list and kata's\n", countGeneric(t, blinds[5]))
	w("above. No line was relabelled after the score; **this is the honest figure for table %s**: on messages from\n", r6.version)
	w("sources none of its rules were written against, about 6 of 100 causes it names are wrong, and about 8 of 100 lines\n")
	w("that tell a cause get none. A table that answers these misses is to be measured on a new round.\n\n")
	b6 := ScoreTable(t, blinds[5])
	w("**Table 1.11.0** answers that round's misses as classes, not lines, as tables 1.9.0 and 1.10.0 did: each rule is\n")
	w("taken from the component's own wording, and its tuning lines come from sources no blind round cites and whose\n")
	w("masked messages no blind round holds (`TestBlindCorpusUnseen`); no blind line was copied or relabelled.\n\n")
	w("- a CSI driver whose node plugin has not registered on the node, in the external-attacher's words: `CSINode <node>\n")
	w("  does not contain driver <driver>` (pkg/controller/csi_handler.go `getNodeID`, v2.2+) and, before, the node\n")
	w("  annotation's `node \"…\" has no NodeID annotation` and `cannot find NodeID for driver \"…\" for node \"…\"`\n")
	w("  (pkg/controller/util.go). The attach-detach controller (`AttachVolume.Attach failed`) and the kubelet\n")
	w("  (`MountVolume.WaitForAttach failed`) pass the VolumeAttachment's attach error on as it is (pkg/volume/csi\n")
	w("  csi_attacher.go `verifyAttachmentStatus`), so the rule reads it under any reason: `csi_driver_not_registered`,\n")
	w("  not an attach failure;\n")
	w("- CRI-O asking the CNI plugin for the pod's network right after the ADD, `failed to get network status for pod\n")
	w("  sandbox <name>(<id>): …` (ocicni's CNI CHECK, `error checking pod … for CNI network \"…\"`), and a result it\n")
	w("  cannot read, `failed to get network JSON for pod sandbox …` (server/sandbox_network.go since 1.0; containerd's\n")
	w("  old cri plugin `failed to get network status for sandbox`), are `cni_error`, as is ocicni's `error removing pod\n")
	w("  … from CNI network` beside its `… to CNI network`;\n")
	w("- the ResourceQuota admission's refusal in other controllers' Events than the workload controllers' `FailedCreate`:\n")
	w("  the Deployment controller's `ReplicaSetCreateError` (`Failed to create new replica set \"…\": <API error>`,\n")
	w("  pkg/controller/deployment/sync.go; a `count/replicasets.apps` quota) and OpenShift's deployer controller giving\n")
	w("  up on a DeploymentConfig's deployer pod (`FailedRetry`, `Stop retrying: couldn't create deployer pod for \"…\":\n")
	w("  <API error>`) are `quota_exceeded` (and `failed quota: …: must specify` `quota_validation_failed`). The workload\n")
	w("  rules stay restricted to named reasons, where a controller reports the create it was refused: an API error\n")
	w("  quoted in any other Event is not read. The webhook rules before them cover the two reasons too (a webhook's\n")
	w("  text may say `exceeded quota`), and the refusals of pods only (Pod Security, LimitRange) the deployer pod's;\n")
	w("- CRI-O before containers/image's short names (pkg/storage/image.go `ResolveNames`, 1.0–1.17) refused an\n")
	w("  unqualified image when no search registry was configured: `no registries configured while trying to pull an\n")
	w("  unqualified image[, add at least one in …]` is `image_invalid_name`, as its successor's `short-name \"…\" did\n")
	w("  not resolve to an alias and no unqualified-search registries are defined` already was;\n")
	w("- the CSI driver's `NodeExpandVolume` failing while the kubelet mounts a resized claim, `MountVolume.Setup failed\n")
	w("  while expanding volume … : Expander.NodeExpand failed to expand the volume : rpc error: …` (pkg/volume/csi\n")
	w("  expander.go), is `csi_rpc_error`, whose meaning now says staging, mounting or expanding;\n")
	w("- kata's shim checking its agent inside the VM, `Failed to check if grpc server is working: …` (virtcontainers\n")
	w("  kata_agent.go `check`), is the sandbox's generic failure under `FailedCreatePodSandBox`, whatever follows: a\n")
	w("  `DeadlineExceeded … timed out connecting to vsock` there is the shim's connection to the guest, not the\n")
	w("  kubelet's call to the runtime timing out (`runtime_timeout`), as table 1.9.0 read a closed transport after\n")
	w("  the same words; Confidential Containers' troubleshooting guide calls the message generic (its tuning line);\n")
	w("- precision: a missing Secret or ConfigMap is named only under the reasons where a pod waits on it (`Failed`,\n")
	w("  `FailedMount`, `FailedMapVolume`, `FailedSync`; for a ConfigMap also EKS Fargate's `LoggingDisabled`): a\n")
	w("  controller's own Event about a Secret it reads or writes is `unknown` — cert-manager's CA issuer, `Error getting\n")
	w("  keypair for CA issuer: secrets \"…\" not found` (cert-manager/cert-manager#7120), is a precision-guard case.\n\n")
	w("Left as they are: calico-node's own readiness and liveness commands quoting the refused connection of what they\n")
	w("query (three lines, labelled the exec probe failing): since table 1.4.0 an exec probe's output that quotes a\n")
	w("network error tells the cause as an HTTP or TCP probe's does, and the rounds label the same reading of Redis',\n")
	w("MongoDB's and Ncat's exec probes `connection refused` — round 6 too (`Could not connect to Redis at …: Connection\n")
	w("refused`); a rule for calico's wording alone would be fitted to a label. A CSI node plugin whose socket refuses\n")
	w("(`connection error: … dial unix …/csi.sock: connect: connection refused`) stays `csi_rpc_error`: the kubelet still\n")
	w("lists the driver as registered and the error is its gRPC client's call to the plugin, and round 6 itself labels\n")
	w("Fluid's refusing socket (`all SubConns are in TransientFailure, latest connection error: …`) `csi_rpc_error` while\n")
	w("labelling HwameiStor's `csi_driver_not_registered`. The two scheduler lists stay named by the declared precedence\n")
	w("(labelling judgements against it), and a pull ending in a bare `EOF` stays `image_pull_failed`: it is Go's io.EOF\n")
	w("of a read the other side cut short (a proxy, a load balancer or the registry closing), with no wording of its own\n")
	w("to take a rule from. For the kubelet's `WaitForAttach` form of the attacher's error, CRI-O's network status and\n")
	w("JSON wrappers, the quota refusals of `ReplicaSetCreateError` and `FailedRetry`, CRI-O's `no registries configured`\n")
	w("and the `NodeExpand` error no public Event was found that a blind round does not already hold once masked, so\n")
	w("those rules rest on the components' wording, each held by a golden test (exporter/causes/golden_test.go). The\n")
	w("tuning set holds the attacher's two wordings (openebs/mayastor#1712, kubernetes-sigs/vsphere-csi-driver#17) and\n")
	w("kata's check. The patterns now expand to about 11,900 instructions. **Round 6's first score stays the honest\n")
	w("figure for table %s, the table it measured**; re-scored with table %s — no longer blind, for comparison only —\n",
		r6.version, t.Version())
	w("it gives %.1f %% (%d/%d) and %.1f %% (%d/%d). Table 1.11.0 is measured by the seventh round, below.\n\n",
		b6.Precision(), b6.NamedRight, b6.Named, b6.Coverage(), b6.Covered, b6.Knowable)
	r7 := blindRounds[6]
	w("The **seventh blind round** (`testdata/corpus/blind7.yaml`) holds %d real messages from %d threads, collected\n", r7.lines, threadCount(blinds[6]))
	w("after the rules of table %s were final by five collectors (GitHub owners a–h, i–q and r–z, then a–m and n–z\n", r7.version)
	w("again with other queries), from threads no other corpus file cites, labelled by hand and committed before any\n")
	w("table classified them; no collector opened the rules. 228 of about 490 candidates survived the masked-message\n")
	w("check: most threads that paste Events are cited by the earlier rounds by now, and the common kubelet wordings mask\n")
	w("to lines the corpus holds, so what is new is mostly operators' and controllers' own Events (ECK, Vault Secrets\n")
	w("Operator, KubeBlocks, Argo Rollouts, Flux, Karpenter, YuniKorn, Kueue, Knative, Scylla, Tekton, Ray), vendors' CSI\n")
	w("drivers and provisioners, Windows nodes, CNIs (SR-IOV, OVN, kube-ovn, Multus), containerd snapshotters, exec\n")
	w("probes of packaged databases and GPU scheduling — %d of the lines are `none`, `unknowable` or `out_of_scope`,\n",
		r7.lines-r7.knowable-countGeneric(t, blinds[6]))
	w("more than in any earlier round, and %d are labelled with a generic cause. Scored once with table %s (%s):\n",
		countGeneric(t, blinds[6]), r7.version, r7.date)
	w("**precision %.1f %% (%d/%d), specific coverage %.1f %% (%d/%d)** — coverage above the issue's 92 %% on a\n",
		percent(r7.namedRight, r7.named), r7.namedRight, r7.named, percent(r7.covered, r7.knowable), r7.covered, r7.knowable)
	w("full round for the first time, precision below its 96 %%; with %d named lines one wrong name moves precision by\n", r7.named)
	w("1.2 points. The 5 wrong names: Rook's flexvolume `mount command failed … modinfo: … Exec format error` under\n")
	w("`FailedMount` (named `image_wrong_architecture`: that rule reads an exec format error under any reason; labelled\n")
	w("the generic mount failure — the node's `modprobe rbd` failed); Trident's `rpc error: code = Internal desc = error\n")
	w("mounting NFS volume … exit status 32` (twice, named `csi_rpc_error`; labelled `nfs_mount_failed`); an exec probe\n")
	w("whose output is etcd's client log of `DeadlineExceeded` (named the exec probe failing; labelled the probe timing\n")
	w("out: its output says so); and a scheduler list of untolerated taints beside `didn't match Pod's node\n")
	w("affinity/selector` (named the selector by the declared precedence; labelled the generic scheduling failure, a\n")
	w("labelling judgement kept as made). Of the %d knowable lines it missed, 3 are among these; the other %d got a\n",
		r7.knowable-r7.covered, r7.knowable-r7.covered-3)
	w("generic answer or `unknown`: the AWS VPC resource controller's `BranchAllocationFailed` (`unknown`; labelled\n")
	w("`cni_error`), OpenKruise's `FailedCreatePod` quoting `admission webhook \"…\" denied the request` (`unknown`: the\n")
	w("webhook rules read `FailedCreate` only; labelled `admission_webhook_denied`) and Docker's `…/v1/_ping: EOF` in a\n")
	w("pull (`image_pull_failed`; labelled `image_registry_unreachable`). No line was relabelled after the score; **this\n")
	w("is the honest figure for table %s**, and a table that answers these misses is to be measured on a new round.\n\n", r7.version)
	b7 := ScoreTable(t, blinds[6])
	w("**Table 1.12.0** answers that round's misses as classes, not lines, as table 1.11.0 did: each rule is taken\n")
	w("from the component's own wording; no blind line was copied or relabelled.\n\n")
	w("- precision: an exec format error (execve's `ENOEXEC`) is the image's architecture only where the runtime execs\n")
	w("  the container's process — runc's init (`exec user process caused: exec format error`, `starting container process\n")
	w("  caused: exec format error`), crun's ``exec container process `…`: Exec format error``, the pause image's process\n")
	w("  of a sandbox — which the kubelet reports under `Failed`, `FailedCreatePodSandBox` and, before 1.9, `FailedSync`\n")
	w("  (rule `container.exec_format_error`); the platform wordings of a pull (`no matching manifest for …`) stay read\n")
	w("  under any reason. Under any other reason the text is another program's: kmod's `could not insert '<module>': Exec\n")
	w("  format error` from a volume driver's `modprobe` (a module built for another kernel) under `FailedMount` is the\n")
	w("  node's, the generic mount failure;\n")
	w("- the pod admission rules (webhook unavailable or denied, Pod Security, quota and its validation, LimitRange, a\n")
	w("  missing ServiceAccount) also read `FailedCreatePod`, Kubeflow's training-operator creating a PyTorchJob's,\n")
	w("  TFJob's or MPIJob's pods itself: `Error creating: <API error>` (pkg/controller.v1/control/pod_control.go,\n")
	w("  `FailedCreatePodReason`). OpenKruise's CloneSet writes `FailedCreate` (`failed to create pod: …`,\n")
	w("  pkg/controller/cloneset/sync/cloneset_scale.go), already read; other reasons stay unread;\n")
	w("- AWS security groups for pods: the VPC resource controller creates the pod's branch ENI and annotates the pod\n")
	w("  with it, and the VPC CNI sets the pod's network up from that annotation; its `BranchAllocationFailed` on the pod,\n")
	w("  `failed to allocate branch ENI to pod: <EC2 error>` (aws/amazon-vpc-resource-controller-k8s\n")
	w("  pkg/provider/branch/provider.go `CreateAndAnnotateResources`), is `cni_error`, whose meaning and runbook now say\n")
	w("  so (a full trunk is retried after a cool-down, not reported).\n\n")
	w("Left as they are: Trident's `rpc error: code = Internal desc = error mounting NFS volume … exit status 32` stays\n")
	w("`csi_rpc_error`: the mount ran inside the CSI driver, whose node plugin returned the error with its code and text,\n")
	w("and reading the mount's exit status inside any driver's rpc error as `nfs_mount_failed` would change the\n")
	w("precedence for every CSI driver that mounts NFS — a judgement, not a wording to take a rule from. An exec probe\n")
	w("whose output is a client's log of `DeadlineExceeded` stays the exec probe failing: the kubelet's own timeout of an\n")
	w("exec probe says `command … timed out`, and the output is the command's call to its server timing out, not the\n")
	w("probe's `timeoutSeconds`. Docker's `…/v1/_ping: EOF` in a pull stays `image_pull_failed`, as the bare `EOF` did\n")
	w("in table 1.11.0: Go's io.EOF of a read the other side cut short, with no wording of its own. The scheduler list of\n")
	w("taints beside the node selector stays named by the declared precedence (a labelling judgement against it). For\n")
	w("the three classes no public Event was found that a blind round does not already hold once masked (the branch ENI\n")
	w("error of aws/amazon-vpc-cni-k8s#1245 masks to a line of round 7), so no tuning line was added and each rests on the\n")
	w("component's wording, held by a golden test (exporter/causes/golden_test.go: runc's and crun's exec format errors,\n")
	w("a flexvolume `modprobe` under `FailedMount`, a training job's pod denied by a webhook and over quota, a branch ENI\n")
	w("refused by EC2). The patterns still expand to about 11,850 instructions. **Round 7's first score stays the honest\n")
	w("figure for table %s, the table it measured**; re-scored with table %s — no longer blind, for comparison only —\n",
		r7.version, t.Version())
	w("it gives %.1f %% (%d/%d) and %.1f %% (%d/%d). Table 1.12.0 is measured by the next blind round.\n\n",
		b7.Precision(), b7.NamedRight, b7.Named, b7.Coverage(), b7.Covered, b7.Knowable)
	w("**Tables 1.13.0 to 1.15.0** answer the misses of the template inventory (\"Every template upstream writes\",\n")
	w("above): the runtimes' and CNI plugins' errors (19 wrong cases against table 1.12.0), the CSI sidecars', drivers',\n")
	w("Istio's and the autoscalers' (12), and the kubelet's, the controller manager's and the scheduler's own format\n")
	w("strings at v1.37.1, each filled with realistic values (23), each answered as a class from the component's\n")
	w("wording, no corpus line read. The Kubernetes ones:\n\n")
	w("- runc's cgroup v1 `unable to set memory limit to N (current usage: …)` is `memory_limit_too_small` under any\n")
	w("  reason (a pod's sandbox fell to `sandbox_failed`);\n")
	w("- the kubelet's `Internal PreCreateContainer hook failed: …` and `Internal PreStartContainer hook failed: …` (its\n")
	w("  CPU, memory and topology managers) are `container_create_failed`;\n")
	w("- a CRI call timing out under `InspectFailed`, `ContainerGCFailed` and `ImageGCFailed` is `runtime_timeout`\n")
	w("  (`image.inspect_failed` now comes after the runtime rules);\n")
	w("- the kubelet's OS admission checks (`Failed to admit pod as the …`), the shutdown manager's `Pod was rejected\n")
	w("  as the node is shutting down.` and the volume manager's `Node has reached its volume attachment limit, rejecting\n")
	w("  pod.` are `node_admission_rejected`, and so is every reason only the kubelet's admit handlers write\n")
	w("  (`SysctlForbidden`, `TopologyAffinityError`, `PodFeatureUnsupported`, `PodLevelResourcesNotSupported`,\n")
	w("  `SupplementalGroupsPolicyNotSupported`, `NodeShutdown`, the OS checks' reasons);\n")
	w("- a gRPC probe's `timeout: health rpc did not complete within 1s` is the probe's timeout;\n")
	w("- a debug container whose target is not in the pod (`Error: unable to find target container …`) is\n")
	w("  `container_config_error`;\n")
	w("- the online expansion's driver error under `VolumeResizeFailed` is `csi_rpc_error`, as under `FailedMount`;\n")
	w("- the PV controller's `VolumeMismatch` (`Cannot bind to requested volume …`) is `provisioning_failed`, and the\n")
	w("  ephemeral volume controller's and the resource claim controller's claims refused by a quota (`FailedBinding`,\n")
	w("  `FailedResourceClaimCreation`) `quota_exceeded`.\n\n")

	w("`go test ./exporter/causes/corpus/ -run Corpus -v` prints these figures; the test fails when the\n")
	w("tuning set falls below 98 %% precision or 95 %% coverage, or the held-back set below its thresholds\n")
	w("in `exporter/causes/corpus/corpus_test.go`. Every tuning line is also a golden test: a line the\n")
	w("table knowingly gets wrong carries a `miss:` note, and the test fails when it starts to pass, so\n")
	w("the note is removed.\n\n")
	w("**Not covered on purpose** (`out_of_scope`): controller failures that are not about a pod starting\n")
	w("or running (HPA and Service controller Events): they have their own owners and kube-state-metrics\n")
	w("signals. The workload controllers' own failures (a ReplicaSet's, StatefulSet's, DaemonSet's or\n")
	w("Job's `FailedCreate` for a quota, a webhook, Pod Security or a missing ServiceAccount, a Job's\n")
	w("`BackoffLimitExceeded` or `DeadlineExceeded`) are covered since table 1.4.0, in the `workload`\n")
	w("category.\n")

	ps := ScoreSchedulingPrecedence(t, all)
	w("\n## Scheduler messages that list several reasons\n\n")
	w("`0/17 nodes are available: 13 node(s) had untolerated taint {…}, 2 Insufficient memory, 2 node(s)\n")
	w("didn't match Pod's node affinity/selector` rules out each group of nodes for its own reason. The table\n")
	w("names the reason that **blocks** by a declared precedence, the order of the scheduling rules, and not\n")
	w("by the number of nodes:\n\n")
	w("1. volumes: unbound claims, claims being deleted, no volume to bind or no free storage to provision\n")
	w("   one, volume node affinity or zone (the claim\n")
	w("   decides which nodes are candidates at all);\n")
	w("2. volume limits, then inter-pod (anti-)affinity and topology spread, which have no cause of their own\n")
	w("   (`scheduling_failed`: a partial answer would send the reader to the wrong knob);\n")
	w("3. resources (`Insufficient …`, `Too many pods`), named when they are the only reason listed that\n")
	w("   preemption can resolve — the scheduler's own tail counts those nodes as `No preemption victims found\n")
	w("   for incoming pod` and the others as `Preemption is not helpful for scheduling`. Volume limits,\n")
	w("   inter-pod affinity and spread are filtered as `Unschedulable` too, not `UnschedulableAndUnresolvable`,\n")
	w("   so a list holding resources and one of them does not say which blocks (table 1.8.0; before, resources\n")
	w("   came first);\n")
	w("4. host ports;\n")
	w("5. node selector or affinity, then taints and cordoned nodes: exclusions that are usually by design\n")
	w("   (control-plane nodes, other teams' pools), named only when nothing else is listed;\n")
	w("6. a group no rule above knows — a plugin of a custom or vendor scheduler (`2 node unregistered`,\n")
	w("   `1 NodeUnfitPod`, `1 everest driver not found at node`), old node conditions (`node(s) were not\n")
	w("   ready`) — makes the message `scheduling_failed` (rule `scheduling.unknown_group`, table 1.7.0):\n")
	w("   the table cannot tell whether that group is what blocks, so it names none of the exclusions.\n\n")
	w("The scheduler sorts the groups as strings (`FitError.Error`, pkg/scheduler/framework/types.go), so\n")
	w("their order says nothing; a PreFilter rejection (`pod has unbound immediate PersistentVolumeClaims`,\n")
	w("`persistentvolumeclaim \"…\" not found`) applies to every node, which is one reason volumes come first.\n")
	w("Naming the group that covers the most nodes was considered and rejected: the largest group is most\n")
	w("often the by-design exclusion (`1 node(s) didn't match pod affinity/anti-affinity, 19 node(s) didn't\n")
	w("match node selector`), and the scheduler itself points at the other groups: in the preemption tail\n")
	w("of `0/17 …` above only the 2 nodes short of memory are `No preemption victims found`. The corpus has\n")
	w("%d scheduler messages whose groups map to at least two different causes, in the wordings of\n", ps.Lines)
	w("many releases: `fit failure summary on nodes : Insufficient pods (2), PodToleratesNodeTaints (1)`\n")
	w("(kubelet 1.5, kubernetes#41070), `No nodes are available that match all of the following\n")
	w("predicates:: …`, `0/N nodes are available: …` with and without the `preemption:` tail, the\n")
	w("older `had taint {…}, that the pod didn't tolerate` and the newer `had untolerated taint {…}`, and\n")
	w("custom schedulers that reuse the wording (HiveD, hwameistor). Their labels follow the\n")
	w("precedence, so the table naming all %d of them rightly only shows that the rules implement it; the\n", ps.Precedence)
	w("largest group would name another cause for %d of them. `SchedulingGroups` and\n", ps.Lines-ps.MostNodes)
	w("`ScoreSchedulingPrecedence` (exporter/causes/corpus/schedprec.go) compute these figures.\n")

	gs := ScoreGuard(t, all)
	w("\n## When the table cannot tell\n\n")
	w("A message that does not say why — an operator's or policy engine's Event (Karpenter's own\n")
	w("`FailedScheduling` about its provisioning, which rule `guard.karpenter_provisioning` leaves `unknown`:\n")
	w("the default-scheduler's Event of the same pod tells the cause), the kubelet's object-cache\n")
	w("race (`object \"ns\"/\"kube-root-ca.crt\" not registered`, which is not a missing ConfigMap), a\n")
	w("truncated paste such as `Failed create pod sandbox.` — must not get a confident wrong cause. Rules\n")
	w("that apply to any reason match only wordings the kubelet, runtimes and storage drivers write, and\n")
	w("everything else falls through to a generic fallback or `unknown`. On the corpus, of the %d lines\n", gs.Lines)
	w("labelled `none`, `unknowable` or `out_of_scope`, the table names no specific cause for %d (%.1f %%),\n",
		gs.Silent, percent(gs.Silent, gs.Lines))
	w("%d of them `unknown` and the rest a generic fallback of their reason.\n", gs.Unknown)

	w("\n## Node Events worth counting\n\n")
	w("Several node causes come from **Normal** Events of the Node object, which a `type=Warning` selector\n")
	w("drops. kubecause counts these by default (`--events.normal-reason`, kept by the engine from its one\n")
	w("watch, as `SandboxChanged` and `BackOff` for pods): `NodeNotReady`, `NodeNotSchedulable`, `NodeHasDiskPressure`,\n")
	w("`NodeHasInsufficientMemory`, `NodeHasInsufficientPID`, and the PV controller's `FailedBinding` (a claim\n")
	w("without StorageClass is Normal). `Rebooted` is a Warning on current kubelets. `Killing` is Normal and\n")
	w("not counted by default, since every pod stop writes one; add `--events.normal-reason=Killing` to\n")
	w("count its `failed liveness probe, will be restarted` message as the `probe_restart` symptom (and its\n")
	w("`FailedPostStartHook` as `hook_failed`, table 1.10.0). The other\n")
	w("Normal node Events (`NodeReady`, `NodeHasSufficientMemory`, `Starting`, `NodeAllocatableEnforced`, …)\n")
	w("report no failure and are not worth a series.\n")

	w("\n## Unclassified messages: from a template to a rule\n\n")
	w("A message no rule matches gets the cause `unknown`. `Template(message)` (exporter/causes/template.go)\n")
	w("masks what varies between occurrences of the same failure (quoted strings, UIDs, IPs, paths,\n")
	w("numbers, image digests, pod and node names) so that occurrences group: for example\n\n")
	ex := `MountVolume.MountDevice failed for volume "pvc-4d70c760-a4b0-11e9-8376-1866da0e836f" : driver name hostpath.csi.k8s.io not found in the list of registered CSI drivers`
	w("```\n%s\n%s\n```\n\n", ex, causes.Template(ex))
	w("kubecause keeps the most frequent (reason, template) pairs of unclassified Events in a bounded\n")
	w("top-k (`Unclassified`, with an overflow counter for the rest), exported as\n")
	w("`kubecause_unclassified_messages{reason,template}` and shown by `kubecause explain --unclassified`.\n")
	w("To turn a frequent template into a rule:\n\n")
	w("1. Take one real message of the template (from `kubectl get events -o yaml`, not the template) and\n")
	w("   find the words that say **why**, not the names around them.\n")
	w("2. Add a rule in a copy of the table, before the generic rule of its reason, with `reasons` set and\n")
	w("   an RE2 `pattern` on those words only (no names, IDs, IPs or quoted values), and check it with\n")
	w("   `kubecause explain` on your Events. A new cause needs a `runbook` section.\n")
	w("3. To contribute it: add the message, unchanged, with its source and the cause to\n")
	w("   `exporter/causes/testdata/corpus/tuning.yaml`, the rule and cause to `causes.yaml` (minor version\n")
	w("   bump), a runbook section in English and Chinese, and run `make generate` and\n")
	w("   `go test ./exporter/causes/...`. Never paste a message you edited: redact names in a copy if you\n")
	w("   must, and say so in its source.\n")
	return b.Bytes()
}

type sourceCount struct {
	k string
	n int
}

// sourceMix counts corpus lines per kind of source, largest first.
func sourceMix(lines []Line) []sourceCount {
	m := map[string]int{}
	for _, l := range lines {
		switch s := l.Source; {
		case strings.HasPrefix(s, "seed runbook"):
			m["seed runbooks"]++
		case strings.HasPrefix(s, "real node"):
			m["the real test node (kubelet 1.35, containerd 1.6, runc 1.1)"]++
		case strings.Contains(s, "#"):
			m["GitHub issue and pull-request threads"]++
		default:
			m["files of public repositories (docs, test fixtures)"]++
		}
	}
	var out []sourceCount
	for k, n := range m {
		out = append(out, sourceCount{k, n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].n != out[j].n {
			return out[i].n > out[j].n
		}
		return out[i].k < out[j].k
	})
	return out
}

func codeList(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = "`" + s + "`"
	}
	return strings.Join(q, ", ")
}

// threadCount is the number of distinct sources of lines.
func threadCount(lines []Line) int {
	seen := map[string]bool{}
	for _, l := range lines {
		seen[l.Source] = true
	}
	return len(seen)
}

// countGeneric is the number of lines labelled with a generic cause of t (a failure whose text tells
// where, not why): neither knowable nor none, unknowable or out_of_scope.
func countGeneric(t *causes.Table, lines []Line) int {
	n := 0
	for _, l := range lines {
		if l.Cause != LabelNone && l.Cause != LabelUnknowable && l.Cause != LabelOutOfScope && IsGeneric(t, l.Cause) {
			n++
		}
	}
	return n
}
