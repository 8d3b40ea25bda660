#!/usr/bin/env bash
# Builds the kubecause image for linux/amd64 and linux/arm64 without a Docker daemon, with ko.
#
# Output (under bin/image/):
#   oci/                         OCI image layout holding the multi-arch index
#   kubecause-<version>.oci.tar  the same layout as one tarball (an "oci-archive")
# Push with `crane push bin/image/oci <ref>` or
# `skopeo copy oci-archive:bin/image/kubecause-<version>.oci.tar docker://<ref>`.
# The digest is reproducible: layer times come from the last commit (SOURCE_DATE_EPOCH).
# With KUBECAUSE_SBOM_DIR set, ko also writes the image's SPDX SBOMs there (hack/release.sh sets it).
# Then it runs the image test (deploy/image_test.go): the amd64 binary in the image prints the version.
# KUBECAUSE_IMAGE_PLATFORMS (default linux/amd64,linux/arm64) narrows the platforms: make test builds
# linux/amd64 alone (the arm64 build is a second compile of everything, checked by make release).
#
# Base image: .ko.yaml names gcr.io/distroless/static:nonroot. Set KUBECAUSE_BASE_IMAGE to use another
# reachable base. With KUBECAUSE_BASE_IMAGE=local (the default when gcr.io cannot be reached) the script
# builds a minimal distroless-like base itself (passwd/group with nonroot 65532, /home/nonroot, /tmp;
# user 65532) and serves it from a throw-away registry on 127.0.0.1 (`crane registry serve`) for the
# duration of the build, because ko pulls its base from a registry.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
cache="${KUBECAUSE_CACHE:-$HOME/.cache/kubecause}"
tools=hack/deps/30-deploy-tools.sh
ko="$cache/bin/ko-$(sed -n 's/^KO_VERSION=//p' $tools)"
crane="$cache/bin/crane-$(sed -n 's/^CRANE_VERSION=//p' $tools)"
[ -x "$ko" ] && [ -x "$crane" ] || bash $tools

# Build information, as the Makefile computes it.
export VERSION="${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}"
export REVISION="${REVISION:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}"
export BRANCH="${BRANCH:-$(git rev-parse --abbrev-ref HEAD 2>/dev/null || echo unknown)}"
# Reproducible: layer times and the build date come from the last commit.
export SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}"
export BUILD_DATE="${BUILD_DATE:-$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y%m%d-%H:%M:%S)}"
# .ko.yaml passes these linker flags; hack/ldflags.sh is where they are defined.
LDFLAGS=$(hack/ldflags.sh)
export LDFLAGS
repo="${KUBECAUSE_IMAGE_REPO:-ghcr.io/kubecause/kubecause}"
export KUBECAUSE_IMAGE_PLATFORMS="${KUBECAUSE_IMAGE_PLATFORMS:-linux/amd64,linux/arm64}"
out=bin/image
work=$(mktemp -d)
registry_pid=""
cleanup() {
	if [ -n "$registry_pid" ]; then kill "$registry_pid" 2>/dev/null || true; wait "$registry_pid" 2>/dev/null || true; fi
	rm -rf "$work"
}
trap cleanup EXIT

base="${KUBECAUSE_BASE_IMAGE:-}"
if [ -z "$base" ]; then
	if timeout 10 "$crane" digest gcr.io/distroless/static:nonroot >/dev/null 2>&1; then
		base=gcr.io/distroless/static:nonroot
	else
		base=local
	fi
fi

