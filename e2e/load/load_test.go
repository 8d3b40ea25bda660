//go:build load

package load

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubecause/kubecause/e2e/framework"
)

// Settings (environment):
//
//	LOAD_SIZES     live Events per run, comma-separated (default 1000,10000,50000)
//	LOAD_RATES     write rates in writes/s (default 200,1000); each phase adds bursts of 3× the
//	               rate for 1 s in every 10 s
//	LOAD_SECONDS   duration of each write phase (default 20)
//	LOAD_WORKERS   concurrent writers of the load generator in the CPU phases (default 16)
//	LOAD_LAG_WORKERS  concurrent writers in the lag phases (default 128: with 16 the writers'
//	               round trips, not the apiserver, capped the rate near 600-850 writes/s)
//	LOAD_LAG       "0" skips the lag phases (1,000 writes/s while /metrics is polled: the
//	               kubelet mix, then an Event storm of creates)
//	LOAD_OUT       file that receives the results as JSON (default: none)
//	KUBECAUSE_ENV  extra environment of the kubecause process, e.g. "GOMEMLIMIT=48MiB GOGC=50"
//	KUBECAUSE_BIN  the kubecause binary (default bin/kubecause)
type settings struct {
	sizes, rates []int
	seconds      int
	workers      int
	lagWorkers   int
	lagRate      int // target writes/s of the lag phases
	scrapers     int // concurrent full scrapers during the lag phases
	viewCap      int // kubecause's --object-view.max-series
	seriesCap    int // kubecause's --events.max-series
	lag          bool
	out          string
	kcEnv        []string
}

func ints(env, def string) []int {
	v := os.Getenv(env)
	if v == "" {
		v = def
	}
	var out []int
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err == nil && n > 0 {
			out = append(out, n)
		}
	}
	return out
}

func loadSettings() settings {
	// one is the first positive integer of env, or def.
	one := func(env string, def int) int {
		if v := ints(env, ""); len(v) > 0 {
			return v[0]
		}
		return def
	}
	return settings{
		sizes:      ints("LOAD_SIZES", "1000,10000,50000"),
		rates:      ints("LOAD_RATES", "200,1000"),
		seconds:    one("LOAD_SECONDS", 20),
		workers:    one("LOAD_WORKERS", 16),
		lagWorkers: one("LOAD_LAG_WORKERS", 128),
		lagRate:    one("LOAD_LAG_RATE", 1000),
		scrapers:   one("LOAD_SCRAPERS", 0),
		viewCap:    one("LOAD_VIEW_CAP", 1000000),
		seriesCap:  one("LOAD_SERIES_CAP", 100000),
		lag:        os.Getenv("LOAD_LAG") != "0",
		out:        os.Getenv("LOAD_OUT"),
		kcEnv:      strings.Fields(os.Getenv("KUBECAUSE_ENV")),
	}
}

// selectors are kubecause's nine watches (--events.field-selector=type=Warning, the default
// when the figures of docs/performance.md's scale table were taken, and one per default
// --events.normal-reason); the floor opens the same ones.
var selectors = nineWatches

// child is a measured process.
type child struct {
	name string
	cmd  *exec.Cmd
	log  string
	once sync.Once
}

func startChild(t *testing.T, dir, name string, env []string, bin string, args ...string) *child {
	t.Helper()
	logPath := filepath.Join(dir, name+".log")
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	c := &child{name: name, cmd: cmd, log: logPath}
	t.Cleanup(func() {
		c.stop()
		f.Close()
	})
	return c
}

// stop ends the process (SIGTERM, SIGKILL after 10 s); it may be called more than once.
func (c *child) stop() {
	c.once.Do(func() {
		_ = c.cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = c.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = c.cmd.Process.Kill()
			<-done
		}
	})
}

func (c *child) stats(t *testing.T) ProcStats {
	t.Helper()
	s, err := ReadProc(c.cmd.Process.Pid)
	if err != nil {
		b, _ := os.ReadFile(c.log)
		if len(b) > 3000 {
			b = b[len(b)-3000:]
		}
		t.Fatalf("%s: %v; log:\n%s", c.name, err, b)
	}
	return s
}

// floorStats reads the floor's stats file.
func floorStats(path string) map[string]int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	out := map[string]int64{}
	for _, f := range strings.Fields(string(b)) {
		k, v, _ := strings.Cut(f, "=")
		out[k], _ = strconv.ParseInt(v, 10, 64)
	}
	return out
}

