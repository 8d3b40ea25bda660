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
	"os"
	"path/filepath"
	"strings"
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
)

// TestMillionEvents measures kubecause, with its default caps, against a kube-apiserver that
// holds N live Events (issue 28: a million, the volume of a 15k-node cluster). It is a load run,
// not part of make test: it runs only when LOAD_MILLION names the sizes
// (`LOAD_MILLION=20000,250000,1000000 hack/bench-apiserver.sh million`).
//
// Settings (environment):
//
//	LOAD_MILLION        live Events per run, comma-separated (none: the test is skipped)
//	LOAD_SEED           "apiserver": every Event created through kube-apiserver (the rate is
//	                    measured and reported); "etcd" (default): LOAD_SEED_API Events through
//	                    the apiserver (measured), the rest written into etcd directly, in the
//	                    apiserver's own storage encoding, cloned from Events the apiserver
//	                    created (below)
//	LOAD_SEED_API       Events created through the apiserver in the "etcd" mode (default 20000)
//	LOAD_SEED_CLIENTS   client connections to the apiserver while seeding (default 8)
//	LOAD_SEED_WORKERS   concurrent creates while seeding (default 128)
//	LOAD_ETCD_DIR       etcd's data directory, e.g. on a tmpfs (default: the test's directory)
//	LOAD_SEED_ONLY=1    stop after the seed (to compare seeding settings)
//	LOAD_KUBECAUSE_ARGS more kubecause flags, e.g. "--events.field-selector=type=Warning" (one watch)
//	LOAD_READY_TIMEOUT  how long a start may take to be ready (default 30m)
//	KUBECAUSE_ENV       kubecause's extra environment, e.g. "GOMEMLIMIT=230MiB" (what
//	                    --auto-gomemlimit sets under the chart's 256Mi limit)
//	LOAD_SECONDS, LOAD_LAG_RATE, LOAD_LAG_WORKERS  as for TestApiserverLoad
//	LOAD_MILLION_OUT    file that receives the results as JSON
func TestMillionEvents(t *testing.T) {
	sizes := ints("LOAD_MILLION", "")
	if len(sizes) == 0 {
		t.Skip("LOAD_MILLION is not set (an opt-in load run)")
	}
	bins, err := framework.FindBinaries(true)
	if bins.Kubecause == "" {
		t.Fatalf("kubecause binary: %v", err)
	}
	var results []MillionResult
	for _, n := range sizes {
		t.Run(fmt.Sprintf("events=%d", n), func(t *testing.T) {
			r := runMillion(t, bins.Kubecause, n)
			results = append(results, r)
			b, _ := json.MarshalIndent(r, "", "  ")
			t.Logf("result: %s", b)
		})
	}
	if out := os.Getenv("LOAD_MILLION_OUT"); out != "" && len(results) > 0 {
		b, _ := json.MarshalIndent(results, "", "  ")
		if err := os.WriteFile(out, b, 0o644); err != nil {
			t.Error(err)
		}
	}
}

// MillionStart is one start of kubecause against the held Events.
type MillionStart struct {
	Snapshot  string  `json:"snapshot"` // what became of the snapshot file (missing, restored)
	Seconds   float64 `json:"ready_seconds"`
	PeakRSS   int64   `json:"peak_rss_bytes"`
	CPU       float64 `json:"cpu_seconds"`
	SyncedRSS int64   `json:"synced_rss_bytes"`
	// The control plane during the start: initial lists (streamed), LIST requests, lists past
	// 60 s and the longest's bucket bound; the etcd range reads (pages) of Events the apiserver
	// made, those past 60 s and the longest's bucket bound; what etcd sent; both processes' CPU.
	WatchLists     float64 `json:"initial_watch_lists"`
	WatchListsOver float64 `json:"initial_watch_lists_over_60s"`
	WatchListMax   float64 `json:"initial_watch_list_max_bucket_seconds"`
	Lists          float64 `json:"list_requests"`
	Pages          float64 `json:"etcd_list_pages"`
	PagesOver      float64 `json:"etcd_list_pages_over_60s"`
	PageMax        float64 `json:"etcd_list_page_max_bucket_seconds"`
	PageMean       float64 `json:"etcd_list_page_mean_seconds"`
	EtcdSentMiB    float64 `json:"etcd_sent_mib"`
	APICPU         float64 `json:"apiserver_cpu_seconds"`
	EtcdCPU        float64 `json:"etcd_cpu_seconds"`
	APIRSSMiB      float64 `json:"apiserver_rss_mib"`
	EtcdRSSMiB     float64 `json:"etcd_rss_mib"`
	Load1          float64 `json:"load_average_1m"`
}

