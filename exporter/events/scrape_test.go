package events

import (
	"bytes"
	"context"
	"flag"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pmezard/go-difflib/difflib"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	versioncollector "github.com/prometheus/client_golang/prometheus/collectors/version"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/version"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/yaml"

	"github.com/kubecause/kubecause/exporter/causes"
	"github.com/kubecause/kubecause/exporter/kube/kubefake"
)

// The golden scrape: a fixed script of Events with real messages, played through the engine and
// the built-in cause table against client-go's fake clientset (the real reflector wiring), and
// the /metrics it ends with, as the real handler serves it. Reviewed in diffs: a change to a
// family, a label, a help text, the counting or the cause table shows up in testdata.
//
//	go test ./exporter/events/ -run TestGoldenScrape -update   (hack/generate/scrape.sh, make generate)
var update = flag.Bool("update", false, "rewrite testdata/scrape.golden.txt")

const goldenScrape = "testdata/scrape.golden.txt"

// volatileFamilies are left out of the golden scrape, which is the same on every machine and Go
// version: the Go runtime's and the process's own metrics (client_golang's collectors, registered
// as the binary registers them). docs/metrics.md documents them by reference, not by family.
var volatileFamilies = []string{"go_", "process_"}

// A step of the script: something the apiserver tells kubecause.
type scrapeStep struct {
	op string // create, update, delete
	ev *corev1.Event
}

// The messages are byte for byte from exporter/causes/testdata/real-node.yaml (what a real
// kubelet, scheduler and node controller wrote; TestGoldenScrapeMessagesAreReal holds them to it),
// but two: the Job's, which is the Kubernetes job controller's (pkg/controller/job/job_controller.go,
// "Job has reached the specified backoff limit"), and a kubelet FailedSync a user pasted
// (kubernetes/kubernetes#17003, in the tuning corpus), a message the table leaves unknown.
const (
	msgConfigMap  = `MountVolume.SetUp failed for volume "cfg" : configmap "app-config" not found`
	msgInsuffCPU  = `0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.`
	msgCrashLoop  = `Back-off restarting failed container main in pod agent-mz6d4_real-s5(7efe4e9a-07ac-4851-ba21-d46bc386c4d2)`
	msgPullBack   = `Back-off pulling image "127.0.0.1:38353/kubecause/testapp:no-such-tag"`
	msgNodeNR     = `Node kubecause-node status is now: NodeNotReady`
	msgKilling    = `Stopping container main`
	msgEvictDisk  = `The node had condition: [DiskPressure]. `
	msgJobBackoff = `Job has reached the specified backoff limit`
	msgSync       = `Error syncing pod, skipping: not all containers have started: 0 != map[0:{}]`
)

// scrapeT0 is when the script's Events happen; the engine's clock reads scrapeT0 + 90 s.
var scrapeT0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func realEvent(ns, name, uid, kind, obj, typ, reason, component, message string, count int32) *corev1.Event {
	ts := metav1.NewTime(scrapeT0)
	return &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: name, Namespace: ns, UID: types.UID(uid)},
		InvolvedObject: corev1.ObjectReference{Kind: kind, Namespace: objNamespace(kind, ns), Name: obj},
		Reason:         reason, Message: message, Type: typ, Count: count,
		Source:         corev1.EventSource{Component: component, Host: "kubecause-node"},
		FirstTimestamp: ts, LastTimestamp: ts,
	}
}

func objNamespace(kind, ns string) string {
	if kind == "Node" {
		return ""
	}
	return ns
}

