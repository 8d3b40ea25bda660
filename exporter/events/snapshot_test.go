package events

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/kubecause/kubecause/exporter/events/snapshotfile"
)

const (
	testIdentity = "kubecause-6d9f7c5b8-x2k4q https://10.96.0.1:443"
	msgTimeout   = `Unable to attach or mount volumes: unmounted volumes=[remote-kube-api-server], unattached volumes=[remote-kube-api-server kube-api-access-7xk2p]: timed out waiting for the condition`
	msgDisk      = `Failed to create pod sandbox: rpc error: code = Unknown desc = failed to create a sandbox for pod "x": Error response from daemon: mkdir /var/lib/docker/aufs/mnt/1f09: no space left on device`
	uidE         = "4d5e6f70-8192-4dbe-8f30-b4c5d6e7f809"
	uidF         = "5e6f7081-92a3-4ecf-9041-c5d6e7f8091a"
	uidG         = "6f708192-a3b4-4fd0-a152-d6e7f8091a2b"
	uidH         = "708192a3-b4c5-4de1-b263-e7f8091a2b3c"
)

// at is a kubelet Event whose first occurrence is at first and latest at last.
func at(ev *corev1.Event, first, last time.Time) *corev1.Event {
	ev.FirstTimestamp, ev.LastTimestamp = metav1.NewTime(first), metav1.NewTime(last)
	return ev
}

// restarted is a new kubecause process at now that opens the snapshot file before adding its
// source, as main does.
func restarted(t *testing.T, path, identity string, now time.Time, mutate ...func(*Config)) (*harness, *Snapshots) {
	t.Helper()
	h := &harness{t: t, now: now}
	cfg := Config{Classifier: testTable{}, Now: func() time.Time { return h.now }}
	for _, f := range mutate {
		f(&cfg)
	}
	h.e = New(cfg)
	snaps := OpenSnapshots(h.e, path, identity, time.Minute, nil)
	h.src = h.e.NewSource("all")
	h.reg = prometheus.NewPedanticRegistry()
	h.reg.MustRegister(h.e.Collectors()...)
	return h, snaps
}

func (h *harness) restores(result string) float64 {
	return h.value("kubecause_snapshot_restores_total", map[string]string{"result": result})
}

// TestSnapshotCountsTheDowntime: a process counts, writes a snapshot, counts on and is killed
// (SIGKILL: what it counted after the snapshot is in no file). While kubecause is away the
// kubelet goes on. The new process restores the snapshot: its counters go on from the snapshot's
// values and add every occurrence since, so they equal the Events' own counts — the occurrences
// after the snapshot counted once, the downtime's included — in every way a list can show them.
func TestSnapshotCountsTheDowntime(t *testing.T) {
	for _, tc := range []struct {
		name               string
		streamed, reversed bool
	}{{"paged", false, false}, {"streamed", true, false}, {"paged/reversed", false, true}, {"streamed/reversed", true, true}} {
		streamed := tc.streamed
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "events.snapshot")
			first := newHarness(t)
			first.sync(at(kubeletEvent(uidD, "pod.d", 9, "FailedMount", msgS1), t0.Add(-30*time.Minute), t0.Add(-20*time.Minute)))
			snaps := OpenSnapshots(first.e, path, testIdentity, time.Minute, nil) // no file yet
			first.add(kubeletEvent(uidA, "pod.a", 1, "FailedMount", msgS1))
			first.update(kubeletEvent(uidA, "pod.a", 3, "FailedMount", msgS1))
			first.add(kubeletEvent(uidB, "pod.b", 1, "FailedMount", msgTimeout))
			first.add(kubeletEvent(uidE, "pod.e", 1, "FailedCreatePodSandBox", msgDisk))
			first.update(kubeletEvent(uidE, "pod.e", 4, "FailedCreatePodSandBox", msgDisk))
			first.now = t0.Add(10 * time.Second)
			if _, err := snaps.Write(); err != nil {
				t.Fatal(err)
			}
			// Counted after the snapshot, then SIGKILL.
			first.update(kubeletEvent(uidA, "pod.a", 5, "FailedMount", msgS1))
			first.expect("configmap_not_found", 5)

			// Away for 5 minutes: pod.a repeats to 8, pod.b is unchanged, pod.e expired and the
			// recorder re-created it under its name with its count (4 → 6), a new Event pod.c
			// begins with the count 3, and pod.d (there before the first start) repeats.
			back := t0.Add(5 * time.Minute)
			second, _ := restarted(t, path, testIdentity, back)
			if got := second.restores(RestoreRestored); got != 1 {
				t.Fatalf("restores{result=restored} = %v, want 1", got)
			}
			// Until the first list is diffed, the counters are not exported: the restored 3 is below
			// the 5 the first process was last scraped at, a decrease Prometheus would take for a
			// reset.
			second.expect("configmap_not_found", -1)
			if got := second.value("kubecause_rule_hits_total", nil); got != -1 {
				t.Fatalf("kubecause_rule_hits_total exported during the restore: %v", got)
			}
			list := []interface{}{
				kubeletEvent(uidA, "pod.a", 8, "FailedMount", msgS1),
				kubeletEvent(uidB, "pod.b", 1, "FailedMount", msgTimeout),
				at(kubeletEvent(uidF, "pod.e", 6, "FailedCreatePodSandBox", msgDisk), t0, back),
				at(kubeletEvent(uidC, "pod.c", 3, "FailedMount", msgS1), back.Add(-time.Minute), back),
				at(kubeletEvent(uidD, "pod.d", 11, "FailedMount", msgS1), t0.Add(-30*time.Minute), back),
				// Older than the snapshot and not in it: a baseline (no replay of old history).
				at(kubeletEvent(uidG, "pod.g", 5, "FailedMount", msgS1), t0.Add(-40*time.Minute), t0.Add(-40*time.Minute)),
				// Another pod that began to fail while kubecause was away: 2 occurrences, a newly
				// affected object.
				func() *corev1.Event {
					ev := at(kubeletEvent(uidH, "web-1.h", 2, "FailedMount", msgS1), back.Add(-2*time.Minute), back)
					ev.InvolvedObject.Name = "web-1"
					return ev
				}(),
			}
			if tc.reversed { // pod.c, created while away, before the Events of its pod the snapshot knew
				list = append([]interface{}{list[3]}, append(list[:3:3], list[4:]...)...)
			}
			if streamed {
				second.streamList(list...)
			} else {
				second.sync(list...)
			}
			// configmap_not_found: the 3 of the snapshot, then pod.a 3 → 8, pod.c 3 (created while
			// away), pod.d 9 → 11 (a baseline of the first process, in the snapshot with its count),
			// web-1.h 2: 15, the occurrences since the first start. pod.g adds nothing.
			second.expect("configmap_not_found", 15)
			second.expect("unknown", 1)
			// pod.e: 4 counted before, re-created with 6: 2 more.
			second.expect("disk_full", 6)
			// No object counted as newly affected again for a problem the first process counted,
			// whichever of its Events the list shows first (pod.c, created while away, is about the
			// same pod and cause as pod.a).
			// web-1 is one newly affected object.
			if got, want := second.sum("kubecause_objects_affected_total"), first.sum("kubecause_objects_affected_total")+1; got != want || want == 1 {
				t.Fatalf("objects_affected = %v after the restore, want %v (the first process's and web-1)", got, want)
			}
			// The rule counters go on too, and the view is rebuilt from the list.
			if got := second.value("kubecause_rule_hits_total", map[string]string{"rule": "volume.configmap_not_found"}); got != 15 {
				t.Fatalf("rule hits = %v, want 15", got)
			}
			if got := second.value("kubecause_object_events", map[string]string{"name": "mspider-mcpc-ckube-remote-0", "reason": "FailedMount", "cause": "configmap_not_found"}); got != 8+3+11+5 {
				t.Fatalf("object view = %v, want the live counts 8+3+11+5", got)
			}
			// And counting goes on as usual.
			second.update(kubeletEvent(uidA, "pod.a", 9, "FailedMount", msgS1))
			second.expect("configmap_not_found", 16)
			if second.e.restoring != nil {
				t.Fatal("the restore state is kept after the first list")
			}
		})
	}
}

