//go:build load

package load

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/kubecause/kubecause/e2e/framework"
	"github.com/kubecause/kubecause/exporter/events"
)

// The control plane's cost of watching Events. kube-apiserver keeps no watch cache for Events:
// every LIST and WATCH of Events is served from etcd, and every WATCH is an etcd watch of its
// own. What a watcher costs the apiserver and etcd is therefore read from their own /metrics,
// as counts (requests, notifications sent, bytes) that do not move with the machine's CPU
// noise, with their CPU seconds beside as a secondary figure. Each scenario gets a fresh
// control plane with the same Events and the same writes:
//
//	none                 no watcher: what the writes cost by themselves
//	floor                one plain reflector on every Event (no field selector), decode and discard
//	floor-per-reason     the floor with kubecause's nine watches (type=Warning + one per reason)
//	kubecause            kubecause, --events.field-selector=type=Warning (9 watches)
//	kubecause-x2         two replicas of it
//	kubecause-one-watch  kubecause with --events.field-selector= (one unfiltered watch; the
//	                     engine drops the Normal reasons it does not count)
//	kubecause-one-watch-x2
//	kubecause-one-watch-noise-excluded  kubecause, default flags: one watch that excludes the
//	                     commonest Normal reasons server-side (events.DefaultFieldSelector)
//	kubecause-one-watch-noise-excluded-x2  two replicas of it
//
// Settings (environment):
//
//	LOAD_CP_EVENTS     live Events before the watchers start (default 10000)
//	LOAD_CP_WRITES     writes after they have synced (default 15000)
//	LOAD_CP_RATE       their rate in writes/s (default 200)
//	LOAD_CP_NORMAL     share of Normal pod start-up Events among creates and writes (default 0.8)
//	LOAD_CP_SCENARIOS  comma-separated scenarios (default: all of the above)
//	LOAD_CP_SEED       "etcd" (default): seed once (seedEvents: LOAD_SEED_API Events through the
//	                   apiserver, the rest directly into etcd), stop that control plane, and give
//	                   each scenario a copy of its etcd data directory and a fresh apiserver;
//	                   "apiserver": each scenario seeds its own, every Event through the apiserver
//	LOAD_ETCD_DIR      where etcd's data directories go, e.g. a tmpfs (default: the test's directory)
//	LOAD_CP_RELIST     comma-separated relists after the writes: "watchers" (default: the
//	                   watchers are stopped and started again) and/or "apiserver" (etcd is
//	                   compacted past the watchers' resourceVersion and kube-apiserver restarted:
//	                   every watch gets "too old resource version" and lists again)
//	LOAD_READY_TIMEOUT how long a start or a relist may take (default 10m)
//	LOAD_CP_OUT        file that receives the results as JSON
//	LOAD_CP_DUMP       directory that receives the last raw /metrics of kube-apiserver and etcd

// cpScenario is one set of watchers.
type cpScenario struct {
	Name     string
	kind     string // "none", "floor", "kubecause"
	replicas int
	args     []string // kubecause's extra flags, or the floor's field selectors
}

var cpScenarios = []cpScenario{
	{Name: "none", kind: "none"},
	{Name: "floor", kind: "floor", replicas: 1, args: []string{""}},
	{Name: "floor-per-reason", kind: "floor", replicas: 1, args: nineWatches},
	{Name: "kubecause", kind: "kubecause", replicas: 1, args: []string{"--events.field-selector=type=Warning"}},
	{Name: "kubecause-x2", kind: "kubecause", replicas: 2, args: []string{"--events.field-selector=type=Warning"}},
	{Name: "kubecause-one-watch", kind: "kubecause", replicas: 1, args: []string{"--events.field-selector="}},
	{Name: "kubecause-one-watch-x2", kind: "kubecause", replicas: 2, args: []string{"--events.field-selector="}},
	{Name: "kubecause-one-watch-noise-excluded", kind: "kubecause", replicas: 1}, // the default
	{Name: "kubecause-one-watch-noise-excluded-x2", kind: "kubecause", replicas: 2},
}

