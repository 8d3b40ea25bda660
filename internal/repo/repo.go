// Package repo locates the repository and the tool cache for tests and generators.
package repo

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
)

// Root is the repository's top directory (this file is internal/repo/repo.go in it).
func Root() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", errors.New("cannot locate the repository root")
	}
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..")), nil
}

// CacheDir is where heavy tool builds are cached by version: $KUBECAUSE_CACHE, by default
// $HOME/.cache/kubecause (the Makefile and hack/deps use the same default).
func CacheDir() string {
	if d := os.Getenv("KUBECAUSE_CACHE"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "kubecause-cache")
	}
	return filepath.Join(home, ".cache", "kubecause")
}
