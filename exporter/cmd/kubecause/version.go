package main

import (
	"runtime/debug"

	"github.com/prometheus/common/version"
)

// A release build sets the version through -ldflags (hack/ldflags.sh). A plain `go build` or
// `go install github.com/kubecause/kubecause/exporter@vX.Y.Z` sets none, so the version is taken from
// the module's build information instead: the module version `go install` records, and the VCS time.
// The revision needs nothing here: prometheus/common/version reads vcs.revision itself.
func init() {
	if bi, ok := debug.ReadBuildInfo(); ok {
		fillVersion(bi)
	}
}

// fillVersion sets the version variables that -ldflags left empty from bi.
func fillVersion(bi *debug.BuildInfo) {
	if version.Version == "" {
		// "(devel)" is what a build inside the module's own tree records; it says nothing more than
		// an empty version, so keep it as the word users already see in such builds.
		version.Version = bi.Main.Version
		if version.Version == "" {
			version.Version = "(devel)"
		}
	}
	if version.BuildDate == "" {
		for _, s := range bi.Settings {
			if s.Key == "vcs.time" {
				version.BuildDate = s.Value
			}
		}
	}
}