// TestSnapshotTombstoneOfEventGoneWhileAway: an Event of the snapshot that expired while kubecause
// was away, re-created by its recorder after the start, adds only its occurrences since.
func TestSnapshotTombstoneOfEventGoneWhileAway(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.snapshot")
	first := newHarness(t)
	snaps := OpenSnapshots(first.e, path, testIdentity, time.Minute, nil)
	first.sync()
	first.add(kubeletEvent(uidA, "pod.a", 1, "FailedMount", msgS1))
	first.update(kubeletEvent(uidA, "pod.a", 4, "FailedMount", msgS1))
	if _, err := snaps.Write(); err != nil {
		t.Fatal(err)
	}
	// Gone while away; after the start, the recorder re-creates it under its name (count 7).
	second, _ := restarted(t, path, testIdentity, t0.Add(time.Minute))
	second.sync()
	second.add(kubeletEvent(uidB, "pod.a", 7, "FailedMount", msgS1))
	second.expect("configmap_not_found", 7)
}

// TestSnapshotOverTheSeriesCapCountsTheDrops: a snapshot written with more counter series than
// the restarted process's --events.max-series is restored into the overflow series, sums unchanged,
// and what got no series of its own is counted in kubecause_series_dropped_total as when it is
// counted past the cap. Before, the restore folded them without counting: the drops were 0.
func TestSnapshotOverTheSeriesCapCountsTheDrops(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.snapshot")
	first := newHarness(t)
	snaps := OpenSnapshots(first.e, path, testIdentity, time.Minute, nil)
	first.sync()
	// Three namespaces: three series of kubecause_events_total (2 occurrences each) and three of
	// kubecause_objects_affected_total (one object each).
	for i, ns := range []string{"apps", "web", "batch"} {
		ev := kubeletEvent(fmt.Sprintf("00000000-0000-4000-8000-%012d", i), "pod.e", 1, "FailedMount", msgS1)
		ev.Namespace, ev.InvolvedObject.Namespace = ns, ns
		first.add(ev)
		ev = ev.DeepCopy()
		ev.Count = 2
		first.update(ev)
	}
	if _, err := snaps.Write(); err != nil {
		t.Fatal(err)
	}

	second, _ := restarted(t, path, testIdentity, t0.Add(time.Minute), func(c *Config) { c.MaxSeries = 1 })
	if got := second.restores(RestoreRestored); got != 1 {
		t.Fatalf("restores{result=restored} = %v, want 1", got)
	}
	second.sync()
	for _, f := range []struct {
		name                string
		sum, dropped, count float64
	}{
		// One series of its own and the overflow series; the other two series' values dropped.
		{"kubecause_events_total", 6, 2 + 2, 2},
		{"kubecause_objects_affected_total", 3, 1 + 1, 2},
	} {
		if got := second.sum(f.name); got != f.sum {
			t.Errorf("%s sums to %v after the restore, want %v", f.name, got, f.sum)
		}
		if got := second.value("kubecause_series_dropped_total", map[string]string{"metric": f.name}); got != f.dropped {
			t.Errorf("kubecause_series_dropped_total{metric=%q} = %v after the restore, want %v", f.name, got, f.dropped)
		}
		if got := second.value("kubecause_series", map[string]string{"metric": f.name}); got != f.count {
			t.Errorf("kubecause_series{metric=%q} = %v after the restore, want %v", f.name, got, f.count)
		}
	}
}

