#!/usr/bin/env bash
# Tools for deploy/: helm (chart lint and render), kustomize (overlays), ko and crane (daemonless image build).
# Each is built from the Go module proxy at an exact version and cached by version under
# $KUBECAUSE_CACHE/bin/<tool>-<version>; nothing is rebuilt when the cached binary exists.
# deploy/deploy_test.go and hack/image.sh read the versions below from this file.
set -euo pipefail
cache="${KUBECAUSE_CACHE:-$HOME/.cache/kubecause}"
bindir="$cache/bin"
mkdir -p "$bindir"

HELM_VERSION=v3.22.0
KUSTOMIZE_VERSION=v5.8.2
KO_VERSION=v0.19.1
CRANE_VERSION=v0.21.7

# install NAME VERSION PACKAGE: go install PACKAGE@VERSION into $bindir/NAME-VERSION.
install() {
	local name=$1 version=$2 pkg=$3
	local dest="$bindir/$name-$version"
	[ -x "$dest" ] && return 0
	echo "building $name $version (go install $pkg@$version)"
	local tmp
	tmp=$(mktemp -d)
	GOBIN="$tmp" go install "$pkg@$version"
	mv "$tmp"/* "$dest"
	rm -rf "$tmp"
}

install helm "$HELM_VERSION" helm.sh/helm/v3/cmd/helm
install kustomize "$KUSTOMIZE_VERSION" sigs.k8s.io/kustomize/kustomize/v5
install ko "$KO_VERSION" github.com/google/ko
install crane "$CRANE_VERSION" github.com/google/go-containerregistry/cmd/crane
