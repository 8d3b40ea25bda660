// Real-node scenarios the real scheduler writes: CPU, a node selector, a taint.

package scenarios

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubecause/kubecause/e2e/framework"
)

// FailedScheduling from the real scheduler: more CPU than the node has.
func realSchedulingCPU() Scenario {
	return podScenario("SCHED-CPU", "insufficient CPU", "real-sched-cpu", "fifty-cpus", func(_ *framework.Stack, p *corev1.Pod) error {
		container(p).Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50")}
		return nil
	}, "FailedScheduling", "scheduling_insufficient_resources", "KubecausePodUnschedulable")
}

// FailedScheduling from the real scheduler: a node selector no node matches.
func realSchedulingSelector() Scenario {
	return podScenario("SCHED-SEL", "node selector matches no node", "real-sched-selector", "wrong-zone", func(_ *framework.Stack, p *corev1.Pod) error {
		p.Spec.NodeSelector = map[string]string{"topology.kubernetes.io/zone": "nowhere"}
		return nil
	}, "FailedScheduling", "scheduling_node_selector_mismatch", "KubecausePodUnschedulable")
}

// FailedScheduling from the real scheduler: the only node has a NoSchedule taint the pod does
// not tolerate (running pods stay). Removing the taint lets the pod run.
func realSchedulingTaint() Scenario {
	const ns, name = "real-sched-taint", "no-toleration"
	taint := corev1.Taint{Key: "kubecause.io/e2e-maintenance", Value: "true", Effect: corev1.TaintEffectNoSchedule}
	setTaint := func(ctx context.Context, s *framework.Stack, on bool) error {
		return framework.Poll(ctx, 30e9, func() (bool, error) {
			node, err := s.Cluster.Client.CoreV1().Nodes().Get(ctx, s.Node.Name, metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			var taints []corev1.Taint
			for _, t := range node.Spec.Taints {
				if t.Key != taint.Key {
					taints = append(taints, t)
				}
			}
			if on {
				taints = append(taints, taint)
			}
			node.Spec.Taints = taints
			_, err = s.Cluster.Client.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{})
			return err == nil, nil // a conflict with the kubelet's status update: retry
		})
	}
	return Scenario{
		ID: "SCHED-TAINT", Title: "untolerated NoSchedule taint", Namespace: ns,
		Play: func(ctx context.Context, s *framework.Stack) error {
			if err := setTaint(ctx, s, true); err != nil {
				return fmt.Errorf("tainting node %s: %w", s.Node.Name, err)
			}
			return createPod(ctx, s, pod(ns, name))
		},
		Fix: func(ctx context.Context, s *framework.Stack) error {
			if err := setTaint(ctx, s, false); err != nil {
				return fmt.Errorf("removing the taint of node %s: %w", s.Node.Name, err)
			}
			// Running before the next node scenario changes the node again.
			return waitPodRunning(ctx, s, ns, name, 90*time.Second)
		},
		Expect: []RealEvent{{Kind: "Pod", Object: name, Reason: "FailedScheduling", Cause: "scheduling_taint_not_tolerated"}},
		Alerts: []ExpectedAlert{podAlert("KubecausePodUnschedulable", ns, name, "scheduling_taint_not_tolerated")},
		// Fixed: the pod was scheduled and runs.
		Fixed: []PromExpect{{Expr: fmt.Sprintf(`max(kube_pod_status_phase{namespace=%q,pod=%q,phase="Running"})`, ns, name), Want: 1}},
	}
}
