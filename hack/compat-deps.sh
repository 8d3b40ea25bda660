#!/usr/bin/env bash
# What `make compat` runs on besides `make deps` (hack/compat.sh): older releases of the
# components, each built once from a pinned wrapper module under hack/tools/ and cached by version
# in $KUBECAUSE_CACHE/bin/<name>-<version>, like hack/deps/20-e2e-tools.sh. A present binary is
# never rebuilt. Versions and why each was chosen: docs/e2e.md, "Compatibility matrix".
#   hack/compat-deps.sh                                      everything
#   hack/compat-deps.sh kube|ksm|prometheus|alertmanager     one component's releases
set -euo pipefail
what=${1:-all}
want() { [ "$what" = all ] || [ "$what" = "$1" ]; }
cd "$(dirname "$0")/.."
: "${KUBECAUSE_CACHE:=$HOME/.cache/kubecause}"
bin="$KUBECAUSE_CACHE/bin"
mkdir -p "$bin"

# kube-apiserver of the oldest minor under a cloud's extended support and a middle one; the
# newest is make deps' own (hack/deps/20-e2e-tools.sh). One wrapper module per version:
# hack/tools/kube-apiserver-<version>.
COMPAT_KUBE_VERSIONS=(v1.32.13 v1.34.4)
want kube || COMPAT_KUBE_VERSIONS=()
# locked <name> <command...>: the command under an exclusive lock on $bin/.lock-<name>, so that
# two runs at once build a release once, the second waiting for the first.
locked() {
	local name=$1
	shift
	(
		flock 9
		"$@"
	) 9>"$bin/.lock-$name"
}

build_kube() { # <version>
	local v=$1 out="$bin/kube-apiserver-$1" minor ldflags start
	[ -x "$out" ] && return 0
	minor=${v#v1.}
	minor=${minor%%.*}
	ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$v"
	ldflags+=" -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor"
	echo "building kube-apiserver $v (cached afterwards in $out) ..."
	start=$SECONDS
	(cd "hack/tools/kube-apiserver-$v" && go build -o "$out.tmp" -ldflags "$ldflags" ./cmd/kube-apiserver)
	mv "$out.tmp" "$out"
	echo "built kube-apiserver $v in $((SECONDS - start)) s"
}
for v in "${COMPAT_KUBE_VERSIONS[@]}"; do locked "kube-apiserver-$v" build_kube "$v"; done

# build_tools <wrapper dir> <version> <cache suffix> <package>...: the wrapper module's mains in one
# go build (they share its compiled packages), each cached as $bin/<main>-<cache suffix>.
build_tools() {
	local dir=$1 version=$2 suffix=$3
	shift 3
	local missing=() p n
	for p in "$@"; do
		n=${p##*/}
		# go build names a main after its path, without a major-version suffix (…/v2).
		[[ $n =~ ^v[0-9]+$ ]] && n=${p%/*} && n=${n##*/}
		[ -x "$bin/$n-$suffix" ] || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	echo "building ${missing[*]##*/} $version (cached afterwards in $bin) ..."
	local start=$SECONDS tmp f
	tmp=$(mktemp -d "$bin/.compat.XXXXXX")
	(cd "$dir" && go build -tags remove_all_sd -o "$tmp/" \
		-ldflags "-s -w -X github.com/prometheus/common/version.Version=${version#v} -X github.com/prometheus/common/version.Branch=module-proxy" \
		"${missing[@]}")
	for f in "$tmp"/*; do mv "$f" "$bin/$(basename "$f")-$suffix"; done
	rmdir "$tmp"
	echo "built ${missing[*]##*/} $version in $((SECONDS - start)) s"
}

# promtool of Prometheus' long-term-support 3.x release and of the newest 3.x (module v0.3XY.Z is
# Prometheus 3.XY.Z); make deps builds the project's own 3.x (hack/deps/22-prometheus3.sh).
if want prometheus; then
	locked promtool-v3.13.5 build_tools hack/tools/prometheus-v3.13.5 v3.13.5 v0.313.5 github.com/prometheus/prometheus/cmd/promtool
	locked promtool-v3.16.0 build_tools hack/tools/prometheus-v3.16.0 v3.16.0 v0.316.0 github.com/prometheus/prometheus/cmd/promtool
fi
# kube-state-metrics: the oldest release kube-prometheus-stack shipped in the last 18 months (the
# newest is make deps' own).
want ksm && locked kube-state-metrics-v2.15.0 build_tools hack/tools/kube-state-metrics-v2.15.0 v2.15.0 v2.15.0 k8s.io/kube-state-metrics/v2
# Alertmanager and amtool: the oldest kube-prometheus-stack shipped in the last 18 months and the newest.
# From 0.29 the web UI is embedded from ui/app/dist, which only an npm build makes and the module
# does not hold: the build then uses a copy of the module with a placeholder page there (the
# server, its API, routing and inhibition are complete; only the UI pages are missing, as for
# Prometheus 3 in hack/deps/22-prometheus3.sh).
build_alertmanager() { # <version>
	local v=$1 dir="hack/tools/alertmanager-$1"
	local src
	src=$(cd "$dir" && go list -m -f '{{.Dir}}' github.com/prometheus/alertmanager)
	if [ -f "$src/ui/web.go" ] && grep -q 'go:embed app/dist' "$src/ui/web.go" && [ ! -d "$src/ui/app/dist" ]; then
		local work
		work=$(mktemp -d)
		# Global: the trap runs when the lock's subshell exits, after this function's locals.
		compat_work=$work
		trap 'rm -rf "${compat_work:-}"' EXIT
		cp -r "$src" "$work/alertmanager" && chmod -R u+w "$work/alertmanager"
		for d in elm mantine; do
			mkdir -p "$work/alertmanager/ui/app/dist/$d"
			echo "web UI not built (no npm): the API is at /api/v2/" >"$work/alertmanager/ui/app/dist/$d/index.html"
		done
		cp "$dir/go.mod" "$dir/go.sum" "$work/"
		(cd "$work" && go mod edit -replace "github.com/prometheus/alertmanager=./alertmanager")
		dir=$work
	fi
	build_tools "$dir" "$v" "$v" github.com/prometheus/alertmanager/cmd/alertmanager github.com/prometheus/alertmanager/cmd/amtool
}
want alertmanager && for v in v0.28.1 v0.35.0; do locked "alertmanager-$v" build_alertmanager "$v"; done
exit 0
