//go:build load

package load

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/kubecause/kubecause/e2e/framework"
	"github.com/kubecause/kubecause/exporter/events/eventstest"
)

// Seeding many live Events, shared by TestMillionEvents and TestControlPlaneCost: the first
// LOAD_SEED_API through kube-apiserver, the rest written into etcd directly in the apiserver's
// own storage encoding (seedEtcd), thousands a second instead of hundreds.

// bigClusterOptions are the control plane's settings for runs with up to millions of Events.
func bigClusterOptions(logDir string) framework.ClusterOptions {
	return framework.ClusterOptions{
		LogDir: logDir,
		// Every Event lives through the run (the seed may take longer than the default hour).
		APIServerArgs: map[string]string{"event-ttl": "6h", "max-requests-inflight": "2000", "max-mutating-requests-inflight": "1000"},
		// etcd's default quota is 2 GiB; a million Events and their revisions take more. Larger
		// transactions for the direct seed.
		EtcdArgs: map[string]string{"quota-backend-bytes": fmt.Sprint(int64(16) << 30), "max-txn-ops": "1024", "max-request-bytes": fmt.Sprint(4 << 20)},
	}
}

// SeedStats is how a seed went.
type SeedStats struct {
	API      int     // Events created through the apiserver
	APIRate  float64 // their creates/s
	APILoad  float64 // load average then
	Etcd     int     // Events written into etcd directly
	EtcdRate float64 // their puts/s
	Live     int64   // Events the apiserver lists afterwards
	// EtcdDBMiB is etcd's database size afterwards.
	EtcdDBMiB float64
	Seconds   float64 // the whole seed
}

// seedEvents seeds n live Events into the cluster, a share normal of them the Normal Events of a
// pod's start (podStart), and returns the generator that knows them (its writes repeat them).
// mode "apiserver" creates every one through the apiserver; otherwise the first LOAD_SEED_API
// (default 20,000) go through the apiserver, the rest directly into etcd. The apiserver must then
// list exactly n.
func seedEvents(t *testing.T, ctx context.Context, cl *framework.Cluster, n int, normal float64, mode string) (*Generator, SeedStats) {
	t.Helper()
	var ss SeedStats
	nClients := intEnv("LOAD_SEED_CLIENTS", 8)
	var clients []kubernetes.Interface
	for i := 0; i < nClients; i++ {
		cfg := fastConfig(cl.Config)
		// A dialer of its own makes client-go build a transport (a connection) for this client
		// instead of sharing the cached one.
		cfg.Dial = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
		c, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, c)
	}
	g := &Generator{Client: clients[0], Clients: clients, Namespaces: 50, Workers: intEnv("LOAD_SEED_WORKERS", 128), NormalShare: normal}
	nss := []string{"load-probe"}
	for i := 0; i < g.Namespaces; i++ {
		nss = append(nss, g.Namespace(i))
	}
	if err := cl.EnsureNamespaces(ctx, nss...); err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	ss.API = n
	if mode != "apiserver" {
		ss.API = min(n, intEnv("LOAD_SEED_API", 20000))
	}
	start := time.Now()
	if err := g.Seed(ctx, ss.API); err != nil {
		t.Fatal(err)
	}
	ss.APIRate = float64(ss.API) / time.Since(start).Seconds()
	ss.APILoad = loadAvg()
	t.Logf("seeded %d Events (%d Normal) through the apiserver in %.1f s: %.0f creates/s (%d connections, %d writers; load average %.1f)",
		ss.API, g.Normals.Load(), time.Since(start).Seconds(), ss.APIRate, nClients, g.Workers, ss.APILoad)
	etcdURL := cl.Env.ControlPlane.Etcd.URL.String()
	if rest := n - ss.API; rest > 0 {
		start = time.Now()
		if err := seedEtcd(ctx, t, g, etcdURL, rest); err != nil {
			t.Fatal(err)
		}
		ss.Etcd = rest
		ss.EtcdRate = float64(rest) / time.Since(start).Seconds()
		t.Logf("seeded %d Events into etcd in %.1f s: %.0f puts/s (load average %.1f)", rest, time.Since(start).Seconds(), ss.EtcdRate, loadAvg())
	}
	ss.Seconds = time.Since(begin).Seconds()
	ss.Live = countEvents(t, ctx, g.Client)
	if ss.Live != int64(n) {
		t.Fatalf("the apiserver lists %d Events, %d were seeded", ss.Live, n)
	}
	scr := cpScraper{api: cl.Client, etcdURL: etcdURL, hc: &http.Client{Timeout: 5 * time.Minute}}
	if raw, err := scr.read(ctx); err == nil {
		v, _ := SumSamples(raw["etcd"], "etcd_mvcc_db_total_size_in_bytes")
		ss.EtcdDBMiB = v / (1 << 20)
	}
	t.Logf("the apiserver lists %d Events (%d Normal); etcd's database %.0f MiB; seeded in %.1f s", ss.Live, g.Normals.Load(), ss.EtcdDBMiB, ss.Seconds)
	return g, ss
}

