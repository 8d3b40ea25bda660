package framework

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"golang.org/x/crypto/bcrypt"
)

// Registry is a local image registry (Debian's docker-registry, i.e. distribution) on
// 127.0.0.1, optionally with htpasswd basic auth.
type Registry struct {
	*Component
	User, Password string // empty when open
}

// StartRegistry starts distribution on a free 127.0.0.1 port with its storage under dir.
// With user set, every request needs basic auth.
func StartRegistry(dir, logDir, name, user, password string) (*Registry, error) {
	bin := firstExecutable(os.Getenv("REGISTRY_BIN"), "docker-registry", "registry")
	if bin == "" {
		return nil, fmt.Errorf("docker-registry not found (Debian docker-registry, hack/deps/00-apt.sh)")
	}
	addr, err := FreeAddr()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		return nil, err
	}
	auth := ""
	if user != "" {
		hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
		if err != nil {
			return nil, err
		}
		htpasswd := filepath.Join(dir, "htpasswd")
		if err := os.WriteFile(htpasswd, []byte(user+":"+string(hash)+"\n"), 0o600); err != nil {
			return nil, err
		}
		auth = fmt.Sprintf("auth:\n  htpasswd:\n    realm: kubecause-e2e\n    path: %s\n", htpasswd)
	}
	cfg := fmt.Sprintf(`version: 0.1
log:
  level: info
storage:
  filesystem:
    rootdirectory: %s
http:
  addr: %s
%s`, filepath.Join(dir, "data"), addr, auth)
	path := filepath.Join(dir, "config.yml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		return nil, err
	}
	p := NewProcess(name, logDir, bin, "serve", path)
	r := &Registry{Component: &Component{Process: p, Addr: addr}, User: user, Password: password}
	if err := r.Restart(); err != nil {
		return nil, err
	}
	return r, nil
}

// Restart starts the (stopped) registry again on the same address with the same storage, and
// waits until it serves.
func (r *Registry) Restart() error {
	if err := r.Start(); err != nil {
		return err
	}
	// /v2/ answers 200 when open and 401 with auth: either means it serves.
	if err := waitServing(r.URL("/v2/"), 30*time.Second, r.Process); err != nil {
		_ = r.Stop()
		return err
	}
	return nil
}

// Push writes img to this registry as repo:tag and returns the reference pods use.
func (r *Registry) Push(img TestImage, repoTag string) (string, error) {
	ref := r.Addr + "/" + repoTag
	tag, err := name.NewTag(ref, name.Insecure)
	if err != nil {
		return "", err
	}
	opts := []remote.Option{}
	if r.User != "" {
		opts = append(opts, remote.WithAuth(&authn.Basic{Username: r.User, Password: r.Password}))
	}
	if err := remote.Write(tag, img.Image, opts...); err != nil {
		return "", fmt.Errorf("pushing %s: %w", ref, err)
	}
	return ref, nil
}

// waitServing polls url until it answers with any status below 500.
func waitServing(url string, timeout time.Duration, p *Process) error {
	return waitURL(&http.Client{Timeout: 2 * time.Second}, url, timeout, p, func(code int) bool { return code < 500 })
}
