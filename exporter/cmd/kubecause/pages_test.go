package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// explainRunbook runs `kubecause <flags> explain -o json -f <file>` on one kubelet Event whose
// message is seed S1's, from a real hosted mesh (exporter/causes/golden_test.go), and returns its
// runbook_url.
func explainRunbook(t *testing.T, flags ...string) string {
	t.Helper()
	in := filepath.Join(t.TempDir(), "events.json")
	if err := os.WriteFile(in, []byte(s1EventList), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stdout
	os.Stdout = out
	code := run(append(flags, "explain", "-o", "json", "-f", in))
	os.Stdout = old
	out.Close()
	data, _ := os.ReadFile(out.Name())
	var rows []struct {
		RunbookURL string `json:"runbook_url"`
	}
	if code != 0 || json.Unmarshal(data, &rows) != nil || len(rows) != 1 {
		t.Fatalf("run(%q) = %d, output %q", flags, code, data)
	}
	return rows[0].RunbookURL
}

// --web.external-url points the runbook URLs at kubecause's own pages; --runbook.url-pattern wins.
func TestExternalURLRunbooks(t *testing.T) {
	for _, c := range []struct {
		flags []string
		want  string
	}{
		{nil, "https://github.com/kubecause/kubecause/blob/main/docs/runbooks/kubecausepodvolumefailing.md#configmap_not_found"},
		{[]string{"--web.external-url=https://kc.example.com/kc/"}, "https://kc.example.com/kc/runbooks/kubecausepodvolumefailing#configmap_not_found"},
		{[]string{"--web.external-url=https://kc.example.com", "--runbook.url-pattern=https://wiki.example.com/%s"}, "https://wiki.example.com/kubecausepodvolumefailing#configmap_not_found"},
	} {
		if got := explainRunbook(t, c.flags...); got != c.want {
			t.Errorf("%q: runbook_url %q, want %q", c.flags, got, c.want)
		}
	}
}

// A bad external URL, or a telemetry path on one of the pages, is refused (exit 2), in
// --config.check too.
func TestExternalURLValidated(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	for _, args := range [][]string{
		{"--web.external-url=kc.example.com", "--config.check"},
		{"--web.external-url=https://kc.example.com/?x=1", "--config.check"},
		{"--web.external-url=https://kc.example.com/kc", "--web.telemetry-path=/kc/runbooks/metrics", "--config.check"},
		{"--web.telemetry-path=/problems", "--config.check"},
	} {
		if code := run(args); code != 2 {
			t.Errorf("run(%q) = %d, want 2", args, code)
		}
	}
	if code := run([]string{"--web.external-url=https://kc.example.com/kc", "--config.check"}); code != 0 {
		t.Errorf("a valid external URL refused: %d", code)
	}
}
