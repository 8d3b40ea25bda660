#!/usr/bin/env bash
# The kubelet the real node moves to next (docs/e2e.md, "Runtimes"): built from
# a pinned k8s.io/kubernetes release by the wrapper module hack/tools/kubelet-next, in the style of
# 25-node-tools.sh (15 min of CPU cold, 44 min on 2 cores shared with other builds; 0 s when
# cached as $KUBECAUSE_CACHE/bin/kubelet-<version>). It still runs on cgroup v1 with
# failCgroupV1: false, needs containerd 2.x (26-containerd2.sh; Kubernetes 1.35 was the last
# release for containerd 1.x) and an apiserver of its minor version or newer.
# Opt-in: runs only with KUBECAUSE_NEXT_NODE=1, until the control plane is built at 1.37 too
# (a kubelet must not be newer than its apiserver), so `make deps` builds nothing no test uses.
set -euo pipefail
[ "${KUBECAUSE_NEXT_NODE:-0}" = 1 ] || exit 0
cd "$(dirname "$0")/../.."
KUBECAUSE_CACHE=${KUBECAUSE_CACHE:-$HOME/.cache/kubecause}
KUBELET_VERSION=v1.37.2
bin="$KUBECAUSE_CACHE/bin"
mkdir -p "$bin"
out="$bin/kubelet-$KUBELET_VERSION"
[ -x "$out" ] && exit 0
want=$(cd hack/tools/kubelet-next && go list -m -f '{{.Version}}' k8s.io/kubernetes)
if [ "$want" != "$KUBELET_VERSION" ]; then
	echo "hack/tools/kubelet-next/go.mod requires k8s.io/kubernetes $want, this script builds $KUBELET_VERSION" >&2
	exit 1
fi
echo "building kubelet $KUBELET_VERSION (cached afterwards in $out) ..."
start=$SECONDS
minor=${KUBELET_VERSION#v1.}
minor=${minor%%.*}
ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$KUBELET_VERSION"
ldflags+=" -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor"
(cd hack/tools/kubelet-next && go build -o "$out.tmp" -ldflags "$ldflags" .)
mv "$out.tmp" "$out"
echo "built kubelet $KUBELET_VERSION in $((SECONDS - start)) s"
