#!/usr/bin/env bash
# prometheus-operator for the e2e test that installs the chart next to a real operator
# (e2e/promoperator_test.go): the operator and the amtool of the Alertmanager release
# kube-prometheus-stack runs with it, built from the module proxy in the wrapper module
# hack/tools/prometheus-operator (go install refuses the operator module's replace directives of
# its pkg/apis and pkg/client submodules) by one go build, so they share compiled packages (the
# operator links Alertmanager's config package); and the CRDs of the same operator version
# (example/prometheus-operator-crd in its module). Cached as
# $KUBECAUSE_CACHE/prometheus-operator-<version>/{bin/operator,bin/amtool-<am version>,crds/*.yaml}.
# Idempotent: built once per version (docs/e2e.md, "How long", gives the cold time; 0 s when cached).
set -euo pipefail
cd "$(dirname "$0")/../.."
KUBECAUSE_CACHE=${KUBECAUSE_CACHE:-$HOME/.cache/kubecause}
mod=github.com/prometheus-operator/prometheus-operator
am=github.com/prometheus/alertmanager
# The versions are the wrapper module's requirements (one place to bump them; e2e/framework
# checks that it names the same).
req() { awk -v m="$1" '$1 == m { print $2 }' hack/tools/prometheus-operator/go.mod; }
PROMETHEUS_OPERATOR_VERSION=$(req "$mod")
ALERTMANAGER_VERSION=$(req "$am")
if [ -z "$PROMETHEUS_OPERATOR_VERSION" ] || [ -z "$ALERTMANAGER_VERSION" ]; then
	echo "hack/tools/prometheus-operator/go.mod lacks $mod or $am" >&2
	exit 1
fi
dir="$KUBECAUSE_CACHE/prometheus-operator-$PROMETHEUS_OPERATOR_VERSION"
amtool="amtool-$ALERTMANAGER_VERSION"
[ -x "$dir/bin/operator" ] && [ -x "$dir/bin/$amtool" ] && [ -n "$(ls "$dir/crds/"*.yaml 2>/dev/null)" ] && exit 0

echo "building prometheus-operator $PROMETHEUS_OPERATOR_VERSION and amtool $ALERTMANAGER_VERSION (cached afterwards in $dir) ..."
start=$SECONDS
mkdir -p "$dir"
tmp=$(mktemp -d "$dir/.build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# No -X of prometheus/common's version: one build links both, and the operator's version would be
# amtool's too. The versions are in the cache's paths.
(cd hack/tools/prometheus-operator && go build -o "$tmp/bin/" -ldflags "-s -w" "$mod/cmd/operator" "$am/cmd/amtool")
mv "$tmp/bin/amtool" "$tmp/bin/$amtool"
# The CRDs from the operator module the build just read.
src=$(cd hack/tools/prometheus-operator && go list -m -f '{{.Dir}}' "$mod")
if [ -z "$(ls "$src/example/prometheus-operator-crd/"*.yaml 2>/dev/null)" ]; then
	echo "no CRDs in $mod@$PROMETHEUS_OPERATOR_VERSION (example/prometheus-operator-crd)" >&2
	exit 1
fi
mkdir -p "$tmp/crds"
cp "$src/example/prometheus-operator-crd/"*.yaml "$tmp/crds/"
chmod -R u+w "$tmp/crds"
rm -rf "$dir/bin" "$dir/crds"
mv "$tmp/bin" "$tmp/crds" "$dir/"
echo "built prometheus-operator $PROMETHEUS_OPERATOR_VERSION and amtool $ALERTMANAGER_VERSION in $((SECONDS - start)) s"
