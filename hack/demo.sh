#!/usr/bin/env bash
# make demo: the whole chain on this machine, or kubecause alone against your cluster.
#   hack/demo.sh                     local control plane + kube-state-metrics + kubecause +
#                                    Prometheus (http://127.0.0.1:9090) + Alertmanager
#                                    (http://127.0.0.1:9093), seed scenarios played in; Ctrl-C
#                                    stops and cleans up everything.
#   KUBECONFIG=~/.kube/config hack/demo.sh
#                                    kubecause against that cluster only (metrics on
#                                    http://127.0.0.1:9737/metrics).
# Extra arguments go to the demo program (e.g. --exit, --alert-for=0) or, with KUBECONFIG,
# to kubecause.
set -euo pipefail
cd "$(dirname "$0")/.."
export KUBECAUSE_CACHE=${KUBECAUSE_CACHE:-$HOME/.cache/kubecause}
if [ ! -x bin/kubecause ]; then
	go build -o bin/kubecause ./exporter/cmd/kubecause
fi
if [ -n "${KUBECONFIG:-}" ]; then
	echo "kubecause against the cluster of KUBECONFIG=$KUBECONFIG: http://127.0.0.1:9737/metrics (Ctrl-C stops)"
	exec bin/kubecause --kubeconfig="$KUBECONFIG" --web.listen-address=127.0.0.1:9737 "$@"
fi
export KUBEBUILDER_ASSETS=${KUBEBUILDER_ASSETS:-$KUBECAUSE_CACHE/kubebuilder-assets}
bash hack/deps/00-apt.sh
bash hack/deps/20-e2e-tools.sh
bash hack/deps/26-containerd2.sh
mkdir -p bin
go build -o bin/kubecause-demo ./e2e/demo
exec bin/kubecause-demo "$@"
