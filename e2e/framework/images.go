package framework

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// Images of the real node, built from e2e/node/* without a Docker daemon and never pulled.
const (
	PauseImage   = "kubecause.test/pause:e2e"
	TestappImage = "kubecause.test/testapp:e2e"
)

// TestImage is one image the tests built: its reference, its tarball and the image itself
// (to push to a registry).
type TestImage struct {
	Ref     string
	Tarball string
	Image   v1.Image
}

// BuildTestImages compiles e2e/node/pause and e2e/node/testapp as static binaries and packs
// each as a one-layer image whose entrypoint is the binary, written as a tarball under dir.
func BuildTestImages(dir string) (pause, testapp TestImage, err error) {
	root, err := RepoRoot()
	if err != nil {
		return pause, testapp, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return pause, testapp, err
	}
	build := func(pkg, ref, binName string) (TestImage, error) {
		bin := filepath.Join(dir, binName)
		cmd := exec.Command("go", "build", "-o", bin, "./e2e/node/"+pkg)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			return TestImage{}, fmt.Errorf("go build %s: %v: %s", pkg, err, out)
		}
		img, err := binaryImage(bin, "/"+binName)
		if err != nil {
			return TestImage{}, err
		}
		tag, err := name.NewTag(ref)
		if err != nil {
			return TestImage{}, err
		}
		path := filepath.Join(dir, binName+".tar")
		if err := tarball.WriteToFile(path, tag, img); err != nil {
			return TestImage{}, fmt.Errorf("writing %s: %w", path, err)
		}
		return TestImage{Ref: ref, Tarball: path, Image: img}, nil
	}
	if pause, err = build("pause", PauseImage, "pause"); err != nil {
		return pause, testapp, err
	}
	testapp, err = build("testapp", TestappImage, "testapp")
	return pause, testapp, err
}

// binaryImage is an image of one file, bin at path inside, which is also the entrypoint (the
// runtime refuses a sandbox image without one).
func binaryImage(bin, path string) (v1.Image, error) {
	data, err := os.ReadFile(bin)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.WriteHeader(&tar.Header{Name: path[1:], Mode: 0o755, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
		return nil, err
	}
	if _, err := tw.Write(data); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	layerBytes := buf.Bytes()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerBytes)), nil
	})
	if err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", runtime.GOARCH
	cf.Config.Entrypoint = []string{path}
	return mutate.ConfigFile(img, cf)
}

// Variant is img with the label kubecause.test/variant=label: the same layer under a config and
// manifest no node has yet, so pulling it makes the runtime write to its content store.
func (t TestImage) Variant(label string) (TestImage, error) {
	cf, err := t.Image.ConfigFile()
	if err != nil {
		return TestImage{}, err
	}
	cfg := cf.Config.DeepCopy()
	if cfg.Labels == nil {
		cfg.Labels = map[string]string{}
	}
	cfg.Labels["kubecause.test/variant"] = label
	img, err := mutate.Config(t.Image, *cfg)
	if err != nil {
		return TestImage{}, err
	}
	return TestImage{Ref: t.Ref + "-" + label, Image: img}, nil
}
