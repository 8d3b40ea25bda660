package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kubecause/kubecause/exporter/events"
)

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
	if code := run([]string{"--config.check", "--endpoint-checks.config=../../../examples/endpoint-checks.yaml"}); code != 0 {
		t.Fatalf("--config.check on the shipped example = %d, want 0", code)
	}
}

func TestRunRejectsABadMemoryLimitRatio(t *testing.T) {
	for _, r := range []string{"0", "1.5", "-0.2"} {
		if code := run([]string{"--config.check", "--auto-gomemlimit.ratio=" + r}); code == 0 {
			t.Errorf("--auto-gomemlimit.ratio=%s accepted", r)
		}
	}
}

// TestRunRejectsBadFlagValues: values the flag parser lets through are refused at start and by
// --config.check, with an error, not a panic nor "configuration is valid".
func TestRunRejectsBadFlagValues(t *testing.T) {
	for name, flag := range map[string]string{
		"empty telemetry path":         "--web.telemetry-path=",
		"relative telemetry path":      "--web.telemetry-path=metrics",
		"telemetry path /healthz":      "--web.telemetry-path=/healthz",
		"telemetry path /readyz":       "--web.telemetry-path=/readyz",
		"telemetry path with space":    "--web.telemetry-path=/me trics",
		"non-UTF-8 runbook pattern":    "--runbook.url-pattern=https://example.com/\xff/%s",
		"empty type in selector":       "--events.field-selector=type==",
		"selector that does not parse": "--events.field-selector=a=b=c",
		"unknown selector field":       "--events.field-selector=spec.nodeName=node-1",
		"bad excluded namespace":       "--events.exclude-namespace=Kube_System",
		"reason with a comma":          "--events.normal-reason=BackOff,type=Warning",
		"zero series cap":              "--events.max-series=0",
		"negative object view cap":     "--object-view.max-series=-1",
		"zero target cap":              "--object-view.max-targets=0",
		"write timeout under 1s":       "--web.write-timeout=10ms",
		"telemetry path with ..":       "--web.telemetry-path=/x/../metrics",
		"telemetry path with .":        "--web.telemetry-path=/./metrics",
		"telemetry path with //":       "--web.telemetry-path=//metrics",
		"telemetry path ending /..":    "--web.telemetry-path=/metrics/..",
		"no scrape at once":            "--web.max-requests=0",
		"too many scrapes at once":     "--web.max-requests=100000",
		"no page at once":              "--web.max-page-requests=0",
		"negative pages at once":       "--web.max-page-requests=-1",
		"snapshot interval under 1s":   "--events.snapshot-interval=100ms",
	} {
		t.Run(name, func(t *testing.T) {
			for _, args := range [][]string{{"--config.check", flag}, {flag}} {
				if code := run(args); code != 2 {
					t.Fatalf("run(%q) = %d, want 2 (invalid flags)", args, code)
				}
			}
		})
	}
	for _, good := range []string{"--web.telemetry-path=/metrics/", "--web.telemetry-path=/kubecause/metrics", "--web.max-requests=1", "--web.max-page-requests=200"} {
		if code := run([]string{"--config.check", good}); code != 0 {
			t.Errorf("run(--config.check %s) = %d, want 0", good, code)
		}
	}
	// Flags of the run command do not concern explain.
	if err := validateFlags(options{memLimitRatio: 0.9, runbookPattern: DefaultRunbookURLPattern, events: events.Options{FieldSelector: "type=Warning"}}, false); err != nil {
		t.Errorf("explain's flags refused: %v", err)
	}
}

