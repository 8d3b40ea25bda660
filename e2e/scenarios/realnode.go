// The real-node scenario lists and the helpers their scenarios share; the scenarios are grouped by
// area in realnode_*.go. IDs: the seed's (S1…S19), a variant after a hyphen (S12-AUTH, S18-LOW), or an
// area's name for scenarios without a seed (SCHED-CPU, QUOTA, OOM).

package scenarios

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubecause/kubecause/e2e/framework"
)

// RealScenarios are the seed scenarios this host can make real (docs/e2e.md lists the others).
func RealScenarios() []Scenario {
	return []Scenario{
		realS1(), realS6(), realS11(), realCommandNotFound(), realS4(),
		realS12NotFound(), realS12Auth(), realS12Unreachable(), realS12Insecure(), realSchedulingCPU(), realSchedulingSelector(),
		realS2(), realS3(), realS18(), realS5(), realS19(), realOOMKilled(), realS10(), realS14(), realS7(),
		realQuota(),
	}
}

// IncidentPrelude are the scenarios played and resolved on the incident's node before its
// kube-state-metrics outage, so that the outage has something gone to bring back: a pod the fix
// deletes (S11), a workload's pod the fix repairs (S1), a workload short of pods (QUOTA).
func IncidentPrelude() []Scenario {
	return []Scenario{realS1(), realS11(), realQuota()}
}

// RealNodeScenarios change the node for every pod (its network, its taints, its kubelet): the
// test plays, checks and fixes them one at a time after the others.
func RealNodeScenarios() []Scenario {
	return []Scenario{realS18LowOnDisk(), realS18DiskPressure(), realS10Pull(), realSchedulingTaint(), realS13(), realS15(), realS17()}
}

// pod is a pod of the test image on the real node's scheduler.
func pod(ns, name string, mutate ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"app": name}},
		Spec: corev1.PodSpec{
			// No cluster DNS runs: pods use the node's resolver (else MissingClusterDNS Events).
			DNSPolicy:                     corev1.DNSDefault,
			TerminationGracePeriodSeconds: ptr(int64(1)),
			Containers: []corev1.Container{{
				Name: "main", Image: framework.TestappImage, ImagePullPolicy: corev1.PullIfNotPresent,
			}},
		},
	}
	for _, m := range mutate {
		m(p)
	}
	return p
}

func createPod(ctx context.Context, s *framework.Stack, p *corev1.Pod) error {
	_, err := s.Cluster.Client.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("creating pod %s/%s: %w", p.Namespace, p.Name, err)
	}
	return nil
}

func deletePod(ctx context.Context, s *framework.Stack, ns, name string) error {
	return s.Cluster.Client.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: ptr(int64(0))})
}

// deletePodAndWait deletes a pod and waits until it is gone (its name free again).
func deletePodAndWait(ctx context.Context, s *framework.Stack, ns, name string) error {
	if err := deletePod(ctx, s, ns, name); err != nil {
		return err
	}
	return framework.Poll(ctx, 60e9, func() (bool, error) {
		_, err := s.Cluster.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}

// waitPodRunning waits until the pod runs.
func waitPodRunning(ctx context.Context, s *framework.Stack, ns, name string, timeout time.Duration) error {
	err := framework.Poll(ctx, timeout, func() (bool, error) {
		p, err := s.Cluster.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		return err == nil && p.Status.Phase == corev1.PodRunning, nil
	})
	if err != nil {
		return fmt.Errorf("pod %s/%s never ran: %w", ns, name, err)
	}
	return nil
}

// podScenario is one broken pod that the fix deletes: mutate breaks it (it may read the stack,
// e.g. for a registry's address), the component writes an Event of reason with cause about it,
// and alert (if any) pages with the cause's runbook section.
func podScenario(id, title, ns, name string, mutate func(*framework.Stack, *corev1.Pod) error, reason, cause, alert string) Scenario {
	sc := Scenario{
		ID: id, Title: title, Namespace: ns,
		Play: func(ctx context.Context, s *framework.Stack) error {
			p := pod(ns, name)
			if err := mutate(s, p); err != nil {
				return err
			}
			return createPod(ctx, s, p)
		},
		Fix:    func(ctx context.Context, s *framework.Stack) error { return deletePod(ctx, s, ns, name) },
		Expect: []RealEvent{{Kind: "Pod", Object: name, Reason: reason, Cause: cause}},
	}
	if alert != "" {
		sc.Alerts = []ExpectedAlert{podAlert(alert, ns, name, cause)}
	}
	return sc
}

// createDeployment creates a Deployment of replicas pods with spec, selected by app=name.
func createDeployment(ctx context.Context, s *framework.Stack, ns, name string, replicas int32, spec corev1.PodSpec) error {
	sel := map[string]string{"app": name}
	_, err := s.Cluster.Client.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: sel}, Spec: spec},
		},
	}, metav1.CreateOptions{})
	return err
}

// container is the pod's only container.
func container(p *corev1.Pod) *corev1.Container { return &p.Spec.Containers[0] }
