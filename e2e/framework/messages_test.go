package framework

import "testing"

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