func TestSnapshotNotUsed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.snapshot")
	first := newHarness(t)
	snaps := OpenSnapshots(first.e, path, testIdentity, time.Minute, nil)
	first.sync()
	first.add(kubeletEvent(uidA, "pod.a", 1, "FailedMount", msgS1))
	first.update(kubeletEvent(uidA, "pod.a", 4, "FailedMount", msgS1))
	if _, err := snaps.Write(); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Each case: what the new process finds, when, and the result it must count.
	for _, tc := range []struct {
		name     string
		file     func(string)
		identity string
		after    time.Duration
		result   string
	}{
		{"too old", nil, testIdentity, time.Hour + time.Minute, RestoreTooOld},
		{"written in the future", nil, testIdentity, -10 * time.Minute, RestoreCorrupt},
		{"other pod", nil, "kubecause-6d9f7c5b8-m7r2p https://10.96.0.1:443", time.Minute, RestoreForeign},
		{"missing", func(p string) { _ = os.Remove(p) }, testIdentity, time.Minute, RestoreMissing},
		{"truncated", func(p string) { writeFile(t, p, good[:len(good)-7]) }, testIdentity, time.Minute, RestoreCorrupt},
		{"empty", func(p string) { writeFile(t, p, nil) }, testIdentity, time.Minute, RestoreCorrupt},
		{"garbage", func(p string) { writeFile(t, p, []byte("level=info msg=\"starting kubecause\"\n")) }, testIdentity, time.Minute, RestoreCorrupt},
		{"one bit flipped", func(p string) { b := bytes.Clone(good); b[len(b)/2] ^= 4; writeFile(t, p, b) }, testIdentity, time.Minute, RestoreCorrupt},
		{"wrong version", func(p string) {
			b := bytes.Clone(good)
			binary.LittleEndian.PutUint16(b[len(snapshotfile.Magic):], SnapshotVersion+1)
			writeFile(t, p, b)
		}, testIdentity, time.Minute, RestoreWrongVersion},
		{"huge", func(p string) {
			writeFile(t, p, good)
			if err := os.Truncate(p, snapshotfile.MaxBytes+1); err != nil {
				t.Fatal(err)
			}
		}, testIdentity, time.Minute, RestoreTooLarge},
		{"a directory", func(p string) { _ = os.Remove(p); _ = os.Mkdir(p, 0o700) }, testIdentity, time.Minute, RestoreUnreadable},
		{"a FIFO", func(p string) { _ = os.Remove(p); mkfifo(t, p) }, testIdentity, time.Minute, RestoreUnreadable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "events.snapshot")
			writeFile(t, p, good)
			if tc.file != nil {
				tc.file(p)
			}
			h, _ := restarted(t, p, tc.identity, t0.Add(tc.after))
			if got := h.restores(tc.result); got != 1 {
				t.Fatalf("restores{result=%q} = %v, want 1", tc.result, got)
			}
			if got := h.restores(RestoreRestored); got != 0 {
				t.Fatalf("restores{result=restored} = %v, want 0", got)
			}
			// As without a snapshot: nothing restored, the first list a baseline.
			h.expect("configmap_not_found", -1)
			h.sync(kubeletEvent(uidA, "pod.a", 9, "FailedMount", msgS1))
			h.expect("configmap_not_found", -1)
			h.update(kubeletEvent(uidA, "pod.a", 10, "FailedMount", msgS1))
			h.expect("configmap_not_found", 1)
		})
	}
}

// sum is the sum of a counter family's series (0 when absent).
func (h *harness) sum(name string) float64 {
	var v float64
	if mf, ok := h.scrape()[name]; ok {
		for _, m := range mf.GetMetric() {
			v += sampleValue(mf, m)
		}
	}
	return v
}

func mkfifo(t *testing.T, p string) {
	t.Helper()
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
}