// quiet waits until the CPU time of every process stopped growing (two equal readings 300 ms
// apart), so a CPU figure is read once the process has handled what it was sent.
func quiet(t *testing.T, cs ...*child) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	prev := make([]time.Duration, len(cs))
	for i, c := range cs {
		prev[i] = c.stats(t).CPU
	}
	for time.Now().Before(deadline) {
		time.Sleep(300 * time.Millisecond)
		same := true
		for i, c := range cs {
			cur := c.stats(t).CPU
			if cur != prev[i] {
				same = false
			}
			prev[i] = cur
		}
		if same {
			return
		}
	}
	t.Logf("processes still busy after 60 s")
}

// Phase is one write phase at a target rate.
type Phase struct {
	TargetRate  int     `json:"target_rate"`
	Writes      int64   `json:"writes"`
	Achieved    float64 `json:"achieved_writes_per_s"`
	Occurrences int64   `json:"occurrences_written"`
	Counted     float64 `json:"occurrences_counted"`
	// CPU milliseconds per 1,000 writes.
	KubecauseCPU float64 `json:"kubecause_cpu_ms_per_1k"`
	FloorCPU     float64 `json:"floor_cpu_ms_per_1k"`
	FloorJSONCPU float64 `json:"floor_json_cpu_ms_per_1k"`
	Ratio        float64 `json:"cpu_ratio_to_floor"`
}

// Result is one run (one apiserver, N live Events).
type Result struct {
	Events        int     `json:"events"`
	SeedSeconds   float64 `json:"seed_seconds"`
	StartKC       float64 `json:"kubecause_start_seconds"`
	StartPeakKC   int64   `json:"kubecause_start_peak_rss_bytes"`
	StartPeakFl   int64   `json:"floor_start_peak_rss_bytes"`
	StartPeakFlJ  int64   `json:"floor_json_start_peak_rss_bytes"`
	StartCPUKC    float64 `json:"kubecause_start_cpu_seconds"`
	StartCPUFl    float64 `json:"floor_start_cpu_seconds"`
	StartCPUFlJ   float64 `json:"floor_json_start_cpu_seconds"`
	Phases        []Phase `json:"phases"`
	SyncedKC      int64   `json:"kubecause_synced_rss_bytes"`
	SyncedFl      int64   `json:"floor_synced_rss_bytes"`
	SteadyKC      int64   `json:"kubecause_steady_rss_bytes"`
	SteadyFl      int64   `json:"floor_steady_rss_bytes"`
	SteadyFlJ     int64   `json:"floor_json_steady_rss_bytes"`
	PeakKC        int64   `json:"kubecause_peak_rss_bytes"`
	PeakFl        int64   `json:"floor_peak_rss_bytes"`
	Tracked       float64 `json:"kubecause_tracked_events"`
	SteadyTracked float64 `json:"kubecause_steady_tracked_events"`
	ScrapeMS      float64 `json:"scrape_ms_median"`
	ScrapeBytes   int     `json:"scrape_bytes"`
	ScrapeSeries  int     `json:"scrape_samples"`
	Lags          []Lag   `json:"lag_phases"`
	HeapInuseKC   float64 `json:"kubecause_heap_inuse_bytes"`
	GoSysKC       float64 `json:"kubecause_go_sys_bytes"`
	KubecauseArgs string  `json:"kubecause_env"`
	// The control plane (kube-apiserver and etcd, from their /metrics): after the seed, the
	// start-up of the three watchers (their initial lists: counts, CPU), and after the writes.
	CPSeeded  cpSnapshot `json:"control_plane_seeded"`
	CPStartup cpSnapshot `json:"control_plane_startup"`
	CPEnd     cpSnapshot `json:"control_plane_end"`
	// Initial lists (streamed: WATCH with sendInitialEvents) and LIST requests of Events during
	// the start-up, the lists that took more than 60 s, and the longest one's bucket bound.
	WatchLists      float64 `json:"initial_watch_lists"`
	WatchListsOver  float64 `json:"initial_watch_lists_over_60s"`
	WatchListMaxSec float64 `json:"initial_watch_list_max_bucket_seconds"`
	Load1           float64 `json:"load_average_1m"`
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

func fastConfig(base *rest.Config) *rest.Config {
	cfg := rest.CopyConfig(base)
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.QPS, cfg.Burst = 1e6, 1e6
	return cfg
}

func buildFloor(t *testing.T) string {
	t.Helper()
	root, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "floor")
	cmd := exec.Command("go", "build", "-tags", "load", "-o", out, "./e2e/load/floor")
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the floor: %v\n%s", err, b)
	}
	return out
}

