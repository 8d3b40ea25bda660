#!/usr/bin/env bash
# Rewrites docs/causes.md from the built-in cause table (exporter/causes/causes.yaml), its scores on
# the corpus of real messages and the real node's messages (exporter/causes/testdata).
set -euo pipefail
cd "$(dirname "$0")/../.."
go run ./exporter/causes/corpus/gendoc -o docs/causes.md