// MillionResult is one size.
type MillionResult struct {
	Events       int     `json:"events"`
	Seed         string  `json:"seed"`
	SeedAPI      int     `json:"seeded_through_apiserver"`
	SeedAPIRate  float64 `json:"apiserver_creates_per_s"`
	SeedAPILoad  float64 `json:"apiserver_seed_load_average_1m"`
	SeedEtcd     int     `json:"seeded_into_etcd"`
	SeedEtcdRate float64 `json:"etcd_puts_per_s"`
	Live         int64   `json:"live_events"`
	EtcdDBMiB    float64 `json:"etcd_db_mib"`

	Start        MillionStart   `json:"start"`
	Restart      MillionStart   `json:"restart_with_snapshot"`
	SnapshotSize int64          `json:"snapshot_bytes"`
	Tracked      float64        `json:"tracked_events"`
	ScrapeMS     float64        `json:"scrape_ms_median"`
	ScrapeBytes  int            `json:"scrape_bytes"`
	Lags         []Lag          `json:"lag_phases"`
	SteadyRSS    int64          `json:"steady_rss_bytes"`
	SteadyLive   float64        `json:"steady_tracked_events"`
	HeapInuse    float64        `json:"heap_inuse_bytes"`
	PeakRSS      int64          `json:"peak_rss_bytes"`
	Counted      float64        `json:"occurrences_counted"`
	Written      int64          `json:"occurrences_written"`
	Notes        map[string]any `json:"notes,omitempty"`
}