// scrapeScript: one Event present before kubecause starts (a baseline: in the view, not counted),
// then Events created, repeated, aggregated into a series, ignored (a Normal reason not chosen),
// left unknown, and deleted (its view series goes).
func scrapeScript() (pre []*corev1.Event, steps []scrapeStep) {
	mount := realEvent("real-s1", "web-0.1", "7f0c0a1e-0000-4000-8000-000000000001", "Pod", "web-0", "Warning", "FailedMount", "kubelet", msgConfigMap, 3)
	sched := &corev1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: "big-0.2", Namespace: "real-s3", UID: "7f0c0a1e-0000-4000-8000-000000000002"},
		InvolvedObject:      corev1.ObjectReference{Kind: "Pod", Namespace: "real-s3", Name: "big-0"},
		Reason:              "FailedScheduling",
		Message:             msgInsuffCPU,
		Type:                "Warning",
		EventTime:           metav1.NewMicroTime(scrapeT0),
		ReportingController: "default-scheduler",
		ReportingInstance:   "default-scheduler-kubecause-node",
		Action:              "Scheduling",
	}
	schedSeries := sched.DeepCopy()
	schedSeries.Series = &corev1.EventSeries{Count: 2, LastObservedTime: metav1.NewMicroTime(scrapeT0.Add(30 * time.Second))}
	crash := realEvent("real-s5", "agent-mz6d4.3", "7f0c0a1e-0000-4000-8000-000000000003", "Pod", "agent-mz6d4", "Warning", "BackOff", "kubelet", msgCrashLoop, 1)
	crash5 := crash.DeepCopy()
	crash5.Count = 5
	crash5.LastTimestamp = metav1.NewTime(scrapeT0.Add(time.Minute))
	pull := realEvent("real-s6", "no-such-tag.4", "7f0c0a1e-0000-4000-8000-000000000004", "Pod", "no-such-tag", "Normal", "BackOff", "kubelet", msgPullBack, 1)
	node := realEvent("default", "kubecause-node.5", "7f0c0a1e-0000-4000-8000-000000000005", "Node", "kubecause-node", "Normal", "NodeNotReady", "node-controller", msgNodeNR, 1)
	kill := realEvent("real-s5", "agent-mz6d4.6", "7f0c0a1e-0000-4000-8000-000000000006", "Pod", "agent-mz6d4", "Normal", "Killing", "kubelet", msgKilling, 1)
	evict := realEvent("real-s18", "fill-disk.7", "7f0c0a1e-0000-4000-8000-000000000007", "Pod", "fill-disk", "Warning", "Evicted", "kubelet", msgEvictDisk, 1)
	job := realEvent("real-job", "get-data.8", "7f0c0a1e-0000-4000-8000-000000000008", "Job", "get-data", "Warning", "BackoffLimitExceeded", "job-controller", msgJobBackoff, 1)
	sync := realEvent("real-s5", "agent-mz6d4.9", "7f0c0a1e-0000-4000-8000-000000000009", "Pod", "agent-mz6d4", "Warning", "FailedSync", "kubelet", msgSync, 1)
	return []*corev1.Event{mount}, []scrapeStep{
		{"create", sched}, {"update", schedSeries},
		{"create", crash}, {"update", crash5},
		{"create", pull}, {"create", node}, {"create", kill},
		{"create", evict}, {"create", job}, {"create", sync},
		{"delete", evict},
	}
}

// notifications is the sum of kubecause_event_notifications_total: +1 per add, update, delete
// and list, so the test waits for each step to reach the engine instead of sleeping.
func notifications(t *testing.T, g prometheus.Gatherer) float64 {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var n float64
	for _, mf := range mfs {
		if mf.GetName() == "kubecause_event_notifications_total" {
			for _, m := range mf.GetMetric() {
				n += m.GetCounter().GetValue()
			}
		}
	}
	return n
}

// withoutVolatile gathers g without volatileFamilies.
type withoutVolatile struct{ prometheus.Gatherer }

func (w withoutVolatile) Gather() ([]*dto.MetricFamily, error) {
	mfs, err := w.Gatherer.Gather()
	return slices.DeleteFunc(mfs, func(mf *dto.MetricFamily) bool {
		return slices.ContainsFunc(volatileFamilies, func(p string) bool { return strings.HasPrefix(mf.GetName(), p) })
	}), err
}

// buildTags is the one build_info label that cannot be set: the build's -tags, from the test
// binary's build information.
var buildTags = regexp.MustCompile(`(kubecause_build_info\{.*tags=")[^"]*(")`)

