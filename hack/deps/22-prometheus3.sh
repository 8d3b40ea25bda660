#!/usr/bin/env bash
# The Prometheus 3 server for the end-to-end tests (the Debian package "prometheus" is 2.x; the
# e2e runs the paging tests on both). No package has 3.x: built from the module proxy in the
# wrapper module hack/tools/prometheus, the same module and version as promtool3
# (hack/deps/10-mixin-tools.sh), so the two share the Go build cache.
# Without the build tag builtinassets the web UI is not embedded (it would need npm): the server,
# its API and the rule evaluation are complete; only the UI pages are missing. With the build tag
# remove_all_sd only static, file and HTTP target discovery remain (the tests scrape static
# targets); the cloud service discovery SDKs are left out of the build.
# Idempotent: built once per version into $KUBECAUSE_CACHE/bin/prometheus-<version>, linked as
# prometheus3. A few minutes cold on 2 cores (docs/e2e.md), 0 s when cached.
set -euo pipefail
cd "$(dirname "$0")/../.."
: "${KUBECAUSE_CACHE:=$HOME/.cache/kubecause}"
bin="$KUBECAUSE_CACHE/bin"
mkdir -p "$bin"

# The version is the wrapper module's requirement (one place to bump it).
PROMETHEUS_VERSION=$(awk '$1 == "github.com/prometheus/prometheus" { print $2 }' hack/tools/prometheus/go.mod)
[ -n "$PROMETHEUS_VERSION" ] || { echo "no github.com/prometheus/prometheus in hack/tools/prometheus/go.mod" >&2; exit 1; }
# Module v0.3XY.Z is Prometheus 3.XY.Z.
release=$(echo "$PROMETHEUS_VERSION" | sed -E 's/^v0\.3([0-9]+)\.([0-9]+)$/3.\1.\2/')

out="$bin/prometheus-$PROMETHEUS_VERSION"
if [ ! -x "$out" ]; then
	echo "building prometheus $release ($PROMETHEUS_VERSION, no web UI; cached afterwards in $out) ..."
	start=$SECONDS
	(cd hack/tools/prometheus && go build -tags remove_all_sd -o "$out.tmp" \
		-ldflags "-X github.com/prometheus/common/version.Version=$release -X github.com/prometheus/common/version.Branch=module-proxy" \
		github.com/prometheus/prometheus/cmd/prometheus)
	mv "$out.tmp" "$out"
	echo "built prometheus $release in $((SECONDS - start)) s"
fi
ln -sfn "prometheus-$PROMETHEUS_VERSION" "$bin/prometheus3"
