//go:build e2e

package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/kubecause/kubecause/e2e/framework"
)

// TestMetricsTLSAndBasicAuth: /metrics behind exporter-toolkit's web configuration, as the chart
// mounts it — TLS with a certificate for 127.0.0.1 and a basic-auth user. Without credentials, with
// a wrong password and over plain HTTP nothing is served; with them, the metrics are. The health
// listener (--web.health-listen-address, the chart's probes) answers /healthz and /readyz over
// plain HTTP without credentials, and nothing else.
func TestMetricsTLSAndBasicAuth(t *testing.T) {
	cluster, dir, bins := startCluster(t)

	certPEM, keyPEM := selfSigned(t)
	hash, err := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	check(t, err)
	for name, data := range map[string][]byte{
		"tls.crt": certPEM, "tls.key": keyPEM,
		"web.yml": []byte("tls_server_config:\n  cert_file: tls.crt\n  key_file: tls.key\nbasic_auth_users:\n  prometheus: " + string(hash) + "\n"),
	} {
		check(t, os.WriteFile(filepath.Join(dir, name), data, 0o600))
	}
	addr, err := framework.FreeAddr()
	check(t, err)
	healthAddr, err := framework.FreeAddr()
	check(t, err)
	p := framework.NewProcess("kubecause", dir, bins.Kubecause, "--web.listen-address="+addr,
		"--web.health-listen-address="+healthAddr,
		"--kubeconfig="+cluster.KubeconfigPath, "--web.config.file="+filepath.Join(dir, "web.yml"))
	check(t, p.Start())
	t.Cleanup(func() { _ = p.Stop() })

	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(certPEM)
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	get := func(scheme, path, user, pass string) (int, string, error) {
		req, err := http.NewRequest(http.MethodGet, scheme+"://"+addr+path, nil)
		if err != nil {
			return 0, "", err
		}
		if user != "" {
			req.SetBasicAuth(user, pass)
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body), err
	}

	// The health listener answers the probes over plain HTTP without credentials (what the chart's
	// probes do): /readyz turns 200 once the initial list is read.
	plain := &http.Client{Timeout: 5 * time.Second}
	getHealth := func(path string) (int, string, error) {
		resp, err := plain.Get("http://" + healthAddr + path)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body), err
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		code, _, err := getHealth("/readyz")
		if err == nil && code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("health listener: /readyz %d %v, want 200 without credentials (log %s)", code, err, p.LogPath)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if code, body, err := getHealth("/healthz"); err != nil || code != http.StatusOK || body != "ok\n" {
		t.Fatalf("health listener: /healthz %d %q %v, want 200 ok without credentials", code, body, err)
	}
	// It serves nothing else: no metrics, no landing page, no profiling.
	for _, path := range []string{"/metrics", "/", "/debug/pprof/"} {
		if code, body, err := getHealth(path); err != nil || code != http.StatusNotFound {
			t.Fatalf("health listener: %s %d %v, want 404\n%.200s", path, code, err, body)
		}
	}

	for {
		code, _, err := get("https", "/readyz", "prometheus", "s3cret")
		if err == nil && code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("kubecause not ready over TLS with basic auth: %d %v (log %s)", code, err, p.LogPath)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if code, _, err := get("https", "/metrics", "", ""); err != nil || code != http.StatusUnauthorized {
		t.Fatalf("/metrics without credentials: %d %v, want 401", code, err)
	}
	if code, _, err := get("https", "/metrics", "prometheus", "wrong"); err != nil || code != http.StatusUnauthorized {
		t.Fatalf("/metrics with a wrong password: %d %v, want 401", code, err)
	}
	if code, body, err := get("http", "/metrics", "prometheus", "s3cret"); err == nil && code == http.StatusOK {
		t.Fatalf("/metrics served over plain HTTP (%d bytes)", len(body))
	}
	code, body, err := get("https", "/metrics", "prometheus", "s3cret")
	if err != nil || code != http.StatusOK || !strings.Contains(body, "kubecause_build_info") || !strings.Contains(body, "kubecause_synced 1") {
		t.Fatalf("/metrics with credentials: %d %v\n%.400s", code, err, body)
	}
	t.Logf("TLS + basic auth on %s: 401 without and with a wrong password, plain HTTP refused, %d bytes of metrics with credentials; health on %s: 200 without credentials, 404 elsewhere", addr, len(body), healthAddr)
}

// selfSigned makes a certificate for 127.0.0.1, valid for an hour.
func selfSigned(t *testing.T) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	check(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "kubecause-e2e"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:    time.Now().Add(-time.Minute),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	check(t, err)
	kder, err := x509.MarshalECPrivateKey(key)
	check(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
}
