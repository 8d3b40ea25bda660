package main

import (
	"runtime/debug"
	"testing"

	"github.com/prometheus/common/version"
)

func TestFillVersion(t *testing.T) {
	saved := [2]string{version.Version, version.BuildDate}
	t.Cleanup(func() { version.Version, version.BuildDate = saved[0], saved[1] })

	for _, tc := range []struct {
		name                  string
		ldVersion, ldDate     string
		bi                    debug.BuildInfo
		wantVersion, wantDate string
	}{
		{name: "go install of a tagged module", bi: debug.BuildInfo{Main: debug.Module{Version: "v0.3.0"}},
			wantVersion: "v0.3.0"},
		{name: "build in the source tree with VCS stamping",
			bi: debug.BuildInfo{Main: debug.Module{Version: "v0.3.1-0.20261120101010-abcdef123456"},
				Settings: []debug.BuildSetting{{Key: "vcs.time", Value: "2026-11-20T10:10:10Z"}}},
			wantVersion: "v0.3.1-0.20261120101010-abcdef123456", wantDate: "2026-11-20T10:10:10Z"},
		{name: "nothing recorded", wantVersion: "(devel)"},
		{name: "ldflags win", ldVersion: "v1.0.0", ldDate: "20261120-10:10:10",
			bi:          debug.BuildInfo{Main: debug.Module{Version: "v0.3.0"}, Settings: []debug.BuildSetting{{Key: "vcs.time", Value: "x"}}},
			wantVersion: "v1.0.0", wantDate: "20261120-10:10:10"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			version.Version, version.BuildDate = tc.ldVersion, tc.ldDate
			fillVersion(&tc.bi)
			if version.Version != tc.wantVersion || version.BuildDate != tc.wantDate {
				t.Errorf("version %q, date %q; want %q, %q", version.Version, version.BuildDate, tc.wantVersion, tc.wantDate)
			}
		})
	}
}
