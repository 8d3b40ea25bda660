#!/usr/bin/env bash
# The compatibility matrix (docs/e2e.md, "Compatibility matrix"): kubecause, its rules and the
# shipped Alertmanager configuration on older and newer releases of the components around them,
# one cell after the other, each its pass/fail and wall time; the results are written to
# docs/measurements/compat-<UTC date>.md (COMPAT_OUT overrides). Not part of make test.
# Needs make deps (the newest releases) and builds the older ones (hack/compat-deps.sh).
#   hack/compat.sh              every cell
#   hack/compat.sh 'kube-apiserver'   only cells whose component matches the pattern (no results file)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
export KUBECAUSE_CACHE=${KUBECAUSE_CACHE:-$HOME/.cache/kubecause}
bin="$KUBECAUSE_CACHE/bin"
only=${1:-}
start_all=$SECONDS

out=bin/compat
mkdir -p "$out/logs"
# The older releases are built here (hack/compat-deps.sh, 0 s when cached), each component's just
# before its cells; the kube-apiservers, much the longest, beside the cells of the others.
deps() { # <component>: builds its releases; the time it took in bin/compat/deps-<component>
	local t0=$SECONDS
	bash hack/compat-deps.sh "$1" || return 1
	echo $((SECONDS - t0)) >"$out/deps-$1"
}
rm -f "$out"/deps-* "$out"/rows-* "$out/kube-deps.done"
# The kube-apiserver builds: their exit status and time in bin/compat/kube-deps.done.
(
	t0=$SECONDS rc=0
	bash hack/compat-deps.sh kube >"$out/logs/compat-deps-kube.log" 2>&1 || rc=$?
	echo "$rc $((SECONDS - t0))" >"$out/kube-deps.done"
) &
go build -ldflags "$(bash hack/ldflags.sh)" -o bin/kubecause ./exporter/cmd/kubecause
go test -c -tags e2e -o "$out/e2e.test" ./e2e
go test -c -tags compat -o "$out/compat.test" ./e2e/compat
go test -c -o "$out/rules.test" ./rules

# The newest releases are make deps' own: their versions come from its scripts.
kube_newest=$(awk -F= '/^KUBE_VERSION=/ { print $2 }' hack/deps/20-e2e-tools.sh)
ksm_newest=$(awk -F= '/^KSM_VERSION=/ { print $2 }' hack/deps/20-e2e-tools.sh)
prom_current=$(awk '$1 == "github.com/prometheus/prometheus" { print $2 }' hack/tools/prometheus/go.mod)
etcd=$(readlink -f "$KUBECAUSE_CACHE/kubebuilder-assets/etcd")

