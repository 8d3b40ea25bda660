// kube-controller-manager and kube-scheduler, with or without a node.

package framework

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"path/filepath"
	"time"
)

// Controllers are kube-controller-manager and kube-scheduler of the apiserver's release.
type Controllers struct {
	ControllerManager *Component
	Scheduler         *Component
}

// StartControllers runs kube-controller-manager (every controller, no cloud provider) and
// kube-scheduler against the cluster, on 127.0.0.1, and waits for their /healthz.
func StartControllers(b NodeBinaries, c *Cluster, logDir string) (*Controllers, error) {
	kcmPort, err := FreePort()
	if err != nil {
		return nil, err
	}
	schedPort, err := FreePort()
	if err != nil {
		return nil, err
	}
	kcm := NewProcess("kube-controller-manager", logDir, b.ControllerManager,
		"--kubeconfig="+c.KubeconfigPath,
		"--authentication-kubeconfig="+c.KubeconfigPath,
		"--authorization-kubeconfig="+c.KubeconfigPath,
		"--leader-elect=false",
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", kcmPort),
		"--service-account-private-key-file="+filepath.Join(c.Dir, "apiserver", "sa-signer.key"),
		"--use-service-account-credentials=false",
		"--controllers=*",
		// NodeNotReady within seconds of the kubelet stopping (the default grace is 50 s).
		"--node-monitor-grace-period=20s",
		"--node-monitor-period=2s",
		"--v=1")
	sched := NewProcess("kube-scheduler", logDir, b.Scheduler,
		"--kubeconfig="+c.KubeconfigPath,
		"--authentication-kubeconfig="+c.KubeconfigPath,
		"--authorization-kubeconfig="+c.KubeconfigPath,
		"--leader-elect=false",
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", schedPort),
		"--v=1")
	ctl := &Controllers{
		ControllerManager: &Component{Process: kcm, Addr: fmt.Sprintf("127.0.0.1:%d", kcmPort)},
		Scheduler:         &Component{Process: sched, Addr: fmt.Sprintf("127.0.0.1:%d", schedPort)},
	}
	for _, comp := range []*Component{ctl.ControllerManager, ctl.Scheduler} {
		if err := comp.Start(); err != nil {
			ctl.Stop()
			return nil, err
		}
	}
	for _, comp := range []*Component{ctl.ControllerManager, ctl.Scheduler} {
		if err := waitHTTPS("https://"+comp.Addr+"/healthz", 90*time.Second, comp.Process); err != nil {
			ctl.Stop()
			return nil, err
		}
	}
	return ctl, nil
}

// Stop stops both controllers.
func (c *Controllers) Stop() {
	if c == nil {
		return
	}
	for _, comp := range []*Component{c.Scheduler, c.ControllerManager} {
		if comp != nil {
			_ = comp.Stop()
		}
	}
}

// waitHTTPS polls a component's self-signed https endpoint until it answers 200.
func waitHTTPS(url string, timeout time.Duration, p *Process) error {
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
		// The components serve a self-signed certificate on 127.0.0.1; only /healthz is read.
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec
	}}
	return waitURL(client, url, timeout, p, func(code int) bool { return code == http.StatusOK })
}
