package main

import (
	"log/slog"
	"os"
	"reflect"
	"runtime/debug"
	"testing"

	"github.com/KimMachineGun/automemlimit/memlimit"
)

func TestWatchSelectors(t *testing.T) {
	for _, tc := range []struct {
		name     string
		base     string
		normal   []string
		excluded []string
		want     []string
	}{
		{"default", "type=Warning", []string{"SandboxChanged", "BackOff"}, nil,
			[]string{"type=Warning", "type=Normal,reason=SandboxChanged", "type=Normal,reason=BackOff"}},
		{"excluded namespaces apply to every watch", "type=Warning", []string{"BackOff"}, []string{"kube-system", "dev"},
			[]string{"type=Warning,metadata.namespace!=kube-system,metadata.namespace!=dev",
				"type=Normal,reason=BackOff,metadata.namespace!=kube-system,metadata.namespace!=dev"}},
		{"custom selector: one watch, engine filters Normal", "involvedObject.kind=Pod", []string{"BackOff"}, nil,
			[]string{"involvedObject.kind=Pod"}},
		{"everything", "", nil, nil, []string{""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := watchSelectors(tc.base, tc.normal, tc.excluded); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestRunRejectsBadConfiguration(t *testing.T) {
	for name, args := range map[string][]string{
		"unknown flag":       {"--no-such-flag"},
		"missing cause file": {"--causes.file=/nonexistent/causes.yaml", "--config.check"},
		"bad explain input":  {"explain", "-f", "/nonexistent/events.json"},
	} {
		t.Run(name, func(t *testing.T) {
			if code := run(args); code == 0 {
				t.Fatalf("run(%q) = 0, want an error exit", args)
			}
		})
	}
}

func TestConfigCheckAcceptsValidConfiguration(t *testing.T) {
	if code := run([]string{"--config.check", "--endpoint-checks.config=../examples/endpoint-checks.yaml"}); code != 0 {
		t.Fatalf("--config.check on the shipped example = %d, want 0", code)
	}
}

// The Go memory limit follows the container's limit at the chosen ratio, and a GOMEMLIMIT set by
// the user wins.
func TestMemoryLimitFollowsTheContainer(t *testing.T) {
	prev := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(prev) })
	logger := slog.New(slog.DiscardHandler)

	if _, set := os.LookupEnv("GOMEMLIMIT"); set {
		t.Skip("GOMEMLIMIT is set in the test's environment")
	}
	got := setMemoryLimit(0.9, memlimit.Limit(200<<20), logger)
	if want := int64(0.9 * (200 << 20)); got != want || debug.SetMemoryLimit(-1) != want {
		t.Fatalf("limit set %d (runtime: %d), want %d", got, debug.SetMemoryLimit(-1), want)
	}

	debug.SetMemoryLimit(prev)
	t.Setenv("GOMEMLIMIT", "64MiB")
	if got := setMemoryLimit(0.9, memlimit.Limit(200<<20), logger); got != 0 || debug.SetMemoryLimit(-1) != prev {
		t.Fatalf("with GOMEMLIMIT set: limit set %d (runtime %d), want none", got, debug.SetMemoryLimit(-1))
	}
}

func TestRunRejectsABadMemoryLimitRatio(t *testing.T) {
	for _, r := range []string{"0", "1.5", "-0.2"} {
		if code := run([]string{"--config.check", "--auto-gomemlimit.ratio=" + r}); code == 0 {
			t.Errorf("--auto-gomemlimit.ratio=%s accepted", r)
		}
	}
}
