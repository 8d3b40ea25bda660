#!/usr/bin/env bash
# containerd 2.x, the real node's runtime (docs/e2e.md, "Runtimes"): containerd,
# containerd-shim-runc-v2 and ctr built from a pinned github.com/containerd/containerd/v2 release
# by the wrapper module hack/tools/containerd (its go.mod names the three mains as tools), in one
# go build (215 s cold on 2 cores, 0 s when cached), statically (CGO off: no btrfs snapshotter,
# which the node does not use), cached as $KUBECAUSE_CACHE/containerd-<version>/bin/{containerd,
# containerd-shim-runc-v2,ctr}, the three together in one directory per version (the node's
# configuration names the shim by its path: on PATH containerd could find a Debian 1.6 shim).
# runc and crun come from Debian (00-apt.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
KUBECAUSE_CACHE=${KUBECAUSE_CACHE:-$HOME/.cache/kubecause}
CONTAINERD_VERSION=v2.4.2
dir="$KUBECAUSE_CACHE/containerd-$CONTAINERD_VERSION/bin"
cmds=(containerd containerd-shim-runc-v2 ctr)
missing=()
for c in "${cmds[@]}"; do [ -x "$dir/$c" ] || missing+=("github.com/containerd/containerd/v2/cmd/$c"); done
[ ${#missing[@]} -eq 0 ] && exit 0
want=$(cd hack/tools/containerd && go list -m -f '{{.Version}}' github.com/containerd/containerd/v2)
if [ "$want" != "$CONTAINERD_VERSION" ]; then
	echo "hack/tools/containerd/go.mod requires containerd $want, this script builds $CONTAINERD_VERSION" >&2
	exit 1
fi
echo "building containerd $CONTAINERD_VERSION (cached afterwards in $dir) ..."
start=$SECONDS
mkdir -p "$dir"
tmp=$(mktemp -d "$dir/.build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
ldflags="-s -w -X github.com/containerd/containerd/v2/version.Version=$CONTAINERD_VERSION"
(cd hack/tools/containerd && CGO_ENABLED=0 go build -o "$tmp/" -tags urfave_cli_no_docs -ldflags "$ldflags" "${missing[@]}")
for f in "$tmp"/*; do mv "$f" "$dir/"; done
echo "built containerd $CONTAINERD_VERSION in $((SECONDS - start)) s"
