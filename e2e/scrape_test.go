//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubecause/kubecause/e2e/framework"
)

// TestScrapesCompleteUnderChurnWithSlowReaders: slow clients hold /metrics responses open while
// the per-object view is replaced many times over its cap; every plain scrape meanwhile and after
// has every object whose Event lives throughout, in both view families.
func TestScrapesCompleteUnderChurnWithSlowReaders(t *testing.T) {
	const (
		viewCap = 1000
		stable  = 400
	)
	ctx := testContext(t)
	s := startStack(t, framework.StackOptions{Namespaces: []string{"apps"},
		KubecauseArgs: []string{fmt.Sprintf("--object-view.max-series=%d", viewCap)}})
	k := s.Kubecause[0]
	kubelet := framework.Kubelet(s.Cluster.Client, "worker-1")
	const message = `MountVolume.SetUp failed for volume "tls" : secret "web-tls" not found`
	ref := func(name string) corev1.ObjectReference {
		return corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: "apps", Name: name}
	}
	for i := 0; i < stable; i++ {
		must[*framework.CoreEvent](t)(kubelet.Emit(ctx, ref(fmt.Sprintf("web-%d", i)), corev1.EventTypeWarning, "FailedMount", message))
	}
	waitKubecauseValue(t, k, "kubecause_series", map[string]string{"metric": "kubecause_object_events"}, stable)

	// Slow readers: each sends a scrape and reads a byte every 100 ms.
	for i := 0; i < 3; i++ {
		conn, err := net.Dial("tcp", k.Addr)
		check(t, err)
		t.Cleanup(func() { conn.Close() })
		_, err = fmt.Fprintf(conn, "GET /metrics HTTP/1.1\r\nHost: %s\r\n\r\n", k.Addr)
		check(t, err)
		go func() {
			b := make([]byte, 1)
			for ctx.Err() == nil {
				if _, err := conn.Read(b); err != nil {
					return
				}
				time.Sleep(100 * time.Millisecond)
			}
		}()
	}
	// Churn: objects other than the stable ones get an Event that expires, again and again.
	var churned atomic.Int64
	churnCtx, stopChurn := context.WithCancel(ctx)
	churnDone := make(chan struct{})
	go func() {
		defer close(churnDone)
		for i := 0; churnCtx.Err() == nil; i++ {
			ev, err := kubelet.Emit(churnCtx, ref(fmt.Sprintf("churn-%d", i)), corev1.EventTypeWarning, "FailedMount", message)
			if err != nil {
				return
			}
			if err := ev.Delete(churnCtx); err != nil {
				return
			}
			churned.Add(1)
		}
	}()

	complete := func(what string) {
		t.Helper()
		resp, err := http.Get(k.URL("/metrics"))
		check(t, err)
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: scrape answered %s", what, resp.Status)
		}
		counts := map[string]int{}
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			line := sc.Text()
			for _, family := range []string{"kubecause_object_events{", "kubecause_object_event_last_timestamp_seconds{"} {
				if strings.HasPrefix(line, family) && strings.Contains(line, `,name="web-`) {
					counts[family]++
				}
			}
		}
		check(t, sc.Err())
		for _, family := range []string{"kubecause_object_events{", "kubecause_object_event_last_timestamp_seconds{"} {
			if counts[family] != stable {
				t.Fatalf("%s: %d of the %d stable objects in %s}", what, counts[family], stable, family)
			}
		}
	}
	scrapes := 0
	for churned.Load() < 3*viewCap {
		complete(fmt.Sprintf("scrape %d during churn (%d entries replaced)", scrapes, churned.Load()))
		scrapes++
	}
	stopChurn()
	<-churnDone
	for i := 0; i < 20; i++ {
		complete(fmt.Sprintf("scrape %d after churn", i))
	}
	t.Logf("slow readers 3, view cap %d: %d scrapes during churn (%d view entries replaced) and 20 after, each with all %d stable objects in both view families",
		viewCap, scrapes, churned.Load(), stable)
}