func writeFile(t *testing.T, p string, b []byte) {
	t.Helper()
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestSnapshotNotWrittenBeforeTheFirstList: a process stopped before its first list was read
// keeps the previous snapshot instead of writing one without the Events not yet listed.
func TestSnapshotNotWrittenBeforeTheFirstList(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.snapshot")
	first := newHarness(t)
	snaps := OpenSnapshots(first.e, path, testIdentity, time.Minute, nil)
	first.sync()
	first.add(kubeletEvent(uidA, "pod.a", 2, "FailedMount", msgS1))
	first.update(kubeletEvent(uidA, "pod.a", 4, "FailedMount", msgS1))
	if _, err := snaps.Write(); err != nil {
		t.Fatal(err)
	}
	second, snaps2 := restarted(t, path, testIdentity, t0.Add(time.Minute))
	if _, err := snaps2.Write(); !errors.Is(err, errNotSynced) {
		t.Fatalf("write before the first list: %v, want errNotSynced", err)
	}
	_ = second
	third, _ := restarted(t, path, testIdentity, t0.Add(2*time.Minute))
	third.sync(kubeletEvent(uidA, "pod.a", 6, "FailedMount", msgS1))
	third.expect("configmap_not_found", 6)
}

func TestSnapshotCodecRoundTrip(t *testing.T) {
	h := newHarness(t)
	h.sync()
	h.add(kubeletEvent(uidA, "pod.a", 1, "FailedMount", msgS1))
	h.update(kubeletEvent(uidA, "pod.a", 3, "FailedMount", msgS1))
	h.add(schedulerEvent(uidB, 0))
	h.update(schedulerEvent(uidB, 5))
	h.add(kubeletEvent(uidC, "pod.c", 1, "BackOff", "Back-off restarting failed container"))
	if err := h.src.Delete(kubeletEvent(uidC, "pod.c", 1, "BackOff", "Back-off restarting failed container")); err != nil {
		t.Fatal(err)
	}
	h.e.mu.Lock()
	s := h.e.takeSnapshot(testIdentity)
	h.e.mu.Unlock()
	if len(s.Events) != 2 || len(s.Tombs) != 1 || len(s.Counters) != 3 || len(s.Sources) != 1 {
		t.Fatalf("snapshot holds %d events, %d tombstones, %d counters, %d sources; want 2, 1, 3, 1", len(s.Events), len(s.Tombs), len(s.Counters), len(s.Sources))
	}
	b := s.Encode()
	got, err := snapshotfile.Decode(b, testLimits)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, s) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, s)
	}
	// Every truncation is refused, none panics.
	for n := 0; n < len(b); n++ {
		if _, err := snapshotfile.Decode(b[:n], testLimits); err == nil {
			t.Fatalf("truncated to %d of %d bytes: decoded", n, len(b))
		}
	}
}

// testLimits are the caps of an engine with the defaults.
var testLimits = New(Config{}).snapshotLimits()

// BenchmarkSnapshot measures a snapshot of n live Events (created while watching, so the counters
// have their series): its size per Event, the time to take and write it (the engine's lock is held
// only while it is taken), and the time to read, check and restore it at start
// (docs/performance.md).
func BenchmarkSnapshot(b *testing.B) {
	for _, n := range []int{10000, 50000} {
		e := benchEngine()
		src := e.NewSource("all")
		_ = src.Replace(nil, "1")
		for _, ev := range liveEvents(n, 4) {
			_ = src.Add(ev)
		}
		path := filepath.Join(b.TempDir(), "events.snapshot")
		snaps := &Snapshots{e: e, path: path, identity: testIdentity}
		b.Run(fmt.Sprintf("events=%d/take", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				e.mu.Lock()
				_ = e.takeSnapshot(testIdentity)
				e.mu.Unlock()
			}
		})
		b.Run(fmt.Sprintf("events=%d/write", n), func(b *testing.B) {
			var size int
			for i := 0; i < b.N; i++ {
				var err error
				if size, err = snaps.Write(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(size), "bytes")
			b.ReportMetric(float64(size)/float64(n), "bytes/event")
		})
		b.Run(fmt.Sprintf("events=%d/restore", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				e2 := New(Config{Classifier: testTable{}, MaxSeries: 1 << 20, MaxObjectSeries: 1 << 20})
				s := OpenSnapshots(e2, path, testIdentity, time.Minute, nil)
				if s == nil || e2.restoring == nil || len(e2.restoring.events) != n {
					b.Fatal("not restored")
				}
			}
		})
	}
}

// TestSnapshotScopesFollowTheConfiguration: each watch scope goes on from its own part of the
// snapshot; in a scope new to the configuration an Event older than the snapshot is a baseline,
// and a scope no longer watched keeps its counters, its Events dropped once every scope has read
// its first list.
func TestSnapshotScopesFollowTheConfiguration(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.snapshot")
	now := t0
	clock := func() time.Time { return now }
	first := New(Config{Classifier: testTable{}, Now: clock, NormalReasons: []string{"BackOff"}})
	snaps := OpenSnapshots(first, path, testIdentity, time.Minute, nil)
	warning, backoff := first.NewSource("type=Warning"), first.NewSource("type=Normal,reason=BackOff")
	_ = warning.Replace(nil, "1")
	_ = backoff.Replace(nil, "1")
	_ = warning.Add(kubeletEvent(uidA, "pod.a", 2, "FailedMount", msgS1))
	back := normalEvent(uidB, "pod.b", 3, "BackOff", "Back-off restarting failed container")
	_ = backoff.Add(back)
	if _, err := snaps.Write(); err != nil {
		t.Fatal(err)
	}

	now = t0.Add(time.Minute)
	second := New(Config{Classifier: testTable{}, Now: clock, NormalReasons: []string{"SandboxChanged"}})
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(second.Collectors()...)
	OpenSnapshots(second, path, testIdentity, time.Minute, nil)
	warning2, sandbox := second.NewSource("type=Warning"), second.NewSource("type=Normal,reason=SandboxChanged")
	// There since before the snapshot, in a scope the first process did not watch.
	changed := at(normalEvent(uidC, "pod.c", 4, "SandboxChanged", "Pod sandbox changed, it will be killed and re-created."),
		t0.Add(-10*time.Minute), t0.Add(-10*time.Minute))
	_ = sandbox.Replace([]interface{}{changed}, "1")
	if second.restoring == nil {
		t.Fatal("restore state dropped before every scope read its first list")
	}
	_ = warning2.Replace([]interface{}{kubeletEvent(uidA, "pod.a", 5, "FailedMount", msgS1)}, "1")
	if second.restoring != nil {
		t.Fatal("restore state kept after every scope read its first list")
	}
	got := map[string]float64{}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "kubecause_events_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "reason" {
					got[l.GetValue()] += m.GetCounter().GetValue()
				}
			}
		}
	}
	// FailedMount 2 + 3; BackOff's counter goes on (no longer watched: nothing more); the
	// SandboxChanged Event, older than the snapshot and not in it, is a baseline.
	want := map[string]float64{"FailedMount": 5, "BackOff": 3}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("kubecause_events_total by reason = %v, want %v", got, want)
	}
}

