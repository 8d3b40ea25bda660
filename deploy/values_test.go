package deploy

import (
	"path"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
)

// Tests of the chart's values that are not about security (deploy_test.go): Istio-optional installs,
// release-prefixed names, mirrors, extra environment and volumes, monitoring placement, NetworkPolicy.

// deployment returns the one Deployment of a rendering.
func deployment(t *testing.T, objs []Object) appsv1.Deployment {
	t.Helper()
	deps := find(objs, "Deployment")
	if len(deps) != 1 {
		t.Fatalf("%d Deployments, want 1", len(deps))
	}
	var d appsv1.Deployment
	into(t, deps[0], &d)
	return d
}

// Nothing lands in istio-system unless the endpoint checks are on, and the exporter's flag says the same.
func TestIstioOptional(t *testing.T) {
	for _, r := range renderings(t) {
		t.Run(r.Name, func(t *testing.T) {
			var inIstio []string
			for _, o := range r.Objects {
				if o.Meta("namespace") == IstioNamespace {
					inIstio = append(inIstio, o.ID())
				}
				if o.Kind() == "Namespace" && o.Meta("name") == IstioNamespace {
					t.Errorf("renders the Namespace %s: it belongs to Istio", IstioNamespace)
				}
			}
			if r.EndpointChecks && len(inIstio) != 2 {
				t.Errorf("endpoint checks on: objects in %s %v, want their Role and RoleBinding", IstioNamespace, inIstio)
			}
			if !r.EndpointChecks && len(inIstio) != 0 {
				t.Errorf("endpoint checks off: %v in %s", inIstio, IstioNamespace)
			}
			d := deployment(t, r.Objects)
			want := "--no-endpoint-checks.enabled"
			if r.EndpointChecks {
				want = "--endpoint-checks.enabled"
			}
			if a := d.Spec.Template.Spec.Containers[0].Args; !slices.Contains(a, want) {
				t.Errorf("args %v lack %s", a, want)
			}
		})
	}
}

// Two releases in one namespace (or cluster) share no object name: cluster-scoped RBAC, the mixin's
// PrometheusRule and dashboards included.
func TestTwoReleasesDoNotCollide(t *testing.T) {
	opts := []string{"--set", "serviceMonitor.enabled=true", "--set", "prometheusRule.enabled=true",
		"--set", "dashboards.enabled=true", "--set", "prometheus.configMap=true", "--set", "endpointChecks.enabled=true",
		"--set", "networkPolicy.enabled=true", "--set", "web.config.basic_auth_users.u=x"}
	names := map[string]string{}
	for _, release := range []string{"kubecause", "kubecause-b", "team"} {
		objs, err := HelmTemplateRelease(release, "monitoring", opts...)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			id := o.ID()
			if prev, ok := names[id]; ok {
				t.Errorf("%s rendered by releases %s and %s", id, prev, release)
			}
			names[id] = release
			if !strings.HasPrefix(o.Meta("name"), release) {
				t.Errorf("release %s: %s is not prefixed with the release name", release, id)
			}
		}
	}
}