func runMillion(t *testing.T, kcBin string, n int) MillionResult {
	ctx := context.Background()
	dir := t.TempDir()
	r := MillionResult{Events: n, Seed: os.Getenv("LOAD_SEED"), Notes: map[string]any{}}
	if r.Seed == "" {
		r.Seed = "etcd"
	}
	o := framework.ClusterOptions{
		LogDir: dir,
		// Every Event lives through the run (the seed may take longer than the default hour).
		APIServerArgs: map[string]string{"event-ttl": "6h", "max-requests-inflight": "2000", "max-mutating-requests-inflight": "1000"},
		// etcd's default quota is 2 GiB; a million Events and their revisions take more. Larger
		// transactions for the direct seed.
		EtcdArgs: map[string]string{"quota-backend-bytes": fmt.Sprint(int64(16) << 30), "max-txn-ops": "1024", "max-request-bytes": fmt.Sprint(4 << 20)},
	}
	if d := os.Getenv("LOAD_ETCD_DIR"); d != "" {
		o.EtcdDataDir = filepath.Join(d, fmt.Sprintf("etcd-%d-%d", n, time.Now().UnixNano()))
		t.Cleanup(func() { _ = os.RemoveAll(o.EtcdDataDir) })
	}
	cl, err := framework.StartCluster(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cl.Stop() })
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
	client := clients[0]
	g := &Generator{Client: client, Clients: clients, Namespaces: 50, Workers: intEnv("LOAD_SEED_WORKERS", 128)}
	nss := []string{"load-probe"}
	for i := 0; i < g.Namespaces; i++ {
		nss = append(nss, g.Namespace(i))
	}
	if err := cl.EnsureNamespaces(ctx, nss...); err != nil {
		t.Fatal(err)
	}

	// Seed through the apiserver (all of them, or the first LOAD_SEED_API), then into etcd.
	r.SeedAPI = n
	if r.Seed == "etcd" {
		r.SeedAPI = min(n, intEnv("LOAD_SEED_API", 20000))
	}
	start := time.Now()
	if err := g.Seed(ctx, r.SeedAPI); err != nil {
		t.Fatal(err)
	}
	r.SeedAPIRate = float64(r.SeedAPI) / time.Since(start).Seconds()
	r.SeedAPILoad = loadAvg()
	t.Logf("seeded %d Events through the apiserver in %.1f s: %.0f creates/s (%d connections, %d writers; load average %.1f)",
		r.SeedAPI, time.Since(start).Seconds(), r.SeedAPIRate, nClients, g.Workers, r.SeedAPILoad)
	etcdURL := cl.Env.ControlPlane.Etcd.URL.String()
	if rest := n - r.SeedAPI; rest > 0 {
		start = time.Now()
		if err := seedEtcd(ctx, t, g, etcdURL, rest); err != nil {
			t.Fatal(err)
		}
		r.SeedEtcd = rest
		r.SeedEtcdRate = float64(rest) / time.Since(start).Seconds()
		t.Logf("seeded %d Events into etcd in %.1f s: %.0f puts/s (load average %.1f)", rest, time.Since(start).Seconds(), r.SeedEtcdRate, loadAvg())
	}
	// The apiserver's own count of the Events (remainingItemCount of a one-item list).
	l, err := client.CoreV1().Events("").List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	r.Live = int64(len(l.Items))
	if l.RemainingItemCount != nil {
		r.Live += *l.RemainingItemCount
	}
	if r.Live != int64(n) {
		t.Fatalf("the apiserver lists %d Events, %d were seeded", r.Live, n)
	}
	scr := cpScraper{api: cl.Client, etcdURL: etcdURL, hc: &http.Client{Timeout: 5 * time.Minute}}
	if raw, err := scr.read(ctx); err == nil {
		v, _ := SumSamples(raw["etcd"], "etcd_mvcc_db_total_size_in_bytes")
		r.EtcdDBMiB = v / (1 << 20)
	}
	t.Logf("the apiserver lists %d Events; etcd's database %.0f MiB", r.Live, r.EtcdDBMiB)
	if os.Getenv("LOAD_SEED_ONLY") == "1" {
		return r
	}

	// Start-up without a snapshot (the file is missing), the default caps.
	snap := filepath.Join(dir, "events.snapshot")
	kcAddr, err := framework.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"--web.listen-address=" + kcAddr, "--kubeconfig=" + cl.KubeconfigPath, "--log.level=info",
		"--events.snapshot-file=" + snap, "--events.snapshot-interval=10s"}
	args = append(args, strings.Fields(os.Getenv("LOAD_KUBECAUSE_ARGS"))...)
	r.Notes["kubecause_args"] = os.Getenv("LOAD_KUBECAUSE_ARGS")
	hc := &http.Client{Timeout: time.Minute}
	kc, st := startMeasured(t, ctx, scr, hc, dir, "kubecause", kcBin, kcAddr, args)
	r.Start = st
	body, _, err := Scrape(hc, "http://"+kcAddr+"/metrics")
	if err != nil {
		t.Fatal(err)
	}
	r.Tracked, _ = SumSamples(body, "kubecause_tracked_events")
	if v, _ := SumSamples(body, "kubecause_snapshot_restores_total", `result="missing"`); v == 1 {
		r.Start.Snapshot = "missing"
	}
	counted0, _ := SumSamples(body, "kubecause_events_total")
	occ0 := g.Occurrences.Load()

	// Scrape: median of 5 full scrapes (gzip).
	var times []float64
	for i := 0; i < 5; i++ {
		b, took, err := Scrape(hc, "http://"+kcAddr+"/metrics")
		if err != nil {
			t.Fatal(err)
		}
		times = append(times, float64(took.Microseconds())/1000)
		r.ScrapeBytes = len(b)
	}
	r.ScrapeMS = median(times)
	t.Logf("scrape (gzip): median %.0f ms of %v, %d bytes", r.ScrapeMS, times, r.ScrapeBytes)

	// Lag at 1,000 writes/s: the kubelet's mix, then an Event storm.
	s := loadSettings()
	g.Workers = s.lagWorkers
	r.Lags = append(r.Lags,
		lagPhase(t, ctx, g, client, hc, kcAddr, s, "kubelet", 0.2),
		lagPhase(t, ctx, g, client, hc, kcAddr, s, "storm", 1))
	quiet(t, kc)
	ps := kc.stats(t)
	r.SteadyRSS, r.PeakRSS = ps.RSS, ps.HWM
	body, _, err = Scrape(hc, "http://"+kcAddr+"/metrics")
	if err != nil {
		t.Fatal(err)
	}
	r.SteadyLive, _ = SumSamples(body, "kubecause_tracked_events")
	r.HeapInuse, _ = SumSamples(body, "go_memstats_heap_inuse_bytes")
	counted, _ := SumSamples(body, "kubecause_events_total")
	// The probes' occurrences are counted too; they are not the generator's.
	probes, _ := SumSamples(body, "kubecause_events_total", `reason="LoadProbe`)
	r.Counted, r.Written = counted-counted0-probes, g.Occurrences.Load()-occ0
	if int64(r.Counted) != r.Written {
		t.Errorf("kubecause counted %v occurrences, the writes made %d", r.Counted, r.Written)
	}
	t.Logf("steady: RSS %.1f MiB with %.0f live Events (heap in use %.1f MiB), peak so far %.1f MiB; counted %v of %d occurrences written",
		mib(r.SteadyRSS), r.SteadyLive, r.HeapInuse/(1<<20), mib(r.PeakRSS), r.Counted, r.Written)

	// Stop (SIGTERM: a snapshot written at shutdown) and start again with the snapshot.
	kc.stop()
	if fi, err := os.Stat(snap); err == nil {
		r.SnapshotSize = fi.Size()
	}
	kc2, st2 := startMeasured(t, ctx, scr, hc, dir, "kubecause-restarted", kcBin, kcAddr, args)
	r.Restart = st2
	body, _, err = Scrape(hc, "http://"+kcAddr+"/metrics")
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := SumSamples(body, "kubecause_snapshot_restores_total", `result="restored"`); v == 1 {
		r.Restart.Snapshot = "restored"
	} else {
		t.Errorf("the restart did not restore its snapshot (%d bytes)", r.SnapshotSize)
	}
	// Nothing was written while it was away: the counter goes on unchanged.
	if c, _ := SumSamples(body, "kubecause_events_total"); c != counted {
		t.Errorf("after the restart with its snapshot kubecause_events_total = %v, was %v", c, counted)
	}
	kc2.stop()
	return r
}

