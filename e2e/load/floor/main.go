//go:build load

// Command floor is the decode floor of the load benchmark: a bare client-go reflector of
// core/v1 Events whose store decodes and discards what it receives. It opens the same watches
// as kubecause (same field selectors, same content type, same streamed initial list), so any
// event watcher pays at least what it pays; kubecause's CPU and memory are reported as a ratio
// to it. --field-selector= (empty) is one watch of every Event: a plain informer.
//
//	floor --kubeconfig K --field-selector type=Warning [--field-selector …] [--content-type json]
//	      [--stats-file F]
//
// The stats file is rewritten (at most once a second, when something changed) with
// "synced=<0|1> listed=<n> adds=<n> updates=<n> deletes=<n>" so a harness can tell when the
// floor has seen the whole stream.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

type selectors []string

func (s *selectors) String() string     { return strings.Join(*s, " ") }
func (s *selectors) Set(v string) error { *s = append(*s, v); return nil }

// discard is a reflector store that keeps nothing. It does not implement
// cache.TransformingStore: the reflector holds the streamed initial list as decoded, which is
// what a naive watcher pays at start-up.
type discard struct {
	listed, adds, updates, deletes atomic.Int64
	synced                         atomic.Int32
	pending                        atomic.Int32 // sources that have not listed yet
}

func (d *discard) Add(interface{}) error    { d.adds.Add(1); return nil }
func (d *discard) Update(interface{}) error { d.updates.Add(1); return nil }
func (d *discard) Delete(interface{}) error { d.deletes.Add(1); return nil }
func (d *discard) Replace(l []interface{}, _ string) error {
	d.listed.Add(int64(len(l)))
	if d.synced.Load() == 0 && d.pending.Add(-1) == 0 {
		d.synced.Store(1)
		// Give back what reading the list took, as kubecause does: the steady RSS is then what a
		// reflector needs, not what it grew to at start-up (the start-up peak is read as VmHWM).
		go debug.FreeOSMemory()
	}
	return nil
}
func (d *discard) Resync() error { return nil }

func (d *discard) stats() string {
	return fmt.Sprintf("synced=%d listed=%d adds=%d updates=%d deletes=%d\n",
		d.synced.Load(), d.listed.Load(), d.adds.Load(), d.updates.Load(), d.deletes.Load())
}

func main() {
	var sels selectors
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig file")
	contentType := flag.String("content-type", "protobuf", "protobuf or json")
	statsFile := flag.String("stats-file", "", "file rewritten with the counters (empty: none)")
	flag.Var(&sels, "field-selector", "server-side field selector of one watch (repeatable; empty: every Event; default type=Warning)")
	flag.Parse()
	if len(sels) == 0 {
		sels = selectors{"type=Warning"}
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(1)
	}
	switch *contentType {
	case "protobuf":
		cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
		cfg.ContentType = "application/vnd.kubernetes.protobuf"
	case "json":
		cfg.AcceptContentTypes, cfg.ContentType = "application/json", "application/json"
	default:
		fmt.Fprintln(os.Stderr, "floor: --content-type must be protobuf or json")
		os.Exit(2)
	}
	cfg.QPS, cfg.Burst = 20, 40
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	d := &discard{}
	d.pending.Store(int32(len(sels)))
	for _, sel := range sels {
		sel := sel
		lw := &cache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
				opts.FieldSelector = sel
				return client.CoreV1().Events("").List(ctx, opts)
			},
			WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
				opts.FieldSelector = sel
				return client.CoreV1().Events("").Watch(ctx, opts)
			},
		}
		r := cache.NewReflectorWithOptions(cache.ToListWatcherWithWatchListSemantics(lw, client), &corev1.Event{}, d,
			cache.ReflectorOptions{Name: "floor/" + sel, TypeDescription: "core/v1 Event"})
		go r.RunWithContext(ctx)
	}

	last := ""
	write := func() {
		s := d.stats()
		if *statsFile == "" || s == last {
			return
		}
		tmp := *statsFile + ".tmp"
		if os.WriteFile(tmp, []byte(s), 0o644) == nil && os.Rename(tmp, *statsFile) == nil {
			last = s
		}
	}
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			write()
			fmt.Fprint(os.Stderr, "floor: ", d.stats())
			return
		case <-t.C:
			write()
		}
	}
}