// Lag is one lag phase: writes at a 1,000/s target with the given share of creates while a probe
// Event is patched every 200 ms and /metrics is polled.
type Lag struct {
	Profile     string  `json:"profile"`
	CreateShare float64 `json:"create_share"`
	Writes      float64 `json:"writes_per_s"`
	Probes      int     `json:"probes"`
	P50MS       float64 `json:"p50_ms"`
	P99MS       float64 `json:"p99_ms"`
	// From the probe PATCH's response (the write acknowledged) instead of its start: without the
	// time the write queued in the apiserver.
	AckP99MS float64 `json:"p99_from_ack_ms"`
	MaxMS    float64 `json:"max_ms"`
	ScrapeMS float64 `json:"poll_ms_median"`
	HistP99  float64 `json:"histogram_p99_seconds"`
	// Concurrent full scrapers (LOAD_SCRAPERS) during the phase: scrapes they completed, failed,
	// and the median time of one.
	Scrapers      int     `json:"scrapers"`
	FullScrapes   int     `json:"full_scrapes"`
	FailedScrapes int     `json:"failed_scrapes"`
	FullScrapeMS  float64 `json:"full_scrape_ms_median"`
}

// TestApiserverLoad runs kubecause and the decode floor against a real kube-apiserver for
// every size of LOAD_SIZES and prints the figures of docs/performance.md.
func TestApiserverLoad(t *testing.T) {
	s := loadSettings()
	bins, err := framework.FindBinaries(true)
	if bins.Kubecause == "" {
		t.Fatalf("kubecause binary: %v", err)
	}
	floor := buildFloor(t)
	var results []Result
	for _, n := range s.sizes {
		t.Run(fmt.Sprintf("events=%d", n), func(t *testing.T) {
			r := runSize(t, s, bins.Kubecause, floor, n)
			results = append(results, r)
			report(t, r)
		})
	}
	if s.out != "" && len(results) > 0 {
		b, _ := json.MarshalIndent(results, "", "  ")
		if err := os.WriteFile(s.out, b, 0o644); err != nil {
			t.Error(err)
		}
	}
}