func TestValues(t *testing.T) {
	objs, err := HelmTemplate("monitoring", AllOptions...)
	if err != nil {
		t.Fatal(err)
	}
	d := deployment(t, objs)
	c := d.Spec.Template.Spec.Containers[0]
	if c.Image != "mirror.example.com/kubecause/kubecause:v0.1.0" {
		t.Errorf("global.imageRegistry: image %s", c.Image)
	}
	env := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		env[e.Name] = e
	}
	if env["GOMAXPROCS"].Value != "2" {
		t.Errorf("env.GOMAXPROCS: %+v", c.Env)
	}
	if e := env["POD_NAME"]; e.ValueFrom == nil || e.ValueFrom.FieldRef == nil || e.ValueFrom.FieldRef.FieldPath != "metadata.name" {
		t.Errorf("extraEnv: %+v", c.Env)
	}
	if !slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == "extra" && m.MountPath == "/extra" }) ||
		!slices.ContainsFunc(d.Spec.Template.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == "extra" && v.EmptyDir != nil }) {
		t.Errorf("extraVolumes/extraVolumeMounts not rendered")
	}
	for _, o := range objs {
		if o.Kind() == "CustomResourceDefinition" {
			continue
		}
		labels, _ := o["metadata"].(map[string]any)["labels"].(map[string]any)
		if labels["release"] != "kubecause" {
			t.Errorf("releaseLabel: %s has no label release=kubecause", o.ID())
		}
	}
	for _, o := range find(objs, "Pod") {
		if img := podSpecOf(t, o).Containers[0].Image; !strings.HasPrefix(img, "mirror.example.com/library/busybox:") {
			t.Errorf("global.imageRegistry: the test pod's image is %s", img)
		}
	}
	sm := find(objs, "ServiceMonitor")[0]
	spec := sm["spec"].(map[string]any)
	if spec["sampleLimit"] != float64(100000) || !slices.Equal(spec["targetLabels"].([]any), []any{"app.kubernetes.io/instance"}) {
		t.Errorf("ServiceMonitor sampleLimit/targetLabels: %v %v", spec["sampleLimit"], spec["targetLabels"])
	}

	// image.registry, and the digest over the tag; empty registry: the repository is the whole reference.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "ghcr.io/kubecause/kubecause:v0.1.0"},
		{[]string{"--set", "image.registry=registry.local:5000", "--set", "image.tag=v9"}, "registry.local:5000/kubecause/kubecause:v9"},
		{[]string{"--set", "image.registry=", "--set", "image.repository=quay.io/me/kc", "--set", "image.digest=sha256:abc"}, "quay.io/me/kc@sha256:abc"},
	} {
		objs, err := HelmTemplate("monitoring", tc.args...)
		if err != nil {
			t.Fatal(err)
		}
		if img := deployment(t, objs).Spec.Template.Spec.Containers[0].Image; img != tc.want {
			t.Errorf("%v: image %s, want %s", tc.args, img, tc.want)
		}
	}

	// The ServiceMonitor and PrometheusRule may live where Prometheus looks for them; the
	// ServiceMonitor still selects the Service in the release namespace.
	objs, err = HelmTemplate("monitoring", "--set", "serviceMonitor.enabled=true", "--set", "serviceMonitor.namespace=prom",
		"--set", "prometheusRule.enabled=true", "--set", "prometheusRule.namespace=rules")
	if err != nil {
		t.Fatal(err)
	}
	sm = find(objs, "ServiceMonitor")[0]
	if sm.Meta("namespace") != "prom" || find(objs, "PrometheusRule")[0].Meta("namespace") != "rules" {
		t.Errorf("namespaces: ServiceMonitor %s, PrometheusRule %s", sm.Meta("namespace"), find(objs, "PrometheusRule")[0].Meta("namespace"))
	}
	sel := sm["spec"].(map[string]any)["namespaceSelector"].(map[string]any)["matchNames"].([]any)
	if !slices.Equal(sel, []any{"monitoring"}) {
		t.Errorf("ServiceMonitor namespaceSelector %v, want the release namespace", sel)
	}
}

