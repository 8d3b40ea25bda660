#!/usr/bin/env bash
# End-to-end tests on real components, all on 127.0.0.1 (see docs/e2e.md).
#   hack/e2e.sh                      every scenario
#   hack/e2e.sh -run 'TestS1$'       one scenario (extra arguments go to go test)
set -euo pipefail
cd "$(dirname "$0")/.."
export KUBECAUSE_CACHE=${KUBECAUSE_CACHE:-$HOME/.cache/kubecause}
export KUBEBUILDER_ASSETS=${KUBEBUILDER_ASSETS:-$KUBECAUSE_CACHE/kubebuilder-assets}
# Builds the control plane, kube-state-metrics, Prometheus 3, prometheus-operator with amtool, the kubelet and
# containerd once per version (cached), links the assets.
bash hack/deps/20-e2e-tools.sh
bash hack/deps/22-prometheus3.sh
bash hack/deps/24-prometheus-operator.sh
bash hack/deps/26-containerd2.sh
# The binary under test is the tree's, never a stale one (a cache hit when make build just ran).
go build -ldflags "$(bash hack/ldflags.sh)" -o bin/kubecause ./exporter/cmd/kubecause
start=$SECONDS
if [ $# -gt 0 ]; then
	status=0
	go test -tags e2e -count=1 -v -timeout 60m ./e2e/... "$@" || status=$?
	echo "e2e: $((SECONDS - start)) s, exit $status"
	exit $status
fi
# The whole suite, in five go test processes side by side, each its tests' lines prefixed with
# its name: TestRealNode (≈ 15 min: the seed scenarios on a real node, S17's 5-minute NodeNotReady
# hold among them), TestRealNodeIncident (≈ 15 min: the registry incident on a second real node,
# 10 minutes of it the designed kube-state-metrics outage) then TestRealNodeUserCause (≈ 1 min: a
# cause of the user's table on a node of its own, no designed hold), TestRealNodeRootCauseKept (≈ 15
# min: a pod's root-cause Event starved by the kubelet and expired by a 7-minute --event-ttl),
# TestRealNodeCronJob (≈ 20 min: a CronJob's runs failing for 15 minutes, the designed hold, then
# fixed), each on a real node of its own, and the other tests (≈ 23 min, mostly waits too), instead
# of one after the other: each test starts its own stack on free ports, and a node's teardown and
# leftover check touch only what that node made.
# One compile first, so that the processes do not build the same test binaries at once.
go test -tags e2e -count=1 -run '^$' ./e2e/... >/dev/null
part() { # name, go test arguments: its lines prefixed with its name; exit status of go test
	local name=$1 t0=$SECONDS rc=0
	shift
	go test -tags e2e -count=1 -v -timeout 60m "$@" 2>&1 | sed -u "s/^/$name| /" || rc=$?
	echo "e2e $name: $((SECONDS - t0)) s, exit $rc"
	return $rc
}
part realnode -run '^TestRealNode$' ./e2e/ &
node_pid=$!
part incident -run '^TestRealNode(Incident|UserCause)$' ./e2e/ &
incident_pid=$!
part rootcause -run '^TestRealNodeRootCauseKept$' ./e2e/ &
rootcause_pid=$!
part recurring -run '^TestRealNodeCronJob$' ./e2e/ &
recurring_pid=$!
rest=0
part rest -skip '^TestRealNode(Incident|UserCause|RootCauseKept|CronJob)?$' ./e2e/... || rest=$?
node=0
wait $node_pid || node=$?
incident=0
wait $incident_pid || incident=$?
rootcause=0
wait $rootcause_pid || rootcause=$?
recurring=0
wait $recurring_pid || recurring=$?
echo "e2e: $((SECONDS - start)) s, real node exit $node, incident exit $incident, root cause exit $rootcause, recurring exit $recurring, the rest exit $rest"
[ $node -eq 0 ] && [ $incident -eq 0 ] && [ $rootcause -eq 0 ] && [ $recurring -eq 0 ] && [ $rest -eq 0 ]