func runSize(t *testing.T, s settings, kcBin, floorBin string, n int) Result {
	ctx := context.Background()
	dir := t.TempDir()
	r := Result{Events: n, KubecauseArgs: strings.Join(s.kcEnv, " ")}
	cl, err := framework.StartCluster(dir, framework.ClusterOptions{LogDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cl.Stop() })
	client, err := kubernetes.NewForConfig(fastConfig(cl.Config))
	if err != nil {
		t.Fatal(err)
	}
	g := &Generator{Client: client, Namespaces: 50, Workers: s.workers}
	nss := []string{"load-probe"}
	for i := 0; i < g.Namespaces; i++ {
		nss = append(nss, g.Namespace(i))
	}
	if err := cl.EnsureNamespaces(ctx, nss...); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := g.Seed(ctx, n); err != nil {
		t.Fatal(err)
	}
	r.SeedSeconds = time.Since(start).Seconds()
	t.Logf("seeded %d Events in %.1f s", n, r.SeedSeconds)
	scr := cpScraper{api: cl.Client, etcdURL: cl.Env.ControlPlane.Etcd.URL.String(), hc: &http.Client{Timeout: time.Minute}}
	cpRaw0, err := scr.read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r.CPSeeded = scr.snapshot(t, ctx)

	// Start-up: kubecause and the floors read the initial list of n Events.
	kcAddr, err := framework.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	kc := startChild(t, dir, "kubecause", s.kcEnv, kcBin,
		"--web.listen-address="+kcAddr, "--kubeconfig="+cl.KubeconfigPath, "--log.level=info", "--events.field-selector=type=Warning",
		fmt.Sprintf("--object-view.max-series=%d", s.viewCap), fmt.Sprintf("--events.max-series=%d", s.seriesCap))
	fl := startChild(t, dir, "floor", nil, floorBin, floorArgs(cl.KubeconfigPath, "protobuf", filepath.Join(dir, "floor.stats"))...)
	flj := startChild(t, dir, "floor-json", nil, floorBin, floorArgs(cl.KubeconfigPath, "json", filepath.Join(dir, "floor-json.stats"))...)
	hc := &http.Client{Timeout: 30 * time.Second}
	start = time.Now()
	kcReady, flReady, fljReady := false, false, false
	for !(kcReady && flReady && fljReady) {
		if time.Since(start) > 5*time.Minute {
			t.Fatalf("not synced after 5 min (kubecause %v, floor %v, floor-json %v)", kcReady, flReady, fljReady)
		}
		time.Sleep(100 * time.Millisecond)
		if !kcReady {
			if resp, err := hc.Get("http://" + kcAddr + "/readyz"); err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					kcReady = true
					r.StartKC = time.Since(start).Seconds()
					st := kc.stats(t)
					r.StartPeakKC, r.StartCPUKC = st.HWM, st.CPU.Seconds()
				}
			}
		}
		if !flReady && floorStats(filepath.Join(dir, "floor.stats"))["synced"] == 1 {
			flReady = true
			st := fl.stats(t)
			r.StartPeakFl, r.StartCPUFl = st.HWM, st.CPU.Seconds()
		}
		if !fljReady && floorStats(filepath.Join(dir, "floor-json.stats"))["synced"] == 1 {
			fljReady = true
			st := flj.stats(t)
			r.StartPeakFlJ, r.StartCPUFlJ = st.HWM, st.CPU.Seconds()
		}
	}
	t.Logf("synced: kubecause in %.1f s, peak %.1f MiB; floor peak %.1f MiB; floor-json peak %.1f MiB",
		r.StartKC, mib(r.StartPeakKC), mib(r.StartPeakFl), mib(r.StartPeakFlJ))
	cpRaw1, err := scr.read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r.CPStartup = delta(r.CPSeeded, scr.snapshot(t, ctx))
	r.WatchLists, r.WatchListsOver, r.WatchListMaxSec = watchLists(cpRaw0["apiserver"], cpRaw1["apiserver"])
	t.Logf("control plane at start-up: %.0f initial lists (%.0f over 60 s, longest ≤ %g s), %.0f LISTs; apiserver %.1f CPU s, RSS %.0f MiB; etcd %.1f CPU s, RSS %.0f MiB, %.0f MiB sent",
		r.WatchLists, r.WatchListsOver, r.WatchListMaxSec, r.CPStartup["api_list_requests"], r.CPStartup["api_cpu_seconds"], r.CPStartup["api_rss_bytes"]/(1<<20),
		r.CPStartup["etcd_cpu_seconds"], r.CPStartup["etcd_rss_bytes"]/(1<<20), r.CPStartup["etcd_sent_bytes"]/(1<<20))
	quiet(t, kc, fl, flj)
	// RSS with exactly the n seeded Events live, once both processes have read them and gone quiet.
	r.SyncedKC, r.SyncedFl = kc.stats(t).RSS, fl.stats(t).RSS

	body, _, err := Scrape(hc, "http://"+kcAddr+"/metrics")
	if err != nil {
		t.Fatal(err)
	}
	counted0, _ := SumSamples(body, "kubecause_events_total")
	r.Tracked, _ = SumSamples(body, "kubecause_tracked_events")
	if live := liveEvents(t, ctx, client); int(r.Tracked) != live {
		t.Errorf("kubecause tracks %v live Events after its initial list; the apiserver has %d (%d seeded)", r.Tracked, live, n)
	}

	for _, rate := range s.rates {
		p := Phase{TargetRate: rate}
		b0 := [3]ProcStats{kc.stats(t), fl.stats(t), flj.stats(t)}
		occ0 := g.Occurrences.Load()
		writes, took, err := g.Run(ctx, Profile{
			Rate: float64(rate), Duration: time.Duration(s.seconds) * time.Second,
			BurstEvery: 10 * time.Second, BurstSeconds: time.Second, BurstFactor: 3, CreateShare: 0.2,
		})
		if err != nil {
			t.Errorf("writes at %d/s: %v", rate, err)
		}
		p.Writes, p.Achieved, p.Occurrences = writes, float64(writes)/took.Seconds(), g.Occurrences.Load()-occ0
		waitFloor(t, filepath.Join(dir, "floor.stats"), g)
		waitFloor(t, filepath.Join(dir, "floor-json.stats"), g)
		quiet(t, kc, fl, flj)
		b1 := [3]ProcStats{kc.stats(t), fl.stats(t), flj.stats(t)}
		per1k := func(i int) float64 {
			return float64((b1[i].CPU - b0[i].CPU).Milliseconds()) * 1000 / float64(writes)
		}
		p.KubecauseCPU, p.FloorCPU, p.FloorJSONCPU = per1k(0), per1k(1), per1k(2)
		if p.FloorCPU > 0 {
			p.Ratio = p.KubecauseCPU / p.FloorCPU
		}
		body, _, err := Scrape(hc, "http://"+kcAddr+"/metrics")
		if err != nil {
			t.Fatal(err)
		}
		counted, _ := SumSamples(body, "kubecause_events_total")
		p.Counted = counted - counted0
		counted0 = counted
		if int64(p.Counted) != p.Occurrences {
			t.Errorf("at %d/s: kubecause counted %v occurrences, the writes made %d", rate, p.Counted, p.Occurrences)
		}
		t.Logf("%d writes/s: %d writes in %.1f s (%.0f/s); CPU per 1k writes: kubecause %.0f ms, floor %.0f ms (json %.0f ms), ratio %.2f",
			rate, writes, took.Seconds(), p.Achieved, p.KubecauseCPU, p.FloorCPU, p.FloorJSONCPU, p.Ratio)
		r.Phases = append(r.Phases, p)
	}

	// Steady state after the write phases.
	r.CPEnd = delta(r.CPSeeded, scr.snapshot(t, ctx))
	r.Load1 = loadAvg()
	st := [3]ProcStats{kc.stats(t), fl.stats(t), flj.stats(t)}
	r.SteadyKC, r.SteadyFl, r.SteadyFlJ = st[0].RSS, st[1].RSS, st[2].RSS
	r.PeakKC, r.PeakFl = st[0].HWM, st[1].HWM
	// The write phases created Events: the steady RSS is for the Events live now.
	body, _, err = Scrape(hc, "http://"+kcAddr+"/metrics?name[]=kubecause_tracked_events")
	if err != nil {
		t.Fatal(err)
	}
	r.SteadyTracked, _ = SumSamples(body, "kubecause_tracked_events")

	// Scrape: median of 5.
	var times []float64
	for i := 0; i < 5; i++ {
		b, took, err := Scrape(hc, "http://"+kcAddr+"/metrics")
		if err != nil {
			t.Fatal(err)
		}
		times = append(times, float64(took.Microseconds())/1000)
		r.ScrapeBytes = len(b)
		r.ScrapeSeries = samples(b)
		r.HeapInuseKC, _ = SumSamples(b, "go_memstats_heap_inuse_bytes")
		r.GoSysKC, _ = SumSamples(b, "go_memstats_sys_bytes")
	}
	r.ScrapeMS = median(times)

	if s.lag {
		// The floors have given their figures; the lag phase runs kubecause alone with the
		// apiserver, so the machine's two cores go to the write rate.
		fl.stop()
		flj.stop()
		// The kubelet's mix (a fifth of the writes create Events, the rest repeat them), then an
		// Event storm: every write a new Event (many objects failing at once), which is both
		// kubecause's costliest write and the apiserver's cheapest, so it reaches the 1,000/s.
		// More writers than in the CPU phases: each write waits for etcd's commit, and 16 in
		// flight capped the rate at what their round trips allowed.
		g.Workers = s.lagWorkers
		r.Lags = append(r.Lags,
			lagPhase(t, ctx, g, client, hc, kcAddr, s, "kubelet", 0.2),
			lagPhase(t, ctx, g, client, hc, kcAddr, s, "storm", 1))
	}
	return r
}

