//go:build load

package load

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/kubecause/kubecause/e2e/framework"
	"github.com/kubecause/kubecause/exporter/causes"
	"github.com/kubecause/kubecause/exporter/events"
	"github.com/kubecause/kubecause/exporter/kube"
)

// TestEngineProfile runs kubecause's counting engine in this process against a real
// kube-apiserver (the same reflector, client configuration and cause table as the binary),
// so its heap and CPU can be profiled with go tool pprof:
//
//	LOAD_PROFILE_DIR=$(mktemp -d) LOAD_PROFILE_EVENTS=50000 go test -tags load -run TestEngineProfile ./e2e/load
//
// It writes heap-synced.pb.gz (after the initial list), heap-steady.pb.gz and cpu-writes.pb.gz
// (while LOAD_SECONDS of writes at 1,000/s are counted) and reports the live heap per Event.
func TestEngineProfile(t *testing.T) {
	dir := os.Getenv("LOAD_PROFILE_DIR")
	if dir == "" {
		t.Skip("LOAD_PROFILE_DIR not set")
	}
	n := 50000
	if v, err := strconv.Atoi(os.Getenv("LOAD_PROFILE_EVENTS")); err == nil && v > 0 {
		n = v
	}
	seconds := 20
	if v, err := strconv.Atoi(os.Getenv("LOAD_SECONDS")); err == nil && v > 0 {
		seconds = v
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	work := t.TempDir()
	cl, err := framework.StartCluster(work, framework.ClusterOptions{LogDir: work})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cl.Stop() })
	gc, err := kubernetes.NewForConfig(fastConfig(cl.Config))
	if err != nil {
		t.Fatal(err)
	}
	g := &Generator{Client: gc, Namespaces: 50, Workers: 16}
	var nss []string
	for i := 0; i < g.Namespaces; i++ {
		nss = append(nss, g.Namespace(i))
	}
	if err := cl.EnsureNamespaces(ctx, nss...); err != nil {
		t.Fatal(err)
	}
	if err := g.Seed(ctx, n); err != nil {
		t.Fatal(err)
	}

	heap := func() uint64 {
		runtime.GC()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	writeHeap := func(name string) {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		runtime.GC()
		if err := pprof.WriteHeapProfile(f); err != nil {
			t.Fatal(err)
		}
	}

	client, _, err := kube.ClientFor(kube.Options{Kubeconfig: cl.KubeconfigPath, UserAgent: "kubecause-load"})
	if err != nil {
		t.Fatal(err)
	}
	before := heap()
	e := events.New(events.Config{
		Classifier: causes.Default(),
		MaxSeries:  100000, MaxObjectSeries: 1000000,
		NormalReasons: []string{"SandboxChanged", "BackOff"},
	})
	for _, sel := range selectors {
		src := e.NewSource(sel)
		go src.Watch(ctx, client, "", sel, slog.New(slog.DiscardHandler))
	}
	if err := framework.Poll(ctx, 5*time.Minute, func() (bool, error) { return e.Synced(), nil }); err != nil {
		t.Fatal(err)
	}
	synced := heap()
	writeHeap("heap-synced.pb.gz")
	t.Logf("%d live Events: live heap %.1f MiB after the initial list, %.0f B per Event (engine + reflectors)",
		e.Tracked(), float64(synced-before)/(1<<20), float64(synced-before)/float64(e.Tracked()))

	f, err := os.Create(filepath.Join(dir, "cpu-writes.pb.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		t.Fatal(err)
	}
	writes, took, err := g.Run(ctx, Profile{Rate: 1000, Duration: time.Duration(seconds) * time.Second, CreateShare: 0.2})
	pprof.StopCPUProfile()
	f.Close()
	if err != nil {
		t.Error(err)
	}
	steady := heap()
	writeHeap("heap-steady.pb.gz")
	t.Logf("%d writes in %.1f s; %d live Events: live heap %.1f MiB, %.0f B per Event",
		writes, took.Seconds(), e.Tracked(), float64(steady-before)/(1<<20), float64(steady-before)/float64(e.Tracked()))
}