if [ "$base" = local ]; then
	echo "image: gcr.io is not reachable; building a minimal non-root base and serving it on 127.0.0.1"
	# ko records the base's name (with this port) in the image, so a fixed port keeps the digest
	# reproducible; a random one is the fallback when it is taken.
	start_registry() {
		"$crane" registry serve --address "127.0.0.1:$1" >"$work/registry.log" 2>&1 &
		registry_pid=$!
		port=""
		for _ in $(seq 1 100); do
			port=$(sed -n 's/.*serving on port \([0-9]*\).*/\1/p' "$work/registry.log")
			[ -n "$port" ] && return 0
			kill -0 "$registry_pid" 2>/dev/null || { registry_pid=""; return 1; }
			sleep 0.1
		done
		kill "$registry_pid" 2>/dev/null || true
		registry_pid=""
		return 1
	}
	if ! start_registry "${KUBECAUSE_IMAGE_REGISTRY_PORT:-47913}"; then
		echo "image: port ${KUBECAUSE_IMAGE_REGISTRY_PORT:-47913} is taken; using a random one (the digest will differ)"
		start_registry 0 || { echo "image: the local registry did not start" >&2; cat "$work/registry.log" >&2; exit 1; }
	fi
	reg="127.0.0.1:$port/base"
	quiet_crane() {
		"$crane" "$@" >/dev/null 2>>"$work/crane.log" || { echo "image: crane $1 failed:" >&2; cat "$work/crane.log" >&2; return 1; }
	}

	# The files distroless/static:nonroot provides that matter to a static Go binary.
	fs="$work/rootfs"
	mkdir -p "$fs/etc" "$fs/home/nonroot" "$fs/tmp"
	printf 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$fs/etc/passwd"
	printf 'root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n' >"$fs/etc/group"
	chmod 1777 "$fs/tmp"
	chmod 0700 "$fs/home/nonroot"
	tar --sort=name --mtime="@$SOURCE_DATE_EPOCH" --owner=0 --group=0 --numeric-owner \
		--exclude=home/nonroot -C "$fs" -cf "$work/base.tar" etc home tmp
	# the home directory belongs to nonroot
	tar --sort=name --mtime="@$SOURCE_DATE_EPOCH" --owner=65532 --group=65532 --numeric-owner \
		-C "$fs" -cf "$work/home.tar" home/nonroot
	quiet_crane append --oci-empty-base -f "$work/base.tar" -f "$work/home.tar" -t "$reg:rootfs"
	manifests=()
	for arch in amd64 arm64; do
		quiet_crane mutate "$reg:rootfs" --set-platform "linux/$arch" --user 65532:65532 \
			--env PATH=/usr/local/bin:/usr/bin:/bin -t "$reg:$arch"
		manifests+=(-m "$reg:$arch")
	done
	quiet_crane index append "${manifests[@]}" -t "$reg:nonroot"
	base="$reg:nonroot"
fi
echo "image: base $base"

rm -rf "$out/oci"
mkdir -p "$out"
sbom=(--sbom=none)
if [ -n "${KUBECAUSE_SBOM_DIR:-}" ]; then
	mkdir -p "$KUBECAUSE_SBOM_DIR"
	sbom=(--sbom=spdx --sbom-dir="$KUBECAUSE_SBOM_DIR")
fi
# --push=false: nothing leaves the machine; the result goes to the OCI layout only.
KO_DEFAULTBASEIMAGE="$base" KO_DOCKER_REPO="$repo" KOCACHE="$cache/ko" \
	"$ko" build ./exporter/cmd/kubecause --bare --push=false "${sbom[@]}" \
	--platform="$KUBECAUSE_IMAGE_PLATFORMS" --tags="$VERSION" \
	--image-label "org.opencontainers.image.version=$VERSION" \
	--image-label "org.opencontainers.image.revision=$REVISION" \
	--image-label "org.opencontainers.image.source=https://github.com/kubecause/kubecause" \
	--oci-layout-path="$out/oci" >"$work/ko.out"
digest=$(tail -1 "$work/ko.out")
tarball="$out/kubecause-$VERSION.oci.tar"
tar --sort=name --mtime="@$SOURCE_DATE_EPOCH" --owner=0 --group=0 --numeric-owner -C "$out/oci" -cf "$tarball" .
echo "image: $repo:$VERSION ($digest)"
echo "image: layout $out/oci, archive $tarball ($(du -h "$tarball" | cut -f1))"

# The image's amd64 binary prints this version.
KUBECAUSE_IMAGE_LAYOUT="$root/$out/oci" KUBECAUSE_IMAGE_VERSION="$VERSION" \
	go test -count=1 -tags image -run '^TestImage' ./deploy/