// startMeasured starts kubecause and reads what its start cost: the time until /readyz, its
// peak RSS then (VmHWM), its CPU, its RSS once quiet, and the control plane's side.
func startMeasured(t *testing.T, ctx context.Context, scr cpScraper, hc *http.Client, dir, name, bin, addr string, args []string) (*child, MillionStart) {
	t.Helper()
	var st MillionStart
	raw0, err := scr.read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cp0 := scr.snapshot(t, ctx)
	kc := startChild(t, dir, name, loadSettings().kcEnv, bin, args...)
	start := time.Now()
	timeout, err := time.ParseDuration(os.Getenv("LOAD_READY_TIMEOUT"))
	if err != nil {
		timeout = 30 * time.Minute
	}
	for {
		if time.Since(start) > timeout {
			// What it got to: the Events tracked, the watches' errors, its memory.
			ps := kc.stats(t)
			body, _, _ := Scrape(hc, "http://"+addr+"/metrics")
			tracked, _ := SumSamples(body, "kubecause_tracked_events")
			errs, _ := SumSamples(body, "kubecause_watch_errors_total")
			raw1, _ := scr.read(ctx)
			lists, over, longest := watchLists(raw0["apiserver"], raw1["apiserver"])
			pages, pagesOver, pageMax := etcdListPages(raw0["apiserver"], raw1["apiserver"])
			s0, _ := SumSamples(raw0["apiserver"], "etcd_request_duration_seconds_sum", `operation="list`, `resource="events"`)
			s1, _ := SumSamples(raw1["apiserver"], "etcd_request_duration_seconds_sum", `operation="list`, `resource="events"`)
			t.Fatalf("%s not ready after %s: %.0f Events tracked, %.0f watch errors, peak RSS %.1f MiB, RSS %.1f MiB, CPU %.1f s; %.0f initial lists ended (%.0f past 60 s, longest ≤ %g s), %.0f etcd pages (%.0f past 60 s, longest ≤ %g s, %.0f s in all); load average %.1f",
				name, timeout, tracked, errs, mib(ps.HWM), mib(ps.RSS), ps.CPU.Seconds(), lists, over, longest, pages, pagesOver, pageMax, s1-s0, loadAvg())
		}
		time.Sleep(100 * time.Millisecond)
		resp, err := hc.Get("http://" + addr + "/readyz")
		if err != nil {
			continue
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			break
		}
	}
	st.Seconds = time.Since(start).Seconds()
	ps := kc.stats(t)
	st.PeakRSS, st.CPU = ps.HWM, ps.CPU.Seconds()
	st.Load1 = loadAvg()
	raw1, err := scr.read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cp := delta(cp0, scr.snapshot(t, ctx))
	st.WatchLists, st.WatchListsOver, st.WatchListMax = watchLists(raw0["apiserver"], raw1["apiserver"])
	st.Lists = cp["api_list_requests"]
	st.Pages, st.PagesOver, st.PageMax = etcdListPages(raw0["apiserver"], raw1["apiserver"])
	if st.Pages > 0 {
		sum := func(b []byte) float64 {
			v, _ := SumSamples(b, "etcd_request_duration_seconds_sum", `operation="list`, `resource="events"`)
			return v
		}
		st.PageMean = (sum(raw1["apiserver"]) - sum(raw0["apiserver"])) / st.Pages
	}
	st.EtcdSentMiB = cp["etcd_sent_bytes"] / (1 << 20)
	st.APICPU, st.EtcdCPU = cp["api_cpu_seconds"], cp["etcd_cpu_seconds"]
	st.APIRSSMiB, st.EtcdRSSMiB = cp["api_rss_bytes"]/(1<<20), cp["etcd_rss_bytes"]/(1<<20)
	quiet(t, kc)
	st.SyncedRSS = kc.stats(t).RSS
	t.Logf("%s ready in %.1f s: peak RSS %.1f MiB, CPU %.1f s, RSS once quiet %.1f MiB; %.0f initial lists (%.0f past 60 s, longest ≤ %g s), %.0f LISTs, %.0f etcd pages (%.0f past 60 s, longest ≤ %g s, mean %.2f s), etcd sent %.0f MiB; apiserver %.1f CPU s, RSS %.0f MiB; etcd %.1f CPU s, RSS %.0f MiB; load average %.1f",
		name, st.Seconds, mib(st.PeakRSS), st.CPU, mib(st.SyncedRSS), st.WatchLists, st.WatchListsOver, st.WatchListMax, st.Lists,
		st.Pages, st.PagesOver, st.PageMax, st.PageMean, st.EtcdSentMiB, st.APICPU, st.APIRSSMiB, st.EtcdCPU, st.EtcdRSSMiB, st.Load1)
	return kc, st
}

