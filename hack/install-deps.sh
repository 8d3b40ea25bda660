#!/usr/bin/env bash
# Installs everything the build and the tests need on a fresh machine.
# Idempotent: every step checks first and does nothing when its tool is present.
# Each part of the project adds its own step as hack/deps/NN-name.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
for step in hack/deps/*.sh; do
	[ -e "$step" ] || continue
	bash "$step"
done
