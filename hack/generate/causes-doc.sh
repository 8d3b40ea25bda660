#!/usr/bin/env bash
# Rewrites docs/causes.md from the built-in cause table (exporter/causes/causes.yaml).
set -euo pipefail
cd "$(dirname "$0")/../.."
go run ./exporter/causes/gendoc -o docs/causes.md
