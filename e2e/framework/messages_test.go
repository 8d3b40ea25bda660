package framework

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kubecause/kubecause/exporter/causes/corpus"
)

// Messages the real node wrote in two runs: each pair is one message for the fixture.
func TestMessageKeyMasksWhatDiffersBetweenRuns(t *testing.T) {
	for _, pair := range [][2]string{
		{
			"Back-off restarting failed container main in pod agent-mz6d4_real-s5(7efe4e9a-07ac-4851-ba21-d46bc386c4d2)",
			"Back-off restarting failed container main in pod agent-6mbwz_real-s5(43a30be2-11a2-4c9f-96cd-aa80281bd2b5)",
		},
		{
			"Failed to create pod sandbox: rpc error: code = Unknown desc = failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: unable to apply cgroup configuration: mkdir /sys/fs/cgroup/memory/kubepods/burstable/podd6d51c41-8f45-475e-a866-d063f5df940b/d33c4451f809e49a9a535bedd6498f617727101a235d6498c34358719634e776: cannot allocate memory: unknown",
			"Failed to create pod sandbox: rpc error: code = Unknown desc = failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: unable to apply cgroup configuration: mkdir /sys/fs/cgroup/memory/kubecause-b724be/kubepods/burstable/podc481436b-6191-4ac2-b3f1-517709b59c5d/226bf3e2fe08fd355f60d6456574070499fe09e1be76909e6618fc52309c9031: cannot allocate memory: unknown",
		},
	} {
		a := RealMessage{}
		a.Message = pair[0]
		b := RealMessage{}
		b.Message = pair[1]
		if messageKey(a) != messageKey(b) {
			t.Errorf("different keys:\n%q\n%q", variable.ReplaceAllString(pair[0], "#"), variable.ReplaceAllString(pair[1], "#"))
		}
	}
	// Different scenarios stay apart.
	a, b := RealMessage{}, RealMessage{}
	a.Message = "Back-off restarting failed container main in pod eats-memory_real-oom(85b4899c-23a4-4370-ac62-67eac48778d2)"
	b.Message = "Back-off restarting failed container main in pod too-many-open-files_real-s4(ecfbfb1f-23dd-4158-b296-ab8ee69fcaef)"
	if messageKey(a) == messageKey(b) {
		t.Errorf("one key for two scenarios: %q", messageKey(a))
	}
}

// A second recording on other versions: a message both wrote keeps its cause and names both
// recordings; a new wording arrives as TODO naming only the new one; a message only the first
// wrote keeps naming only the first, and each recording keeps its own versions.
func TestMergeRealMessagesRecordsVersionsPerMessage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "real-node.yaml")
	msg := func(reason, text string) RealMessage {
		m := RealMessage{}
		m.Type, m.Reason, m.Component, m.Kind, m.Message = "Warning", reason, "kubelet", "Pod", text
		return m
	}
	// Real wordings of containerd 1.6.20 and 2.4.2 (docs/e2e.md, "Runtimes").
	both := msg("BackOff", "Back-off restarting failed container main in pod agent-mz6d4_real-s5(7efe4e9a-07ac-4851-ba21-d46bc386c4d2)")
	old := msg("Failed", `Error: failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: exec: "/nonexistent": stat /nonexistent: no such file or directory: unknown`)
	cur := msg("Failed", `Error: failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: error during container init: exec: "/nonexistent": stat /nonexistent: no such file or directory`)
	v16 := map[string]string{"kubelet": "v1.35.4", "containerRuntime": "containerd://1.6.20", "runc": "1.1.5+ds1"}
	v24 := map[string]string{"kubelet": "v1.35.4", "containerRuntime": "containerd://2.4.2", "runc": "1.1.5+ds1"}
	if n, err := MergeRealMessages(path, []RealMessage{both, old}, v16); err != nil || n != 2 {
		t.Fatalf("first recording: %d added, %v", n, err)
	}
	f, err := corpus.LoadRealNode(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range f.Messages {
		f.Messages[i].Cause = []string{"crash_loop_backoff", "container_command_not_found"}[i]
	}
	b, _ := yaml.Marshal(f)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	// The same message again, its pod's name suffix and UID differing as between runs.
	again := msg("BackOff", "Back-off restarting failed container main in pod agent-6mbwz_real-s5(43a30be2-11a2-4c9f-96cd-aa80281bd2b5)")
	if n, err := MergeRealMessages(path, []RealMessage{again, cur}, v24); err != nil || n != 1 {
		t.Fatalf("second recording: %d added, %v", n, err)
	}
	if f, err = corpus.LoadRealNode(path); err != nil {
		t.Fatal(err)
	}
	r16, r24 := "kubelet v1.35.4, containerd 1.6.20", "kubelet v1.35.4, containerd 2.4.2"
	want := []struct {
		cause string
		seen  []string
	}{{"crash_loop_backoff", []string{r16, r24}}, {"container_command_not_found", []string{r16}}, {"TODO", []string{r24}}}
	if len(f.Messages) != len(want) {
		t.Fatalf("%d messages, want %d: %+v", len(f.Messages), len(want), f.Messages)
	}
	for i, w := range want {
		if m := f.Messages[i]; m.Cause != w.cause || !slices.Equal(m.SeenWith, w.seen) {
			t.Errorf("message %d %q: cause %s seen with %q, want %s seen with %q", i, m.Message, m.Cause, m.SeenWith, w.cause, w.seen)
		}
	}
	if got := f.Recordings[r16]["containerRuntime"]; got != "containerd://1.6.20" {
		t.Errorf("recording %q: containerRuntime %q", r16, got)
	}
	if got := f.Recordings[r24]["containerRuntime"]; got != "containerd://2.4.2" {
		t.Errorf("recording %q: containerRuntime %q", r24, got)
	}
}
