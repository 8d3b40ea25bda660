#!/usr/bin/env bash
# Writes the table of values in deploy/helm/kubecause/README.md from the "# --" comments of its values.yaml
# (deploy/internal/chartreadme). Deterministic: the same two files give the same bytes.
set -euo pipefail
cd "$(dirname "$0")/../.."
go run ./deploy/internal/chartreadme deploy/helm/kubecause