// The NetworkPolicy admits Prometheus (namespace and pod selector in one peer), the extra peers and the
// helm test pod, never every source.
func TestNetworkPolicy(t *testing.T) {
	for _, r := range renderings(t) {
		t.Run(r.Name, func(t *testing.T) {
			nps := find(r.Objects, "NetworkPolicy")
			if r.NetworkPolicy != (len(nps) == 1) {
				t.Fatalf("%d NetworkPolicies, want one: %v", len(nps), r.NetworkPolicy)
			}
			for _, o := range nps {
				var np networkingv1.NetworkPolicy
				into(t, o, &np)
				if len(np.Spec.Ingress) == 0 || len(np.Spec.Ingress[0].From) == 0 {
					t.Fatalf("%s: ingress %+v: want a first rule with peers (no peers admits every source)", o.ID(), np.Spec.Ingress)
				}
				// Any further rule is the health port's, open to every source: the kubelet's
				// probes come from the node. It must admit that port and no other.
				for _, rule := range np.Spec.Ingress[1:] {
					if len(rule.From) != 0 || len(rule.Ports) != 1 || rule.Ports[0].Port == nil || rule.Ports[0].Port.String() != "health" {
						t.Errorf("%s: ingress rule %+v: want only the health port", o.ID(), rule)
					}
				}
				if len(np.Spec.Ingress[0].Ports) != 1 || np.Spec.Ingress[0].Ports[0].Port.String() != "http" {
					t.Errorf("%s: first rule's ports %+v, want the metrics port only", o.ID(), np.Spec.Ingress[0].Ports)
				}
				for i, p := range np.Spec.Ingress[0].From {
					if p.PodSelector == nil && p.NamespaceSelector == nil && p.IPBlock == nil {
						t.Errorf("%s: peer %d is empty: it admits every source", o.ID(), i)
					}
				}
				prom := np.Spec.Ingress[0].From[0]
				if prom.NamespaceSelector == nil || prom.NamespaceSelector.MatchLabels["kubernetes.io/metadata.name"] != "monitoring" ||
					prom.PodSelector == nil || prom.PodSelector.MatchLabels["app.kubernetes.io/name"] != "prometheus" {
					t.Errorf("%s: first peer %+v, want Prometheus pods in namespace monitoring", o.ID(), prom)
				}
			}
		})
	}
	if _, err := HelmTemplate("monitoring", "--set", "networkPolicy.enabled=true", "--set-json", "networkPolicy.from=[{}]"); err == nil {
		t.Errorf("networkPolicy.from=[{}] (every source) was accepted")
	}
}

// TestHealthPort: by default the probes use the plain-HTTP health listener (no TLS, no headers)
// even with TLS and basic auth on the main port, and the NetworkPolicy lets them in; with
// web.healthPort=0 they use the main port with its scheme and probes.httpHeaders.
func TestHealthPort(t *testing.T) {
	auth := []string{"--set", "web.tls=true", "--set", "networkPolicy.enabled=true",
		"--set-json", `web.config={"basic_auth_users":{"prometheus":"$2y$10$x"}}`,
		"--set-json", `probes.httpHeaders=[{"name":"Authorization","value":"Basic cHJvYmU6eA=="}]`}
	objs, err := HelmTemplate("monitoring", auth...)
	if err != nil {
		t.Fatal(err)
	}
	c := deployment(t, objs).Spec.Template.Spec.Containers[0]
	if !slices.Contains(c.Args, "--web.health-listen-address=:9738") {
		t.Errorf("args %v: no --web.health-listen-address=:9738", c.Args)
	}
	if !slices.ContainsFunc(c.Ports, func(p corev1.ContainerPort) bool { return p.Name == "health" && p.ContainerPort == 9738 }) {
		t.Errorf("ports %+v: no port health 9738", c.Ports)
	}
	for name, p := range map[string]*corev1.Probe{"readiness": c.ReadinessProbe, "liveness": c.LivenessProbe} {
		if g := p.HTTPGet; g == nil || g.Port.String() != "health" || g.Scheme != corev1.URISchemeHTTP || len(g.HTTPHeaders) != 0 {
			t.Errorf("%s probe %+v: want plain HTTP on port health without headers", name, p.HTTPGet)
		}
	}
	var np networkingv1.NetworkPolicy
	into(t, find(objs, "NetworkPolicy")[0], &np)
	if !slices.ContainsFunc(np.Spec.Ingress, func(r networkingv1.NetworkPolicyIngressRule) bool {
		return len(r.From) == 0 && len(r.Ports) == 1 && r.Ports[0].Port.String() == "health"
	}) {
		t.Errorf("NetworkPolicy ingress %+v: the probes cannot reach the health port", np.Spec.Ingress)
	}

	objs, err = HelmTemplate("monitoring", append(auth, "--set", "web.healthPort=0")...)
	if err != nil {
		t.Fatal(err)
	}
	c = deployment(t, objs).Spec.Template.Spec.Containers[0]
	if slices.ContainsFunc(c.Args, func(a string) bool { return strings.HasPrefix(a, "--web.health-listen-address") }) || len(c.Ports) != 1 {
		t.Errorf("web.healthPort=0: args %v, ports %+v; want no health listener", c.Args, c.Ports)
	}
	for name, p := range map[string]*corev1.Probe{"readiness": c.ReadinessProbe, "liveness": c.LivenessProbe} {
		if g := p.HTTPGet; g == nil || g.Port.String() != "http" || g.Scheme != corev1.URISchemeHTTPS || len(g.HTTPHeaders) != 1 {
			t.Errorf("web.healthPort=0: %s probe %+v: want HTTPS on port http with the Authorization header", name, p.HTTPGet)
		}
	}
	into(t, find(objs, "NetworkPolicy")[0], &np)
	if len(np.Spec.Ingress) != 1 {
		t.Errorf("web.healthPort=0: NetworkPolicy ingress %+v, want the metrics rule only", np.Spec.Ingress)
	}

	if _, err := HelmTemplate("monitoring", "--set", "web.healthPort=9737"); err == nil {
		t.Errorf("web.healthPort equal to web.port was accepted")
	}
}

