//go:build load

// Package load measures kubecause against a real kube-apiserver: a load generator that writes
// and patches Events as the kubelet and kube-scheduler do, a decode floor (./floor) that reads
// the same stream and discards it, and the measurements of docs/performance.md (RSS, CPU per
// 1,000 writes, ratio to the floor, scrape time and size, event-to-metric lag, start-up peak).
// Run it with hack/bench-apiserver.sh.
package load

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/kubecause/kubecause/exporter/events/eventstest"
)

// podStart are the Normal Events of a pod's start, in order (reason, component, message format):
// kube-scheduler's Scheduled (pkg/scheduler/schedule_one.go, "Successfully assigned %v/%v to %v",
// written through events.k8s.io), then the kubelet's image pull (pkg/kubelet/images/image_manager.go)
// and container start (pkg/kubelet/kuberuntime/kuberuntime_container.go). kubecause counts none of
// them (they are not in the default --events.normal-reason): they are the bulk of a cluster's
// Events that its watches should not pay for.
var podStart = [][3]string{
	{"Scheduled", "default-scheduler", "Successfully assigned %s/%s to %s"},
	{"Pulling", "kubelet", `Pulling image "registry.example/app:1.0"`},
	{"Pulled", "kubelet", `Successfully pulled image "registry.example/app:1.0" in 1.843s (1.843s including waiting). Image size: 52428800 bytes.`},
	{"Created", "kubelet", "Created container: app"},
	{"Started", "kubelet", "Started container app"},
}

// live is one Event the generator keeps writing to. Only what the next write needs is kept.
type live struct {
	mu     sync.Mutex
	ns     string
	name   string
	count  int32
	series bool // events.k8s.io Event written by the scheduler recorder
}

// Generator writes Events into namespaces ns-0 … ns-<Namespaces-1>.
type Generator struct {
	Client kubernetes.Interface
	// Clients, when set, are used instead of Client, one picked at random per write: each with
	// its own connection to the apiserver, so that the writes are not all streams of one HTTP/2
	// connection.
	Clients    []kubernetes.Interface
	Namespaces int
	Workers    int
	// NormalShare is the share of creates (in Seed) and of writes (in Run) that are a pod's
	// start-up Normal Events (podStart), which kubecause does not count; the rest are the Warning
	// mix. 0: Warning Events only.
	NormalShare float64

	mu     sync.Mutex
	events []*live
	seq    atomic.Int64
	// Writes counts the successful writes, Errors the failed ones, Occurrences what the writes
	// add to kubecause_events_total (+1 per create, +Δcount per patch, +1 per series flush),
	// Normals the Normal Events created (counted by no one).
	Writes, Errors, Occurrences, Normals atomic.Int64
}

// client is the client of the next write.
func (g *Generator) client(r *rand.Rand) kubernetes.Interface {
	if len(g.Clients) > 0 {
		return g.Clients[r.IntN(len(g.Clients))]
	}
	return g.Client
}

// Namespace i.
func (g *Generator) Namespace(i int) string { return fmt.Sprintf("ns-%d", i%g.Namespaces) }

func (g *Generator) pick(r *rand.Rand) *live {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.events[r.IntN(len(g.events))]
}

func (g *Generator) add(l *live) {
	g.mu.Lock()
	g.events = append(g.events, l)
	g.mu.Unlock()
}

// Live is the number of Events the generator created.
func (g *Generator) Live() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.events)
}

// createKubelet creates a core/v1 Warning Event with count 1, as the kubelet's recorder does.
// One in ten is the recorder's aggregate ("combined from similar events").
func (g *Generator) createKubelet(ctx context.Context, r *rand.Rand) error {
	n := g.seq.Add(1)
	ns := g.Namespace(int(n))
	pod := fmt.Sprintf("web-%d", n/4) // about 4 Events per pod
	m := eventstest.KubeletWarnings[r.IntN(len(eventstest.KubeletWarnings))]
	msg := m[1]
	if n%10 == 0 {
		msg = eventstest.CombinedPrefix + msg
	}
	now := metav1.NewTime(time.Now())
	ev := &corev1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x%x", pod, time.Now().UnixNano(), n%4), Namespace: ns},
		InvolvedObject:      corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: ns, Name: pod, UID: types.UID(fmt.Sprintf("00000000-0000-4000-8000-%012d", n/4))},
		Reason:              m[0],
		Message:             msg,
		Source:              corev1.EventSource{Component: "kubelet", Host: fmt.Sprintf("node-%d", n%100)},
		FirstTimestamp:      now,
		LastTimestamp:       now,
		Count:               1,
		Type:                corev1.EventTypeWarning,
		ReportingController: "kubelet",
		ReportingInstance:   fmt.Sprintf("node-%d", n%100),
	}
	created, err := g.client(r).CoreV1().Events(ns).Create(ctx, ev, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	g.add(&live{ns: ns, name: created.Name, count: 1})
	g.Occurrences.Add(1)
	return nil
}