// s1EventList is one kubelet Event whose message is seed S1's, from a real hosted mesh
// (exporter/causes/golden_test.go), as `kubectl get events -o json` lists it.
const s1EventList = `{"apiVersion": "v1", "kind": "List", "items": [{
      "apiVersion": "v1", "kind": "Event",
      "metadata": {"name": "mspider-mcpc-ckube-remote-7d9.17a", "namespace": "istio-system"},
      "involvedObject": {"kind": "Pod", "namespace": "istio-system", "name": "mspider-mcpc-ckube-remote-7d9"},
      "reason": "FailedMount", "type": "Warning", "count": 12,
      "message": "MountVolume.SetUp failed for volume \"remote-kube-api-server\" : configmap \"mspider-mcpc-remote-kube-api-server\" not found",
      "source": {"component": "kubelet", "host": "node-1"}}]}`

// TestExplainReadsStandardInput: `kubecause explain -f -` reads the Events piped to it, not the
// live cluster (there is none here).
func TestExplainReadsStandardInput(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	t.Setenv("HOME", t.TempDir())
	in := filepath.Join(t.TempDir(), "events.json")
	if err := os.WriteFile(in, []byte(s1EventList), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"explain", "-f", "-"}, {"explain", "--file", "-"}, {"explain", "--file=-"}, {"explain", "-o", "json", "-f", "-"}} {
		stdin, err := os.Open(in)
		if err != nil {
			t.Fatal(err)
		}
		out, err := os.Create(filepath.Join(t.TempDir(), "out"))
		if err != nil {
			t.Fatal(err)
		}
		oldIn, oldOut := os.Stdin, os.Stdout
		os.Stdin, os.Stdout = stdin, out
		code := run(args)
		os.Stdin, os.Stdout = oldIn, oldOut
		stdin.Close()
		out.Close()
		got, _ := os.ReadFile(out.Name())
		if code != 0 || !strings.Contains(string(got), "configmap_not_found") {
			t.Errorf("run(%q) = %d, output %q; want 0 and the Event explained", args, code, got)
		}
	}
}