// nineWatches are the field selectors of kubecause's watches with
// --events.field-selector=type=Warning (the default until the layout decision,
// docs/performance.md): type=Warning and one per default --events.normal-reason.
var nineWatches = events.WatchSelectors("type=Warning", events.DefaultNormalReasons, nil)

// cpCounter is one figure read from a control-plane /metrics: the sum of the samples of a
// family whose labels contain every string of match.
type cpCounter struct {
	Key    string
	source string // "apiserver" or "etcd"
	family string
	match  []string
}

var cpCounters = []cpCounter{
	// kube-apiserver, its Events resource. Events have no watch cache: each WATCH is an etcd
	// watch of its own, whose every change the apiserver receives and decodes
	// (api_storage_events) before filtering it by the watch's field selector; a watch with
	// sendInitialEvents (client-go's streamed list) reads its initial Events from etcd (an etcd
	// list) and sends them as watch events.
	{"api_watch_events", "apiserver", "apiserver_watch_events_total", []string{`resource="events"`}},
	{"api_watch_bytes", "apiserver", "apiserver_watch_events_sizes_sum", []string{`resource="events"`}},
	{"api_storage_events", "apiserver", "apiserver_storage_events_received_total", []string{`resource="events"`}},
	{"api_watch_requests", "apiserver", "apiserver_request_total", []string{`verb="WATCH"`, `resource="events"`}},
	{"api_list_requests", "apiserver", "apiserver_request_total", []string{`verb="LIST"`, `resource="events"`}},
	{"api_list_bytes", "apiserver", "apiserver_response_sizes_sum", []string{`verb="LIST"`, `resource="events"`}},
	{"api_etcd_lists", "apiserver", "etcd_request_duration_seconds_count", []string{`operation="list"`, `resource="events"`}},
	{"api_cpu_seconds", "apiserver", "process_cpu_seconds_total", nil},
	// etcd: its ranges, the watch events it sent, its watch responses and every byte it sent to
	// its clients (the apiserver).
	{"etcd_ranges", "etcd", "etcd_mvcc_range_total", nil},
	{"etcd_watch_events", "etcd", "etcd_debugging_mvcc_events_total", nil},
	{"etcd_watch_messages", "etcd", "grpc_server_msg_sent_total", []string{`grpc_method="Watch"`, `grpc_service="etcdserverpb.Watch"`}},
	{"etcd_sent_bytes", "etcd", "etcd_network_client_grpc_sent_bytes_total", nil},
	{"etcd_cpu_seconds", "etcd", "process_cpu_seconds_total", nil},
}

// cpGauges are read as they are at the end of a step.
var cpGauges = []cpCounter{
	{"api_rss_bytes", "apiserver", "process_resident_memory_bytes", nil},
	{"api_watchers", "apiserver", "apiserver_longrunning_requests", []string{`verb="WATCH"`, `resource="events"`}},
	{"etcd_rss_bytes", "etcd", "process_resident_memory_bytes", nil},
	{"etcd_watchers", "etcd", "etcd_debugging_mvcc_watcher_total", nil},
}

// cpScraper reads the /metrics of the apiserver (with the admin credentials) and of etcd.
type cpScraper struct {
	api     kubernetes.Interface
	etcdURL string
	hc      *http.Client
}

func (s cpScraper) read(ctx context.Context) (map[string][]byte, error) {
	api, err := s.api.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("kube-apiserver /metrics: %w", err)
	}
	etcd, _, err := Scrape(s.hc, s.etcdURL+"/metrics")
	if err != nil {
		return nil, fmt.Errorf("etcd /metrics: %w", err)
	}
	return map[string][]byte{"apiserver": api, "etcd": etcd}, nil
}

// cpSnapshot is every counter and gauge at one moment.
type cpSnapshot map[string]float64

func (s cpScraper) snapshot(t *testing.T, ctx context.Context) cpSnapshot {
	t.Helper()
	out, _ := s.snapshotRaw(t, ctx)
	return out
}

