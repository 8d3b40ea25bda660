// Package kube builds the Kubernetes client kubecause uses.
//
// kubecause reads five resources: core/v1 Events, Pods, Services and Endpoints, and
// discovery.k8s.io/v1 EndpointSlices. It reads them through REST clients whose scheme holds only
// those two API groups, not through client-go's typed clientset: importing the clientset registers
// the types of every API group and links them into the binary, which costs memory at every start
// and, with the reflection the HTTP stack's templates bring in, mapped binary (figures in
// docs/performance.md).
package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/transport"
	"k8s.io/client-go/util/flowcontrol"
)

// Resource is one of the resources kubecause reads.
type Resource int

const (
	Events Resource = iota
	Pods
	Services
	Endpoints
	EndpointSlices
)

// resources describes each Resource: its path segment, the object a reflector of it expects and
// its list type.
var resources = [...]struct {
	path         string
	object, list func() runtime.Object
}{
	Events:   {"events", func() runtime.Object { return &corev1.Event{} }, func() runtime.Object { return &corev1.EventList{} }},
	Pods:     {"pods", func() runtime.Object { return &corev1.Pod{} }, func() runtime.Object { return &corev1.PodList{} }},
	Services: {"services", func() runtime.Object { return &corev1.Service{} }, func() runtime.Object { return &corev1.ServiceList{} }},
	Endpoints: {"endpoints", // the fallback for clusters without EndpointSlices
		func() runtime.Object { return &corev1.Endpoints{} },      //nolint:staticcheck
		func() runtime.Object { return &corev1.EndpointsList{} }}, //nolint:staticcheck
	EndpointSlices: {"endpointslices", func() runtime.Object { return &discoveryv1.EndpointSlice{} },
		func() runtime.Object { return &discoveryv1.EndpointSliceList{} }},
}

func (r Resource) String() string { return resources[r].path }

// Client lists and watches the resources kubecause reads. List returns the typed list
// (*corev1.EventList, …); Watch delivers typed objects. Namespace "" means all namespaces.
type Client interface {
	List(ctx context.Context, r Resource, namespace string, opts metav1.ListOptions) (runtime.Object, error)
	Watch(ctx context.Context, r Resource, namespace string, opts metav1.ListOptions) (watch.Interface, error)
}

// Object returns an empty object of r, the type a reflector or informer of r expects.
func Object(r Resource) runtime.Object { return resources[r].object() }

// ListWatch is the lister-watcher of r in namespace, with tweak applied to every request's
// options. Where the client supports it, the reflector streams the initial list (WatchList).
func ListWatch(c Client, r Resource, namespace string, tweak func(*metav1.ListOptions)) cache.ListerWatcher {
	opts := func(o metav1.ListOptions) metav1.ListOptions {
		if tweak != nil {
			tweak(&o)
		}
		return o
	}
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return c.List(ctx, r, namespace, opts(o))
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return c.Watch(ctx, r, namespace, opts(o))
		},
	}
	return cache.ToListWatcherWithWatchListSemantics(lw, c)
}

// Options select the cluster: an explicit kubeconfig file and context, else the files in
// $KUBECONFIG, else ~/.kube/config, else the in-cluster service account (client-go's loading rules).
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
	if err != nil && o.Kubeconfig != "" {
		return nil, fmt.Errorf("kubeconfig %s: %w", o.Kubeconfig, err)
	}
	if err != nil {
		return nil, fmt.Errorf("no Kubernetes client configuration (tried --kubeconfig, $KUBECONFIG, ~/.kube/config, in-cluster): %w", err)
	}
	cfg.UserAgent = o.UserAgent
	cfg.QPS, cfg.Burst = 20, 40
	return cfg, nil
}

// ClientFor resolves the options and returns a client.
func ClientFor(o Options) (Client, *rest.Config, error) {
	cfg, err := Config(o)
	if err != nil {
		return nil, nil, err
	}
	c, err := New(cfg)
	if err != nil {
		return nil, nil, err
	}
	return c, cfg, nil
}

var (
	scheme = runtime.NewScheme()
	codecs = serializer.NewCodecFactory(scheme)
)