// countEvents is the apiserver's own count of the Events (remainingItemCount of a one-item list).
func countEvents(t *testing.T, ctx context.Context, c kubernetes.Interface) int64 {
	t.Helper()
	l, err := c.CoreV1().Events("").List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	n := int64(len(l.Items))
	if l.RemainingItemCount != nil {
		n += *l.RemainingItemCount
	}
	return n
}

// fork is a generator that knows the same Events as g, with their counts as they are now, and
// writes through client: the same seed, copied for another control plane (a copy of etcd's data
// directory), without seeding again.
func (g *Generator) fork(client kubernetes.Interface, workers int) *Generator {
	g.mu.Lock()
	defer g.mu.Unlock()
	f := &Generator{Client: client, Namespaces: g.Namespaces, Workers: workers, NormalShare: g.NormalShare}
	f.events = make([]*live, len(g.events))
	for i, l := range g.events {
		f.events[i] = &live{ns: l.ns, name: l.name, count: l.count, series: l.series}
	}
	f.seq.Store(g.seq.Load())
	return f
}

// copyDir copies etcd's stopped data directory (cp -a).
func copyDir(src, dst string) error {
	if out, err := exec.Command("cp", "-a", src, dst).CombinedOutput(); err != nil {
		return fmt.Errorf("cp -a %s %s: %v: %s", src, dst, err, out)
	}
	return nil
}

// revision is etcd's current revision (the header of a range).
func (e etcdGateway) revision(ctx context.Context) (int64, error) {
	var out struct {
		Header struct {
			Revision string `json:"revision"`
		} `json:"header"`
	}
	if err := e.post(ctx, "/v3/kv/range", map[string]any{"key": []byte("/registry/namespaces/default")}, &out); err != nil {
		return 0, err
	}
	return strconv.ParseInt(out.Header.Revision, 10, 64)
}

// compact compacts etcd's history up to rev: a watch that resumes from an older resourceVersion
// gets "too old resource version" (410 Gone) and its reflector lists again.
func (e etcdGateway) compact(ctx context.Context, rev int64) error {
	return e.post(ctx, "/v3/kv/compaction", map[string]any{"revision": rev, "physical": true}, nil)
}

// etcdGateway talks to etcd's JSON gateway (/v3/…) on its client URL.
type etcdGateway struct {
	url string
	hc  *http.Client
}

func (e etcdGateway) post(ctx context.Context, path string, in, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	resp, err := e.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("etcd %s: %s: %s", path, resp.Status, body)
	}
	if out != nil {
		return json.Unmarshal(body, out)
	}
	return nil
}

