// Package kube builds the Kubernetes client kubecause uses.
package kube

import (
	"fmt"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Options select the cluster: an explicit kubeconfig file and context, else $KUBECONFIG,
// else the in-cluster service account, else ~/.kube/config.
type Options struct {
	Kubeconfig string
	Context    string
	UserAgent  string
}

// Config resolves the REST config. Core types are read as protobuf: it decodes faster and
// allocates less than JSON (docs/performance.md).
func Config(o Options) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if o.Kubeconfig != "" {
		rules.ExplicitPath = o.Kubeconfig
	}
	overrides := &clientcmd.ConfigOverrides{CurrentContext: o.Context}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("no Kubernetes client configuration (tried --kubeconfig, $KUBECONFIG, in-cluster, ~/.kube/config): %w", err)
	}
	cfg.UserAgent = o.UserAgent
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.QPS, cfg.Burst = 20, 40
	return cfg, nil
}

// Client returns a clientset for the options.
func Client(o Options) (kubernetes.Interface, *rest.Config, error) {
	cfg, err := Config(o)
	if err != nil {
		return nil, nil, err
	}
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("building Kubernetes client: %w", err)
	}
	return c, cfg, nil
}
