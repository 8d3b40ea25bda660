#!/usr/bin/env bash
# End-to-end tests on real components, all on 127.0.0.1 (see docs/e2e.md).
#   hack/e2e.sh                      every scenario
#   hack/e2e.sh -run 'TestS1$'       one scenario (extra arguments go to go test)
set -euo pipefail
cd "$(dirname "$0")/.."
export KUBECAUSE_CACHE=${KUBECAUSE_CACHE:-$HOME/.cache/kubecause}
export KUBEBUILDER_ASSETS=${KUBEBUILDER_ASSETS:-$KUBECAUSE_CACHE/kubebuilder-assets}
# Builds the control plane, kube-state-metrics, Prometheus 3, the kubelet and containerd once per version (cached), links the assets.
bash hack/deps/20-e2e-tools.sh
bash hack/deps/22-prometheus3.sh
bash hack/deps/26-containerd2.sh
# The binary under test is the tree's, never a stale one (a cache hit when make build just ran).
go build -ldflags "$(bash hack/ldflags.sh)" -o bin/kubecause ./exporter/cmd/kubecause
start=$SECONDS
status=0
go test -tags e2e -count=1 -v -timeout 60m ./e2e/... "$@" || status=$?
echo "e2e: $((SECONDS - start)) s, exit $status"
exit $status