// get reads one key's value.
func (e etcdGateway) get(ctx context.Context, key string) ([]byte, error) {
	var out struct {
		Kvs []struct {
			Value []byte `json:"value"`
		} `json:"kvs"`
	}
	if err := e.post(ctx, "/v3/kv/range", map[string]any{"key": []byte(key)}, &out); err != nil {
		return nil, err
	}
	if len(out.Kvs) != 1 {
		return nil, fmt.Errorf("etcd: %d values under %s", len(out.Kvs), key)
	}
	return out.Kvs[0].Value, nil
}

// grant creates a lease of ttl, as kube-apiserver does for Events (one per minute of creates).
func (e etcdGateway) grant(ctx context.Context, ttl time.Duration) (string, error) {
	var out struct {
		ID string `json:"ID"`
	}
	if err := e.post(ctx, "/v3/lease/grant", map[string]any{"TTL": int64(ttl.Seconds())}, &out); err != nil {
		return "", err
	}
	return out.ID, nil
}

type etcdPut struct {
	key   string
	value []byte
}

// put writes the keys in one transaction, each attached to the lease.
func (e etcdGateway) put(ctx context.Context, kvs []etcdPut, lease string) error {
	ops := make([]any, len(kvs))
	for i, kv := range kvs {
		ops[i] = map[string]any{"requestPut": map[string]any{
			"key": base64.StdEncoding.EncodeToString([]byte(kv.key)), "value": base64.StdEncoding.EncodeToString(kv.value), "lease": lease}}
	}
	return e.post(ctx, "/v3/kv/txn", map[string]any{"success": ops}, nil)
}

