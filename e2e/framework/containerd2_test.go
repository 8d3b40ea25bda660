package framework

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kubecause/kubecause/internal/testenv"
)

// dumpSections parses what `containerd config dump` prints (TOML as containerd writes it: one
// "key = value" a line under "[section]" headers) into section → key → value; the top level is "".
func dumpSections(out string) map[string]map[string]string {
	s := map[string]map[string]string{"": {}}
	cur := ""
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			cur = strings.Trim(line, "[]")
			if s[cur] == nil {
				s[cur] = map[string]string{}
			}
		default:
			if k, v, ok := strings.Cut(line, " = "); ok {
				s[cur][k] = v
			}
		}
	}
	return s
}

// containerd2Binary is the containerd 2.x of hack/deps/26-containerd2.sh (or $CONTAINERD2_BIN).
func containerd2Binary(t *testing.T) string {
	t.Helper()
	bin := firstExecutable(os.Getenv("CONTAINERD2_BIN"), filepath.Join(Containerd2Dir(), "containerd"))
	if bin == "" {
		testenv.Require(t, fmt.Errorf("not built in %s", Containerd2Dir()), "containerd "+Containerd2Version, "make deps (hack/deps/26-containerd2.sh)")
	}
	return bin
}

// TestContainerdConfigV3 hands the node's containerd 2.x configuration to the real containerd
// 2.x and reads back what it understood (`config dump`): a key in the wrong plugin section or
// misspelled would come back with containerd's default, or not at all.
func TestContainerdConfigV3(t *testing.T) {
	bin := containerd2Binary(t)
	dir := t.TempDir()
	n := &Node{
		Dir:           dir,
		Socket:        filepath.Join(dir, "containerd", "containerd.sock"),
		SmallDiskDir:  filepath.Join(dir, "small-disk"),
		RegistryHosts: filepath.Join(dir, "containerd", "certs.d"),
		Bin:           NodeBinaries{Runc: "/usr/sbin/runc", CNIDir: "/usr/lib/cni"},
	}
	shim := filepath.Join(Containerd2Dir(), "containerd-shim-runc-v2")
	for _, crun := range []string{"/usr/bin/crun", ""} {
		t.Run(fmt.Sprintf("crun=%q", crun), func(t *testing.T) {
			p := n.containerdV3Params(PauseImage, shim, crun)
			path := filepath.Join(dir, "config.toml")
			if err := os.WriteFile(path, []byte(containerdConfigV3(p)), 0o644); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			out, err := exec.CommandContext(ctx, bin, "--config", path, "config", "dump").Output()
			if err != nil {
				t.Fatalf("containerd config dump: %v", err)
			}
			s := dumpSections(string(out))
			q := func(v string) string { return "'" + v + "'" }
			want := func(section, key, value string) {
				t.Helper()
				if got, ok := s[section][key]; !ok {
					t.Errorf("[%s] %s: missing, want %s", section, key, value)
				} else if got != value {
					t.Errorf("[%s] %s = %s, want %s", section, key, got, value)
				}
			}
			want("", "root", q(p.Root))
			want("", "state", q(p.State))
			// containerd 2.4 moves [grpc] and [ttrpc] into server plugins (configuration version 4).
			grpc, ttrpc := "plugins.'io.containerd.server.v1.grpc'", "plugins.'io.containerd.server.v1.ttrpc'"
			if s[grpc] == nil {
				grpc, ttrpc = "grpc", "ttrpc"
			}
			want(grpc, "address", q(p.Socket))
			want(ttrpc, "address", q(p.Socket+".ttrpc"))
			want("plugins.'io.containerd.internal.v1.opt'", "path", q(p.Opt))
			want("plugins.'io.containerd.nri.v1.nri'", "disable", "true")
			images := "plugins.'io.containerd.cri.v1.images'"
			want(images, "snapshotter", q("overlayfs"))
			want(images+".pinned_images", "sandbox", q(PauseImage))
			want(images+".registry", "config_path", q(p.RegistryHosts))
			runtime := "plugins.'io.containerd.cri.v1.runtime'"
			want(runtime, "restrict_oom_score_adj", "true")
			want(runtime+".containerd", "default_runtime_name", q("runc"))
			want(runtime+".cni", "bin_dirs", "["+q("/usr/lib/cni")+", "+q(filepath.Join(n.Dir, "cni", "bin"))+"]")
			want(runtime+".cni", "conf_dir", q(p.CNIConfDir))
			want("plugins.'io.containerd.grpc.v1.cri'", "stream_server_address", q("127.0.0.1"))
			handlers := map[string][2]string{"runc": {p.Runc, p.RuncRoot}, SmallDiskRuntimeHandler: {p.Runc, p.SmallDiskRuncRoot},
				ShimKillRuntimeHandler: {p.ShimKiller, p.ShimKillRoot}}
			if crun != "" {
				handlers[CrunRuntimeHandler] = [2]string{crun, p.CrunRoot}
			} else if s[runtime+".containerd.runtimes."+CrunRuntimeHandler] != nil {
				t.Errorf("no crun given, but containerd has a %s handler", CrunRuntimeHandler)
			}
			for h, br := range handlers {
				sec := runtime + ".containerd.runtimes." + h
				want(sec, "runtime_type", q("io.containerd.runc.v2"))
				want(sec, "runtime_path", q(shim))
				want(sec+".options", "BinaryName", q(br[0]))
				want(sec+".options", "Root", q(br[1]))
			}
		})
	}
}

// TestContainerd2VersionMatchesDeps: the framework looks for the binaries where the deps script
// caches them, by version, and the script builds the version its wrapper module requires.
func TestContainerd2VersionMatchesDeps(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile(filepath.Join(root, "hack", "deps", "26-containerd2.sh"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^CONTAINERD_VERSION=(\S+)$`).FindSubmatch(script)
	if m == nil || string(m[1]) != Containerd2Version {
		t.Errorf("hack/deps/26-containerd2.sh builds %q, the framework looks for %s", m, Containerd2Version)
	}
	mod, err := os.ReadFile(filepath.Join(root, "hack", "tools", "containerd", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	req := regexp.MustCompile(`(?m)^\s*(?:require\s+)?github\.com/containerd/containerd/v2 (\S+)`).FindSubmatch(mod)
	if req == nil || string(req[1]) != Containerd2Version {
		t.Errorf("hack/tools/containerd/go.mod requires containerd %q, the framework looks for %s", req, Containerd2Version)
	}
}
