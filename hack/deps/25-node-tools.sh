#!/usr/bin/env bash
# The real node of the e2e tests and the demo (docs/e2e.md): a kubelet built from a pinned
# k8s.io/kubernetes release by the wrapper module hack/tools/kubelet (≈ 3 min cold on 2 cores,
# 0 s when cached as $KUBECAUSE_CACHE/bin/kubelet-<version>). containerd 2.x comes from
# 26-containerd2.sh, runc and the CNI plugins from Debian (00-apt.sh), kube-controller-manager and
# kube-scheduler from 20-e2e-tools.sh. Kubelet 1.35 runs on containerd 1.x and 2.x.
set -euo pipefail
cd "$(dirname "$0")/../.."
KUBECAUSE_CACHE=${KUBECAUSE_CACHE:-$HOME/.cache/kubecause}
KUBELET_VERSION=v1.35.4
bin="$KUBECAUSE_CACHE/bin"
mkdir -p "$bin"
out="$bin/kubelet-$KUBELET_VERSION"
[ -x "$out" ] && exit 0
echo "building kubelet $KUBELET_VERSION (cached afterwards in $out) ..."
start=$SECONDS
ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$KUBELET_VERSION"
ldflags+=" -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=35"
(cd hack/tools/kubelet && go build -o "$out.tmp" -ldflags "$ldflags" .)
mv "$out.tmp" "$out"
echo "built kubelet $KUBELET_VERSION in $((SECONDS - start)) s"
