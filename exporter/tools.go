//go:build tools

// Package main pins dependencies that parts of the tree use before they import them.
package main

import (
	_ "github.com/alecthomas/kingpin/v2"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/prometheus/client_golang/prometheus/testutil"
	_ "github.com/prometheus/common/expfmt"
	_ "github.com/prometheus/common/promslog"
	_ "github.com/prometheus/exporter-toolkit/web"
	_ "k8s.io/client-go/dynamic"
	_ "k8s.io/client-go/kubernetes"
	_ "k8s.io/client-go/kubernetes/fake"
	_ "k8s.io/client-go/tools/clientcmd"
	_ "k8s.io/kube-state-metrics/v2/pkg/metric"
	_ "sigs.k8s.io/controller-runtime/pkg/envtest"
	_ "sigs.k8s.io/yaml"
)
