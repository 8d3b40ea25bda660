package framework

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// Cluster is a real kube-apiserver with its etcd, run by envtest. No controller-manager,
// scheduler or kubelet runs: tests write what those would write.
type Cluster struct {
	Env            *envtest.Environment
	Config         *rest.Config
	Client         kubernetes.Interface
	KubeconfigPath string
	// Dir holds etcd's data, the apiserver's certificates and the kubeconfig; they survive
	// RestartControlPlane.
	Dir string
}

// ClusterOptions tune the apiserver.
type ClusterOptions struct {
	// APIServerArgs are extra kube-apiserver flags (name without "--" → value).
	APIServerArgs map[string]string
	// LogDir receives etcd.log and kube-apiserver.log (empty: output discarded).
	LogDir string
	// EtcdArgs are extra etcd flags (name without "--" → value); EtcdDataDir, when set, holds
	// etcd's data instead of <dir>/etcd (the load run puts it on a tmpfs).
	EtcdArgs    map[string]string
	EtcdDataDir string
}

var quietEnvtest sync.Once

// StartCluster starts etcd and kube-apiserver under dir.
func StartCluster(dir string, o ClusterOptions) (*Cluster, error) {
	// envtest logs through controller-runtime's logger; its own output is not needed here.
	quietEnvtest.Do(func() { ctrllog.SetLogger(logr.Discard()) })
	for _, d := range []string{"etcd", "apiserver"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return nil, err
		}
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory:    AssetsDir(),
		ControlPlaneStartTimeout: 90 * time.Second,
		// kube-apiserver v1.36 often lingers after its graceful shutdown; after this long it is
		// killed, which is what a crash would do anyway.
		ControlPlaneStopTimeout: 10 * time.Second,
	}
	etcdPath, err := dieWithParent(dir, "etcd")
	if err != nil {
		return nil, err
	}
	apiPath, err := dieWithParent(dir, "kube-apiserver")
	if err != nil {
		return nil, err
	}
	env.ControlPlane.Etcd = &envtest.Etcd{DataDir: filepath.Join(dir, "etcd"), Path: etcdPath}
	if o.EtcdDataDir != "" {
		env.ControlPlane.Etcd.DataDir = o.EtcdDataDir
	}
	for k, v := range o.EtcdArgs {
		env.ControlPlane.Etcd.Configure().Set(k, v)
	}
	api := env.ControlPlane.GetAPIServer()
	api.CertDir = filepath.Join(dir, "apiserver")
	api.Path = apiPath
	if o.LogDir != "" {
		etcdLog, err := os.OpenFile(filepath.Join(o.LogDir, "etcd.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, err
		}
		apiLog, err := os.OpenFile(filepath.Join(o.LogDir, "kube-apiserver.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, err
		}
		env.ControlPlane.Etcd.Out, env.ControlPlane.Etcd.Err = etcdLog, etcdLog
		api.Out, api.Err = apiLog, apiLog
	}
	args := api.Configure()
	// No controller creates default service accounts, and no controller maintains the
	// kubernetes Service's endpoints.
	args.Set("disable-admission-plugins", "ServiceAccount")
	args.Set("endpoint-reconciler-type", "none")
	args.Set("bind-address", "127.0.0.1")
	args.Set("advertise-address", "127.0.0.1")
	for k, v := range o.APIServerArgs {
		args.Set(k, v)
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("starting kube-apiserver and etcd from %s: %w", AssetsDir(), err)
	}
	c := &Cluster{Env: env, Config: cfg, Dir: dir, KubeconfigPath: filepath.Join(dir, "kubeconfig")}
	if err := os.WriteFile(c.KubeconfigPath, env.KubeConfig, 0o600); err != nil {
		_ = env.Stop()
		return nil, err
	}
	c.Client, err = kubernetes.NewForConfig(cfg)
	if err != nil {
		_ = env.Stop()
		return nil, err
	}
	if err := checkServerVersion(c); err != nil {
		_ = env.Stop()
		return nil, err
	}
	return c, nil
}

// dieWithParent writes dir/<name>.sh, which runs the asset <name> so that it is killed when the
// process that started it dies (as Process does): envtest starts etcd and kube-apiserver in
// their own process group and a test killed before its cleanup (a timeout, ^C twice, SIGKILL)
// left them running.
func dieWithParent(dir, name string) (string, error) {
	bin := filepath.Join(AssetsDir(), name)
	if _, err := os.Stat(bin); err != nil {
		return "", fmt.Errorf("%s: %w (make deps builds it)", name, err)
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		return "", fmt.Errorf("setpriv (util-linux) is needed to tie %s to the test: %w", name, err)
	}
	path := filepath.Join(dir, name+".sh")
	script := fmt.Sprintf("#!/bin/sh\nexec '%s' --pdeathsig KILL -- '%s' \"$@\"\n", setpriv, bin)
	return path, os.WriteFile(path, []byte(script), 0o755)
}

// Stop stops the apiserver and etcd.
func (c *Cluster) Stop() error { return c.Env.Stop() }

// RestartControlPlane stops kube-apiserver and etcd and starts them again on the same ports,
// the same etcd data and the same certificates, so clients and kubeconfigs keep working.
// It returns how long the API was unavailable.
func (c *Cluster) RestartControlPlane(ctx context.Context) (time.Duration, error) {
	start := time.Now()
	if err := c.Env.ControlPlane.Stop(); err != nil && !strings.Contains(err.Error(), "timeout waiting for process") {
		return 0, fmt.Errorf("stopping the control plane: %w", err)
	}
	if err := c.Env.ControlPlane.Start(); err != nil {
		return 0, fmt.Errorf("restarting the control plane: %w", err)
	}
	err := Poll(ctx, 60*time.Second, func() (bool, error) {
		_, err := c.Client.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
	return time.Since(start), err
}

// UserKubeconfig writes a kubeconfig for a new user name who may do only what rules allow,
// cluster-wide (a ClusterRole bound to the user), and returns its path.
func (c *Cluster) UserKubeconfig(ctx context.Context, name string, rules []rbacv1.PolicyRule) (string, error) {
	u, err := c.Env.AddUser(envtest.User{Name: name}, c.Config)
	if err != nil {
		return "", fmt.Errorf("user %s: %w", name, err)
	}
	kc, err := u.KubeConfig()
	if err != nil {
		return "", fmt.Errorf("user %s: %w", name, err)
	}
	path := filepath.Join(c.Dir, name+".kubeconfig")
	if err := os.WriteFile(path, kc, 0o600); err != nil {
		return "", err
	}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}
	if _, err := c.Client.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		return "", fmt.Errorf("ClusterRole %s: %w", name, err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: name}},
	}
	if _, err := c.Client.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		return "", fmt.Errorf("ClusterRoleBinding %s: %w", name, err)
	}
	return path, nil
}

// EnsureNamespaces creates the namespaces that do not exist yet.
func (c *Cluster) EnsureNamespaces(ctx context.Context, names ...string) error {
	for _, n := range names {
		_, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("namespace %s: %w", n, err)
		}
	}
	return nil
}

// Poll calls cond every 200 ms until it returns true, returns an error, or timeout passes.
func Poll(ctx context.Context, timeout time.Duration, cond func() (bool, error)) error {
	return PollEvery(ctx, timeout, 200*time.Millisecond, cond)
}

// PollEvery calls cond every interval until it returns true, returns an error, or timeout passes.
func PollEvery(ctx context.Context, timeout, interval time.Duration, cond func() (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		ok, err := cond()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("condition not met within %s", timeout)
		case <-t.C:
		}
	}
}
