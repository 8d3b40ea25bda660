#!/usr/bin/env bash
# CRI-O, a second CRI runtime tried for the real node (docs/e2e.md, "Runtimes"). OPT-IN: it does
# nothing unless KUBECAUSE_CRIO=1, so `make deps` (hack/install-deps.sh runs every step here)
# skips it; no test uses it yet. KUBECAUSE_CRIO=1 bash hack/deps/27-crio.sh builds:
# - crio from the pinned github.com/cri-o/cri-o release (of the versions asked for, the only one
#   the Go module proxy serves) through the wrapper module hack/tools/crio (its go.mod names
#   cmd/crio as a tool; its go.sum is CRI-O's own, which has the sums the checksum database does
#   not serve), with cgo but without the C libraries Debian would have to add: openpgp instead of
#   gpgme, no btrfs, no devicemapper, no seccomp, no SELinux, no AppArmor. 9 to 15 min cold on 2
#   shared cores, 0 s cached;
# - pinns (CRI-O's namespace pinner, C, in the same module) with gcc, statically.
# Both are cached as $KUBECAUSE_CACHE/crio-<version>/bin/{crio,pinns}. conmon comes from Debian
# (package conmon, installed here when missing), runc from 00-apt.sh. On a host whose root lacks
# CAP_SYS_RESOURCE, a sandbox starts only with runc's oomScoreAdj raised (docs/e2e.md).
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ "${KUBECAUSE_CRIO:-}" != 1 ]; then
	exit 0
fi
KUBECAUSE_CACHE=${KUBECAUSE_CACHE:-$HOME/.cache/kubecause}
CRIO_VERSION=v1.34.0
dir="$KUBECAUSE_CACHE/crio-$CRIO_VERSION/bin"
if ! command -v conmon >/dev/null; then
	SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
	echo "installing Debian package: conmon"
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends conmon >/dev/null
fi
[ -x "$dir/crio" ] && [ -x "$dir/pinns" ] && exit 0
want=$(cd hack/tools/crio && go list -m -f '{{.Version}}' github.com/cri-o/cri-o)
if [ "$want" != "$CRIO_VERSION" ]; then
	echo "hack/tools/crio/go.mod requires cri-o $want, this script builds $CRIO_VERSION" >&2
	exit 1
fi
echo "building CRI-O $CRIO_VERSION (cached afterwards in $dir) ..."
start=$SECONDS
mkdir -p "$dir"
tmp=$(mktemp -d "$dir/.build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
tags="containers_image_openpgp containers_image_ostree_stub exclude_graphdriver_btrfs exclude_graphdriver_devicemapper"
(cd hack/tools/crio && CGO_ENABLED=1 go build -trimpath -o "$tmp/" -tags "$tags" -ldflags "-s -w" github.com/cri-o/cri-o/cmd/crio)
src=$(cd hack/tools/crio && go list -m -f '{{.Dir}}' github.com/cri-o/cri-o)/pinns/src
gcc -std=c99 -O3 -Wall -Werror -Wextra -static -o "$tmp/pinns" "$src/pinns.c" "$src/sysctl.c"
"$tmp/crio" --version | grep -q "^crio version ${CRIO_VERSION#v}$"
for f in "$tmp"/*; do mv "$f" "$dir/"; done
echo "built CRI-O $CRIO_VERSION in $((SECONDS - start)) s"
