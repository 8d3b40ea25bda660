//go:build tools

// Package hack pins, in the root go.mod, a module the tests read without importing it:
// dashboards/dashboards_test.go checks that every kube-state-metrics metric a dashboard names exists
// in the kube-state-metrics source of the pinned version (the same version the e2e tests run).
package hack

import (
	_ "k8s.io/kube-state-metrics/v2/pkg/metric"
)
