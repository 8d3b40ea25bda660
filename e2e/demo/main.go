// Command demo runs kubecause's whole chain locally: a kube-apiserver with etcd,
// kube-state-metrics, kubecause (127.0.0.1:9737, serving the runbooks the alerts link), Prometheus
// (UI on 127.0.0.1:9090) and Alertmanager (127.0.0.1:9093), plays the seed scenarios in, prints
// what fired with runbook links (each checked to open its section), and
// cleans up on Ctrl-C. On a host that can run a node (root, cgroups), the cluster has a real
// node with the controllers and the scenarios are real failing pods; elsewhere (or with
// --no-real-node) the Events are written as the components would write them.
// hack/demo.sh (make demo) runs it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/kubecause/kubecause/e2e/framework"
	"github.com/kubecause/kubecause/e2e/scenarios"
)

func main() {
	prom := flag.String("prometheus", "127.0.0.1:9090", "Prometheus listen address (empty: a free port)")
	am := flag.String("alertmanager", "127.0.0.1:9093", "Alertmanager listen address (empty: a free port)")
	kc := flag.String("kubecause", "127.0.0.1:9737", "kubecause listen address (empty: a free port); the alerts link the runbooks it serves")
	maxFor := flag.Duration("alert-for", 10*time.Second, "cap on the alerts' `for` so the demo fires within seconds (0: the mixin's own durations)")
	wait := flag.Duration("wait", 3*time.Minute, "how long to wait for the expected alerts")
	exitAfter := flag.Bool("exit", false, "stop after printing what fired instead of waiting for Ctrl-C")
	realNode := flag.Bool("real-node", true, "run a real node (kubelet, containerd, controllers) when this host can")
	flag.Parse()
	if err := run(*prom, *am, *kc, *maxFor, *wait, *exitAfter, *realNode); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func run(promAddr, amAddr, kcAddr string, maxFor, wait time.Duration, exitAfter, realNode bool) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	dir, err := os.MkdirTemp("", "kubecause-demo-")
	if err != nil {
		return err
	}
	if maxFor == 0 {
		maxFor = -1
	}
	if realNode {
		if err := framework.NodeHostSupported(); err != nil {
			fmt.Printf("No real node on this host (%v): the Events are written as the components would write them.\n", err)
			realNode = false
		}
	}
	scs := scenarios.SeedScenarios()
	how := "Events written as the kubelet, controllers and scheduler write them"
	if realNode {
		how = "real failing pods: the kubelet, runtime, scheduler and controllers write the Events"
		scs = scenarios.RealScenarios()
	}
	logf := func(format string, args ...any) { fmt.Printf("  "+format+"\n", args...) }
	fmt.Println("Starting the local chain (logs under " + dir + "/logs):")
	s, err := framework.StartStack(ctx, framework.StackOptions{
		WorkDir: dir, Namespaces: scenarios.Namespaces(scs), MaxFor: maxFor, Cluster: "demo", RealNode: realNode,
		PrometheusListen: promAddr, AlertmanagerListen: amAddr, KubecauseListen: kcAddr, ServeRunbooks: true, Logf: logf,
	})
	if err != nil {
		return err
	}
	defer func() {
		fmt.Println("\nStopping everything …")
		s.Stop()
		_ = os.RemoveAll(dir)
	}()
	if maxFor > 0 {
		fmt.Printf("  (alert `for` durations capped at %s for the demo; the mixin's own are 10–15 min)\n", maxFor)
	}

	fmt.Printf("\nPlaying the seed scenarios (%s):\n", how)
	for _, sc := range scs {
		if err := sc.Play(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", sc.ID, err)
		}
		fmt.Printf("  %-9s %s\n", sc.ID, sc.Title)
	}

	fmt.Printf("\nWaiting up to %s for the alerts to reach Alertmanager …\n", wait)
	var expected []scenarios.ExpectedAlert
	for _, sc := range scs {
		expected = append(expected, sc.Alerts...)
	}
	_ = s.Webhook.WaitFor(wait, func(w *framework.Webhook) bool {
		for _, a := range expected {
			if len(w.Firing(a.Match())) == 0 {
				return false
			}
		}
		return true
	})
	firing := s.Webhook.Firing(nil)
	sort.Slice(firing, func(i, j int) bool { return firing[i].String() < firing[j].String() })
	var dead []string
	fmt.Printf("\nFiring now (%d alerts, as the pager received them; the runbooks are served by kubecause):\n", len(firing))
	for _, n := range firing {
		what := n.Labels["pod"]
		for _, k := range []string{"persistentvolumeclaim", "service", "node"} {
			if what == "" {
				what = n.Labels[k]
			}
		}
		fmt.Printf("  %-36s %s/%s", n.Labels["alertname"], n.Labels["namespace"], what)
		if c := n.Labels["cause"]; c != "" {
			fmt.Printf("  cause=%s", c)
		}
		link := n.Annotations["runbook_url"]
		status := "opens its section"
		if err := framework.CheckRunbookLink(link); err != nil {
			status = err.Error()
			dead = append(dead, link)
		}
		fmt.Printf("\n      %s\n      runbook: %s (%s)\n", n.Annotations["description"], link, status)
	}
	var missing []string
	for _, a := range expected {
		if len(s.Webhook.Firing(a.Match())) == 0 {
			missing = append(missing, a.Name+fmt.Sprint(a.Labels))
		}
	}
	if len(missing) > 0 {
		fmt.Printf("\nExpected but not firing: %s\n", strings.Join(missing, "; "))
	}

	k := s.Kubecause[0]
	fmt.Printf(`
Where to look:
  Prometheus UI      http://%[1]s   (try: sum by (namespace, cause) (kubecause_events_total))
  Alerts             http://%[1]s/alerts
  Alertmanager       http://%[2]s
  kubecause metrics  http://%[3]s/metrics
  live problems      http://%[3]s/problems
  runbooks           http://%[3]s/runbooks/
  kube-state-metrics http://%[4]s/metrics
  the cluster        kubectl --kubeconfig %[5]s get events -A
  offline diagnosis  %[6]s explain -f <events.json>
`, s.Prometheus.Addr, s.Alertmanager.Addr, k.Addr, s.KSM.Addr, s.Cluster.KubeconfigPath, s.Bin.Kubecause)
	if exitAfter {
		if len(missing) > 0 {
			return fmt.Errorf("%d expected alerts did not fire", len(missing))
		}
		if len(dead) > 0 {
			return fmt.Errorf("%d runbook links do not open their section", len(dead))
		}
		return nil
	}
	fmt.Println("\nPress Ctrl-C to stop and clean up.")
	<-ctx.Done()
	return nil
}
