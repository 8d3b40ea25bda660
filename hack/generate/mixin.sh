#!/usr/bin/env bash
# Writes the generated, committed outputs of the monitoring mixin:
#   rules/generated/*.yaml, rules/alertmanager/inhibit-rules.yaml,
#   deploy/helm/kubecause/files/mixin/*.yaml (read by the chart, rendered into kustomize by
#   hack/generate/deploy.sh), dashboards/generated/*.json, slo/*.yaml
# Deterministic: same sources, same bytes (make check-generated relies on it).
set -euo pipefail
cd "$(dirname "$0")/../.."
: "${KUBECAUSE_CACHE:=$HOME/.cache/kubecause}"
PATH="$KUBECAUSE_CACHE/bin:$PATH"
command -v jsonnet >/dev/null || { echo "jsonnet not found: run make deps" >&2; exit 1; }
mkdir -p rules/generated rules/alertmanager deploy/helm/kubecause/files/mixin dashboards/generated slo
rm -f dashboards/generated/*.json
jsonnet -J . -S -m . hack/generate/mixin.jsonnet >/dev/null
