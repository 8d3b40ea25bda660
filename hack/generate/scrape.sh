#!/usr/bin/env bash
# Rewrites exporter/events/testdata/scrape.golden.txt: the /metrics of a fixed script of real Events
# played through the engine and the built-in cause table (exporter/events/scrape_test.go). Review
# its diff: it shows what a change does to the exposition.
set -euo pipefail
cd "$(dirname "$0")/../.."
go test ./exporter/events/ -run '^TestGoldenScrape$' -count=1 -update >/dev/null
