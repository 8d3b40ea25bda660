// Real-node scenarios of the node itself: its CNI (S13, S15), its runtime's shim (S14), its kubelet
// (S17), a LoadBalancer no controller serves (S3).

package scenarios

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubecause/kubecause/e2e/framework"
)

// S3: a LoadBalancer Service in a cluster with no load-balancer controller (no cloud provider,
// no MetalLB) never gets an address.
func realS3() Scenario {
	const ns, svc = "real-s3", "istiod-hosted-lb"
	return Scenario{
		ID: "S3", Title: "LoadBalancer Service without an address", Namespace: ns,
		Play: func(ctx context.Context, s *framework.Stack) error {
			_, err := s.Objects.CreateService(ctx, ns, svc, true, map[string]string{"app": svc}, 15012, 15017)
			return err
		},
		Fix: func(ctx context.Context, s *framework.Stack) error {
			return s.Cluster.Client.CoreV1().Services(ns).Delete(ctx, svc, metav1.DeleteOptions{})
		},
		Alerts: []ExpectedAlert{{Name: "KubecauseLoadBalancerNoAddress", Labels: map[string]string{"namespace": ns, "service": svc},
			Runbook: "kubecauseloadbalancernoaddress.md"}},
	}
}

// S13: the CNI's address range is used up: the pod that takes its last address runs, the next
// one gets no IP.
func realS13() Scenario {
	const ns, holder, next = "real-s13", "holder", "no-address"
	return Scenario{
		ID: "S13", Title: "CNI IP range exhausted", Namespace: ns,
		Play: func(ctx context.Context, s *framework.Stack) error {
			last, err := s.Node.LimitPodAddresses()
			if err != nil {
				return err
			}
			// containerd reloads the CNI configuration in the background after the change: a holder
			// set up before that got another address and is replaced until it holds the last one.
			var ip string
			for attempt := 1; ip != last; attempt++ {
				if attempt > 3 {
					return fmt.Errorf("pod %s/%s got %s three times, not the only address left %s: containerd did not load the limited range", ns, holder, ip, last)
				}
				if ip != "" {
					if err := deletePodAndWait(ctx, s, ns, holder); err != nil {
						return err
					}
				}
				if err := createPod(ctx, s, pod(ns, holder)); err != nil {
					return err
				}
				if err := framework.Poll(ctx, 120e9, func() (bool, error) {
					p, err := s.Cluster.Client.CoreV1().Pods(ns).Get(ctx, holder, metav1.GetOptions{})
					if err != nil || p.Status.Phase != corev1.PodRunning {
						return false, nil
					}
					ip = p.Status.PodIP
					return true, nil
				}); err != nil {
					return fmt.Errorf("pod %s/%s, to take the last address %s, never ran: %w", ns, holder, last, err)
				}
			}
			return createPod(ctx, s, pod(ns, next))
		},
		Fix: func(ctx context.Context, s *framework.Stack) error {
			if err := s.Node.RestorePodAddresses(); err != nil {
				return err
			}
			for _, name := range []string{holder, next} {
				if err := deletePod(ctx, s, ns, name); err != nil {
					return err
				}
			}
			return nil
		},
		Expect: []RealEvent{{Kind: "Pod", Object: next, Reason: "FailedCreatePodSandBox", Cause: "cni_error"}},
		// Only the pod without an address: exactly one alert for the namespace.
		Alerts: []ExpectedAlert{{Name: "KubecausePodSandboxFailing", Labels: map[string]string{"namespace": ns, "cause": "cni_error"},
			Runbook: "kubecausepodsandboxfailing.md#cni_error"}},
	}
}