# cell <component> <version> <why> <what it checks> <command...>: runs the command, its output in
# bin/compat/logs/<component>-<version>.log, and appends its row (pass/fail, wall time) to
# bin/compat/rows-<component>.
cell() {
	local component=$1 version=$2 why=$3 what=$4
	shift 4
	if [ -n "$only" ] && [[ ! $component =~ $only ]]; then return 0; fi
	local log="$out/logs/${component// /-}-$version.log" t0=$SECONDS rc=0
	echo "== $component $version: $what"
	"$@" >"$log" 2>&1 || rc=$?
	local dt=$((SECONDS - t0)) result=pass
	if [ $rc -ne 0 ]; then
		result=FAIL
		tail -n 30 "$log"
	fi
	echo "   $component $version: $result in $dt s (log: $log)"
	echo "| $component | $version | $why | $what | $result | $dt s |" >>"$out/rows-$component"
}
lane_alertmanager() {
deps alertmanager || { echo "| Alertmanager | | | build (hack/compat-deps.sh alertmanager) | FAIL | |" >>"$out/rows-Alertmanager"; return 0; }
# Alertmanager: the shipped configuration, its route and inhibition on each release.
am_cell() { # <version>
	(cd e2e/compat && ALERTMANAGER_BIN="$bin/alertmanager-$1" AMTOOL_BIN="$bin/amtool-$1" "../../$out/compat.test" -test.v -test.count=1 \
		-test.timeout 20m -test.run '^TestShippedAlertmanagerConfigOnRelease$')
}
am_what="amtool check-config; each inhibition rule mutes its target, the route delivers the rest (TestShippedAlertmanagerConfigOnRelease)"
cell Alertmanager v0.28.1 "oldest kube-prometheus-stack shipped in the last 18 months (72.6.4)" "$am_what" am_cell v0.28.1
cell Alertmanager v0.35.0 "newest" "$am_what" am_cell v0.35.0

}
lane_ksm() {
deps ksm || { echo "| kube-state-metrics | | | build (hack/compat-deps.sh ksm) | FAIL | |" >>"$out/rows-kube-state-metrics"; return 0; }
# kube-state-metrics: its real series against what the rules and their tests need.
ksm_cell() { # <version>
	(cd e2e/compat && KUBE_STATE_METRICS_BIN="$bin/kube-state-metrics-$1" "../../$out/compat.test" -test.v -test.count=1 -test.timeout 20m \
		-test.run '^TestKubeStateMetricsSeries$')
}
ksm_what="every kube_* selector of the rules selects a real series; the rule tests' kube_* input labels exist (TestKubeStateMetricsSeries)"
cell kube-state-metrics v2.15.0 "oldest kube-prometheus-stack shipped in the last 18 months (72.6.4, 2025-05-29)" "$ksm_what" ksm_cell v2.15.0
cell kube-state-metrics "$ksm_newest" "newest (make test's)" "$ksm_what" ksm_cell "$ksm_newest"

}
lane_prometheus() {
deps prometheus || { echo "| Prometheus | | | build (hack/compat-deps.sh prometheus) | FAIL | |" >>"$out/rows-Prometheus"; return 0; }
# Prometheus: the rule unit tests and the rule check with each release's promtool.
prom_cell() { # <module version>
	(cd rules && KUBECAUSE_PROMTOOLS="promtool-$1" "../$out/rules.test" -test.v -test.count=1 -test.timeout 60m \
		-test.run '^(TestPromtoolUnitTests|TestPromtoolCheckRules)$')
}
prom_what="promtool test rules over rules/tests/*.yaml, promtool check rules --lint-fatal"
cell Prometheus 3.13.5 "long-term support (3.13 LTS)" "$prom_what" prom_cell v0.313.5
cell Prometheus "$(echo "$prom_current" | sed -E 's/^v0\.3([0-9]+)\.([0-9]+)$/3.\1.\2/')" "make test's" "$prom_what" prom_cell "$prom_current"
cell Prometheus 3.16.0 "newest 3.x" "$prom_what" prom_cell v0.316.0

}
lane_kube() {
# The kube-apiserver builds started at the beginning.
until [ -f "$out/kube-deps.done" ]; do sleep 5; done
cat "$out/logs/compat-deps-kube.log"
local rc
read -r rc _ <"$out/kube-deps.done"
if [ "$rc" -ne 0 ]; then
	echo "| kube-apiserver | v1.32.13, v1.34.4 | | build (hack/compat-deps.sh kube) | FAIL | |" >>"$out/rows-kube-apiserver"
	return 0
fi
# kube-apiserver: the e2e suite's exact-counting and restart tests, unchanged, on each release.
kube_cell() { # <version>
	local v=$1 assets="$KUBECAUSE_CACHE/compat-assets/kube-$1"
	mkdir -p "$assets"
	ln -sfn "$bin/kube-apiserver-$v" "$assets/kube-apiserver"
	ln -sfn "$etcd" "$assets/etcd"
	(cd e2e && KUBEBUILDER_ASSETS=$assets KUBECAUSE_WANT_KUBE_VERSION=$v "../$out/e2e.test" -test.v -test.count=1 -test.timeout 40m \
		-test.run '^(TestCountingSemantics|TestRestartWithSnapshotCountsTheDowntime)$')
}
kube_what="watch, exact counts (TestCountingSemantics), restart with snapshot (TestRestartWithSnapshotCountsTheDowntime)"
cell kube-apiserver v1.32.13 "oldest minor under extended support (EKS 1.32 until 2027-03-23)" "$kube_what" kube_cell v1.32.13
cell kube-apiserver v1.34.4 "a middle minor" "$kube_what" kube_cell v1.34.4
cell kube-apiserver "$kube_newest" "newest (make test's)" "$kube_what" kube_cell "$kube_newest"

}
# The four components' cells run side by side (each cell has its own ports and directories), a
# component's cells one after the other; the kube-apiserver's once its builds are done.
lanes=()
for l in alertmanager ksm prometheus kube; do
	"lane_$l" &
	lanes+=($!)
done
for p in "${lanes[@]}"; do wait "$p" || true; done
results=()
for c in Alertmanager kube-state-metrics Prometheus kube-apiserver; do
	[ -f "$out/rows-$c" ] && mapfile -t -O "${#results[@]}" results <"$out/rows-$c"
done
failed=$(printf '%s\n' "${results[@]}" | grep -c '| FAIL |' || true)
total=$((SECONDS - start_all))
deps_time=0
for f in "$out"/deps-*; do [ -f "$f" ] && deps_time=$((deps_time + $(cat "$f"))); done
read -r _ kube_deps_time <"$out/kube-deps.done"
echo "compat: ${#results[@]} cells, $failed failed, $total s"
if [ -z "$only" ]; then
	file=${COMPAT_OUT:-docs/measurements/compat-$(date -u +%F).md}
	commit=$(git rev-parse --short HEAD)
	[ -n "$(git status --porcelain)" ] && commit+=" (with uncommitted changes)"
	{
		echo "# Compatibility matrix, $(date -u +%F)"
		echo
		echo "Written by \`make compat\` (hack/compat.sh) at commit $commit; what each cell runs and why"
		echo "these versions: [docs/e2e.md, \"Compatibility matrix\"](../e2e.md#compatibility-matrix)."
		echo "One run on $(nproc) cores shared with other work: the four components side by side, each one's"
		echo "cells one after the other. Building the older releases (hack/compat-deps.sh, 0 s when cached):"
		echo "$deps_time s for kube-state-metrics, Prometheus and Alertmanager (summed), $kube_deps_time s for the"
		echo "kube-apiservers, beside them. The whole run: $total s."
		echo
		echo "| Component | Version | Why this version | What the cell checks | Result | Time |"
		echo "|---|---|---|---|---|---|"
		printf '%s\n' "${results[@]}"
	} >"$file"
	echo "results: $file"
fi
[ $failed -eq 0 ]
