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

# promtool of Prometheus 3, built with the server (they share one go build).
bash hack/deps/22-prometheus3.sh
