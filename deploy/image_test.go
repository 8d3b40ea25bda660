//go:build image

package deploy

// Run by hack/image.sh after it has built the image: go test -tags image -run '^TestImage' ./deploy/
// with KUBECAUSE_IMAGE_LAYOUT (the OCI layout ko wrote) and KUBECAUSE_IMAGE_VERSION.

import (
	"archive/tar"
	"bytes"
	"cmp"
	"compress/gzip"
	"debug/elf"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

type ociDescriptor struct {
	MediaType string `json:"mediaType"`
	Digest    string `json:"digest"`
	Platform  *struct {
		OS           string `json:"os"`
		Architecture string `json:"architecture"`
	} `json:"platform"`
}

type ociIndex struct {
	Manifests []ociDescriptor `json:"manifests"`
}

type ociManifest struct {
	Config ociDescriptor   `json:"config"`
	Layers []ociDescriptor `json:"layers"`
}

type ociConfig struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
	Config       struct {
		User       string            `json:"User"`
		Entrypoint []string          `json:"Entrypoint"`
		Labels     map[string]string `json:"Labels"`
	} `json:"config"`
}

func blob(t *testing.T, layout, digest string) []byte {
	t.Helper()
	algo, hex, ok := strings.Cut(digest, ":")
	if !ok {
		t.Fatalf("bad digest %q", digest)
	}
	b, err := os.ReadFile(filepath.Join(layout, "blobs", algo, hex))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func decode(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}

// fileFromLayers returns the content of an absolute path in the image's file system (the topmost layer
// holding it wins).
func fileFromLayers(t *testing.T, layout string, layers []ociDescriptor, name string) []byte {
	t.Helper()
	name = strings.TrimPrefix(path.Clean(name), "/")
	var found []byte
	for _, l := range layers {
		var r io.Reader = bytes.NewReader(blob(t, layout, l.Digest))
		if strings.HasSuffix(l.MediaType, "gzip") {
			zr, err := gzip.NewReader(r)
			if err != nil {
				t.Fatal(err)
			}
			r = zr
		}
		tr := tar.NewReader(r)
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if strings.TrimPrefix(path.Clean(h.Name), "/") == name && h.Typeflag == tar.TypeReg {
				if found, err = io.ReadAll(tr); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if found == nil {
		t.Fatalf("%s not in the image", name)
	}
	return found
}

func TestImage(t *testing.T) {
	layout, version := os.Getenv("KUBECAUSE_IMAGE_LAYOUT"), os.Getenv("KUBECAUSE_IMAGE_VERSION")
	if layout == "" || version == "" {
		t.Fatal("KUBECAUSE_IMAGE_LAYOUT and KUBECAUSE_IMAGE_VERSION must be set: run hack/image.sh")
	}
	var top ociIndex
	b, err := os.ReadFile(filepath.Join(layout, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	decode(t, b, &top)
	platforms := strings.Split(cmp.Or(os.Getenv("KUBECAUSE_IMAGE_PLATFORMS"), "linux/amd64,linux/arm64"), ",")
	if len(top.Manifests) != 1 {
		t.Fatalf("want one image in the layout, got %+v", top.Manifests)
	}
	var idx ociIndex
	switch isIndex := strings.Contains(top.Manifests[0].MediaType, "index"); {
	case len(platforms) > 1 && !isIndex:
		t.Fatalf("want a multi-arch index in the layout for %v, got %+v", platforms, top.Manifests)
	case isIndex:
		decode(t, blob(t, layout, top.Manifests[0].Digest), &idx)
	default: // one platform: ko writes its manifest alone; the platform is its config's
		d := top.Manifests[0]
		var m ociManifest
		decode(t, blob(t, layout, d.Digest), &m)
		var cfg ociConfig
		decode(t, blob(t, layout, m.Config.Digest), &cfg)
		d.Platform = &struct {
			OS           string `json:"os"`
			Architecture string `json:"architecture"`
		}{cfg.OS, cfg.Architecture}
		idx.Manifests = []ociDescriptor{d}
	}

	wantMachine := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}
	seen := map[string]bool{}
	for _, d := range idx.Manifests {
		if d.Platform == nil || d.Platform.OS != "linux" {
			continue
		}
		arch := d.Platform.Architecture
		machine, ok := wantMachine[arch]
		if !ok {
			continue
		}
		seen[arch] = true
		t.Run(arch, func(t *testing.T) {
			var m ociManifest
			decode(t, blob(t, layout, d.Digest), &m)
			var cfg ociConfig
			decode(t, blob(t, layout, m.Config.Digest), &cfg)
			if cfg.OS != "linux" || cfg.Architecture != arch {
				t.Errorf("config platform %s/%s", cfg.OS, cfg.Architecture)
			}
			if cfg.Config.User != "65532" && !strings.HasPrefix(cfg.Config.User, "65532:") {
				t.Errorf("image user %q, want the non-root 65532", cfg.Config.User)
			}
			if got := cfg.Config.Labels["org.opencontainers.image.version"]; got != version {
				t.Errorf("label org.opencontainers.image.version = %q, want %q", got, version)
			}
			if len(cfg.Config.Entrypoint) == 0 {
				t.Fatal("no entrypoint")
			}
			// The binary is named kubecause everywhere (ko names it after the main package's directory).
			if got := path.Base(cfg.Config.Entrypoint[0]); got != "kubecause" {
				t.Errorf("entrypoint %s: binary named %q, want kubecause", cfg.Config.Entrypoint[0], got)
			}
			bin := fileFromLayers(t, layout, m.Layers, cfg.Config.Entrypoint[0])
			f, err := elf.NewFile(bytes.NewReader(bin))
			if err != nil {
				t.Fatalf("entrypoint %s: %v", cfg.Config.Entrypoint[0], err)
			}
			if f.Machine != machine {
				t.Errorf("binary for %v, want %v", f.Machine, machine)
			}
			for _, p := range f.Progs {
				if p.Type == elf.PT_INTERP {
					t.Errorf("binary is dynamically linked; the distroless static base has no libc")
				}
			}
			if arch != runtime.GOARCH {
				return
			}
			exe := filepath.Join(t.TempDir(), "kubecause")
			if err := os.WriteFile(exe, bin, 0o755); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(exe, "--version").CombinedOutput()
			if err != nil {
				t.Fatalf("kubecause --version: %v\n%s", err, out)
			}
			if !strings.Contains(string(out), "version "+version+" ") {
				t.Errorf("kubecause --version printed %q, want version %s", out, version)
			}
			t.Logf("%s", bytes.TrimSpace(out))
		})
	}
	// The platforms hack/image.sh built: both for a release, amd64 alone in make test.
	for _, p := range platforms {
		if arch := strings.TrimPrefix(p, "linux/"); !seen[arch] {
			t.Errorf("no linux/%s image in the index", arch)
		}
	}
}
