//go:build load

package load

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
	o := bigClusterOptions(dir)
	if d := os.Getenv("LOAD_ETCD_DIR"); d != "" {
		o.EtcdDataDir = filepath.Join(d, fmt.Sprintf("etcd-%d-%d", n, time.Now().UnixNano()))
		t.Cleanup(func() { _ = os.RemoveAll(o.EtcdDataDir) })
	}
	cl, err := framework.StartCluster(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cl.Stop() })
	g, ss := seedEvents(t, ctx, cl, n, 0, r.Seed)
	client := g.Client
	r.SeedAPI, r.SeedAPIRate, r.SeedAPILoad, r.SeedEtcd, r.SeedEtcdRate, r.Live, r.EtcdDBMiB =
		ss.API, ss.APIRate, ss.APILoad, ss.Etcd, ss.EtcdRate, ss.Live, ss.EtcdDBMiB
	scr := cpScraper{api: cl.Client, etcdURL: cl.Env.ControlPlane.Etcd.URL.String(), hc: &http.Client{Timeout: 5 * time.Minute}}
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
	ms, times, size, err := medianScrape(hc, "http://"+kcAddr+"/metrics", 5)
	if err != nil {
		t.Fatal(err)
	}
	r.ScrapeMS, r.ScrapeBytes = ms, size
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
