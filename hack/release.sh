#!/usr/bin/env bash
# Builds a release into bin/release/, with one version everywhere:
#   kubecause-<version>.oci.tar   the multi-arch image (linux/amd64, linux/arm64) as an OCI archive, tag <version>
#   sbom/                         its SPDX SBOMs, one per platform and one for the index (written by ko)
#   kubecause-<chart version>.tgz the Helm chart (helm package), appVersion <version> = the image tag
#   SHA256SUMS                    checksums of all of the above
# VERSION is v-prefixed semver (v0.2.0); default: "v" + the chart's version in Chart.yaml. The chart's
# version is VERSION without the "v". Nothing is pushed: docs/install.md says how to publish.
set -euo pipefail
cd "$(dirname "$0")/.."
cache="${KUBECAUSE_CACHE:-$HOME/.cache/kubecause}"
chart=deploy/helm/kubecause
VERSION="${VERSION:-v$(sed -n 's/^version: *//p' $chart/Chart.yaml)}"
if ! [[ "$VERSION" =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]]; then
	echo "release: VERSION=$VERSION is not v<semver> (e.g. v0.2.0)" >&2
	exit 1
fi
export VERSION
helm="$cache/bin/helm-$(sed -n 's/^HELM_VERSION=//p' hack/deps/30-deploy-tools.sh)"
[ -x "$helm" ] || bash hack/deps/30-deploy-tools.sh

out=bin/release
rm -rf "$out"
mkdir -p "$out/sbom"

# The image, its SBOMs, and the test that its binary prints VERSION.
KUBECAUSE_SBOM_DIR="$out/sbom" hack/image.sh
cp "bin/image/kubecause-$VERSION.oci.tar" "$out/"

# The chart, with the same version (semver without the "v") and the image tag as appVersion.
"$helm" package "$chart" --version "${VERSION#v}" --app-version "$VERSION" --destination "$out" >/dev/null

(cd "$out" && find . -type f ! -name SHA256SUMS | sed 's|^\./||' | LC_ALL=C sort | xargs sha256sum >SHA256SUMS)
echo "release $VERSION in $out:"
(cd "$out" && cat SHA256SUMS)
