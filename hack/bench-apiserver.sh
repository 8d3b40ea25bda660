#!/usr/bin/env bash
# Load benchmark against a real kube-apiserver + etcd (127.0.0.1 only): kubecause and a
# decode-and-discard reflector (the floor, e2e/load/floor, built here) read the same Event
# stream while e2e/load writes and patches Events as the kubelet and kube-scheduler do.
# Prints benchstat-style lines (BenchmarkApiserver/...) and a JSON file of the figures.
#
#   hack/bench-apiserver.sh                          # 1k, 10k, 50k live Events (about 6 min)
#   LOAD_SIZES=1000,10000,100000 hack/bench-apiserver.sh
#   KUBECAUSE_ENV="GOMEMLIMIT=48MiB" hack/bench-apiserver.sh
#   hack/bench-apiserver.sh controlplane             # the control plane's cost (~15 min, quiet machine)
#   LOAD_MILLION=250000,1000000 LOAD_ETCD_DIR=/dev/shm hack/bench-apiserver.sh million
#
# million: kubecause alone with its default caps against N live Events (TestMillionEvents,
# e2e/load/million_test.go; opt-in, not in make test): the apiserver's create rate while seeding,
# start-up peak and time with and without a snapshot file, the initial lists and their etcd pages
# (past 60 s?), steady RSS, scrape time, lag at 1,000 writes/s. The first LOAD_SEED_API (20,000)
# Events are created through the apiserver, the rest written into etcd in the apiserver's storage
# encoding (LOAD_SEED=apiserver: all through the apiserver). LOAD_ETCD_DIR puts etcd's data on a
# tmpfs. Results in LOAD_MILLION_OUT (default bin/bench-million.json).
#
# controlplane: what watching Events costs kube-apiserver and etcd, read from their /metrics
# (watch events and bytes sent, requests, etcd ranges and bytes, CPU seconds), for no watcher,
# a plain reflector on every Event (and one with kubecause's nine watches), kubecause with one and
# two replicas, with one unfiltered watch and with one watch excluding the commonest Normal
# reasons: at start-up (the initial lists), per write (10,000 live Events, 80 % Normal, 15,000
# writes at 200/s) and for a restart (the relists). The Events are seeded once (the first
# LOAD_SEED_API through the apiserver, the rest directly into etcd, as the million run does) and
# each scenario starts from a copy of that etcd data directory (LOAD_CP_SEED=apiserver: each
# seeds its own through the apiserver). LOAD_CP_RELIST=apiserver relists by compacting etcd and
# restarting kube-apiserver (410 Gone) instead of restarting the watchers. Settings:
# LOAD_CP_EVENTS, LOAD_CP_WRITES, LOAD_CP_RATE, LOAD_CP_NORMAL, LOAD_CP_SCENARIOS, LOAD_CP_SEED,
# LOAD_CP_RELIST, LOAD_ETCD_DIR, LOAD_READY_TIMEOUT, LOAD_CP_OUT (default
# bin/bench-controlplane.json); see e2e/load/controlplane_test.go.
#   LOAD_CP_EVENTS=1000000 LOAD_CP_RELIST=apiserver LOAD_ETCD_DIR=<a tmpfs> hack/bench-apiserver.sh controlplane
#
# Settings: LOAD_SIZES, LOAD_RATES (writes/s, default 200,1000), LOAD_SECONDS (per write phase,
# default 20), LOAD_WORKERS / LOAD_LAG_WORKERS (concurrent writers in the CPU and the lag phases,
# default 16 / 128), LOAD_LAG=0 (skip the lag phases), LOAD_LAG_RATE (writes/s of the lag phases,
# default 1000), LOAD_SCRAPERS (concurrent full scrapers during the lag phases, default 0),
# LOAD_VIEW_CAP (kubecause's --object-view.max-series, default 1000000: every live Event in the
# view), LOAD_SERIES_CAP (its --events.max-series, default 100000), LOAD_OUT (JSON results), KUBECAUSE_ENV, KUBECAUSE_BIN (a binary to measure instead of one
# built from this tree).
# Bounded: each size is seeded, then 3 write phases of LOAD_SECONDS; the whole run times out
# after 30 min (BENCH_TIMEOUT).
set -euo pipefail
cd "$(dirname "$0")/.."
export KUBECAUSE_CACHE=${KUBECAUSE_CACHE:-$HOME/.cache/kubecause}
export KUBEBUILDER_ASSETS=${KUBEBUILDER_ASSETS:-$KUBECAUSE_CACHE/kubebuilder-assets}
bash hack/deps/20-e2e-tools.sh
# The binary measured is the one built from this tree, unless KUBECAUSE_BIN names another.
if [ -z "${KUBECAUSE_BIN:-}" ]; then
	go build -o bin/kubecause ./exporter/cmd/kubecause
fi
start=$SECONDS
if [ "${1:-}" = controlplane ]; then
	export LOAD_CP_OUT=${LOAD_CP_OUT:-$PWD/bin/bench-controlplane.json}
	go test -tags load -count=1 -v -run 'TestControlPlaneCost$' -timeout "${BENCH_TIMEOUT:-60m}" ./e2e/load/ |
		grep --line-buffered -E '^(BenchmarkControlPlane|--- |\s+controlplane_test.go|\s+seed.go|ok|FAIL|PASS)'
	echo "bench-apiserver controlplane: $((SECONDS - start)) s; figures in $LOAD_CP_OUT"
	exit
fi
if [ "${1:-}" = million ]; then
	export LOAD_MILLION=${LOAD_MILLION:-1000000} LOAD_MILLION_OUT=${LOAD_MILLION_OUT:-$PWD/bin/bench-million.json}
	go test -tags load -count=1 -v -run 'TestMillionEvents$' -timeout "${BENCH_TIMEOUT:-180m}" ./e2e/load/ |
		grep --line-buffered -E '^(--- |\s+million_test.go|\s+seed.go|\s+load_test.go|ok|FAIL|PASS)'
	echo "bench-apiserver million: $((SECONDS - start)) s; figures in $LOAD_MILLION_OUT"
	exit
fi
export LOAD_OUT=${LOAD_OUT:-$PWD/bin/bench-apiserver.json}
go test -tags load -count=1 -v -run 'TestApiserverLoad$' -timeout "${BENCH_TIMEOUT:-30m}" ./e2e/load/ |
	grep --line-buffered -E '^(BenchmarkApiserver|--- |\s+load_test.go|ok|FAIL|PASS)'
echo "bench-apiserver: $((SECONDS - start)) s; figures in $LOAD_OUT"
