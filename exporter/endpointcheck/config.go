// Package endpointcheck checks that the endpoints of a Service equal what they should be: the pod
// IPs of some pods, the LoadBalancer ingress address(es) of a Service (possibly in another cluster),
// or static addresses.
//
// With no configuration it discovers the istiod-remote Service of an Istio remote or DaoCloud
// mspider hosted mesh on its own, and is off on clusters without one (see docs/istiod-remote.md).
// Results are exported as the kubecause_endpoints_* metrics.
package endpointcheck

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kubecause/kubecause/exporter/kube"
)

// Defaults of the auto-discovered istiod-remote check.
const (
	DefaultNamespace  = "istio-system"
	DefaultService    = "istiod-remote"
	DiscoveredCheck   = "istiod-remote"
	RoleControlPlane  = "control-plane"
	RoleWorkload      = "workload"
	maxCheckNameBytes = 63
)

// DefaultPorts are the istiod ports every istiod-remote address must carry: 15012 (xDS and CA over
// TLS) and 15017 (the sidecar injection and validation webhooks).
var DefaultPorts = []int32{15012, 15017}

// Config is the endpoint-check configuration (`--endpoint-checks.config`). The zero value means
// "auto-discover the mspider hosted-mesh layout and nothing else".
type Config struct {
	// Clusters are other clusters an expectation may be read from, by name.
	Clusters []Cluster `yaml:"clusters,omitempty"`
	// Discovery controls the zero-config istiod-remote check.
	Discovery Discovery `yaml:"discovery,omitempty"`
	// Checks are explicit, declarative endpoint checks.
	Checks []Check `yaml:"checks,omitempty"`
}

// Cluster names another cluster reached through a kubeconfig file.
type Cluster struct {
	Name string `yaml:"name"`
	// Kubeconfig is a path; a relative path is relative to the config file.
	Kubeconfig string `yaml:"kubeconfig"`
	// Context in the kubeconfig; empty = its current context.
	Context string `yaml:"context,omitempty"`
}

// Discovery configures the auto-discovered istiod-remote check.
type Discovery struct {
	// Enabled defaults to true. Discovery stays off by itself when the cluster holds nothing
	// mspider-like, and it skips the Service when an explicit check already covers it.
	Enabled *bool `yaml:"enabled,omitempty"`
	// Namespace to look in (default istio-system).
	Namespace string `yaml:"namespace,omitempty"`
	// MeshID overrides the discovered mesh ID.
	MeshID string `yaml:"meshID,omitempty"`
	// Role overrides the discovered role: control-plane or workload.
	Role string `yaml:"role,omitempty"`
	// ControlPlaneCluster names a cluster of `clusters` holding the `istiod-<meshID>-hosted-lb`
	// Service. Only used in the workload role; without it the workload-role check verifies presence
	// and ports only and leaves the address comparison to PromQL (see docs/istiod-remote.md).
	ControlPlaneCluster string `yaml:"controlPlaneCluster,omitempty"`
	// Ports every address must carry (default 15012, 15017).
	Ports []int32 `yaml:"ports,omitempty"`
}

// Check is one declarative expectation: the endpoints of Service `namespace/service` in the local
// cluster must equal `expect`, each address carrying every port of `ports`.
type Check struct {
	Name      string  `yaml:"name"`
	Namespace string  `yaml:"namespace"`
	Service   string  `yaml:"service"`
	Ports     []int32 `yaml:"ports,omitempty"`
	Expect    Expect  `yaml:"expect"`
}

// Expect holds exactly one source of expected addresses.
type Expect struct {
	// Pods: the pod IPs of the running pods matching a label selector.
	Pods *PodsExpectation `yaml:"pods,omitempty"`
	// Service: the pod IPs of the running pods selected by another Service's selector.
	Service *ServiceExpectation `yaml:"service,omitempty"`
	// LoadBalancer: the `status.loadBalancer.ingress` IP(s) (or hostnames) of a Service.
	LoadBalancer *LoadBalancerExpectation `yaml:"loadBalancer,omitempty"`
	// Addresses: static IPs.
	Addresses []string `yaml:"addresses,omitempty"`
	// External: the expected addresses live elsewhere (compared in PromQL); only presence and ports
	// are checked here.
	External bool `yaml:"external,omitempty"`
}