// The snapshot of the counting state (--events.snapshot-file) is on an emptyDir of its own, which
// survives a restart of the container (not of the pod: each pod, each replica, has its own), in
// every installation; events.snapshot.enabled=false leaves both the flag and the volume out.
func TestSnapshotOnAnEmptyDir(t *testing.T) {
	for _, r := range renderings(t) {
		d := deployment(t, r.Objects)
		c := d.Spec.Template.Spec.Containers[0]
		var file string
		for _, a := range c.Args {
			if v, ok := strings.CutPrefix(a, "--events.snapshot-file="); ok {
				file = v
			}
		}
		if file == "" || !slices.ContainsFunc(c.Args, func(a string) bool { return strings.HasPrefix(a, "--events.snapshot-interval=") }) {
			t.Errorf("%s: args %v: want --events.snapshot-file and --events.snapshot-interval", r.Name, c.Args)
			continue
		}
		i := slices.IndexFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == path.Dir(file) && !m.ReadOnly })
		if i < 0 {
			t.Errorf("%s: nothing writable is mounted at %s, the directory of %s", r.Name, path.Dir(file), file)
			continue
		}
		v := slices.IndexFunc(d.Spec.Template.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == c.VolumeMounts[i].Name })
		if v < 0 || d.Spec.Template.Spec.Volumes[v].EmptyDir == nil || d.Spec.Template.Spec.Volumes[v].EmptyDir.SizeLimit == nil {
			t.Errorf("%s: the snapshot's volume %s is not an emptyDir with a size limit", r.Name, c.VolumeMounts[i].Name)
		}
	}
	objs, err := HelmTemplate("monitoring", "--set", "events.snapshot.enabled=false")
	if err != nil {
		t.Fatal(err)
	}
	d := deployment(t, objs)
	if slices.ContainsFunc(d.Spec.Template.Spec.Containers[0].Args, func(a string) bool { return strings.HasPrefix(a, "--events.snapshot") }) ||
		slices.ContainsFunc(d.Spec.Template.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == "state" }) {
		t.Errorf("events.snapshot.enabled=false: args %v, volumes %v", d.Spec.Template.Spec.Containers[0].Args, d.Spec.Template.Spec.Volumes)
	}
}
