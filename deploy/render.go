// Package deploy renders kubecause's install manifests — the Helm chart in deploy/helm/kubecause and the
// kustomize overlays in deploy/kustomize — with the pinned helm and kustomize that
// hack/deps/30-deploy-tools.sh builds. The tests of this package and the end-to-end dry run use it.
package deploy

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/kubecause/kubecause/internal/repo"
)

// Object is one rendered manifest.
type Object map[string]any

// Kind is the object's kind.
func (o Object) Kind() string { s, _ := o["kind"].(string); return s }

// APIVersion is the object's apiVersion.
func (o Object) APIVersion() string { s, _ := o["apiVersion"].(string); return s }

// Meta returns a string field of metadata (name, namespace).
func (o Object) Meta(key string) string {
	m, _ := o["metadata"].(map[string]any)
	s, _ := m[key].(string)
	return s
}

// ID names the object in messages: "Kind namespace/name".
func (o Object) ID() string {
	if ns := o.Meta("namespace"); ns != "" {
		return fmt.Sprintf("%s %s/%s", o.Kind(), ns, o.Meta("name"))
	}
	return fmt.Sprintf("%s %s", o.Kind(), o.Meta("name"))
}

var docSeparator = regexp.MustCompile(`(?m)^---[ \t]*$`)

// ParseManifests splits a multi-document YAML stream into objects, expanding Lists. Duplicate keys
// are an error.
func ParseManifests(data []byte) ([]Object, error) {
	var objs []Object
	for _, doc := range docSeparator.Split(string(data), -1) {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		var o Object
		if err := yaml.UnmarshalStrict([]byte(doc), &o); err != nil {
			return nil, fmt.Errorf("%v in document:\n%s", err, doc)
		}
		if o == nil {
			continue
		}
		if items, ok := o["items"].([]any); ok && strings.HasSuffix(o.Kind(), "List") {
			for _, it := range items {
				m, _ := it.(map[string]any)
				objs = append(objs, Object(m))
			}
			continue
		}
		objs = append(objs, o)
	}
	return objs, nil
}

// Tool returns the cached binary of a pinned deploy tool (helm, kustomize, ko, crane); its version is
// read from hack/deps/30-deploy-tools.sh, which builds it.
func Tool(name string) (string, error) {
	root, err := repo.Root()
	if err != nil {
		return "", err
	}
	script, err := os.ReadFile(filepath.Join(root, "hack", "deps", "30-deploy-tools.sh"))
	if err != nil {
		return "", err
	}
	m := regexp.MustCompile(`(?m)^` + strings.ToUpper(name) + `_VERSION=(\S+)$`).FindSubmatch(script)
	if m == nil {
		return "", fmt.Errorf("no %s version in hack/deps/30-deploy-tools.sh", name)
	}
	p := filepath.Join(repo.CacheDir(), "bin", name+"-"+string(m[1]))
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("%s %s not found at %s: run make deps", name, m[1], p)
	}
	return p, nil
}

// Run runs a deploy tool in the project root and returns its standard output.
func Run(name string, args ...string) ([]byte, error) {
	bin, err := Tool(name)
	if err != nil {
		return nil, err
	}
	root, err := repo.Root()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.String())
	}
	return out, nil
}

// HelmTemplate renders the chart as release "kubecause" in namespace with extra helm arguments
// (--set …). No --kube-version: the chart renders with whatever Kubernetes version helm assumes, as in
// CI pipelines and GitOps tools.
func HelmTemplate(namespace string, args ...string) ([]Object, error) {
	return HelmTemplateRelease("kubecause", namespace, args...)
}

// HelmTemplateRelease renders the chart as the named release.
func HelmTemplateRelease(release, namespace string, args ...string) ([]Object, error) {
	out, err := Run("helm", append([]string{"template", release, "deploy/helm/kubecause", "--namespace", namespace}, args...)...)
	if err != nil {
		return nil, err
	}
	return ParseManifests(out)
}

// IstioNamespace is where the endpoint checks read (the chart's default endpointChecks.namespaces).
const IstioNamespace = "istio-system"

// KustomizeBuild builds a kustomization directory given relative to the project root.
func KustomizeBuild(dir string) ([]Object, error) {
	out, err := Run("kustomize", "build", dir)
	if err != nil {
		return nil, err
	}
	return ParseManifests(out)
}

// Rendering is one way of installing kubecause and what it must contain besides the exporter itself.
type Rendering struct {
	Name           string
	Objects        []Object
	ServiceMonitor bool
	PrometheusRule bool
	Dashboards     bool
	RulesConfigMap bool
	// EndpointChecks: the exporter runs the endpoint checks and the rendering has Roles in istio-system.
	// Without it nothing may be installed there.
	EndpointChecks bool
	// NetworkPolicy: the rendering restricts ingress to Prometheus.
	NetworkPolicy bool
	// HelmTest: the rendering holds the helm test pod (a hook, not installed with the release).
	HelmTest bool
}

