#!/usr/bin/env bash
# Prometheus 3: promtool (promtool3; the rule unit tests run on Prometheus 2 from Debian and on
# 3, whose range selection and other semantics changed) and the server (prometheus3; the e2e
# runs the paging tests on both). No package has 3.x: both are built from the module proxy in
# the wrapper module hack/tools/prometheus (go install refuses the module's replace
# directives), by one go build so they share compiled packages.
# Without the build tag builtinassets the web UI is not embedded (it would need npm): the server,
# its API and the rule evaluation are complete; only the UI pages are missing. With the build tag
# remove_all_sd only static, file and HTTP target discovery remain (the tests scrape static
# targets); the cloud service discovery SDKs, most of the cold build, are left out.
# Idempotent: built once per version into $KUBECAUSE_CACHE/bin/{promtool,prometheus}-<version>.
# A few minutes cold on 2 cores (docs/e2e.md, "How long"), 0 s when cached.
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

missing=()
for t in promtool prometheus; do [ -x "$bin/$t-$PROMETHEUS_VERSION" ] || missing+=("github.com/prometheus/prometheus/cmd/$t"); done
if [ ${#missing[@]} -gt 0 ]; then
	echo "building ${missing[*]##*/} $release ($PROMETHEUS_VERSION, no web UI; cached afterwards in $bin) ..."
	start=$SECONDS
	tmp=$(mktemp -d "$bin/.prometheus.XXXXXX")
	(cd hack/tools/prometheus && go build -tags remove_all_sd -o "$tmp/" \
		-ldflags "-X github.com/prometheus/common/version.Version=$release -X github.com/prometheus/common/version.Branch=module-proxy" \
		"${missing[@]}")
	for f in "$tmp"/*; do mv "$f" "$bin/$(basename "$f")-$PROMETHEUS_VERSION"; done
	rmdir "$tmp"
	echo "built ${missing[*]##*/} $release in $((SECONDS - start)) s"
fi
ln -sfn "promtool-$PROMETHEUS_VERSION" "$bin/promtool3"
ln -sfn "prometheus-$PROMETHEUS_VERSION" "$bin/prometheus3"
