#!/usr/bin/env bash
# Real components for the end-to-end tests and the demo, built from pinned wrapper modules
# (hack/tools/<name>/, each with its own go.mod) and cached by version under $KUBECAUSE_CACHE:
#   kube-apiserver, kube-controller-manager, kube-scheduler and kubelet
#                       from one k8s.io/kubernetes release, in one go build of hack/tools/kubernetes
#                       (docs/e2e.md gives the measured cold time; 0 s when cached)
#   kube-state-metrics  from k8s.io/kube-state-metrics/v2 (1–3 min cold)
# etcd, prometheus, promtool and prometheus-alertmanager come from Debian (00-apt.sh).
# Then assembles $KUBECAUSE_CACHE/kubebuilder-assets (what controller-runtime's envtest reads
# from KUBEBUILDER_ASSETS). Idempotent: a binary that is present for its version is never rebuilt.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD

KUBECAUSE_CACHE=${KUBECAUSE_CACHE:-$HOME/.cache/kubecause}
KUBE_VERSION=v1.37.2
KSM_VERSION=v2.20.0
bin="$KUBECAUSE_CACHE/bin"
assets="$KUBECAUSE_CACHE/kubebuilder-assets"
mkdir -p "$bin" "$assets"

# build <name> <version> <wrapper dir> <package> <ldflags>
build() {
	local name=$1 version=$2 dir=$3 pkg=$4 ldflags=$5
	local out="$bin/$name-$version"
	[ -x "$out" ] && return 0
	echo "building $name $version (cached afterwards in $out) ..."
	local start=$SECONDS
	(cd "$root/$dir" && go build -o "$out.tmp" -ldflags "$ldflags" "$pkg")
	mv "$out.tmp" "$out"
	echo "built $name $version in $((SECONDS - start)) s"
}

# The control plane and the real node's kubelet: four mains of one wrapper module, built by one
# go build so they share its compiled packages (one Kubernetes tree compiled, not two); each cached
# as $bin/<name>-$KUBE_VERSION. One version for all four keeps the kubelet inside the skew policy
# (never newer than its apiserver).
want=$(cd hack/tools/kubernetes && go list -m -f '{{.Version}}' k8s.io/kubernetes)
if [ "$want" != "$KUBE_VERSION" ]; then
	echo "hack/tools/kubernetes/go.mod requires k8s.io/kubernetes $want, this script builds $KUBE_VERSION" >&2
	exit 1
fi
minor=${KUBE_VERSION#v1.}
minor=${minor%%.*}
kube_ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$KUBE_VERSION"
kube_ldflags+=" -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor"
components=(kube-apiserver kube-controller-manager kube-scheduler kubelet)
missing=()
for c in "${components[@]}"; do [ -x "$bin/$c-$KUBE_VERSION" ] || missing+=("./cmd/$c"); done
if [ ${#missing[@]} -gt 0 ]; then
	echo "building ${missing[*]} $KUBE_VERSION (cached afterwards in $bin) ..."
	start=$SECONDS
	tmp=$(mktemp -d "$bin/.kubernetes.XXXXXX")
	(cd "$root/hack/tools/kubernetes" && go build -o "$tmp/" -ldflags "$kube_ldflags" "${missing[@]}")
	for f in "$tmp"/*; do mv "$f" "$bin/$(basename "$f")-$KUBE_VERSION"; done
	rmdir "$tmp"
	echo "built ${missing[*]} in $((SECONDS - start)) s"
fi

ksm_ldflags="-s -w -X github.com/prometheus/common/version.Version=${KSM_VERSION#v}"
ksm_ldflags+=" -X github.com/prometheus/common/version.Branch=release"
build kube-state-metrics "$KSM_VERSION" hack/tools/kube-state-metrics k8s.io/kube-state-metrics/v2 "$ksm_ldflags"

link() { # link <target> <name>: a symlink in the assets dir, replaced only when it points elsewhere
	[ "$(readlink "$assets/$2" 2>/dev/null)" = "$1" ] || ln -sfn "$1" "$assets/$2"
}
link "$bin/kube-apiserver-$KUBE_VERSION" kube-apiserver
etcd_bin=$(command -v etcd || true)
if [ -z "$etcd_bin" ]; then
	echo "etcd not found: hack/deps/00-apt.sh installs Debian's etcd-server" >&2
	exit 1
fi
link "$etcd_bin" etcd
kubectl_bin=$(command -v kubectl || true)
if [ -n "$kubectl_bin" ]; then link "$kubectl_bin" kubectl; fi
link "$bin/kube-state-metrics-$KSM_VERSION" kube-state-metrics