// normalEvent is a Normal kubelet Event.
func normalEvent(uid, name string, count int32, reason, message string) *corev1.Event {
	ev := kubeletEvent(uid, name, count, reason, message)
	ev.Type = corev1.EventTypeNormal
	return ev
}

// TestSnapshotCountsWhatTheWatchHadNotDelivered: an Event that began shortly before the snapshot's
// last contact but is not in it was still on its way (a watch lagging behind under load): it is
// counted whole. One that began well before and is not in the snapshot is a baseline.
func TestSnapshotCountsWhatTheWatchHadNotDelivered(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.snapshot")
	first := newHarness(t)
	snaps := OpenSnapshots(first.e, path, testIdentity, time.Minute, nil)
	first.sync()
	first.now = t0.Add(20 * time.Second) // the last notification, processed late
	first.add(kubeletEvent(uidA, "pod.a", 1, "FailedMount", msgS1))
	if _, err := snaps.Write(); err != nil {
		t.Fatal(err)
	}
	second, _ := restarted(t, path, testIdentity, t0.Add(time.Minute))
	second.sync(
		kubeletEvent(uidA, "pod.a", 1, "FailedMount", msgS1),
		at(kubeletEvent(uidB, "pod.b", 3, "FailedMount", msgS1), t0.Add(5*time.Second), t0.Add(30*time.Second)),
		at(kubeletEvent(uidC, "pod.c", 4, "FailedMount", msgS1), t0.Add(-time.Minute), t0.Add(30*time.Second)),
	)
	second.expect("configmap_not_found", 1+3)
}

// TestSnapshotOverTheCapKeepsTheNewest: with more live Events than a snapshot holds, the Events
// left out are the oldest, which the next start takes as a baseline. Left out at random (before),
// an Event that began just before the snapshot was counted whole a second time after the restart
// (found at 1,000,000 live Events: 5,766 occurrences more than written, none written meanwhile).
func TestSnapshotOverTheCapKeepsTheNewest(t *testing.T) {
	defer func(n int) { maxSnapshotEvents = n }(maxSnapshotEvents)
	maxSnapshotEvents = 10
	path := filepath.Join(t.TempDir(), "events.snapshot")
	ev := func(i int, count int32, first time.Time) *corev1.Event {
		return at(kubeletEvent(fmt.Sprintf("00000000-0000-4000-8000-%012d", i), fmt.Sprintf("pod-%d.e", i), count, "FailedMount", msgS1), first, first)
	}
	first := newHarness(t)
	var old []interface{}
	for i := range 50 { // there before kubecause: a baseline
		old = append(old, ev(i, 3, t0.Add(-40*time.Minute)))
	}
	first.sync(old...)
	snaps := OpenSnapshots(first.e, path, testIdentity, time.Minute, nil)
	for i := 50; i < 60; i++ { // begin while kubecause watches
		first.add(ev(i, 1, t0))
		first.update(ev(i, 2, t0))
	}
	first.now = t0.Add(10 * time.Second)
	if _, err := snaps.Write(); err != nil {
		t.Fatal(err)
	}
	counted := first.sum("kubecause_events_total")
	if counted != 20 {
		t.Fatalf("the first process counted %v, want 20", counted)
	}

	// Stopped and started again; nothing happened meanwhile.
	second, _ := restarted(t, path, testIdentity, t0.Add(time.Minute))
	if got := second.restores(RestoreRestored); got != 1 {
		t.Fatalf("restores{result=restored} = %v, want 1", got)
	}
	list := append([]interface{}(nil), old...)
	for i := 50; i < 60; i++ {
		list = append(list, ev(i, 2, t0))
	}
	second.sync(list...)
	if got := second.sum("kubecause_events_total"); got != counted {
		t.Fatalf("after the restart kubecause_events_total = %v, want %v: nothing occurred while away", got, counted)
	}
}

// TestSnapshotWriteIsTheTakenSnapshot: Write encodes the live Events straight from the engine's
// table; the file must be, byte for byte, the snapshot takeSnapshot copies and encode writes — under
// the cap and over it (where the newest are kept).
func TestSnapshotWriteIsTheTakenSnapshot(t *testing.T) {
	defer func(n int) { maxSnapshotEvents = n }(maxSnapshotEvents)
	for _, limit := range []int{MaxSnapshotEvents, 7} {
		maxSnapshotEvents = limit
		path := filepath.Join(t.TempDir(), "events.snapshot")
		h := newHarness(t)
		h.sync()
		for i := range 20 {
			first := t0.Add(time.Duration(i%5) * time.Second)
			h.add(at(kubeletEvent(fmt.Sprintf("00000000-0000-4000-8000-%012d", i), fmt.Sprintf("pod-%d.e", i), 1, "FailedMount", msgS1), first, first))
		}
		snaps := OpenSnapshots(h.e, path, testIdentity, time.Minute, nil)
		n, err := snaps.Write()
		if err != nil {
			t.Fatal(err)
		}
		file, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		h.e.mu.Lock()
		taken := h.e.takeSnapshot(testIdentity)
		h.e.mu.Unlock()
		if want := min(20, limit); len(taken.Events) != want {
			t.Fatalf("cap %d: the snapshot holds %d live Events, want %d", limit, len(taken.Events), want)
		}
		if !bytes.Equal(file, taken.Encode()) || n != len(file) {
			t.Fatalf("cap %d: Write wrote %d bytes (reported %d) that are not the taken snapshot's %d", limit, len(file), n, len(taken.Encode()))
		}
	}
}