// snapshotRaw is snapshot and kube-apiserver's exposition it was read from.
func (s cpScraper) snapshotRaw(t *testing.T, ctx context.Context) (cpSnapshot, []byte) {
	t.Helper()
	b, err := s.read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d := os.Getenv("LOAD_CP_DUMP"); d != "" { // the raw exposition, to check the families' names
		for k, v := range b {
			_ = os.WriteFile(filepath.Join(d, k+".metrics"), v, 0o644)
		}
	}
	out := cpSnapshot{}
	for _, c := range append(append([]cpCounter(nil), cpCounters...), cpGauges...) {
		v, _ := SumSamples(b[c.source], c.family, c.match...)
		out[c.Key] = v
	}
	return out, b["apiserver"]
}

// delta is after−before for the counters and after's value for the gauges.
func delta(before, after cpSnapshot) cpSnapshot {
	out := cpSnapshot{}
	for _, c := range cpCounters {
		out[c.Key] = after[c.Key] - before[c.Key]
	}
	for _, c := range cpGauges {
		out[c.Key] = after[c.Key]
	}
	return out
}

// CPStep is what one step of a scenario cost.
type CPStep struct {
	Seconds float64    `json:"seconds"`
	Cost    cpSnapshot `json:"control_plane"`
	// CPU seconds and peak RSS of the watchers (sum over replicas).
	WatcherCPU float64 `json:"watcher_cpu_seconds"`
	WatcherHWM int64   `json:"watcher_peak_rss_bytes"`
	WatcherRSS int64   `json:"watcher_rss_bytes"`
	// The initial lists streamed during the step, those past 60 s, and the bucket bound that
	// holds the longest (watchLists).
	InitialLists float64 `json:"initial_lists"`
	ListsOver60  float64 `json:"initial_lists_over_60s"`
	LongestList  float64 `json:"longest_initial_list_le_seconds"`
}

// CPResult is one scenario.
type CPResult struct {
	Scenario string  `json:"scenario"`
	Events   int     `json:"events"`
	Normal   float64 `json:"normal_share"`
	Writes   int64   `json:"write_count"`
	Rate     float64 `json:"achieved_writes_per_s"`
	Load1    float64 `json:"load_average_1m"`
	Startup  CPStep  `json:"startup"`
	Steady   CPStep  `json:"writes"`
	Restart  CPStep  `json:"restart"`
	// Relist: etcd compacted, kube-apiserver restarted, every watch listed again. The
	// apiserver's counters are its new process's (they include its own start: see "none");
	// etcd's are the difference. Relisted is what the watchers say they did (kubecause's
	// kubecause_relists_total, the floor's Events listed), Live the Events there were to list.
	Relist   CPStep  `json:"relist_apiserver"`
	Relisted float64 `json:"relisted"`
	Live     int64   `json:"relist_live_events"`
	// How the scenario's control plane got its Events: seeded (SeedSeconds) or a copy of the
	// seeded etcd data directory (CopySeconds), and how long the control plane took to start.
	// ScrapeMS is the median of 5 full scrapes (gzip) of the first kubecause once synced, and
	// ScrapeBytes their size.
	ScrapeMS     float64 `json:"scrape_ms_median,omitempty"`
	ScrapeBytes  int     `json:"scrape_bytes,omitempty"`
	SeedSeconds  float64 `json:"seed_seconds,omitempty"`
	CopySeconds  float64 `json:"copy_seconds,omitempty"`
	StartSeconds float64 `json:"control_plane_start_seconds"`
}