// TestCauseFileIsBounded: --causes.file must not hang on a FIFO nor read a device or an
// oversized file to the end, nor compile target patterns past the pattern budget (139 causes
// targeting 190 \pL{1000} each took 2.7 GB and 21 s to load); each is refused at once with an
// error.
func TestCauseFileIsBounded(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "causes.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "causes.yaml")
	if err := os.WriteFile(big, append([]byte("version: \"2026.11\"\n# "), make([]byte, 300<<10)...), 0o600); err != nil {
		t.Fatal(err)
	}
	var hostile strings.Builder
	hostile.WriteString("version: hostile\ncauses:\n  - {name: unknown, category: other, meaning: M., runbook: \"p#u\"}\n")
	for i := range 139 {
		fmt.Fprintf(&hostile, "  - {name: c%d, category: other, meaning: M., runbook: \"p#c\", target: '^(?P<target>%s)'}\n", i, strings.Repeat(`\pL{1000}`, 190))
	}
	targets := filepath.Join(dir, "targets.yaml")
	if err := os.WriteFile(targets, []byte(hostile.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/dev/zero", fifo, big, targets} {
		done := make(chan int, 1)
		go func() { done <- run([]string{"--config.check", "--causes.file=" + path}) }()
		select {
		case code := <-done:
			if code == 0 {
				t.Errorf("--causes.file=%s accepted", path)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("--causes.file=%s: no answer after 30 s", path)
		}
	}
}

// TestHelpListsTheExporterFlags: `kubecause --help` shows the exporter's flags (they are the
// application's, not hidden under the run command), the web flags of exporter-toolkit included.
func TestHelpListsTheExporterFlags(t *testing.T) {
	help := helpOutput(t, "--help")
	for _, flag := range []string{
		"--web.listen-address", "--web.config.file", "--web.telemetry-path", "--web.health-listen-address",
		"--events.namespace", "--events.exclude-namespace", "--events.field-selector", "--events.normal-reason",
		"--events.max-series", "--object-view.max-series", "--object-view.max-targets", "--endpoint-checks.config", "--endpoint-checks.enabled",
		"--events.snapshot-file", "--events.snapshot-interval",
		"--config.check", "--causes.file", "--runbook.url-pattern", "--kubeconfig", "--log.level", "--auto-gomemlimit",
	} {
		if !strings.Contains(help, flag+"=") && !strings.Contains(help, "--[no-]"+strings.TrimPrefix(flag, "--")) {
			t.Errorf("kubecause --help does not list %s:\n%s", flag, help)
		}
	}
	for _, cmd := range []string{"explain", "run"} {
		if !strings.Contains(help, "\n"+cmd) {
			t.Errorf("kubecause --help does not list the %s command", cmd)
		}
	}
	// explain's help lists its own flags.
	ex := helpOutput(t, "explain", "--help")
	for _, flag := range []string{"--file=", "--output=", "--[no-]unclassified", "--namespace="} {
		if !strings.Contains(ex, flag) {
			t.Errorf("kubecause explain --help does not list %s:\n%s", flag, ex)
		}
	}
}

// TestMain runs the command itself when asked to by helpOutput: kingpin prints the help and ends
// the process, so the help is read from a child process.
func TestMain(m *testing.M) {
	if args, ok := os.LookupEnv("KUBECAUSE_TEST_RUN_ARGS"); ok {
		os.Exit(run(strings.Split(args, "\x1f")))
	}
	os.Exit(m.Run())
}

// helpOutput runs kubecause with args in a child process and returns what it printed; it must
// exit 0.
func helpOutput(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "KUBECAUSE_TEST_RUN_ARGS="+strings.Join(args, "\x1f"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kubecause %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestRunCommandAndTopLevelFlagsAgree: the exporter's flags work before and after the (default)
// run command, and explain still parses its own flags.
func TestRunCommandAndTopLevelFlagsAgree(t *testing.T) {
	for _, args := range [][]string{
		{"--config.check", "--web.listen-address=:19737", "--events.max-series=5"},
		{"run", "--config.check", "--web.listen-address=:19737", "--events.max-series=5"},
		{"--events.max-series=5", "run", "--config.check"},
	} {
		if code := run(args); code != 0 {
			t.Errorf("run(%q) = %d, want 0", args, code)
		}
		// The same with a bad value is refused, so the flag was read.
		bad := append(slices.Clone(args), "--events.max-series=0")
		if code := run(bad); code != 2 {
			t.Errorf("run(%q) = %d, want 2 (invalid flags)", bad, code)
		}
	}
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	if code := run([]string{"explain", "--output=yaml", "-f", "/nonexistent"}); code != 2 {
		t.Errorf("explain --output=yaml = %d, want 2 (a parse error)", code)
	}
	if code := run([]string{"explain", "--unclassified", "-o", "json", "-n", "default", "-f", "/nonexistent/events.json"}); code != 1 {
		t.Errorf("explain with its flags and a missing file = %d, want 1 (flags parsed, file not found)", code)
	}
}

// TestHealthListenAddressIsChecked: a bad --web.health-listen-address is refused before start and
// by --config.check, with exit code 2; a good one passes.
func TestHealthListenAddressIsChecked(t *testing.T) {
	for _, bad := range []string{"9738", ":http-alt", ":0", ":70000", "[::1:9738", ":9737", "0.0.0.0:9737"} {
		for _, args := range [][]string{{"--config.check", "--web.health-listen-address=" + bad}, {"--web.health-listen-address=" + bad}} {
			if code := run(args); code != 2 {
				t.Errorf("run(%q) = %d, want 2 (invalid flags)", args, code)
			}
		}
	}
	for _, good := range [][]string{
		{"--web.health-listen-address=:9738"},
		{"--web.health-listen-address=127.0.0.1:9737", "--web.listen-address=10.0.0.1:9737"},
		{"--web.health-listen-address=[::1]:9738"},
	} {
		if code := run(append(good, "--config.check")); code != 0 {
			t.Errorf("run(%q) = %d, want 0", good, code)
		}
	}
}