// layout is a configuration of the watches, as kubecause's flags give it.
type layout struct {
	namespaces []string
	selector   string
	normal     []string
}

// scopeNames are the names of the watch scopes of a layout, as kubecause's main names them.
func (l layout) scopeNames() (names []string, selects []func(*corev1.Event) bool) {
	o := Options{Namespaces: l.namespaces, FieldSelector: l.selector, NormalReasons: l.normal}
	for _, ns := range o.Scopes() {
		for _, sel := range o.Selectors() {
			fs, err := fields.ParseSelector(sel)
			if err != nil {
				panic(err)
			}
			names = append(names, strings.TrimSpace(ns+" "+sel))
			// What the apiserver lists in that watch: the namespace and the field selector.
			selects = append(selects, func(ev *corev1.Event) bool {
				return (ns == "" || ev.Namespace == ns) &&
					fs.Matches(fields.Set{"metadata.namespace": ev.Namespace, "type": ev.Type, "reason": ev.Reason})
			})
		}
	}
	return names, selects
}

// process is a kubecause process running a layout, with its snapshot file.
type process struct {
	e       *Engine
	reg     *prometheus.Registry
	snaps   *Snapshots
	sources []*Source
	selects []func(*corev1.Event) bool
	log     *bytes.Buffer
}

func startProcess(t *testing.T, l layout, path string, now *time.Time) *process {
	t.Helper()
	p := &process{log: &bytes.Buffer{}}
	p.e = New(Config{Classifier: testTable{}, NormalReasons: l.normal, Now: func() time.Time { return *now },
		Logger: slog.New(slog.NewTextHandler(p.log, nil))})
	p.snaps = OpenSnapshots(p.e, path, testIdentity, time.Minute, nil)
	var names []string
	names, p.selects = l.scopeNames()
	for _, n := range names {
		p.sources = append(p.sources, p.e.NewSource(n))
	}
	p.reg = prometheus.NewPedanticRegistry()
	p.reg.MustRegister(p.e.Collectors()...)
	return p
}

// list gives each source its first list: the Events of world it selects.
func (p *process) list(t *testing.T, world []*corev1.Event) {
	t.Helper()
	for i, s := range p.sources {
		var l []interface{}
		for _, ev := range world {
			if p.selects[i](ev) {
				l = append(l, ev.DeepCopy())
			}
		}
		if err := s.Replace(l, "1"); err != nil {
			t.Fatal(err)
		}
	}
}

// watch delivers an added or updated Event to the source that selects it, if any.
func (p *process) watch(t *testing.T, ev *corev1.Event, added bool) {
	t.Helper()
	for i, s := range p.sources {
		if !p.selects[i](ev) {
			continue
		}
		var err error
		if added {
			err = s.Add(ev.DeepCopy())
		} else {
			err = s.Update(ev.DeepCopy())
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// families reads the counter families by one label each (summed over the others); a family
// absent from the scrape is absent from the result.
func (p *process) families(t *testing.T) map[string]map[string]float64 {
	t.Helper()
	by := map[string]string{"kubecause_events_total": "reason", "kubecause_objects_affected_total": "namespace",
		"kubecause_rule_hits_total": "rule"}
	mfs, err := p.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]map[string]float64{}
	for _, mf := range mfs {
		label, ok := by[mf.GetName()]
		if !ok {
			continue
		}
		got[mf.GetName()] = map[string]float64{}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if v := m.GetCounter().GetValue(); l.GetName() == label && v != 0 {
					got[mf.GetName()][l.GetValue()] += v
				}
			}
		}
	}
	return got
}