// playScrape plays the script and returns the scrape, as the binary's registry serves it
// (exporter/cmd/kubecause/serve.go): build info, Go and process collectors (left out, see
// volatileFamilies), the engine and the cause table's collector.
func playScrape(t *testing.T) []byte {
	t.Helper()
	// The build info of a release build, fixed: a test binary has none.
	version.Version, version.Revision, version.Branch = "v0.0.0-golden", "0000000", "main"
	version.GoVersion, version.GoOS, version.GoArch = "go1.x", "linux", "amd64"

	table := causes.Default()
	e := New(Config{
		Classifier:    table,
		NormalReasons: []string{"BackOff", "NodeNotReady"},
		Now:           func() time.Time { return scrapeT0.Add(90 * time.Second) },
	})
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(versioncollector.NewCollector("kubecause"), collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	reg.MustRegister(e.Collectors()...)
	reg.MustRegister(causes.NewCollector(table, "builtin", "https://github.com/kubecause/kubecause/blob/main/docs/runbooks/%s.md"))

	pre, steps := scrapeScript()
	var objs []runtime.Object
	for _, ev := range pre {
		objs = append(objs, ev)
	}
	client := fake.NewClientset(objs...)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go e.NewSource("all").Watch(ctx, kubefake.Client{Interface: client}, "", "", e.cfg.Logger)
	poll(t, "initial list read", e.Synced)
	for i, s := range steps {
		before := notifications(t, reg)
		evs := client.CoreV1().Events(s.ev.Namespace)
		var err error
		switch s.op {
		case "create":
			_, err = evs.Create(ctx, s.ev, metav1.CreateOptions{})
		case "update":
			_, err = evs.Update(ctx, s.ev, metav1.UpdateOptions{})
		case "delete":
			err = evs.Delete(ctx, s.ev.Name, metav1.DeleteOptions{})
		}
		if err != nil {
			t.Fatalf("step %d (%s %s): %v", i, s.op, s.ev.Name, err)
		}
		poll(t, "step "+s.op+" "+s.ev.Name+" seen", func() bool { return notifications(t, reg) > before })
	}

	rec := httptest.NewRecorder()
	Handler(withoutVolatile{reg}, e, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 {
		t.Fatalf("scrape: %d %s", rec.Code, rec.Body.String())
	}
	return buildTags.ReplaceAll(rec.Body.Bytes(), []byte("${1}<build tags>${2}"))
}

func TestGoldenScrape(t *testing.T) {
	got := playScrape(t)
	if *update {
		if err := os.WriteFile(goldenScrape, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(goldenScrape)
	if err != nil {
		t.Fatalf("%v (run hack/generate/scrape.sh or make generate)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("/metrics differs from %s (review the difference; if it is meant, run make generate and commit it):\n%s",
			goldenScrape, lineDiff(string(want), string(got)))
	}
}

// lineDiff is a unified diff of want and got, in order: a reordered scrape shows as moved lines.
func lineDiff(want, got string) string {
	d, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: difflib.SplitLines(want), B: difflib.SplitLines(got),
		FromFile: "want", ToFile: "got", Context: 2,
	})
	if err != nil {
		return err.Error()
	}
	return d
}

// The script's messages are real: each (reason, message) is in the real node's recording, but the
// job controller's and the pasted FailedSync (scrapeScript says where they come from).
func TestGoldenScrapeMessagesAreReal(t *testing.T) {
	b, err := os.ReadFile("../causes/testdata/real-node.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Messages []struct{ Reason, Message string }
	}
	if err := yaml.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	pre, steps := scrapeScript()
	for _, s := range append(steps, scrapeStep{ev: pre[0]}) {
		if s.ev.Message == msgJobBackoff || s.ev.Message == msgSync {
			continue
		}
		if !slices.ContainsFunc(f.Messages, func(m struct{ Reason, Message string }) bool {
			return m.Reason == s.ev.Reason && m.Message == s.ev.Message
		}) {
			t.Errorf("%s %q is not in real-node.yaml", s.ev.Reason, s.ev.Message)
		}
	}
}

// TestLineDiffShowsReordering: two scrapes with the same lines in another order differ, and the
// diff says where.
func TestLineDiffShowsReordering(t *testing.T) {
	want := "a 1\nb 2\nc 3\n"
	got := "a 1\nc 3\nb 2\n"
	d := lineDiff(want, got)
	moved := strings.Contains(d, "-b 2") && strings.Contains(d, "+b 2") || strings.Contains(d, "-c 3") && strings.Contains(d, "+c 3")
	if !moved {
		t.Errorf("lineDiff of a reordered scrape does not show the moved line:\n%s", d)
	}
	if lineDiff(want, want) != "" {
		t.Errorf("lineDiff of equal texts: %q", lineDiff(want, want))
	}
}