// watchLists reads, between two expositions of kube-apiserver's /metrics, the initial lists of
// Events it streamed (apiserver_watch_list_duration_seconds), how many took more than 60 s and
// the smallest bucket bound that holds them all: the longest took at most that long (0 if one
// took longer than the last bound, 60 s, or there was none).
func watchLists(before, after []byte) (n, over60, longest float64) {
	const name = "apiserver_watch_list_duration_seconds"
	b0, b1 := eventBuckets(before, name, `resource="events"`), eventBuckets(after, name, `resource="events"`)
	n = b1["+Inf"] - b0["+Inf"]
	over60 = n - (b1["60"] - b0["60"])
	longest = math.MaxFloat64
	for le, v := range b1 {
		bound, err := strconv.ParseFloat(le, 64)
		if err == nil && !math.IsInf(bound, 1) && v-b0[le] == n && bound < longest {
			longest = bound
		}
	}
	if longest == math.MaxFloat64 || n == 0 {
		longest = 0
	}
	return n, over60, longest
}

// eventBuckets are the cumulative buckets (le → count) of a histogram's samples that contain
// match, summed over their other labels.
func eventBuckets(body []byte, name, match string) map[string]float64 {
	out := map[string]float64{}
	for _, l := range strings.Split(string(body), "\n") {
		if !strings.HasPrefix(l, name+"_bucket{") || !strings.Contains(l, match) {
			continue
		}
		i := strings.Index(l, `le="`)
		if i < 0 {
			continue
		}
		le, rest, ok := strings.Cut(l[i+4:], `"`)
		if !ok {
			continue
		}
		f := strings.Fields(rest[strings.IndexByte(rest, '}')+1:])
		if len(f) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(f[0], 64)
		if err == nil {
			out[le] += v
		}
	}
	return out
}