// TestControlPlaneCost measures, for each scenario, what the watchers' start-up (the initial
// lists), the writes (the watch notifications) and a restart of the watchers (the relists) cost
// kube-apiserver and etcd.
func TestControlPlaneCost(t *testing.T) {
	events := intEnv("LOAD_CP_EVENTS", 10000)
	writes := intEnv("LOAD_CP_WRITES", 15000)
	rate := intEnv("LOAD_CP_RATE", 200)
	normal := 0.8
	if v := os.Getenv("LOAD_CP_NORMAL"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 || f > 1 {
			t.Fatalf("LOAD_CP_NORMAL=%q: want a share between 0 and 1", v)
		}
		normal = f
	}
	var scenarios []cpScenario
	if v := os.Getenv("LOAD_CP_SCENARIOS"); v != "" {
		for _, name := range strings.Split(v, ",") {
			found := false
			for _, s := range cpScenarios {
				if s.Name == strings.TrimSpace(name) {
					scenarios, found = append(scenarios, s), true
				}
			}
			if !found {
				t.Fatalf("LOAD_CP_SCENARIOS: unknown scenario %q", name)
			}
		}
	} else {
		scenarios = cpScenarios
	}
	bins, err := framework.FindBinaries(true)
	if bins.Kubecause == "" {
		t.Fatalf("kubecause binary: %v", err)
	}
	floor := buildFloor(t)
	var seed *cpSeed
	if os.Getenv("LOAD_CP_SEED") != "apiserver" {
		seed = seedOnce(t, events, normal)
	}
	var results []CPResult
	for _, sc := range scenarios {
		t.Run(sc.Name, func(t *testing.T) {
			r := runScenario(t, sc, bins.Kubecause, floor, seed, events, writes, rate, normal)
			results = append(results, r)
			// Reported as each scenario ends: a long run stopped early keeps what it measured.
			reportCP([]CPResult{r})
			if out := os.Getenv("LOAD_CP_OUT"); out != "" {
				b, _ := json.MarshalIndent(results, "", "  ")
				if err := os.WriteFile(out, b, 0o644); err != nil {
					t.Error(err)
				}
			}
		})
	}
}

// cpSeed is the seeded etcd data directory the scenarios copy, and the generator that knows its
// Events.
type cpSeed struct {
	dataDir string
	g       *Generator
	stats   SeedStats
}

// seedOnce seeds the Events once, into a control plane of its own, and stops it: each scenario
// starts from a copy of its etcd data directory.
func seedOnce(t *testing.T, n int, normal float64) *cpSeed {
	ctx := context.Background()
	dir := t.TempDir()
	o := bigClusterOptions(dir)
	o.EtcdDataDir = filepath.Join(etcdBase(dir), fmt.Sprintf("etcd-seed-%d", time.Now().UnixNano()))
	t.Cleanup(func() { _ = os.RemoveAll(o.EtcdDataDir) })
	cl, err := framework.StartCluster(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	g, ss := seedEvents(t, ctx, cl, n, normal, "etcd")
	if err := cl.Stop(); err != nil && !strings.Contains(err.Error(), "timeout waiting for process") {
		t.Fatalf("stopping the seeded control plane: %v", err)
	}
	return &cpSeed{dataDir: o.EtcdDataDir, g: g, stats: ss}
}

// etcdBase is where etcd's data directories go: LOAD_ETCD_DIR (a tmpfs) or dir.
func etcdBase(dir string) string {
	if d := os.Getenv("LOAD_ETCD_DIR"); d != "" {
		return d
	}
	return dir
}

func readyTimeout() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("LOAD_READY_TIMEOUT")); err == nil {
		return d
	}
	return 10 * time.Minute
}

func intEnv(env string, def int) int {
	if v := ints(env, ""); len(v) > 0 {
		return v[0]
	}
	return def
}

// watchers are the processes of one scenario.
type watchers struct {
	sc        cpScenario
	dir       string
	bin       string
	kubecfg   string
	procs     []*child
	addrs     []string // kubecause's listen addresses
	stats     []string // the floors' stats files
	counted0  []float64
	starts    int
	hc        *http.Client
	floorSeen int64 // notifications the floor had seen when it (re)started
}