// createScheduler creates an events.k8s.io FailedScheduling Event without series, as
// kube-scheduler's recorder does for the first occurrence.
func (g *Generator) createScheduler(ctx context.Context, r *rand.Rand) error {
	n := g.seq.Add(1)
	ns := g.Namespace(int(n))
	pod := fmt.Sprintf("pending-%d", n)
	ev := &eventsv1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x", pod, time.Now().UnixNano()+n), Namespace: ns},
		EventTime:           metav1.NewMicroTime(time.Now()),
		ReportingController: "default-scheduler",
		ReportingInstance:   "default-scheduler-load",
		Action:              "Scheduling",
		Reason:              "FailedScheduling",
		Regarding:           corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: ns, Name: pod, UID: types.UID(fmt.Sprintf("00000000-0000-4000-9000-%012d", n))},
		Note:                eventstest.SchedulerWarning,
		Type:                corev1.EventTypeWarning,
	}
	created, err := g.client(r).EventsV1().Events(ns).Create(ctx, ev, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	g.add(&live{ns: ns, name: created.Name, count: 1, series: true})
	g.Occurrences.Add(1)
	return nil
}

// createNormal creates the next pod start-up Normal Event (podStart): pod n/5's step n%5. They are
// written once and never repeated, so the generator does not keep them.
func (g *Generator) createNormal(ctx context.Context, r *rand.Rand) error {
	n := g.seq.Add(1)
	ns := g.Namespace(int(n / 5))
	pod := fmt.Sprintf("start-%d", n/5)
	uid := types.UID(fmt.Sprintf("00000000-0000-4000-b000-%012d", n/5))
	node := fmt.Sprintf("node-%d", n%100)
	step := podStart[n%int64(len(podStart))]
	// The kubelet's name is the object's and a timestamp in hex (16 digits); the step as a last digit keeps
	// two writers' names apart (a pod has one Event per step).
	name := fmt.Sprintf("%s.%x%x", pod, time.Now().UnixNano(), n%5)
	var err error
	if step[0] == "Scheduled" {
		_, err = g.client(r).EventsV1().Events(ns).Create(ctx, &eventsv1.Event{
			ObjectMeta:          metav1.ObjectMeta{Name: name, Namespace: ns},
			EventTime:           metav1.NewMicroTime(time.Now()),
			ReportingController: "default-scheduler",
			ReportingInstance:   "default-scheduler-load",
			Action:              "Binding",
			Reason:              step[0],
			Regarding:           corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: ns, Name: pod, UID: uid},
			Note:                fmt.Sprintf(step[2], ns, pod, node),
			Type:                corev1.EventTypeNormal,
		}, metav1.CreateOptions{})
	} else {
		now := metav1.NewTime(time.Now())
		_, err = g.client(r).CoreV1().Events(ns).Create(ctx, &corev1.Event{
			ObjectMeta:          metav1.ObjectMeta{Name: name, Namespace: ns},
			InvolvedObject:      corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: ns, Name: pod, UID: uid, FieldPath: "spec.containers{app}"},
			Reason:              step[0],
			Message:             step[2],
			Source:              corev1.EventSource{Component: step[1], Host: node},
			FirstTimestamp:      now,
			LastTimestamp:       now,
			Count:               1,
			Type:                corev1.EventTypeNormal,
			ReportingController: step[1],
			ReportingInstance:   node,
		}, metav1.CreateOptions{})
	}
	if err == nil {
		g.Normals.Add(1)
	}
	return err
}

// Create creates one Event: with NormalShare a pod start-up Normal Event, otherwise a Warning,
// kubelet-style nine times in ten, scheduler-style otherwise.
func (g *Generator) Create(ctx context.Context, r *rand.Rand) error {
	if g.NormalShare > 0 && r.Float64() < g.NormalShare {
		return g.createNormal(ctx, r)
	}
	return g.createWarning(ctx, r)
}