// etcdListPages reads, between two expositions of kube-apiserver's /metrics, the etcd range
// reads of Events it made (etcd_request_duration_seconds, operations list and listWithCount: one
// per page of a list), how many took more than 60 s, and the smallest bucket bound that holds
// them all.
func etcdListPages(before, after []byte) (n, over60, longest float64) {
	keep := func(b []byte) []byte {
		var out bytes.Buffer
		for _, l := range strings.Split(string(b), "\n") {
			if strings.Contains(l, `resource="events"`) && strings.Contains(l, `operation="list`) {
				out.WriteString(strings.Replace(l, "etcd_request_duration_seconds", "apiserver_watch_list_duration_seconds", 1))
				out.WriteByte('\n')
			}
		}
		return out.Bytes()
	}
	// The same reading as watchLists: a histogram of one resource's requests.
	return watchLists(keep(before), keep(after))
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
	}
	var templates []template
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
		templates = append(templates, template{ev, series})
		return nil
	}
	ns := g.Namespace(0)
	for i, m := range kubeletMessages {
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
		Action: "Scheduling", Reason: "FailedScheduling", Note: schedulerMessage, Type: corev1.EventTypeWarning,
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
		tp := templates[len(templates)-1]
		if k%10 != 0 {
			tp = templates[r.IntN(len(templates)-1)]
		}
		ev := tp.ev.DeepCopy()
		nsName := g.Namespace(int(k))
		now := time.Now()
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