func init() {
	// As client-go's own scheme does: metav1's unversioned types (Status, WatchEvent, …), then
	// the two API groups read.
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, discoveryv1.AddToScheme} {
		if err := add(scheme); err != nil {
			panic(err)
		}
	}
}

type restClient struct {
	core, discovery *rest.RESTClient
}

// New returns a Client for cfg. Both API groups share one HTTP client and one rate limiter
// (cfg.QPS, cfg.Burst), as client-go's clientset does; objects are read as protobuf.
func New(cfg *rest.Config) (Client, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.NegotiatedSerializer = codecs.WithoutConversion()
	if cfg.UserAgent == "" {
		cfg.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	if cfg.RateLimiter == nil {
		if cfg.QPS <= 0 {
			cfg.QPS, cfg.Burst = rest.DefaultQPS, rest.DefaultBurst
		}
		cfg.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(cfg.QPS, max(cfg.Burst, int(cfg.QPS)))
	}
	cfg.Wrap(answerTimeout(AnswerTimeout))
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("building Kubernetes client: %w", err)
	}
	forGroup := func(gv schema.GroupVersion, apiPath string) (*rest.RESTClient, error) {
		c := rest.CopyConfig(cfg)
		c.GroupVersion, c.APIPath = &gv, apiPath
		return rest.RESTClientForConfigAndClient(c, hc)
	}
	core, err := forGroup(corev1.SchemeGroupVersion, "/api")
	if err != nil {
		return nil, fmt.Errorf("building Kubernetes client: %w", err)
	}
	disc, err := forGroup(discoveryv1.SchemeGroupVersion, "/apis")
	if err != nil {
		return nil, fmt.Errorf("building Kubernetes client: %w", err)
	}
	return &restClient{core: core, discovery: disc}, nil
}

func (c *restClient) request(r Resource, namespace string, opts *metav1.ListOptions) *rest.Request {
	rc := c.core
	if r == EndpointSlices {
		rc = c.discovery
	}
	req := rc.Get().Resource(r.String()).VersionedParams(opts, metav1.ParameterCodec)
	if namespace != "" {
		req = req.Namespace(namespace)
	}
	if opts.TimeoutSeconds != nil {
		req = req.Timeout(time.Duration(*opts.TimeoutSeconds) * time.Second)
	}
	return req
}

func (c *restClient) List(ctx context.Context, r Resource, namespace string, opts metav1.ListOptions) (runtime.Object, error) {
	out := resources[r].list()
	if err := c.request(r, namespace, &opts).Do(ctx).Into(out); err != nil {
		return nil, err
	}
	return out, nil
}

func (c *restClient) Watch(ctx context.Context, r Resource, namespace string, opts metav1.ListOptions) (watch.Interface, error) {
	opts.Watch = true
	return c.request(r, namespace, &opts).Watch(ctx)
}

// AnswerTimeout is how long a request waits for the apiserver to begin its answer (the response
// headers): an apiserver that accepts connections and never answers fails each list and watch
// after it, logged and counted by the caller, instead of holding them for good (over HTTP/1.1
// nothing else notices: client-go's keepalive pings are HTTP/2's). Watches and streamed lists
// begin to answer at once; a list page of 500 Events takes milliseconds. A variable for tests.
var AnswerTimeout = time.Minute

// answerTimeout cancels a request whose response headers have not arrived within d; once they
// have, the request lives until its body is closed (a watch as long as it streams).
func answerTimeout(d time.Duration) transport.WrapperFunc {
	return func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			ctx, cancel := context.WithCancelCause(req.Context())
			timer := time.AfterFunc(d, func() { cancel(errNoAnswer) })
			resp, err := rt.RoundTrip(req.WithContext(ctx))
			if !timer.Stop() && errors.Is(context.Cause(ctx), errNoAnswer) {
				if resp != nil {
					resp.Body.Close()
				}
				cancel(nil)
				return nil, fmt.Errorf("the apiserver did not begin to answer within %s", d)
			}
			if err != nil {
				cancel(nil)
				return nil, err
			}
			resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
			return resp, nil
		})
	}
}

var errNoAnswer = errors.New("no answer")

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// cancelOnClose ends a request's context when its body is closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelCauseFunc
}

func (b *cancelOnClose) Close() error {
	err := b.ReadCloser.Close()
	b.cancel(nil)
	return err
}
