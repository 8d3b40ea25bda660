#!/usr/bin/env bash
# Lint of the monitoring mixin: jsonnet formatting and lint, promtool, pint (offline).
# The deeper checks (mixtool-style alert lint, runbook anchors, dashboard structure, promtool
# unit tests) are Go tests: go test ./rules/... ./dashboards/...
set -euo pipefail
cd "$(dirname "$0")/.."
: "${KUBECAUSE_CACHE:=$HOME/.cache/kubecause}"
PATH="$KUBECAUSE_CACHE/bin:$PATH"
for t in jsonnetfmt jsonnet-lint promtool pint; do
	command -v "$t" >/dev/null || { echo "$t not found: run make deps" >&2; exit 1; }
done

mapfile -t sources < <(git ls-files '*.libsonnet' '*.jsonnet' 2>/dev/null | grep -E '^(mixin\.libsonnet|config\.libsonnet|rules/|dashboards/|hack/generate/)' || true)
[ ${#sources[@]} -gt 0 ] || sources=(mixin.libsonnet config.libsonnet rules/*.libsonnet dashboards/*.libsonnet dashboards/lib/*.libsonnet hack/generate/mixin.jsonnet)
bad=()
for f in "${sources[@]}"; do
	jsonnetfmt --test "$f" >/dev/null 2>&1 || bad+=("$f")
done
if [ ${#bad[@]} -gt 0 ]; then
	echo "jsonnetfmt needed (jsonnetfmt -i ${bad[*]})" >&2
	exit 1
fi
for f in "${sources[@]}"; do
	jsonnet-lint -J . "$f"
done
promtool check rules --lint-fatal rules/generated/kubecause-alerts.yaml rules/generated/kubecause-rules.yaml >/dev/null
out=$(cd "$(mktemp -d)" && pint --config "$OLDPWD/rules/pint.hcl" -n -o -l WARN lint "$OLDPWD/rules/generated" 2>&1) || { echo "$out" >&2; exit 1; }
if [ -n "$out" ]; then echo "$out" >&2; exit 1; fi
echo "mixin lint: ok"