// S15: the pod network is slower than the kubelet's runtime request timeout: the kubelet gives up
// on RunPodSandbox (DeadlineExceeded) while containerd still sets up the sandbox under its name,
// and the kubelet's retry, with the same name (attempt 0), gets containerd's own refusal
// `failed to reserve sandbox name "<pod>_<ns>_<uid>_0": name "…" is reserved for "<id>"`. The
// node's CNI chain ends with a plugin whose ADD does not finish (Node.SetSlowPodNetwork), the
// kubelet runs with runtimeRequestTimeout 10s; the fix restores both and deletes the pod.
func realS15() Scenario {
	const ns, name = "real-s15", "slow-net"
	return Scenario{
		ID: "S15", Title: "sandbox name still reserved: CNI slower than the runtime request timeout", Namespace: ns,
		Play: func(ctx context.Context, s *framework.Stack) error {
			if err := s.Node.SetSlowPodNetwork(ctx, true); err != nil {
				return err
			}
			if err := createPod(ctx, s, pod(ns, name)); err != nil {
				return err
			}
			// containerd loads the changed chain in the background: the pod must reach the plugin.
			if err := framework.Poll(ctx, 120e9, func() (bool, error) { return s.Node.SlowPodNetworkHeld(), nil }); err != nil {
				return fmt.Errorf("pod %s/%s never reached the slow CNI plugin: %w", ns, name, err)
			}
			return nil
		},
		Fix: func(ctx context.Context, s *framework.Stack) error {
			if err := s.Node.SetSlowPodNetwork(ctx, false); err != nil {
				return err
			}
			return deletePod(ctx, s, ns, name)
		},
		Expect: []RealEvent{{Kind: "Pod", Object: name, Reason: "FailedCreatePodSandBox", Cause: "sandbox_name_conflict",
			Message: "failed to reserve sandbox name"}},
		Alerts: []ExpectedAlert{{Name: "KubecausePodSandboxFailing", Labels: map[string]string{"namespace": ns, "cause": "sandbox_name_conflict"},
			Runbook: "kubecausepodsandboxfailing.md#sandbox_name_conflict"}},
	}
}

// S17: the kubelet stops: the node-lifecycle controller marks the node NotReady.
func realS17() Scenario {
	return Scenario{
		ID: "S17", Title: "kubelet stopped, node NotReady", Namespace: "default",
		Play: func(ctx context.Context, s *framework.Stack) error { return s.Node.StopKubelet() },
		Fix: func(ctx context.Context, s *framework.Stack) error {
			if err := s.Node.StartKubelet(); err != nil {
				return err
			}
			return s.Node.WaitReady(ctx, 120e9)
		},
		Expect: []RealEvent{{Kind: "Node", Object: "kubecause-node", Reason: "NodeNotReady", Cause: "node_not_ready"}},
		Alerts: []ExpectedAlert{{Name: "KubecauseNodeNotReady", Labels: map[string]string{"node": "kubecause-node"},
			Runbook: "kubecausenodenotready.md"}},
		MutesNode: true,
	}
}

// S14: the runtime's shim dies while it creates the pod's sandbox: the pod's RuntimeClass selects
// a runc that kills its shim when asked to create a container (framework.ShimKillRuntimeHandler), so
// containerd loses the shim's ttrpc connection in the middle of the sandbox's task creation.
func realS14() Scenario {
	const ns, name = "real-s14", "shim-killed"
	sc := podScenario("S14", "the runtime shim killed while it creates the sandbox", ns, name, func(_ *framework.Stack, p *corev1.Pod) error {
		p.Spec.RuntimeClassName = ptr(framework.ShimKillRuntimeClass)
		return nil
	}, "FailedCreatePodSandBox", "runtime_shim_error", "KubecausePodSandboxFailing")
	create := sc.Play
	sc.Play = func(ctx context.Context, s *framework.Stack) error {
		if _, err := s.Cluster.Client.NodeV1().RuntimeClasses().Create(ctx, &nodev1.RuntimeClass{
			ObjectMeta: metav1.ObjectMeta{Name: framework.ShimKillRuntimeClass}, Handler: framework.ShimKillRuntimeHandler}, metav1.CreateOptions{}); err != nil {
			return err
		}
		return create(ctx, s)
	}
	return sc
}