// liveEvents counts the Events kubecause's watches select, as the apiserver lists them.
func liveEvents(t *testing.T, ctx context.Context, client kubernetes.Interface) int {
	t.Helper()
	n := 0
	for _, sel := range selectors {
		opts := metav1.ListOptions{FieldSelector: sel, Limit: 5000}
		for {
			l, err := client.CoreV1().Events("").List(ctx, opts)
			if err != nil {
				t.Fatalf("listing Events (%s): %v", sel, err)
			}
			n += len(l.Items)
			if l.Continue == "" {
				break
			}
			opts.Continue = l.Continue
		}
	}
	return n
}

func floorArgs(kubeconfig, contentType, stats string) []string {
	args := []string{"--kubeconfig=" + kubeconfig, "--content-type=" + contentType, "--stats-file=" + stats}
	for _, s := range selectors {
		args = append(args, "--field-selector="+s)
	}
	return args
}

// waitFloor waits until the floor has seen a notification for every write so far.
func waitFloor(t *testing.T, path string, g *Generator) {
	t.Helper()
	want := g.Writes.Load()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		st := floorStats(path)
		// The seed's creates were listed, not watched; every later write is one notification.
		if st["adds"]+st["updates"] >= want {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Errorf("%s: the floor did not see every write within 60 s: %v", filepath.Base(path), floorStats(path))
}

func samples(b []byte) int {
	n := 0
	for _, l := range strings.Split(string(b), "\n") {
		if l != "" && l[0] != '#' {
			n++
		}
	}
	return n
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}

func quantile(v []float64, q float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	i := int(q*float64(len(s))+0.5) - 1
	if i < 0 {
		i = 0
	}
	if i >= len(s) {
		i = len(s) - 1
	}
	return s[i]
}

// lagPhase writes at LOAD_LAG_RATE (1,000 writes/s by default, with bursts), beside LOAD_SCRAPERS
// concurrent full scrapers (none by default), while a probe Event is patched every 200 ms
// and /metrics is polled back to back: the lag of a probe occurrence is the time from the
// start of its PATCH to the end of the first scrape whose kubecause_events_total shows it.
func lagPhase(t *testing.T, ctx context.Context, g *Generator, client kubernetes.Interface, hc *http.Client, addr string, s settings, profile string, createShare float64) Lag {
	r := Lag{Profile: profile, CreateShare: createShare, Scrapers: s.scrapers}
	seconds := s.seconds
	reason := "LoadProbe" + strings.ToUpper(profile[:1]) + profile[1:] // one probe counter per phase
	// Polls ask for the two families read here (name[]), as a dashboard or a probe would: a full
	// scrape of 50,000 live Events costs ~0.1 s of CPU, and back-to-back full scrapes would take a
	// core from the apiserver and measure the scrape rather than the lag.
	url := "http://" + addr + "/metrics?name[]=kubecause_events_total&name[]=kubecause_event_processing_lag_seconds"
	body0, _, err := Scrape(hc, url)
	if err != nil {
		t.Fatal(err)
	}
	now := metav1.NewTime(time.Now())
	probe, err := client.CoreV1().Events("load-probe").Create(ctx, &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: fmt.Sprintf("probe.%x", time.Now().UnixNano())},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: "load-probe", Name: "probe", UID: types.UID("00000000-0000-4000-a000-000000000001")},
		Reason:         reason, Message: "load probe", Type: corev1.EventTypeWarning,
		Source:         corev1.EventSource{Component: "kubelet", Host: "node-probe"},
		FirstTimestamp: now, LastTimestamp: now, Count: 1,
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	match := []string{`reason="` + reason + `"`}
	// Wait for the probe's first occurrence, so the counter exists.
	var base float64
	if err := framework.Poll(ctx, 30*time.Second, func() (bool, error) {
		b, _, err := Scrape(hc, url)
		if err != nil {
			return false, err
		}
		v, ok := SumSamples(b, "kubecause_events_total", match...)
		base = v
		return ok && v >= 1, nil
	}); err != nil {
		t.Fatalf("probe Event never counted: %v", err)
	}

	type probeWrite struct {
		count     int32
		at, acked time.Time
	}
	writes := make(chan probeWrite, 1024)
	stop := make(chan struct{})
	probeDone := make(chan struct{})
	go func() {
		defer close(probeDone)
		defer close(writes)
		count := int32(base)
		tk := time.NewTicker(200 * time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tk.C:
			}
			count++
			at := time.Now()
			patch, _ := json.Marshal(map[string]any{"count": count, "lastTimestamp": metav1.NewTime(at)})
			if _, err := client.CoreV1().Events("load-probe").Patch(ctx, probe.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
				t.Errorf("probe patch: %v", err)
				return
			}
			writes <- probeWrite{count, at, time.Now()}
		}
	}()
	type seen struct {
		v  float64
		at time.Time
	}
	var scrapes []seen
	var scrapeMS []float64
	pollDone := make(chan struct{})
	go func() {
		defer close(pollDone)
		// A poll every 100 ms: the lag is resolved to 100 ms plus one poll. Each poll gathers
		// every registered collector (client_golang filters name[] after gathering), and polling
		// faster took a third of a core from the apiserver.
		tk := time.NewTicker(100 * time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tk.C:
			}
			b, took, err := Scrape(hc, url)
			if err != nil {
				t.Errorf("scrape: %v", err)
				return
			}
			v, _ := SumSamples(b, "kubecause_events_total", match...)
			scrapes = append(scrapes, seen{v, time.Now()})
			scrapeMS = append(scrapeMS, float64(took.Microseconds())/1000)
		}
	}()
	// Full scrapers, back to back, as many Prometheus servers (or a dashboard's refreshes) would.
	var fullMu sync.Mutex
	var fullMS []float64
	var fullWG sync.WaitGroup
	for i := 0; i < s.scrapers; i++ {
		fullWG.Add(1)
		go func() {
			defer fullWG.Done()
			c := &http.Client{Timeout: time.Minute}
			for {
				select {
				case <-stop:
					return
				default:
				}
				_, took, err := Scrape(c, "http://"+addr+"/metrics")
				fullMu.Lock()
				if err != nil {
					r.FailedScrapes++
				} else {
					fullMS = append(fullMS, float64(took.Microseconds())/1000)
				}
				fullMu.Unlock()
			}
		}()
	}
	wrote, took, err := g.Run(ctx, Profile{
		Rate: float64(s.lagRate), Duration: time.Duration(seconds) * time.Second,
		BurstEvery: 10 * time.Second, BurstSeconds: time.Second, BurstFactor: 3, CreateShare: createShare,
	})
	if err != nil {
		t.Errorf("lag phase writes: %v", err)
	}
	r.Writes = float64(wrote) / took.Seconds()
	close(stop)
	fullWG.Wait()
	r.FullScrapes, r.FullScrapeMS = len(fullMS), median(fullMS)
	<-probeDone
	// Keep polling briefly so the last probes are seen.
	var pw []probeWrite
	for w := range writes {
		pw = append(pw, w)
	}
	<-pollDone
	deadline := time.Now().Add(10 * time.Second)
	for len(pw) > 0 && time.Now().Before(deadline) {
		b, _, err := Scrape(hc, url)
		if err != nil {
			break
		}
		v, _ := SumSamples(b, "kubecause_events_total", match...)
		scrapes = append(scrapes, seen{v, time.Now()})
		if v >= float64(pw[len(pw)-1].count) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	var lags, ackLags []float64
	j := 0
	for _, w := range pw {
		for j < len(scrapes) && (scrapes[j].v < float64(w.count) || scrapes[j].at.Before(w.at)) {
			j++
		}
		if j == len(scrapes) {
			t.Errorf("probe occurrence %d never seen", w.count)
			break
		}
		lags = append(lags, float64(scrapes[j].at.Sub(w.at).Microseconds())/1000)
		ackLags = append(ackLags, max(float64(scrapes[j].at.Sub(w.acked).Microseconds())/1000, 0))
	}
	r.Probes = len(lags)
	r.P50MS, r.P99MS = quantile(lags, 0.5), quantile(lags, 0.99)
	r.AckP99MS = quantile(ackLags, 0.99)
	if len(lags) > 0 {
		r.MaxMS = quantile(lags, 1)
	}
	r.ScrapeMS = median(scrapeMS)
	body1, _, err := Scrape(hc, url)
	if err == nil {
		r.HistP99 = histDeltaQuantile(body0, body1, "kubecause_event_processing_lag_seconds", 0.99)
	}
	t.Logf("lag (%s, %.0f %% creates) at %.0f writes/s: %d probes, p50 %.0f ms, p99 %.0f ms, max %.0f ms, p99 from the write's acknowledgement %.0f ms (poll %.0f ms); histogram p99 %.2f s",
		profile, 100*createShare, r.Writes, r.Probes, r.P50MS, r.P99MS, r.MaxMS, r.AckP99MS, r.ScrapeMS, r.HistP99)
	if s.scrapers > 0 {
		t.Logf("  with %d concurrent full scrapers: %d scrapes (median %.0f ms), %d failed", s.scrapers, r.FullScrapes, r.FullScrapeMS, r.FailedScrapes)
	}
	return r
}