// createWarning creates one Warning Event: kubelet-style nine times in ten, scheduler-style
// otherwise.
func (g *Generator) createWarning(ctx context.Context, r *rand.Rand) error {
	if r.IntN(10) == 0 {
		return g.createScheduler(ctx, r)
	}
	return g.createKubelet(ctx, r)
}

// Repeat writes more occurrences of an existing Event: a kubelet PATCH of count (+1, or a
// spam-filter jump of +5…+20 one time in ten) and lastTimestamp, or a scheduler series flush.
func (g *Generator) Repeat(ctx context.Context, r *rand.Rand, l *live) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.series {
		next := l.count + 1 // no series → series.count 2, then +1 per flush
		patch, _ := json.Marshal(map[string]any{"series": eventsv1.EventSeries{Count: next, LastObservedTime: metav1.NewMicroTime(time.Now())}})
		if _, err := g.client(r).EventsV1().Events(l.ns).Patch(ctx, l.name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			return err
		}
		l.count = next
		g.Occurrences.Add(1)
		return nil
	}
	d := int32(1)
	if r.IntN(10) == 0 {
		d = 5 + r.Int32N(16)
	}
	patch, _ := json.Marshal(map[string]any{"count": l.count + d, "lastTimestamp": metav1.NewTime(time.Now())})
	if _, err := g.client(r).CoreV1().Events(l.ns).Patch(ctx, l.name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return err
	}
	l.count += d
	g.Occurrences.Add(int64(d))
	return nil
}

// Seed creates n Events as fast as the apiserver takes them (a NormalShare of them Normal).
func (g *Generator) Seed(ctx context.Context, n int) error {
	var next atomic.Int64
	var first atomic.Value
	var wg sync.WaitGroup
	for w := 0; w < g.Workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 1))
			for next.Add(1) <= int64(n) && ctx.Err() == nil {
				if err := g.Create(ctx, r); err != nil {
					first.CompareAndSwap(nil, err)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	if err, _ := first.Load().(error); err != nil {
		return fmt.Errorf("seeding Events: %w", err)
	}
	return ctx.Err()
}

// Profile is a write rate with bursts: Rate writes/s, except for BurstSeconds of every
// BurstEvery, when it is BurstFactor × Rate.
type Profile struct {
	Rate         float64
	Duration     time.Duration
	BurstEvery   time.Duration
	BurstSeconds time.Duration
	BurstFactor  float64
	// CreateShare is the share of writes that create a new Event (the rest repeat one).
	CreateShare float64
}

// Run writes at the profile's rate until its duration has passed and returns the number of
// writes done and how long they took. Writes that fall behind are not dropped: the pacer
// issues them as soon as a worker is free, so the achieved rate says what the apiserver took.
func (g *Generator) Run(ctx context.Context, p Profile) (int64, time.Duration, error) {
	tickets := make(chan struct{}, 4096)
	var wg sync.WaitGroup
	var first atomic.Value
	before := g.Writes.Load()
	for w := 0; w < g.Workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w)+1000, uint64(time.Now().UnixNano())))
			for range tickets {
				var err error
				switch {
				case g.NormalShare > 0 && r.Float64() < g.NormalShare:
					err = g.createNormal(ctx, r)
				case r.Float64() < p.CreateShare || g.Live() == 0:
					err = g.createWarning(ctx, r)
				default:
					err = g.Repeat(ctx, r, g.pick(r))
				}
				if err != nil {
					g.Errors.Add(1)
					first.CompareAndSwap(nil, err)
					continue
				}
				g.Writes.Add(1)
			}
		}(w)
	}
	start := time.Now()
	issued := 0.0
	step := 10 * time.Millisecond
	t := time.NewTicker(step)
	for now := range t.C {
		el := now.Sub(start)
		if el >= p.Duration || ctx.Err() != nil {
			break
		}
		rate := p.Rate
		if p.BurstEvery > 0 && el%p.BurstEvery < p.BurstSeconds {
			rate *= p.BurstFactor
		}
		issued += rate * step.Seconds()
		for ; issued >= 1; issued-- {
			tickets <- struct{}{}
		}
	}
	t.Stop()
	close(tickets)
	wg.Wait()
	took := time.Since(start)
	var err error
	if e, _ := first.Load().(error); e != nil {
		err = fmt.Errorf("%d writes failed, first: %w", g.Errors.Load(), e)
	}
	return g.Writes.Load() - before, took, err
}
