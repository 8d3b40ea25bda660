#!/bin/sh
# Prints the Go linker flags of every kubecause build: the Makefile, hack/image.sh (ko, through
# .ko.yaml's {{.Env.LDFLAGS}}) and the Dockerfile all call this script, so the flags are written once.
# Each value comes from the environment when set (the Dockerfile passes build args), else from git.
# Without any of them (a plain `go build`), exporter/cmd/kubecause/version.go takes the version from the build info.
set -eu
cd "$(dirname "$0")/.."
git_or() { git "$@" 2>/dev/null || true; }
VERSION="${VERSION:-$(git_or describe --tags --always --dirty)}"
REVISION="${REVISION:-$(git_or rev-parse --short HEAD)}"
BRANCH="${BRANCH:-$(git_or rev-parse --abbrev-ref HEAD)}"
# Reproducible: the build date is the last commit's time unless given.
SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-$(git_or log -1 --format=%ct)}"
if [ -z "${BUILD_DATE:-}" ] && [ -n "$SOURCE_DATE_EPOCH" ]; then
	BUILD_DATE=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y%m%d-%H:%M:%S)
fi
pkg=github.com/prometheus/common/version
flags="-s -w"
add() { if [ -n "$2" ]; then flags="$flags -X $pkg.$1=$2"; fi; }
add Version "${VERSION:-}"
add Revision "${REVISION:-}"
add Branch "${BRANCH:-}"
add BuildUser kubecause
add BuildDate "${BUILD_DATE:-}"
echo "$flags"