// histDeltaQuantile is the q-quantile of the observations a histogram received between two
// scrapes.
func histDeltaQuantile(before, after []byte, name string, q float64) float64 {
	b0, b1 := buckets(before, name), buckets(after, name)
	if len(b0) != len(b1) {
		return 0
	}
	var sb strings.Builder
	for i := range b1 {
		fmt.Fprintf(&sb, "%s_bucket{le=\"%s\"} %g\n", name, b1[i].le, b1[i].n-b0[i].n)
	}
	v, _ := HistogramQuantile([]byte(sb.String()), name, q)
	return v
}

type rawBucket struct {
	le string
	n  float64
}

func buckets(body []byte, name string) []rawBucket {
	var out []rawBucket
	prefix := name + `_bucket{le="`
	for _, l := range strings.Split(string(body), "\n") {
		if !strings.HasPrefix(l, prefix) {
			continue
		}
		rest := l[len(prefix):]
		le, after, ok := strings.Cut(rest, `"} `)
		if !ok {
			continue
		}
		n, err := strconv.ParseFloat(strings.Fields(after)[0], 64)
		if err != nil {
			continue
		}
		out = append(out, rawBucket{le, n})
	}
	return out
}

// report prints one run's figures, including benchstat-style lines.
func report(t *testing.T, r Result) {
	name := fmt.Sprintf("BenchmarkApiserver/events=%d", r.Events)
	fmt.Printf("%s/startup 1 %.1f peak-MiB %.1f floor-peak-MiB %.1f floor-json-peak-MiB %.2f s\n",
		name, mib(r.StartPeakKC), mib(r.StartPeakFl), mib(r.StartPeakFlJ), r.StartKC)
	for _, p := range r.Phases {
		fmt.Printf("%s/rate=%d 1 %.0f writes/s %.0f cpu-ms/1k-writes %.0f floor-cpu-ms/1k-writes %.0f floor-json-cpu-ms/1k-writes %.2f x-floor\n",
			name, p.TargetRate, p.Achieved, p.KubecauseCPU, p.FloorCPU, p.FloorJSONCPU, p.Ratio)
	}
	fmt.Printf("%s/synced 1 %.1f rss-MiB %.1f floor-rss-MiB %.0f B/event-over-floor\n",
		name, mib(r.SyncedKC), mib(r.SyncedFl), float64(r.SyncedKC-r.SyncedFl)/float64(r.Events))
	fmt.Printf("%s/steady 1 %.1f rss-MiB %.1f floor-rss-MiB %.1f peak-MiB %.0f live-events %.0f B/event-over-floor\n",
		name, mib(r.SteadyKC), mib(r.SteadyFl), mib(r.PeakKC), r.SteadyTracked, float64(r.SteadyKC-r.SteadyFl)/r.SteadyTracked)
	fmt.Printf("%s/scrape 1 %.1f ms %d bytes %d samples %.1f heap-inuse-MiB %.1f go-sys-MiB\n",
		name, r.ScrapeMS, r.ScrapeBytes, r.ScrapeSeries, r.HeapInuseKC/(1<<20), r.GoSysKC/(1<<20))
	if r.CPStartup != nil && r.CPEnd != nil {
		fmt.Printf("%s/control-plane 1 %.0f initial-lists %.0f lists-over-60s %.0f longest-list-le-s %.0f LISTs %.1f api-startup-cpu-s %.1f etcd-startup-cpu-s %.1f etcd-startup-sent-MiB %.0f api-rss-MiB %.0f etcd-rss-MiB %.1f load1\n",
			name, r.WatchLists, r.WatchListsOver, r.WatchListMaxSec, r.CPStartup["api_list_requests"], r.CPStartup["api_cpu_seconds"], r.CPStartup["etcd_cpu_seconds"],
			r.CPStartup["etcd_sent_bytes"]/(1<<20), r.CPEnd["api_rss_bytes"]/(1<<20), r.CPEnd["etcd_rss_bytes"]/(1<<20), r.Load1)
	}
	for _, l := range r.Lags {
		if l.Probes > 0 {
			fmt.Printf("%s/lag=%s 1 %.0f writes/s %.0f p50-ms %.0f p99-ms %.0f max-ms %.0f p99-from-ack-ms\n", name, l.Profile, l.Writes, l.P50MS, l.P99MS, l.MaxMS, l.AckP99MS)
		}
	}
}