func (w *watchers) start(t *testing.T) {
	t.Helper()
	w.starts++
	w.procs, w.addrs, w.stats = nil, nil, nil
	for i := 0; i < w.sc.replicas; i++ {
		name := fmt.Sprintf("%s-%d-%d", w.sc.kind, i, w.starts)
		switch w.sc.kind {
		case "kubecause":
			addr, err := framework.FreeAddr()
			if err != nil {
				t.Fatal(err)
			}
			args := append([]string{"--web.listen-address=" + addr, "--kubeconfig=" + w.kubecfg, "--log.level=info"}, w.sc.args...)
			w.procs = append(w.procs, startChild(t, w.dir, name, nil, w.bin, args...))
			w.addrs = append(w.addrs, addr)
		case "floor":
			stats := filepath.Join(w.dir, name+".stats")
			args := []string{"--kubeconfig=" + w.kubecfg, "--content-type=protobuf", "--stats-file=" + stats}
			for _, s := range w.sc.args {
				args = append(args, "--field-selector="+s)
			}
			w.procs = append(w.procs, startChild(t, w.dir, name, nil, w.bin, args...))
			w.stats = append(w.stats, stats)
		}
	}
	deadline := time.Now().Add(readyTimeout())
	for _, addr := range w.addrs {
		for {
			if time.Now().After(deadline) {
				t.Fatalf("kubecause at %s not ready after %s", addr, readyTimeout())
			}
			if resp, err := w.hc.Get("http://" + addr + "/readyz"); err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					break
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	for _, st := range w.stats {
		for floorStats(st)["synced"] != 1 {
			if time.Now().After(deadline) {
				t.Fatalf("floor not synced after %s", readyTimeout())
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	w.counted0 = nil
	for _, addr := range w.addrs {
		w.counted0 = append(w.counted0, w.counted(t, addr))
	}
}

func (w *watchers) counted(t *testing.T, addr string) float64 {
	t.Helper()
	b, _, err := Scrape(w.hc, "http://"+addr+"/metrics?name[]=kubecause_events_total")
	if err != nil {
		t.Fatal(err)
	}
	v, _ := SumSamples(b, "kubecause_events_total")
	return v
}

// caughtUp waits until every watcher has seen the writes since it started: kubecause has
// counted every occurrence, the floor has received a notification for each write its
// selectors select.
func (w *watchers) caughtUp(t *testing.T, occurrences int64, floorWrites int64) {
	t.Helper()
	ctx := context.Background()
	for i, addr := range w.addrs {
		var got float64
		if err := framework.Poll(ctx, 2*time.Minute, func() (bool, error) {
			got = w.counted(t, addr) - w.counted0[i]
			return int64(got) >= occurrences, nil
		}); err != nil {
			t.Errorf("kubecause %d counted %v occurrences, the writes made %d", i, got, occurrences)
		}
	}
	for _, st := range w.stats {
		var s map[string]int64
		if err := framework.Poll(ctx, 2*time.Minute, func() (bool, error) {
			s = floorStats(st)
			return s["adds"]+s["updates"] >= floorWrites, nil
		}); err != nil {
			t.Errorf("floor saw %v, want %d notifications", s, floorWrites)
		}
	}
}

// relisted is what the watchers have listed since they started: kubecause's full lists after
// the first (kubecause_relists_total), the floor's Events listed.
func (w *watchers) relisted(t *testing.T) float64 {
	t.Helper()
	var n float64
	for _, addr := range w.addrs {
		b, _, err := Scrape(w.hc, "http://"+addr+"/metrics?name[]=kubecause_relists_total")
		if err != nil {
			t.Fatal(err)
		}
		v, _ := SumSamples(b, "kubecause_relists_total")
		n += v
	}
	for _, st := range w.stats {
		n += float64(floorStats(st)["listed"])
	}
	return n
}

// countedNow is kubecause_events_total summed over the replicas.
func (w *watchers) countedNow(t *testing.T) float64 {
	t.Helper()
	var n float64
	for _, addr := range w.addrs {
		n += w.counted(t, addr)
	}
	return n
}

// resetPeak resets the watchers' peak RSS (VmHWM) so that the next reading is the peak of what
// follows (proc(5), /proc/<pid>/clear_refs).
func (w *watchers) resetPeak(t *testing.T) {
	t.Helper()
	for _, p := range w.procs {
		if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", p.cmd.Process.Pid), []byte("5"), 0o644); err != nil {
			t.Fatalf("resetting %s's peak RSS: %v", p.name, err)
		}
	}
}

func (w *watchers) stop() {
	for _, p := range w.procs {
		p.stop()
	}
}

// proc is the watchers' CPU, peak and current RSS (sums over replicas).
func (w *watchers) proc(t *testing.T) (cpu float64, hwm, rss int64) {
	t.Helper()
	for _, p := range w.procs {
		s := p.stats(t)
		cpu += s.CPU.Seconds()
		hwm += s.HWM
		rss += s.RSS
	}
	return
}

func loadAvg() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}

func runScenario(t *testing.T, sc cpScenario, kcBin, floorBin string, seed *cpSeed, events, writes, rate int, normal float64) CPResult {
	ctx := context.Background()
	dir := t.TempDir()
	r := CPResult{Scenario: sc.Name, Events: events, Normal: normal}
	o := framework.ClusterOptions{LogDir: dir}
	if seed != nil {
		// A copy of the seeded etcd data directory, a fresh kube-apiserver.
		o = bigClusterOptions(dir)
		o.EtcdDataDir = filepath.Join(etcdBase(dir), fmt.Sprintf("etcd-%s-%d", sc.Name, time.Now().UnixNano()))
		t.Cleanup(func() { _ = os.RemoveAll(o.EtcdDataDir) })
		start := time.Now()
		if err := copyDir(seed.dataDir, o.EtcdDataDir); err != nil {
			t.Fatal(err)
		}
		r.CopySeconds = time.Since(start).Seconds()
	}
	start := time.Now()
	cl, err := framework.StartCluster(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cl.Stop() })
	r.StartSeconds = time.Since(start).Seconds()
	client, err := kubernetes.NewForConfig(fastConfig(cl.Config))
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Timeout: time.Minute}
	etcdURL := cl.Env.ControlPlane.Etcd.URL.String()
	scr := cpScraper{api: cl.Client, etcdURL: etcdURL, hc: hc}
	var g *Generator
	if seed != nil {
		g = seed.g.fork(client, 16)
		if live := countEvents(t, ctx, client); live != int64(events) {
			t.Fatalf("the copied etcd data directory holds %d Events, %d were seeded", live, events)
		}
		t.Logf("copied the seeded etcd data (%d Events, %.0f MiB) in %.1f s, control plane started in %.1f s (seeding took %.1f s)",
			events, seed.stats.EtcdDBMiB, r.CopySeconds, r.StartSeconds, seed.stats.Seconds)
	} else {
		g = &Generator{Client: client, Namespaces: 50, Workers: 16, NormalShare: normal}
		nss := []string{}
		for i := 0; i < g.Namespaces; i++ {
			nss = append(nss, g.Namespace(i))
		}
		if err := cl.EnsureNamespaces(ctx, nss...); err != nil {
			t.Fatal(err)
		}
		start = time.Now()
		if err := g.Seed(ctx, events); err != nil {
			t.Fatal(err)
		}
		r.SeedSeconds = time.Since(start).Seconds()
		t.Logf("seeded %d Events (%d Normal) in %.1f s", events, g.Normals.Load(), r.SeedSeconds)
	}

	bin := kcBin
	if sc.kind == "floor" {
		bin = floorBin
	}
	w := &watchers{sc: sc, dir: dir, bin: bin, kubecfg: cl.KubeconfigPath, hc: hc}
	var raw []byte // kube-apiserver's exposition at the start of the step
	step := func(s0 cpSnapshot, cpu0, took float64) CPStep {
		cpu, hwm, rss := w.proc(t)
		s1, raw1 := scr.snapshotRaw(t, ctx)
		st := CPStep{Seconds: took, Cost: delta(s0, s1), WatcherCPU: cpu - cpu0, WatcherHWM: hwm, WatcherRSS: rss}
		st.InitialLists, st.ListsOver60, st.LongestList = watchLists(raw, raw1)
		raw = raw1
		return st
	}

	// Start-up: the initial lists and the watches.
	s0, raw0 := scr.snapshotRaw(t, ctx)
	raw = raw0
	start = time.Now()
	w.start(t)
	r.Startup = step(s0, 0, time.Since(start).Seconds())
	t.Logf("start-up: %.0f initial lists (%.0f past 60 s, the longest ≤ %g s) in %.1f s; watchers' peak RSS %.1f MiB; load average %.1f",
		r.Startup.InitialLists, r.Startup.ListsOver60, r.Startup.LongestList, r.Startup.Seconds, mib(r.Startup.WatcherHWM), loadAvg())
	if len(w.addrs) > 0 {
		ms, times, size, err := medianScrape(hc, "http://"+w.addrs[0]+"/metrics", 5)
		if err != nil {
			t.Fatal(err)
		}
		r.ScrapeMS, r.ScrapeBytes = ms, size
		t.Logf("scrape (gzip): median %.0f ms of %v, %d bytes", r.ScrapeMS, times, r.ScrapeBytes)
	}

	// The writes: what each watcher's notifications cost.
	s1 := scr.snapshot(t, ctx)
	cpu1, _, _ := w.proc(t)
	occ0, writes0, normals0 := g.Occurrences.Load(), g.Writes.Load(), g.Normals.Load()
	load0 := loadAvg()
	n, took, err := g.Run(ctx, Profile{Rate: float64(rate), Duration: time.Duration(float64(writes) / float64(rate) * float64(time.Second)), CreateShare: 0.2})
	if err != nil {
		t.Errorf("writes at %d/s: %v", rate, err)
	}
	r.Writes, r.Rate, r.Load1 = n, float64(n)/took.Seconds(), (load0+loadAvg())/2
	// The floor on every Event sees every write; on kubecause's watches, the Warning writes only.
	floorWrites := g.Writes.Load() - writes0
	if len(sc.args) > 1 {
		floorWrites -= g.Normals.Load() - normals0
	}
	w.caughtUp(t, g.Occurrences.Load()-occ0, floorWrites)
	r.Steady = step(s1, cpu1, took.Seconds())
	t.Logf("%d writes in %.1f s (%.0f/s), load average %.1f", n, took.Seconds(), r.Rate, r.Load1)

	relists := os.Getenv("LOAD_CP_RELIST")
	if relists == "" {
		relists = "watchers"
	}
	for _, how := range strings.Split(relists, ",") {
		switch how {
		case "watchers":
			// A restart of the watchers: their relists.
			if sc.kind != "none" {
				w.stop()
				s2, raw2 := scr.snapshotRaw(t, ctx)
				raw = raw2
				start = time.Now()
				w.start(t)
				r.Restart = step(s2, 0, time.Since(start).Seconds())
			}
		case "apiserver":
			relistAPIServer(t, ctx, cl, scr, w, &r, step, &raw)
		default:
			t.Fatalf("LOAD_CP_RELIST: unknown relist %q", how)
		}
	}
	return r
}

// relistAPIServer makes every watch list again, as an apiserver restart after a compaction
// does: kube-apiserver (not etcd) is stopped, a key outside the apiserver's prefix is written to
// etcd so that etcd's revision passes every watcher's resourceVersion (bookmarks included), etcd
// is compacted there, and kube-apiserver started again; each watch resumes from its
// resourceVersion, gets "too old resource version" (410 Gone) and its reflector lists again.
// It waits until every watcher says it did (kubecause_relists_total, the floor's Events listed)
// and measures the relist: the watchers' peak RSS (reset before), etcd's counters (its process
// goes on), the new kube-apiserver's (from zero: its own start is in them, as in "none").
func relistAPIServer(t *testing.T, ctx context.Context, cl *framework.Cluster, scr cpScraper, w *watchers, r *CPResult,
	step func(s0 cpSnapshot, cpu0, took float64) CPStep, raw *[]byte) {
	t.Helper()
	gw := etcdGateway{url: scr.etcdURL, hc: &http.Client{Timeout: 5 * time.Minute}}
	r.Live = countEvents(t, ctx, cl.Client) // nothing is written until the relist has ended
	relisted0, counted0 := w.relisted(t), w.countedNow(t)
	cpu0, _, _ := w.proc(t)
	w.resetPeak(t)
	s0 := scr.snapshot(t, ctx)
	for _, c := range cpCounters {
		if c.source == "apiserver" {
			s0[c.Key] = 0 // a new process: its counters start from zero
		}
	}
	*raw = nil
	start := time.Now()
	api := cl.Env.ControlPlane.GetAPIServer()
	if err := api.Stop(); err != nil && !strings.Contains(err.Error(), "timeout waiting for process") {
		t.Fatalf("stopping kube-apiserver: %v", err)
	}
	if err := gw.put(ctx, []etcdPut{{key: "/kubecause-load/relist", value: []byte(time.Now().String())}}, "0"); err != nil {
		t.Fatal(err)
	}
	rev, err := gw.revision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := gw.compact(ctx, rev); err != nil {
		t.Fatal(err)
	}
	if err := api.Start(); err != nil {
		t.Fatalf("starting kube-apiserver again: %v", err)
	}
	// What the relist must amount to: one more full list per kubecause watch, every live Event
	// listed again by the floor.
	want := float64(len(w.addrs))
	for range w.stats {
		if len(w.sc.args) == 1 && w.sc.args[0] == "" {
			want += float64(r.Live) // the floor on every Event
		} else {
			want++ // the floor with selectors: some Events
		}
	}
	if err := framework.Poll(ctx, readyTimeout(), func() (bool, error) {
		return w.relisted(t)-relisted0 >= want, nil
	}); err != nil {
		t.Errorf("after the apiserver's restart the watchers relisted %v, want %v", w.relisted(t)-relisted0, want)
	}
	r.Relisted = w.relisted(t) - relisted0
	r.Relist = step(s0, cpu0, time.Since(start).Seconds())
	// Nothing was written: the relist counts no occurrence.
	if c := w.countedNow(t); c != counted0 {
		t.Errorf("the relist counted %v occurrences, nothing was written", c-counted0)
	}
	t.Logf("relist after compaction at revision %d and an apiserver restart: %.0f relisted (%d live Events), %.0f initial lists (%.0f past 60 s), %.1f s, watchers' peak RSS %.1f MiB",
		rev, r.Relisted, r.Live, r.Relist.InitialLists, r.Relist.ListsOver60, r.Relist.Seconds, mib(r.Relist.WatcherHWM))
}

// reportCP prints one line per scenario and step, benchstat-style.
func reportCP(rs []CPResult) {
	keys := make([]string, 0, len(cpCounters)+len(cpGauges))
	for _, c := range append(append([]cpCounter(nil), cpCounters...), cpGauges...) {
		keys = append(keys, c.Key)
	}
	for _, r := range rs {
		for _, st := range []struct {
			name string
			s    CPStep
		}{{"startup", r.Startup}, {"writes", r.Steady}, {"restart", r.Restart}, {"relist-apiserver", r.Relist}} {
			if st.s.Cost == nil {
				continue
			}
			var sb strings.Builder
			fmt.Fprintf(&sb, "BenchmarkControlPlane/events=%d/%s/%s 1", r.Events, r.Scenario, st.name)
			for _, k := range keys {
				fmt.Fprintf(&sb, " %.0f %s", st.s.Cost[k]*scale(k), unit(k))
			}
			fmt.Fprintf(&sb, " %.2f watcher-cpu-s %.1f watcher-peak-MiB %.1f watcher-rss-MiB %.1f s", st.s.WatcherCPU, mib(st.s.WatcherHWM), mib(st.s.WatcherRSS), st.s.Seconds)
			if st.name != "writes" {
				fmt.Fprintf(&sb, " %.0f initial-lists %.0f lists-over-60s", st.s.InitialLists, st.s.ListsOver60)
			}
			if st.name == "writes" {
				fmt.Fprintf(&sb, " %d writes %.0f writes/s %.1f load1", r.Writes, r.Rate, r.Load1)
			}
			fmt.Println(sb.String())
		}
	}
}

// scale and unit: CPU in milliseconds, bytes in KiB, the rest as counted.
func scale(k string) float64 {
	switch {
	case strings.HasSuffix(k, "_seconds"):
		return 1000
	case strings.HasSuffix(k, "_bytes"):
		return 1.0 / 1024
	}
	return 1
}

func unit(k string) string {
	switch {
	case strings.HasSuffix(k, "_seconds"):
		return strings.TrimSuffix(k, "_seconds") + "-ms"
	case strings.HasSuffix(k, "_bytes"):
		return strings.TrimSuffix(k, "_bytes") + "-KiB"
	}
	return k
}
