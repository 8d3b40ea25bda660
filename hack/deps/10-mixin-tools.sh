#!/usr/bin/env bash
# Tools of the monitoring mixin: jsonnet, jsonnetfmt, jsonnet-lint (go-jsonnet), pint and the
# promtool of Prometheus 3 (promtool3).
# promtool (Prometheus 2) comes from the Debian package "prometheus" (hack/deps/00-apt.sh).
# Idempotent: every tool is built once per pinned version into $KUBECAUSE_CACHE/bin.
set -euo pipefail
cd "$(dirname "$0")/../.."
: "${KUBECAUSE_CACHE:=$HOME/.cache/kubecause}"
bin="$KUBECAUSE_CACHE/bin"
mkdir -p "$bin"

JSONNET_VERSION=v0.22.0
PINT_VERSION=v0.87.0

# go-jsonnet: go install works for this module. Versioned names so a bump rebuilds;
# unversioned symlinks are what the scripts and tests call.
for t in jsonnet jsonnetfmt jsonnet-lint; do
	if [ ! -x "$bin/$t-$JSONNET_VERSION" ]; then
		echo "building $t $JSONNET_VERSION"
		tmp=$(mktemp -d)
		GOBIN="$tmp" go install "github.com/google/go-jsonnet/cmd/$t@$JSONNET_VERSION"
		mv "$tmp/$t" "$bin/$t-$JSONNET_VERSION"
		rmdir "$tmp"
	fi
	ln -sfn "$t-$JSONNET_VERSION" "$bin/$t"
done

# pint: only buildable from a wrapper module (hack/tools/pint has its own go.mod).
if [ ! -x "$bin/pint-$PINT_VERSION" ]; then
	echo "building pint $PINT_VERSION"
	(cd hack/tools/pint && go build -o "$bin/pint-$PINT_VERSION" github.com/cloudflare/pint/cmd/pint)
fi
ln -sfn "pint-$PINT_VERSION" "$bin/pint"

# promtool of Prometheus 3 (the rule unit tests run on Prometheus 2 from Debian and on 3, whose
# range selection and other semantics changed). No package has it: built from the module proxy
# in a wrapper module (hack/tools/prometheus; go install refuses the module's replace directives).
# Only promtool: the tests need no server and no web UI. Built with the tag remove_all_sd, as
# the server is (22-prometheus3.sh): no cloud service discovery SDKs, which rule tests never use
# and which made most of the cold build (docs/e2e.md, "How long").
# The version is the wrapper module's requirement, shared with the Prometheus 3 server
# (hack/deps/22-prometheus3.sh).
PROMETHEUS_VERSION=$(awk '$1 == "github.com/prometheus/prometheus" { print $2 }' hack/tools/prometheus/go.mod)
if [ ! -x "$bin/promtool-$PROMETHEUS_VERSION" ]; then
	echo "building promtool (Prometheus 3) $PROMETHEUS_VERSION"
	start=$SECONDS
	(cd hack/tools/prometheus && go build -tags remove_all_sd -o "$bin/promtool-$PROMETHEUS_VERSION.tmp" github.com/prometheus/prometheus/cmd/promtool)
	mv "$bin/promtool-$PROMETHEUS_VERSION.tmp" "$bin/promtool-$PROMETHEUS_VERSION"
	echo "built promtool (Prometheus 3) in $((SECONDS - start)) s"
fi
ln -sfn "promtool-$PROMETHEUS_VERSION" "$bin/promtool3"
