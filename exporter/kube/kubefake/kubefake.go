// Package kubefake adapts a client-go clientset (in tests, client-go's fake clientset) to
// kube.Client. It is for tests only: the exporter does not link the clientset (see package kube).
package kubefake

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/watchlist"

	"github.com/kubecause/kubecause/exporter/kube"
)

// Client is a kube.Client backed by a clientset.
type Client struct{ kubernetes.Interface }

var _ kube.Client = Client{}

// IsWatchListSemanticsUnSupported passes on whether the clientset can stream an initial list
// (client-go's fake clientset cannot), so reflectors fall back to a plain list as they would.
func (c Client) IsWatchListSemanticsUnSupported() bool {
	return watchlist.DoesClientNotSupportWatchListSemantics(c.Interface)
}

func (c Client) List(ctx context.Context, r kube.Resource, ns string, o metav1.ListOptions) (runtime.Object, error) {
	switch r {
	case kube.Events:
		return c.CoreV1().Events(ns).List(ctx, o)
	case kube.Pods:
		return c.CoreV1().Pods(ns).List(ctx, o)
	case kube.Services:
		return c.CoreV1().Services(ns).List(ctx, o)
	case kube.Endpoints:
		return c.CoreV1().Endpoints(ns).List(ctx, o) //nolint:staticcheck
	default:
		return c.DiscoveryV1().EndpointSlices(ns).List(ctx, o)
	}
}

func (c Client) Watch(ctx context.Context, r kube.Resource, ns string, o metav1.ListOptions) (watch.Interface, error) {
	switch r {
	case kube.Events:
		return c.CoreV1().Events(ns).Watch(ctx, o)
	case kube.Pods:
		return c.CoreV1().Pods(ns).Watch(ctx, o)
	case kube.Services:
		return c.CoreV1().Services(ns).Watch(ctx, o)
	case kube.Endpoints:
		return c.CoreV1().Endpoints(ns).Watch(ctx, o) //nolint:staticcheck
	default:
		return c.DiscoveryV1().EndpointSlices(ns).Watch(ctx, o)
	}
}
