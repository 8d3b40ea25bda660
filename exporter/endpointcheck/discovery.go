package endpointcheck

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubecause/kubecause/exporter/kube"
)

// meshIDEnv is the environment variable Istio sets on proxies and gateways to the mesh ID.
const meshIDEnv = "ISTIO_META_MESH_ID"

// Sources of the discovered mesh ID (the `source` label of kubecause_endpoints_discovery_info).
const (
	SourceConfig  = "config"       // discovery.meshID
	SourceService = "service-name" // a Service istiod-<meshID>-hosted or istiod-<meshID>-hosted-lb
	SourcePod     = "pod-name"     // a pod istiod-<meshID>-hosted-<replicaset hash>-<pod hash>
	SourcePodEnv  = "pod-env"      // ISTIO_META_MESH_ID of a container in the namespace
)

var (
	hostedSvcRE = regexp.MustCompile(`^istiod-([a-z0-9][-a-z0-9]*?)-hosted(-lb)?$`)
	hostedPodRE = regexp.MustCompile(`^istiod-([a-z0-9][-a-z0-9]*?)-hosted-[a-z0-9]{1,10}-[a-z0-9]{5}$`)
)

func hostedName(meshID string) string   { return "istiod-" + meshID + "-hosted" }
func hostedLBName(meshID string) string { return "istiod-" + meshID + "-hosted-lb" }

// isHostedPod reports whether a pod name is one of Deployment prefix (without its trailing "-").
func isHostedPod(name, prefix string) bool {
	rest, ok := strings.CutPrefix(name, prefix+"-")
	if !ok {
		return false
	}
	parts := strings.Split(rest, "-")
	return len(parts) == 2 && len(parts[1]) == 5 && hostedPodRE.MatchString(name)
}

// discoveryResult is what discovery found: a check spec, or why the check is off.
type discoveryResult struct {
	meshID, role, source string
	spec                 *spec
	off                  string
}

func (d *discoveryResult) logKey() string {
	if d.spec == nil {
		return "off|" + d.off
	}
	return strings.Join([]string{d.meshID, d.role, d.source, d.spec.describe()}, "|")
}

// discover looks at the Services and pods of the discovery namespace (from the informer caches):
//
//   - the Service istiod-remote must exist, else the check is off;
//   - mesh ID: discovery.meshID, else the name of a Service istiod-<meshID>-hosted(-lb), else the name
//     of a pod istiod-<meshID>-hosted-<hash>-<hash>, else ISTIO_META_MESH_ID of a container;
//   - role: discovery.role, else control-plane when the Service istiod-<meshID>-hosted or its pods
//     exist here, else workload.
//
// ready is false while the caches are still filling.
func (c *Checker) discover(now time.Time) (d *discoveryResult, ready bool, err error) {
	ns := c.discNamespace
	ok, err := c.cache.ready(now, cacheKey{localCluster, ns, kube.Services}, cacheKey{localCluster, ns, kube.Pods})
	if err != nil || !ok {
		return nil, false, err
	}
	d = &discoveryResult{}
	for _, s := range c.static {
		if s.namespace == ns && s.service == DefaultService {
			d.off = fmt.Sprintf("%s/%s is checked by the configured check %q", ns, DefaultService, s.name)
			return d, true, nil
		}
	}
	if c.cache.service(localCluster, ns, DefaultService) == nil {
		d.off = fmt.Sprintf("no Service %s/%s in this cluster (not an Istio remote or mspider hosted-mesh cluster)", ns, DefaultService)
		return d, true, nil
	}
	dc := c.cfg.Discovery

	pods := c.cache.pods(localCluster, ns)
	sort.Slice(pods, func(i, j int) bool { return pods[i].Name < pods[j].Name })

	switch {
	case dc.MeshID != "":
		d.meshID, d.source = dc.MeshID, SourceConfig
	default:
		var ids []string
		for _, obj := range c.cache.list(cacheKey{localCluster, ns, kube.Services}) {
			if s, ok := obj.(*corev1.Service); ok && s.Namespace == ns {
				if m := hostedSvcRE.FindStringSubmatch(s.Name); m != nil {
					ids = append(ids, m[1])
				}
			}
		}
		if len(ids) > 0 {
			sort.Strings(ids)
			d.meshID, d.source = ids[0], SourceService
			break
		}
		for _, p := range pods {
			if m := hostedPodRE.FindStringSubmatch(p.Name); m != nil {
				d.meshID, d.source = m[1], SourcePod
				break
			}
		}
		if d.meshID != "" {
			break
		}
		for _, p := range pods {
			for _, ct := range p.Spec.Containers {
				for _, e := range ct.Env {
					if e.Name == meshIDEnv && e.Value != "" && d.meshID == "" {
						d.meshID, d.source = e.Value, SourcePodEnv
					}
				}
			}
		}
	}
	if d.meshID == "" {
		d.off = fmt.Sprintf("Service %s/%s exists but no mesh ID was found (no istiod-<meshID>-hosted Service or pod, no %s); set discovery.meshID", ns, DefaultService, meshIDEnv)
		return d, true, nil
	}

	hosted := c.cache.service(localCluster, ns, hostedName(d.meshID))
	hostedPods := false
	for _, p := range pods {
		if isHostedPod(p.Name, hostedName(d.meshID)) {
			hostedPods = true
		}
	}
	d.role = dc.Role
	if d.role == "" {
		d.role = RoleWorkload
		if hosted != nil || hostedPods {
			d.role = RoleControlPlane
		}
	}
	ports := dc.Ports
	if len(ports) == 0 {
		ports = DefaultPorts
	}
	s := &spec{name: DiscoveredCheck, namespace: ns, service: DefaultService, ports: ports, cluster: localCluster, srcNamespace: ns}
	if d.role == RoleControlPlane {
		if hosted != nil && len(hosted.Spec.Selector) > 0 {
			s.kind, s.srcName = expService, hosted.Name
		} else {
			s.kind, s.srcName = expPodPrefix, hostedName(d.meshID)
		}
	} else {
		switch {
		case dc.ControlPlaneCluster != "":
			s.kind, s.cluster, s.srcName = expLB, dc.ControlPlaneCluster, hostedLBName(d.meshID)
		case c.cache.service(localCluster, ns, hostedLBName(d.meshID)) != nil:
			s.kind, s.srcName = expLB, hostedLBName(d.meshID)
		default:
			s.kind = expExternal
		}
	}
	d.spec = s
	return d, true, nil
}
