package explain

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/alecthomas/kingpin/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubecause/kubecause/exporter/causes"
	"github.com/kubecause/kubecause/exporter/events"
	"github.com/kubecause/kubecause/exporter/kube"
)

// TestArgsSpellsStandardInput: `-f -` and `--file -` reach the flag parser as --file=-; nothing
// else changes, nothing after "--" either.
func TestArgsSpellsStandardInput(t *testing.T) {
	for _, tc := range []struct{ in, want []string }{
		{[]string{"explain", "-f", "-"}, []string{"explain", "--file=-"}},
		{[]string{"explain", "--file", "-", "-o", "json"}, []string{"explain", "--file=-", "-o", "json"}},
		{[]string{"explain", "--file=-"}, []string{"explain", "--file=-"}},
		{[]string{"explain", "-f", "events.json"}, []string{"explain", "-f", "events.json"}},
		{[]string{"explain", "-f"}, []string{"explain", "-f"}},
		{[]string{"explain", "--", "-f", "-"}, []string{"explain", "--", "-f", "-"}},
		{[]string{}, []string{}},
	} {
		if got := Args(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Args(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestCommandReadsStandardInput: with Args, `explain -f -` sets --file to "-" (standard input);
// without it, the flag parser would leave it empty (the live cluster).
func TestCommandReadsStandardInput(t *testing.T) {
	for _, args := range [][]string{{"explain", "-f", "-"}, {"explain", "--file", "-"}, {"explain", "-n", "default", "-f", "-"}} {
		var o Options
		var namespaces []string
		app := kingpin.New("kubecause", "")
		AddCommand(app, &o, &namespaces)
		if _, err := app.Parse(Args(args)); err != nil {
			t.Fatalf("parse %q: %v", args, err)
		}
		if o.File != "-" || o.Output != "table" {
			t.Errorf("%q: --file %q, --output %q; want - and table", args, o.File, o.Output)
		}
	}
}

// TestRunExplainsAFileAndStandardInput: the same Events explained from a file and from standard
// input, as a table, as JSON and as unclassified templates.
func TestRunExplainsAFileAndStandardInput(t *testing.T) {
	file := filepath.Join(t.TempDir(), "events.json")
	if err := os.WriteFile(file, []byte(coreList), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(o Options, stdin string) string {
		t.Helper()
		o.RunbookPattern = pattern
		var out bytes.Buffer
		if err := Run(context.Background(), o, causes.Default(), strings.NewReader(stdin), &out); err != nil {
			t.Fatalf("Run(%+v) = %v", o, err)
		}
		return out.String()
	}
	for _, o := range []Options{{File: file, Output: "table"}, {File: "-", Output: "table"}} {
		got := run(o, coreList)
		for _, want := range []string{"CAUSE", "istio-system", "Pod/mspider-mcpc-ckube-remote-7d9", "configmap_not_found",
			"https://example.com/docs/runbooks/kubecausepodvolumefailing.md#configmap_not_found"} {
			if !strings.Contains(got, want) {
				t.Errorf("--file=%s: %q not in\n%s", o.File, want, got)
			}
		}
	}
	var rows []Row
	if err := json.Unmarshal([]byte(run(Options{File: "-", Output: "json"}, coreList)), &rows); err != nil || len(rows) != 2 || rows[0].Cause != "configmap_not_found" {
		t.Errorf("--output=json: rows %+v, %v; want 2, the first configmap_not_found", rows, err)
	}
	// The seed S5's Pulled (TestUnclassifiedTemplates), which no rule classifies, and S1's FailedMount.
	pulled := `{"kind":"Event","metadata":{"name":"etcd-a.1","namespace":"kube-system"},"involvedObject":{"kind":"Pod","name":"etcd-a"},
		"reason":"Pulled","type":"Normal","count":3,"message":"Container image \"k8s.gcr.io/etcd:3.5.0-0\" already present on machine"}`
	got := run(Options{File: "-", Output: "table", Unclassified: true}, strings.Replace(coreList, `"items": [`, `"items": [`+pulled+",", 1))
	if want := "COUNT  REASON  TEMPLATE\n3      Pulled  " + causes.Template(`Container image "k8s.gcr.io/etcd:3.5.0-0" already present on machine`) + "\n"; got != want {
		t.Errorf("--unclassified: got\n%s\nwant\n%s", got, want)
	}
}

// TestRunReportsWhatItCannotRead: a missing file, bad input and a live cluster without a client
// configuration are errors (main prints them after "kubecause explain: "); the live cluster is not
// read in place of a missing file.
func TestRunReportsWhatItCannotRead(t *testing.T) {
	var out bytes.Buffer
	err := Run(context.Background(), Options{File: "/nonexistent/events.json", Output: "table"}, causes.Default(), strings.NewReader(coreList), &out)
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "open /nonexistent/events.json") {
		t.Errorf("missing file: %v", err)
	}
	err = Run(context.Background(), Options{File: "-", Output: "table"}, causes.Default(), strings.NewReader(""), &out)
	if err == nil || !strings.Contains(err.Error(), "input is empty") {
		t.Errorf("empty standard input: %v", err)
	}
	kubeconfig := filepath.Join(t.TempDir(), "none")
	err = Run(context.Background(), Options{Output: "table", Kube: kube.Options{Kubeconfig: kubeconfig}}, causes.Default(), strings.NewReader(coreList), &out)
	if err == nil || !strings.Contains(err.Error(), "kubeconfig "+kubeconfig) {
		t.Errorf("live cluster without a kubeconfig: %v", err)
	}
	if out.Len() != 0 {
		t.Errorf("printed after errors:\n%s", out.String())
	}
}

// listClient serves Event lists of two items a page, recording each request.
type listClient struct {
	requests []string // namespace|field selector|continue
}

func (c *listClient) List(_ context.Context, r kube.Resource, ns string, o metav1.ListOptions) (runtime.Object, error) {
	if r != kube.Events {
		return nil, fmt.Errorf("listed %v", r)
	}
	c.requests = append(c.requests, ns+"|"+o.FieldSelector+"|"+o.Continue)
	l := &corev1.EventList{}
	for i := range 2 {
		l.Items = append(l.Items, corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s%s-%d", ns, o.Continue, i)}})
	}
	if o.Continue == "" {
		l.Continue = "next"
	}
	return l, nil
}

func (c *listClient) Watch(context.Context, kube.Resource, string, metav1.ListOptions) (watch.Interface, error) {
	return nil, errors.New("explain does not watch")
}

// TestListLiveReadsEveryNamespaceAndSelector: the live cluster is listed in each namespace asked
// for with each selector of the exporter's watches (without the excluded namespaces), page by page.
func TestListLiveReadsEveryNamespaceAndSelector(t *testing.T) {
	c := &listClient{}
	o := events.Options{Namespaces: []string{"a", "b"}, FieldSelector: "type=Warning", NormalReasons: []string{"BackOff"},
		ExcludedNamespaces: []string{"kube-system"}}
	evs, err := listLive(context.Background(), c, o)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"a|type=Warning|", "a|type=Warning|next", "a|type=Normal,reason=BackOff|", "a|type=Normal,reason=BackOff|next",
		"b|type=Warning|", "b|type=Warning|next", "b|type=Normal,reason=BackOff|", "b|type=Normal,reason=BackOff|next",
	}
	if !reflect.DeepEqual(c.requests, want) {
		t.Errorf("requests %q, want %q", c.requests, want)
	}
	if len(evs) != 16 {
		t.Errorf("%d Events, want 16 (2 a page)", len(evs))
	}
	c = &listClient{}
	if _, err := listLive(context.Background(), c, events.Options{FieldSelector: "type!=Normal"}); err != nil || !reflect.DeepEqual(c.requests, []string{"|type!=Normal|", "|type!=Normal|next"}) {
		t.Errorf("every namespace: requests %q, %v", c.requests, err)
	}
}

// oneListClient serves one page: the Events it holds, whatever the selector.
type oneListClient struct{ items []corev1.Event }

func (c oneListClient) List(context.Context, kube.Resource, string, metav1.ListOptions) (runtime.Object, error) {
	return &corev1.EventList{Items: c.items}, nil
}

func (c oneListClient) Watch(context.Context, kube.Resource, string, metav1.ListOptions) (watch.Interface, error) {
	return nil, errors.New("explain does not watch")
}

// TestListLiveKeepsWhatTheExporterCounts: with the default selector (one watch of every Event
// but the noisy Normal reasons) the list holds the Normal Events of any other reason too;
// explain shows what the exporter counts: Warnings, and Normal Events of the counted reasons.
func TestListLiveKeepsWhatTheExporterCounts(t *testing.T) {
	ev := func(typ, reason string) corev1.Event {
		return corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: typ + "-" + reason}, Type: typ, Reason: reason}
	}
	c := oneListClient{items: []corev1.Event{ev("Warning", "Failed"), ev("Normal", "BackOff"), ev("Normal", "LeaderElection"), ev("Normal", "SandboxChanged")}}
	evs, err := listLive(context.Background(), c, events.Options{FieldSelector: events.DefaultFieldSelector, NormalReasons: events.DefaultNormalReasons})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range evs {
		got = append(got, e.Name)
	}
	if want := []string{"Warning-Failed", "Normal-BackOff", "Normal-SandboxChanged"}; !reflect.DeepEqual(got, want) {
		t.Errorf("listed %q, want %q", got, want)
	}
}
