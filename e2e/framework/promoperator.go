package framework

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Versions built by hack/deps/24-prometheus-operator.sh from its wrapper module
// hack/tools/prometheus-operator: the operator (kube-prometheus-stack 88.5.3's appVersion) and the
// amtool of the Alertmanager that chart runs with it (alertmanager.alertmanagerSpec.image.tag).
const (
	PromOperatorVersion = "v0.93.1"
	AlertmanagerVersion = "v0.34.0"
)

// PromOperatorDir holds the operator's bin/operator, bin/amtool-<AlertmanagerVersion> and crds/*.yaml.
func PromOperatorDir() string {
	return filepath.Join(CacheDir(), "prometheus-operator-"+PromOperatorVersion)
}

// PromOperatorAssets are the cached operator, amtool and the CRD files of the operator's release.
type PromOperatorAssets struct {
	Operator, Amtool string
	CRDs             []string
}

// FindPromOperator locates the assets hack/deps/24-prometheus-operator.sh caches.
func FindPromOperator() (PromOperatorAssets, error) {
	dir := PromOperatorDir()
	a := PromOperatorAssets{
		Operator: filepath.Join(dir, "bin", "operator"),
		Amtool:   filepath.Join(dir, "bin", "amtool-"+AlertmanagerVersion),
	}
	crds, _ := filepath.Glob(filepath.Join(dir, "crds", "*.yaml"))
	a.CRDs = crds
	if !executable(a.Operator) || !executable(a.Amtool) || len(crds) == 0 {
		return a, fmt.Errorf("prometheus-operator %s, amtool %s or the CRDs not in %s",
			PromOperatorVersion, AlertmanagerVersion, dir)
	}
	return a, nil
}

// StartPromOperator runs the operator against the cluster of kubeconfig, its metrics and health
// listener on a free port of 127.0.0.1, and waits until that listener answers.
func StartPromOperator(bin, kubeconfig, logDir string) (*Process, error) {
	addr, err := FreeAddr()
	if err != nil {
		return nil, err
	}
	// The operator reads its kubeconfig only from $KUBECONFIG: a script sets it and execs the operator
	// (the same process, so it still dies with the test).
	script := filepath.Join(logDir, "prometheus-operator.sh")
	body := fmt.Sprintf("#!/bin/sh\nKUBECONFIG='%s' exec '%s' \"$@\"\n", kubeconfig, bin)
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		return nil, err
	}
	p := NewProcess("prometheus-operator", logDir, script, "--web.listen-address="+addr, "--log-level=debug")
	if err := p.Start(); err != nil {
		return nil, err
	}
	if err := WaitHTTP("http://"+addr+"/healthz", 60*time.Second, p); err != nil {
		_ = p.Stop()
		return nil, fmt.Errorf("prometheus-operator: %w\n%s", err, p.Log(3000))
	}
	return p, nil
}
