package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubecause/kubecause/exporter/causes"
	"github.com/kubecause/kubecause/exporter/events"
	"github.com/kubecause/kubecause/exporter/pages"
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

// A Deployment whose ReplicaSet cannot create pods, and a Job that failed (issue 25): the
// controllers' Warning Events reach /problems as the real exporter wires it (engine, built-in
// table, runbook links), each with its cause and a link to the runbook section that kubecause
// itself serves. Messages from exporter/causes/testdata/corpus/tuning.yaml.
func TestProblemsShowWorkloadControllers(t *testing.T) {
	engine := events.New(events.Config{Classifier: causes.Default()})
	src := engine.NewSource("all")
	if err := src.Replace(nil, "1"); err != nil {
		t.Fatal(err)
	}
	ts := metav1.NewTime(time.Now())
	for i, ev := range []struct{ kind, name, reason, message string }{
		{"ReplicaSet", "allocation-manager-6597bc46dc", "FailedCreate", `(combined from similar events): Error creating: pods "allocation-manager-6597bc46dc-2wm8j" is forbidden: exceeded quota: namespace-quota, requested: limits.cpu=1,limits.memory=2Gi, used: limits.cpu=6,limits.memory=12Gi, limited: limits.cpu=6,limits.memory=12Gi`},
		{"Job", "hello", "DeadlineExceeded", "Job was active longer than specified deadline"},
	} {
		err := src.Add(&corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Name: fmt.Sprintf("%s.%d", ev.name, i), Namespace: "shop", UID: types.UID(fmt.Sprintf("00000000-0000-4000-8000-%012d", i))},
			InvolvedObject: corev1.ObjectReference{Kind: ev.kind, Namespace: "shop", Name: ev.name},
			Reason:         ev.reason, Message: ev.message, Type: corev1.EventTypeWarning, Count: 3,
			FirstTimestamp: ts, LastTimestamp: ts,
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	mux := http.NewServeMux()
	registerPages(mux, "", engine, causes.Default(), "/runbooks/%s", pages.NewGuard(), 8)
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/problems?format=json", nil))
	var list pages.ProblemList
	if err := json.Unmarshal(rec.Body.Bytes(), &list); err != nil {
		t.Fatalf("/problems: %v\n%s", err, rec.Body.String())
	}
	got := map[string]string{}
	for _, p := range list.Problems {
		got[p.Kind+"/"+p.Name+" "+p.Reason+" "+p.Cause] = p.RunbookURL
	}
	want := map[string]string{
		"ReplicaSet/allocation-manager-6597bc46dc FailedCreate quota_exceeded": "/runbooks/kubecauseworkloadfailing#quota_exceeded",
		"Job/hello DeadlineExceeded job_deadline_exceeded":                     "/runbooks/kubecauseworkloadfailing#job_deadline_exceeded",
	}
	if !maps.Equal(got, want) {
		t.Fatalf("/problems = %v, want %v", got, want)
	}
	for _, link := range want {
		page, anchor, _ := strings.Cut(link, "#")
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, page, nil))
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `id="`+anchor+`"`) {
			t.Errorf("%s: status %d, section %q present: %v", link, rec.Code, anchor, strings.Contains(rec.Body.String(), `id="`+anchor+`"`))
		}
	}
}