// PodsExpectation selects pods by label.
type PodsExpectation struct {
	Cluster   string `yaml:"cluster,omitempty"`
	Namespace string `yaml:"namespace,omitempty"`
	Selector  string `yaml:"selector"`
}

// ServiceExpectation names a Service whose selector picks the expected pods.
type ServiceExpectation struct {
	Cluster   string `yaml:"cluster,omitempty"`
	Namespace string `yaml:"namespace,omitempty"`
	Name      string `yaml:"name"`
}

// LoadBalancerExpectation names a LoadBalancer Service.
type LoadBalancerExpectation struct {
	Cluster   string `yaml:"cluster,omitempty"`
	Namespace string `yaml:"namespace,omitempty"`
	Service   string `yaml:"service"`
}

// LoadConfig reads and validates a config file. It is decoded once, strictly: an unknown field or a
// value of the wrong type is an error naming its line. Relative kubeconfig paths are made relative
// to the file's directory. An empty file is a valid, zero-config configuration.
func LoadConfig(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("endpoint checks config: %w", err)
	}
	cfg := &Config{}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(cfg); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("endpoint checks config %s: %w", path, err)
	}
	dir := filepath.Dir(path)
	for i := range cfg.Clusters {
		if p := cfg.Clusters[i].Kubeconfig; p != "" && !filepath.IsAbs(p) {
			cfg.Clusters[i].Kubeconfig = filepath.Join(dir, p)
		}
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("endpoint checks config %s: %w", path, err)
	}
	return cfg, nil
}

// CheckConfigFile validates a config file without contacting any cluster (`--config.check`).
func CheckConfigFile(path string) error {
	_, err := LoadConfig(path)
	return err
}