// seedEtcd writes n more Events into etcd directly, as kube-apiserver stores them: for each
// kubelet message and for kube-scheduler's FailedScheduling, one Event created through the
// apiserver is read back from etcd, checked to encode back to the same bytes, and cloned with its
// own name, UID, involved object, node and times (its managed fields keep their shape, their time
// is the clone's creation); the clones are attached to leases of the apiserver's Event TTL. The
// apiserver serves them as any other Event (it reads Events from etcd for every list and watch:
// they have no watch cache); the generator knows them, so later writes repeat them.
func seedEtcd(ctx context.Context, t *testing.T, g *Generator, etcdURL string, n int) error {
	gw := etcdGateway{url: etcdURL, hc: &http.Client{Timeout: 5 * time.Minute}}
	ser := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme)
	enc := scheme.Codecs.EncoderForVersion(ser, corev1.SchemeGroupVersion)
	r := rand.New(rand.NewPCG(7, 7))
	// Templates: one Event per kubelet message, and one of kube-scheduler's.
	type template struct {
		ev     *corev1.Event
		series bool
		step   int // a pod start-up Normal Event's step in podStart, or -1
	}
	var templates, normals []template
	read := func(ns, name string, series bool) error {
		raw, err := gw.get(ctx, "/registry/events/"+ns+"/"+name)
		if err != nil {
			return err
		}
		obj, _, err := ser.Decode(raw, nil, nil)
		if err != nil {
			return err
		}
		ev, ok := obj.(*corev1.Event)
		if !ok {
			return fmt.Errorf("etcd holds a %T under /registry/events/", obj)
		}
		again, err := runtime.Encode(enc, ev)
		if err != nil {
			return err
		}
		if !bytes.Equal(again, raw) {
			return fmt.Errorf("the Event %s/%s does not encode back to the bytes etcd holds (%d vs %d bytes)", ns, name, len(again), len(raw))
		}
		templates = append(templates, template{ev, series, -1})
		return nil
	}
	ns := g.Namespace(0)
	for i, m := range eventstest.KubeletWarnings {
		now := metav1.NewTime(time.Now())
		ev, err := g.Client.CoreV1().Events(ns).Create(ctx, &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Name: fmt.Sprintf("template-%d.%x", i, time.Now().UnixNano()), Namespace: ns},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: ns, Name: "template", UID: types.UID("00000000-0000-4000-c000-000000000001")},
			Reason:         m[0], Message: m[1], Type: corev1.EventTypeWarning,
			Source:         corev1.EventSource{Component: "kubelet", Host: "node-0"},
			FirstTimestamp: now, LastTimestamp: now, Count: 1,
			ReportingController: "kubelet", ReportingInstance: "node-0",
		}, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		if err := read(ns, ev.Name, false); err != nil {
			return err
		}
	}
	sev, err := g.Client.EventsV1().Events(ns).Create(ctx, &eventsv1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: fmt.Sprintf("template-s.%x", time.Now().UnixNano()), Namespace: ns},
		EventTime:           metav1.NewMicroTime(time.Now()),
		ReportingController: "default-scheduler", ReportingInstance: "default-scheduler-load",
		Action: "Scheduling", Reason: "FailedScheduling", Note: eventstest.SchedulerWarning, Type: corev1.EventTypeWarning,
		Regarding: corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: ns, Name: "template", UID: types.UID("00000000-0000-4000-c000-000000000002")},
	}, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	if err := read(ns, sev.Name, true); err != nil {
		return err
	}
	// The templates count as Events of the run: the clones are n minus them.
	n -= len(templates)
	for _, tp := range templates {
		g.add(&live{ns: tp.ev.Namespace, name: tp.ev.Name, count: 1, series: tp.series})
		g.Occurrences.Add(1)
	}
	// With a NormalShare, one Event per step of a pod's start (podStart), as createNormal writes
	// them; the generator does not keep Normal Events (they are not repeated).
	if g.NormalShare > 0 {
		for i, step := range podStart {
			name := fmt.Sprintf("template-n%d.%x", i, time.Now().UnixNano())
			obj := corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: ns, Name: "template", UID: types.UID("00000000-0000-4000-c000-000000000003")}
			var err error
			if step[0] == "Scheduled" {
				_, err = g.Client.EventsV1().Events(ns).Create(ctx, &eventsv1.Event{
					ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, EventTime: metav1.NewMicroTime(time.Now()),
					ReportingController: "default-scheduler", ReportingInstance: "default-scheduler-load", Action: "Binding",
					Reason: step[0], Regarding: obj, Note: fmt.Sprintf(step[2], ns, "template", "node-0"), Type: corev1.EventTypeNormal,
				}, metav1.CreateOptions{})
			} else {
				now := metav1.NewTime(time.Now())
				obj.FieldPath = "spec.containers{app}"
				_, err = g.Client.CoreV1().Events(ns).Create(ctx, &corev1.Event{
					ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, InvolvedObject: obj,
					Reason: step[0], Message: step[2], Source: corev1.EventSource{Component: step[1], Host: "node-0"},
					FirstTimestamp: now, LastTimestamp: now, Count: 1, Type: corev1.EventTypeNormal,
					ReportingController: step[1], ReportingInstance: "node-0",
				}, metav1.CreateOptions{})
			}
			if err != nil {
				return err
			}
			if err := read(ns, name, false); err != nil {
				return err
			}
			tp := templates[len(templates)-1]
			templates = templates[:len(templates)-1]
			tp.step = i
			normals = append(normals, tp)
			g.Normals.Add(1)
			n--
		}
	}

	const batch = 512
	jobs := make(chan []etcdPut, 8)
	var first atomic.Value
	var wg sync.WaitGroup
	var leaseMu sync.Mutex
	lease, leaseAt := "", time.Time{}
	currentLease := func() (string, error) {
		leaseMu.Lock()
		defer leaseMu.Unlock()
		if lease == "" || time.Since(leaseAt) > time.Minute { // the apiserver reuses a lease for a minute
			id, err := gw.grant(ctx, 6*time.Hour)
			if err != nil {
				return "", err
			}
			lease, leaseAt = id, time.Now()
		}
		return lease, nil
	}
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for kvs := range jobs {
				if first.Load() != nil {
					continue
				}
				id, err := currentLease()
				if err == nil {
					err = gw.put(ctx, kvs, id)
				}
				if err != nil {
					first.CompareAndSwap(nil, err)
				}
			}
		}()
	}
	var kvs []etcdPut
	for i := 0; i < n && first.Load() == nil; i++ {
		k := g.seq.Add(1)
		now := time.Now()
		if len(normals) > 0 && r.Float64() < g.NormalShare {
			// pod k/5's start-up step k%5, as createNormal names it.
			tp := normals[k%int64(len(normals))]
			ev := tp.ev.DeepCopy()
			nsName, pod, node := g.Namespace(int(k/5)), fmt.Sprintf("start-%d", k/5), fmt.Sprintf("node-%d", k%100)
			ev.Namespace, ev.Name = nsName, fmt.Sprintf("%s.%x%x", pod, now.UnixNano(), k%5)
			ev.UID = uuid.NewUUID()
			ev.CreationTimestamp = metav1.NewTime(now)
			for j := range ev.ManagedFields {
				ev.ManagedFields[j].Time = &ev.CreationTimestamp
			}
			ev.InvolvedObject.Namespace, ev.InvolvedObject.Name = nsName, pod
			ev.InvolvedObject.UID = types.UID(fmt.Sprintf("00000000-0000-4000-b000-%012d", k/5))
			if podStart[tp.step][0] == "Scheduled" {
				ev.EventTime = metav1.NewMicroTime(now)
				ev.Message = fmt.Sprintf(podStart[tp.step][2], nsName, pod, node)
			} else {
				ev.FirstTimestamp, ev.LastTimestamp = metav1.NewTime(now), metav1.NewTime(now)
				ev.Source.Host, ev.ReportingInstance = node, node
			}
			b, err := runtime.Encode(enc, ev)
			if err != nil {
				return err
			}
			kvs = append(kvs, etcdPut{key: "/registry/events/" + nsName + "/" + ev.Name, value: b})
			g.Normals.Add(1)
		} else {
			tp := templates[len(templates)-1]
			if k%10 != 0 {
				tp = templates[r.IntN(len(templates)-1)]
			}
			ev := tp.ev.DeepCopy()
			nsName := g.Namespace(int(k))
			pod := fmt.Sprintf("web-%d", k/4)
			if tp.series {
				pod = fmt.Sprintf("pending-%d", k)
			}
			ev.Namespace, ev.Name = nsName, fmt.Sprintf("%s.%x%x", pod, now.UnixNano(), k%4)
			ev.UID = uuid.NewUUID()
			ev.CreationTimestamp = metav1.NewTime(now)
			for j := range ev.ManagedFields {
				ev.ManagedFields[j].Time = &ev.CreationTimestamp
			}
			ev.InvolvedObject.Namespace, ev.InvolvedObject.Name = nsName, pod
			ev.InvolvedObject.UID = types.UID(fmt.Sprintf("00000000-0000-4000-d000-%012d", k))
			if tp.series {
				ev.EventTime = metav1.NewMicroTime(now)
			} else {
				ev.FirstTimestamp, ev.LastTimestamp = metav1.NewTime(now), metav1.NewTime(now)
				ev.Source.Host, ev.ReportingInstance = fmt.Sprintf("node-%d", k%100), fmt.Sprintf("node-%d", k%100)
			}
			b, err := runtime.Encode(enc, ev)
			if err != nil {
				return err
			}
			kvs = append(kvs, etcdPut{key: "/registry/events/" + nsName + "/" + ev.Name, value: b})
			g.add(&live{ns: nsName, name: ev.Name, count: 1, series: tp.series})
		}
		if len(kvs) == batch || i == n-1 {
			jobs <- kvs
			kvs = nil
		}
		if i%100000 == 99999 {
			t.Logf("  %d Events into etcd", i+1)
		}
	}
	close(jobs)
	wg.Wait()
	if err, _ := first.Load().(error); err != nil {
		return err
	}
	return nil
}