// TestSnapshotRestoreAcrossScopeChanges: kubecause counts with one layout of its watches, is
// stopped (SIGTERM: a snapshot), and started with another layout and the same snapshot file
// while the kubelet went on. Once every source of the new layout has read its first list, the
// restore ends and the primary families — kubecause_events_total, kubecause_objects_affected_total
// and kubecause_rule_hits_total — are served, exact: the counters carried from the snapshot
// (those of Events no longer watched too), the occurrences while away of the Events still watched
// added, whichever scope of the snapshot they were in. Before, the restore ended only when a
// source that took up one of the snapshot's scopes read the last first list: after any change
// of --events.field-selector, --events.namespace or --events.normal-reason (or of the default
// selector by an upgrade) the three families stayed absent until a restart with the same layout.
func TestSnapshotRestoreAcrossScopeChanges(t *testing.T) {
	const (
		msgSandbox = "Pod sandbox changed, it will be killed and re-created."
		msgBackOff = "Back-off restarting failed container"
	)
	var (
		t1   = t0.Add(-20 * time.Minute) // the first process starts
		back = t0                        // the second one
	)
	event := func(uid, ns, pod, typ, reason, message string, first time.Time) *corev1.Event {
		ev := kubeletEvent(uid, pod+".187f2a9c3b1e0d4a", 1, reason, message)
		ev.Namespace, ev.InvolvedObject.Namespace, ev.InvolvedObject.Name, ev.Type = ns, ns, pod, typ
		return at(ev, first, first)
	}
	repeat := func(ev *corev1.Event, count int32, when time.Time) *corev1.Event {
		ev = ev.DeepCopy()
		ev.Count, ev.LastTimestamp = count, metav1.NewTime(when)
		return ev
	}
	defaults := layout{selector: DefaultFieldSelector, normal: DefaultNormalReasons}
	for _, tc := range []struct {
		name          string
		before, after layout
		// The families the second process serves once its first lists are read: occurrences by
		// reason, objects affected by namespace, rule hits by rule.
		events, affected, rules map[string]float64
	}{
		{
			// The upgrade that made the default selector one watch changed every scope's name the
			// other way round.
			name: "default selector to type=Warning", before: defaults,
			after:    layout{selector: "type=Warning", normal: DefaultNormalReasons},
			events:   map[string]float64{"FailedMount": 7 + 3 + 2, "FailedCreatePodSandBox": 4, "SandboxChanged": 5, "BackOff": 6},
			affected: map[string]float64{"apps": 5, "kube-system": 1},
			rules:    map[string]float64{"volume.configmap_not_found": 12, "sandbox.disk_full": 4, "fallback": 11},
		},
		{
			// kube-system is no longer watched: its counter is carried, at what was counted.
			name: "every namespace to one", before: defaults,
			after:    layout{namespaces: []string{"apps"}, selector: DefaultFieldSelector, normal: DefaultNormalReasons},
			events:   map[string]float64{"FailedMount": 7 + 2 + 2, "FailedCreatePodSandBox": 4, "SandboxChanged": 5, "BackOff": 6},
			affected: map[string]float64{"apps": 5, "kube-system": 1},
			rules:    map[string]float64{"volume.configmap_not_found": 11, "sandbox.disk_full": 4, "fallback": 11},
		},
		{
			// BackOff is no longer counted (carried at 2); SandboxChanged is newly counted: its
			// Event, older than the snapshot and not in it, is a baseline.
			name:     "normal reasons changed",
			before:   layout{selector: "type=Warning", normal: []string{"BackOff"}},
			after:    layout{selector: "type=Warning", normal: []string{"SandboxChanged"}},
			events:   map[string]float64{"FailedMount": 12, "FailedCreatePodSandBox": 4, "BackOff": 2},
			affected: map[string]float64{"apps": 4, "kube-system": 1},
			rules:    map[string]float64{"volume.configmap_not_found": 12, "sandbox.disk_full": 4, "fallback": 2},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "events.snapshot")
			now := t1
			first := startProcess(t, tc.before, path, &now)
			first.list(t, nil)
			w1 := event(uidA, "apps", "web-0", corev1.EventTypeWarning, "FailedMount", msgS1, t1.Add(time.Minute))
			w2 := event(uidB, "apps", "web-1", corev1.EventTypeWarning, "FailedCreatePodSandBox", msgDisk, t1.Add(time.Minute))
			n1 := event(uidC, "apps", "web-2", corev1.EventTypeNormal, "SandboxChanged", msgSandbox, t1.Add(time.Minute))
			n2 := event(uidD, "apps", "web-4", corev1.EventTypeNormal, "BackOff", msgBackOff, t1.Add(time.Minute))
			w3 := event(uidE, "kube-system", "dns-0", corev1.EventTypeWarning, "FailedMount", msgS1, t1.Add(time.Minute))
			now = t1.Add(time.Minute)
			for _, ev := range []*corev1.Event{w1, w2, n1, n2, w3} {
				first.watch(t, ev, true)
			}
			now = t1.Add(5 * time.Minute)
			w1, n1, n2, w3 = repeat(w1, 3, now), repeat(n1, 2, now), repeat(n2, 2, now), repeat(w3, 2, now)
			for _, ev := range []*corev1.Event{w1, n1, n2, w3} {
				first.watch(t, ev, false)
			}
			now = t1.Add(6 * time.Minute)
			if _, err := first.snaps.Write(); err != nil { // SIGTERM
				t.Fatal(err)
			}

			// While away, the kubelet goes on: repeats, and a new Event.
			away := back.Add(-time.Minute)
			c1 := event(uidF, "apps", "web-3", corev1.EventTypeWarning, "FailedMount", msgS1, back.Add(-2*time.Minute))
			world := []*corev1.Event{repeat(w1, 7, away), repeat(w2, 4, away), repeat(n1, 5, away), repeat(n2, 6, away),
				repeat(w3, 3, away), repeat(c1, 2, away)}

			now = back
			second := startProcess(t, tc.after, path, &now)
			if got := second.e.m.restores.WithLabelValues(RestoreRestored); counterValue(got) != 1 {
				t.Fatal("the snapshot was not restored")
			}
			second.list(t, world)
			if !second.e.Synced() {
				t.Fatal("not synced after every first list")
			}
			got := second.families(t)
			for _, f := range []struct {
				name string
				want map[string]float64
			}{{"kubecause_events_total", tc.events}, {"kubecause_objects_affected_total", tc.affected}, {"kubecause_rule_hits_total", tc.rules}} {
				g, ok := got[f.name]
				if !ok {
					t.Fatalf("%s is not served after every first list was read (log:\n%s)", f.name, second.log)
				}
				if !reflect.DeepEqual(g, f.want) {
					t.Errorf("%s = %v, want %v", f.name, g, f.want)
				}
			}
			if !strings.Contains(second.log.String(), "snapshot restore ended") {
				t.Errorf("no log line says the restore ended:\n%s", second.log)
			}
			// And counting goes on: one more occurrence of an Event watched now.
			now = back.Add(time.Minute)
			second.watch(t, repeat(world[0], 8, now), false)
			if got := second.families(t)["kubecause_events_total"]["FailedMount"]; got != tc.events["FailedMount"]+1 {
				t.Fatalf("FailedMount = %v after one more occurrence, want %v", got, tc.events["FailedMount"]+1)
			}
		})
	}
}

