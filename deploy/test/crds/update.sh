#!/usr/bin/env bash
# Refreshes the prometheus-operator CRDs the deploy tests install (ServiceMonitor, PrometheusRule).
# Source: the Go module github.com/prometheus-operator/prometheus-operator at the version below, files
# example/prometheus-operator-crd/*.yaml, fetched through the Go module proxy. Apache License 2.0.
set -euo pipefail
cd "$(dirname "$0")"
module=github.com/prometheus-operator/prometheus-operator
version=v0.85.0
dir=$(go mod download -json "$module@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -n "$dir" ] || { echo "go mod download $module@$version failed" >&2; exit 1; }
for crd in servicemonitors prometheusrules; do
	src="example/prometheus-operator-crd/monitoring.coreos.com_$crd.yaml"
	{
		echo "# Source: $module@$version, $src"
		echo "# Copyright The prometheus-operator Authors. Licensed under the Apache License, Version 2.0."
		echo "# Refresh with deploy/test/crds/update.sh; do not edit."
		cat "$dir/$src"
	} >"monitoring.coreos.com_$crd.yaml"
done