// NeedsCRDs tells whether the rendering holds prometheus-operator objects.
func (r Rendering) NeedsCRDs() bool { return r.ServiceMonitor || r.PrometheusRule }

// IsHook tells whether helm runs the object as a hook (e.g. helm test) rather than installing it.
func IsHook(o Object) bool {
	m, _ := o["metadata"].(map[string]any)
	a, _ := m["annotations"].(map[string]any)
	_, ok := a["helm.sh/hook"]
	return ok
}

// AllOptions are helm arguments that turn on every optional part of the chart.
var AllOptions = []string{
	"--set", "serviceMonitor.enabled=true", "--set", "prometheusRule.enabled=true",
	"--set", "dashboards.enabled=true", "--set", "prometheus.configMap=true",
	"--set", "networkPolicy.enabled=true", "--set", "networkPolicy.from[0].podSelector.matchLabels.app=grafana",
	"--set", "events.namespaces={default,team-a}", "--set", "events.excludeNamespaces={kube-system}",
	"--set", "causes.config=version: 1",
	"--set", "endpointChecks.enabled=true",
	"--set", "endpointChecks.config=checks: []", "--set", "endpointChecks.kubeconfigSecret=remote-clusters",
	"--set", "global.imageRegistry=mirror.example.com", "--set", "releaseLabel=true",
	"--set", "env.GOMAXPROCS=2", "--set", "extraEnv[0].name=POD_NAME",
	"--set", "extraEnv[0].valueFrom.fieldRef.fieldPath=metadata.name",
	"--set", "extraVolumes[0].name=extra", "--set", "extraVolumes[0].emptyDir.sizeLimit=1Mi",
	"--set", "extraVolumeMounts[0].name=extra", "--set", "extraVolumeMounts[0].mountPath=/extra",
	"--set", "serviceMonitor.sampleLimit=100000", "--set", "serviceMonitor.targetLabels={app.kubernetes.io/instance}",
	"--set", "web.tls=true", "--set", "web.tlsSecretName=kubecause-tls",
	"--set", "web.config.tls_server_config.cert_file=/etc/kubecause/tls/tls.crt",
	"--set", "web.config.tls_server_config.key_file=/etc/kubecause/tls/tls.key",
}

// Renderings renders the chart with default values, with every option, with one replica, with the
// endpoint checks, and the kustomize base, both overlays and the components (through the fixtures in
// deploy/test/kustomize). Helm renders into namespace "monitoring", kustomize into "kubecause".
func Renderings() ([]Rendering, error) {
	type spec struct {
		r    Rendering
		helm []string
		dir  string
	}
	specs := []spec{
		{r: Rendering{Name: "helm default values", HelmTest: true}, helm: []string{}},
		{r: Rendering{Name: "helm all options", ServiceMonitor: true, PrometheusRule: true, Dashboards: true, RulesConfigMap: true,
			EndpointChecks: true, NetworkPolicy: true, HelmTest: true}, helm: AllOptions},
		{r: Rendering{Name: "helm one replica", HelmTest: true}, helm: []string{"--set", "replicas=1"}},
		{r: Rendering{Name: "helm endpoint checks", EndpointChecks: true, HelmTest: true}, helm: []string{"--set", "endpointChecks.enabled=true"}},
		{r: Rendering{Name: "kustomize base"}, dir: "deploy/kustomize/base"},
		{r: Rendering{Name: "kustomize endpoint-checks component", EndpointChecks: true}, dir: "deploy/test/kustomize/endpoint-checks"},
		{r: Rendering{Name: "kustomize prometheus-operator with both components", ServiceMonitor: true, PrometheusRule: true,
			Dashboards: true, EndpointChecks: true, NetworkPolicy: true}, dir: "deploy/test/kustomize/everything"},
		{r: Rendering{Name: "kustomize prometheus-operator", ServiceMonitor: true, PrometheusRule: true, Dashboards: true},
			dir: "deploy/kustomize/overlays/prometheus-operator"},
		{r: Rendering{Name: "kustomize prometheus", Dashboards: true, RulesConfigMap: true},
			dir: "deploy/kustomize/overlays/prometheus"},
	}
	var out []Rendering
	for _, s := range specs {
		var err error
		if s.dir != "" {
			s.r.Objects, err = KustomizeBuild(s.dir)
		} else {
			s.r.Objects, err = HelmTemplate("monitoring", s.helm...)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.r.Name, err)
		}
		out = append(out, s.r)
	}
	return out, nil
}