// forgedCounters is a snapshot file with a valid checksum whose counters section holds n records
// made by label (the six label values of record i) and nothing else.
func forgedCounters(n int, label func(i int) [6]string) []byte {
	base := (&snapshotfile.Snapshot{Identity: testIdentity, Written: t0.Unix(), TTL: 3600,
		Sources: []snapshotfile.Source{{Name: "all", Contact: t0.Unix()}}}).Encode()
	// The sections' lengths after the tombstones' are 0 (one byte each), then three values and
	// the checksum: the counters' length is the byte before the last 3+24+4.
	b := bytes.Clone(base[:len(base)-4-24-3])
	b = binary.AppendUvarint(b, uint64(n))
	for i := range n {
		for _, v := range label(i) {
			b = binary.AppendUvarint(b, uint64(len(v)))
			b = append(b, v...)
		}
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(1))
	}
	b = append(b, 0, 0)
	b = append(b, make([]byte, 24)...)
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)))
}

// TestForgedSnapshotIsBounded: a snapshot file kubecause could not have written — more counter
// series than any --events.max-series lets it keep, or the same series many times — is refused or
// folded into the overflow series at start, in memory bounded by the caps rather than by the file.
// Before, 4 million records of the empty label set (a 56 MB file) took 703 MB at start.
func TestForgedSnapshotIsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("writes files of up to 56 MB")
	}
	for _, tc := range []struct {
		name   string
		file   func() []byte
		result string
		// events is the sum of kubecause_events_total once the first list is read (restored).
		events float64
	}{
		{"4 million empty counters", func() []byte {
			return forgedCounters(4_000_000, func(int) [6]string { return [6]string{} })
		}, RestoreCorrupt, -1},
		{"a million distinct counters", func() []byte {
			return forgedCounters(1_000_000, func(i int) [6]string {
				return [6]string{"n" + strconv.Itoa(i), "Pod", "F", "Warning", "k", "c"}
			})
		}, RestoreRestored, 1_000_000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "events.snapshot")
			b := tc.file()
			writeFile(t, p, b)
			size := len(b)
			b = nil
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			h, _ := restarted(t, p, testIdentity, t0.Add(time.Minute))
			runtime.ReadMemStats(&after)
			allocated := after.TotalAlloc - before.TotalAlloc
			runtime.GC()
			runtime.ReadMemStats(&after)
			held := int64(after.HeapAlloc) - int64(before.HeapAlloc)
			t.Logf("%d-byte file: %.1f MB allocated at start, %.1f MB held after", size, float64(allocated)/1e6, float64(held)/1e6)
			if got := h.restores(tc.result); got != 1 {
				t.Fatalf("restores{result=%q} = %v, want 1", tc.result, got)
			}
			h.sync()
			if got := h.sum("kubecause_events_total"); tc.events >= 0 && got != tc.events {
				t.Fatalf("kubecause_events_total sums to %v, want %v", got, tc.events)
			}
			// The file read whole, and what the caps allow (10,000 series by default).
			if limit := uint64(size) + 40<<20; allocated > limit {
				t.Fatalf("%d bytes allocated at start for a %d-byte file, more than %d", allocated, size, limit)
			}
			runtime.KeepAlive(h)
		})
	}
}

// TestSnapshotStaleTemporariesRemoved: the temporary files of snapshots whose write was cut short
// (a SIGKILL between the write and the rename) are removed at the next start; nothing else in the
// directory is touched.
func TestSnapshotStaleTemporariesRemoved(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "events.snapshot")
	first := newHarness(t)
	snaps := OpenSnapshots(first.e, path, testIdentity, time.Minute, nil)
	first.sync()
	first.add(kubeletEvent(uidA, "pod.a", 1, "FailedMount", msgS1))
	if _, err := snaps.Write(); err != nil {
		t.Fatal(err)
	}
	// What writeAtomic leaves when killed before the rename: its temporary, named as it names them.
	var stale []string
	for range 3 {
		f, err := os.CreateTemp(dir, ".events.snapshot.tmp-*")
		if err != nil {
			t.Fatal(err)
		}
		_, _ = f.Write([]byte(snapshotfile.Magic))
		_ = f.Close()
		stale = append(stale, f.Name())
	}
	others := []string{filepath.Join(dir, ".other.snapshot.tmp-1"), filepath.Join(dir, "events.snapshot.tmp-1"), filepath.Join(dir, "notes")}
	for _, p := range others {
		writeFile(t, p, []byte("x"))
	}
	second, _ := restarted(t, path, testIdentity, t0.Add(time.Minute))
	for _, p := range stale {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("stale temporary %s still there: %v", filepath.Base(p), err)
		}
	}
	for _, p := range append(others, path) {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s: %v", filepath.Base(p), err)
		}
	}
	if got := second.restores(RestoreRestored); got != 1 {
		t.Fatalf("restores{result=restored} = %v, want 1", got)
	}
}