var checkNameRE = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9_.-]*[A-Za-z0-9])?$`)

// Validate reports the first problem of each field as "field.path: problem", all joined.
func (c *Config) Validate() error {
	if c == nil {
		return nil
	}
	var errs []error
	fail := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", field, fmt.Sprintf(format, args...)))
	}
	clusters := map[string]bool{}
	for i, cl := range c.Clusters {
		f := fmt.Sprintf("clusters[%d]", i)
		switch {
		case cl.Name == "":
			fail(f+".name", "required")
		case len(validation.IsDNS1123Label(cl.Name)) > 0:
			fail(f+".name", "%q is not a DNS label (lower case letters, digits, '-')", cl.Name)
		case cl.Name == localCluster:
			fail(f+".name", `"local" is reserved for the cluster kubecause runs in`)
		case clusters[cl.Name]:
			fail(f+".name", "duplicate cluster %q", cl.Name)
		}
		clusters[cl.Name] = true
		if cl.Kubeconfig == "" {
			fail(f+".kubeconfig", "required")
		} else if _, err := os.Stat(cl.Kubeconfig); err != nil {
			fail(f+".kubeconfig", "%v", err)
		}
	}
	clusterRef := func(field, name string) {
		if name != "" && name != localCluster && !clusters[name] {
			fail(field, "unknown cluster %q (define it under clusters)", name)
		}
	}
	nsRef := func(field, ns string) {
		if ns != "" && len(validation.IsDNS1123Label(ns)) > 0 {
			fail(field, "%q is not a valid namespace name", ns)
		}
	}
	svcRef := func(field, name string) {
		if name == "" {
			fail(field, "required")
		} else if len(validation.IsDNS1035Label(name)) > 0 {
			fail(field, "%q is not a valid Service name", name)
		}
	}
	portsRef := func(field string, ports []int32) {
		seen := map[int32]bool{}
		for j, p := range ports {
			if p < 1 || p > 65535 {
				fail(fmt.Sprintf("%s[%d]", field, j), "%d is not a port (1-65535)", p)
			} else if seen[p] {
				fail(fmt.Sprintf("%s[%d]", field, j), "duplicate port %d", p)
			}
			seen[p] = true
		}
	}

	d := c.Discovery
	nsRef("discovery.namespace", d.Namespace)
	if d.Role != "" && d.Role != RoleControlPlane && d.Role != RoleWorkload {
		fail("discovery.role", "%q: must be %q or %q", d.Role, RoleControlPlane, RoleWorkload)
	}
	if d.MeshID != "" && len(validation.IsDNS1123Label(d.MeshID)) > 0 {
		fail("discovery.meshID", "%q is not a DNS label", d.MeshID)
	}
	if d.ControlPlaneCluster == localCluster {
		fail("discovery.controlPlaneCluster", `must name a cluster under clusters, not "local"`)
	} else {
		clusterRef("discovery.controlPlaneCluster", d.ControlPlaneCluster)
	}
	portsRef("discovery.ports", d.Ports)

	names := map[string]bool{}
	targets := map[string]int{}
	for i, ch := range c.Checks {
		f := fmt.Sprintf("checks[%d]", i)
		switch {
		case ch.Name == "":
			fail(f+".name", "required")
		case len(ch.Name) > maxCheckNameBytes || !checkNameRE.MatchString(ch.Name):
			fail(f+".name", "%q: use at most %d letters, digits, '-', '_' or '.'", ch.Name, maxCheckNameBytes)
		case names[ch.Name]:
			fail(f+".name", "duplicate check name %q", ch.Name)
		}
		names[ch.Name] = true
		if ch.Namespace == "" {
			fail(f+".namespace", "required")
		} else {
			nsRef(f+".namespace", ch.Namespace)
		}
		svcRef(f+".service", ch.Service)
		if j, dup := targets[ch.Namespace+"/"+ch.Service]; dup && ch.Service != "" {
			fail(f+".service", "%s/%s is already checked by checks[%d]", ch.Namespace, ch.Service, j)
		} else {
			targets[ch.Namespace+"/"+ch.Service] = i
		}
		portsRef(f+".ports", ch.Ports)

		e, ef := ch.Expect, f+".expect"
		n := 0
		if e.Pods != nil {
			n++
			clusterRef(ef+".pods.cluster", e.Pods.Cluster)
			nsRef(ef+".pods.namespace", e.Pods.Namespace)
			if strings.TrimSpace(e.Pods.Selector) == "" {
				fail(ef+".pods.selector", "required (a label selector such as app=istiod)")
			} else if sel, err := labels.Parse(e.Pods.Selector); err != nil {
				fail(ef+".pods.selector", "%v", err)
			} else if sel.Empty() {
				fail(ef+".pods.selector", "must not select every pod")
			}
		}
		if e.Service != nil {
			n++
			clusterRef(ef+".service.cluster", e.Service.Cluster)
			nsRef(ef+".service.namespace", e.Service.Namespace)
			svcRef(ef+".service.name", e.Service.Name)
		}
		if e.LoadBalancer != nil {
			n++
			clusterRef(ef+".loadBalancer.cluster", e.LoadBalancer.Cluster)
			nsRef(ef+".loadBalancer.namespace", e.LoadBalancer.Namespace)
			svcRef(ef+".loadBalancer.service", e.LoadBalancer.Service)
		}
		if len(e.Addresses) > 0 {
			n++
			for j, a := range e.Addresses {
				if net.ParseIP(a) == nil {
					fail(fmt.Sprintf("%s.addresses[%d]", ef, j), "%q is not an IP address", a)
				}
			}
		}
		if e.External {
			n++
		}
		if n != 1 {
			fail(ef, "exactly one of pods, service, loadBalancer, addresses, external is required (found %d)", n)
		}
	}
	return errors.Join(errs...)
}

// discoveryEnabled reports whether the zero-config check runs.
func (c *Config) discoveryEnabled() bool {
	return c == nil || c.Discovery.Enabled == nil || *c.Discovery.Enabled
}

// RemoteClients builds a client for every cluster of `clusters`, for New's remote argument, through
// kube.Config like the local client: the same rate limits and User-Agent.
func (c *Config) RemoteClients(userAgent string) (map[string]kube.Client, error) {
	out := map[string]kube.Client{}
	if c == nil {
		return out, nil
	}
	for _, cl := range c.Clusters {
		cs, _, err := kube.ClientFor(kube.Options{Kubeconfig: cl.Kubeconfig, Context: cl.Context, UserAgent: userAgent})
		if err != nil {
			return nil, fmt.Errorf("cluster %q: %w", cl.Name, err)
		}
		out[cl.Name] = cs
	}
	return out, nil
}
