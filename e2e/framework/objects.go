package framework

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
)

// Objects creates workload objects and sets their status as the (absent) kubelet and
// controllers would, through the status subresource.
type Objects struct {
	Client kubernetes.Interface
	// PodOwners, when set, returns the owner references CreatePod gives a pod (a test that
	// creates the owning workload first, as its controller would own the pod).
	PodOwners func(ctx context.Context, ns, pod string) ([]metav1.OwnerReference, error)
}

// PodSpec options for CreatePod.
type PodOptions struct {
	Node       string
	Image      string
	Containers []string // container names; default one container "main"
	Volumes    []corev1.Volume
	Labels     map[string]string
}

// CreatePod creates a pod bound to a node (as if scheduled) with Pending status.
func (o Objects) CreatePod(ctx context.Context, ns, name string, opt PodOptions) (*corev1.Pod, error) {
	if opt.Image == "" {
		opt.Image = "registry.example/app:1.0"
	}
	if len(opt.Containers) == 0 {
		opt.Containers = []string{"main"}
	}
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: opt.Labels},
		Spec:       corev1.PodSpec{NodeName: opt.Node, Volumes: opt.Volumes},
	}
	for _, c := range opt.Containers {
		ctr := corev1.Container{Name: c, Image: opt.Image}
		for _, v := range opt.Volumes {
			ctr.VolumeMounts = append(ctr.VolumeMounts, corev1.VolumeMount{Name: v.Name, MountPath: "/mnt/" + v.Name})
		}
		p.Spec.Containers = append(p.Spec.Containers, ctr)
	}
	if o.PodOwners != nil {
		owners, err := o.PodOwners(ctx, ns, name)
		if err != nil {
			return nil, fmt.Errorf("owner of pod %s/%s: %w", ns, name, err)
		}
		p.OwnerReferences = owners
	}
	created, err := o.Client.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("creating pod %s/%s: %w", ns, name, err)
	}
	return created, nil
}

// SetWaiting sets every container of the pod to waiting with reason and message, phase Pending.
func (o Objects) SetWaiting(ctx context.Context, p *corev1.Pod, reason, message string) (*corev1.Pod, error) {
	return o.updateStatus(ctx, p, func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodPending
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse, LastTransitionTime: metav1.Now()}}
		p.Status.ContainerStatuses = nil
		for _, c := range p.Spec.Containers {
			p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{
				Name: c.Name, Image: c.Image,
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}},
			})
		}
	})
}

// SetRunning sets the pod Running with every container running and ready.
func (o Objects) SetRunning(ctx context.Context, p *corev1.Pod, podIP string) (*corev1.Pod, error) {
	return o.updateStatus(ctx, p, func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodRunning
		p.Status.PodIP = podIP
		if podIP != "" {
			p.Status.PodIPs = []corev1.PodIP{{IP: podIP}}
		}
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}
		p.Status.ContainerStatuses = nil
		for _, c := range p.Spec.Containers {
			p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{
				Name: c.Name, Image: c.Image, Ready: true, Started: ptr(true),
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}},
			})
		}
	})
}

// SetRunningNotReady sets the pod Running with its containers running but not ready (a
// failing readiness probe).
func (o Objects) SetRunningNotReady(ctx context.Context, p *corev1.Pod, podIP string) (*corev1.Pod, error) {
	return o.updateStatus(ctx, p, func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodRunning
		p.Status.PodIP = podIP
		p.Status.PodIPs = []corev1.PodIP{{IP: podIP}}
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady", LastTransitionTime: metav1.Now()}}
		p.Status.ContainerStatuses = nil
		for _, c := range p.Spec.Containers {
			p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{
				Name: c.Name, Image: c.Image, Ready: false, Started: ptr(true),
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}},
			})
		}
	})
}

// SetUnschedulable sets the pod Pending with condition PodScheduled=False, reason
// Unschedulable, as kube-scheduler does (the pod must have no node).
func (o Objects) SetUnschedulable(ctx context.Context, p *corev1.Pod, message string) (*corev1.Pod, error) {
	return o.updateStatus(ctx, p, func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodPending
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
			Reason: corev1.PodReasonUnschedulable, Message: message, LastTransitionTime: metav1.Now()}}
	})
}

// SetEvicted sets the pod Failed with reason Evicted, as the kubelet's eviction manager does.
func (o Objects) SetEvicted(ctx context.Context, p *corev1.Pod, message string) (*corev1.Pod, error) {
	return o.updateStatus(ctx, p, func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodFailed
		p.Status.Reason = "Evicted"
		p.Status.Message = message
	})
}

func (o Objects) updateStatus(ctx context.Context, p *corev1.Pod, mutate func(*corev1.Pod)) (*corev1.Pod, error) {
	cur, err := o.Client.CoreV1().Pods(p.Namespace).Get(ctx, p.Name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	mutate(cur)
	if cur.Status.StartTime == nil {
		t := metav1.NewTime(time.Now())
		cur.Status.StartTime = &t
	}
	up, err := o.Client.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, cur, metav1.UpdateOptions{})
	if err != nil {
		return nil, fmt.Errorf("updating status of pod %s/%s: %w", p.Namespace, p.Name, err)
	}
	return up, nil
}

// CreatePVC creates a claim (storageClass "" = none named) and sets its phase to Pending, as
// the PV controller does while no volume binds it.
func (o Objects) CreatePVC(ctx context.Context, ns, name string, storageClass *string) (*corev1.PersistentVolumeClaim, error) {
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: storageClass,
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: mustQuantity("8Gi")}},
		},
	}
	created, err := o.Client.CoreV1().PersistentVolumeClaims(ns).Create(ctx, pvc, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("creating pvc %s/%s: %w", ns, name, err)
	}
	return o.SetPVCPhase(ctx, created, corev1.ClaimPending)
}

// SetPVCPhase sets the claim's phase through the status subresource.
func (o Objects) SetPVCPhase(ctx context.Context, pvc *corev1.PersistentVolumeClaim, phase corev1.PersistentVolumeClaimPhase) (*corev1.PersistentVolumeClaim, error) {
	cur, err := o.Client.CoreV1().PersistentVolumeClaims(pvc.Namespace).Get(ctx, pvc.Name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	cur.Status.Phase = phase
	if phase == corev1.ClaimBound {
		cur.Status.AccessModes = cur.Spec.AccessModes
		cur.Status.Capacity = cur.Spec.Resources.Requests
	}
	return o.Client.CoreV1().PersistentVolumeClaims(pvc.Namespace).UpdateStatus(ctx, cur, metav1.UpdateOptions{})
}

// CreateService creates a Service with TCP ports (type LoadBalancer when lb).
func (o Objects) CreateService(ctx context.Context, ns, name string, lb bool, selector map[string]string, ports ...int32) (*corev1.Service, error) {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       corev1.ServiceSpec{Selector: selector},
	}
	if lb {
		svc.Spec.Type = corev1.ServiceTypeLoadBalancer
	}
	for _, p := range ports {
		svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{Name: fmt.Sprintf("tcp-%d", p), Port: p, TargetPort: intstr.FromInt32(p), Protocol: corev1.ProtocolTCP})
	}
	created, err := o.Client.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("creating service %s/%s: %w", ns, name, err)
	}
	return created, nil
}

// SetLoadBalancerIngress sets status.loadBalancer.ingress (what a LB controller such as
// MetalLB writes); no ip clears it.
func (o Objects) SetLoadBalancerIngress(ctx context.Context, svc *corev1.Service, ips ...string) (*corev1.Service, error) {
	cur, err := o.Client.CoreV1().Services(svc.Namespace).Get(ctx, svc.Name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	cur.Status.LoadBalancer.Ingress = nil
	for _, ip := range ips {
		cur.Status.LoadBalancer.Ingress = append(cur.Status.LoadBalancer.Ingress, corev1.LoadBalancerIngress{IP: ip})
	}
	return o.Client.CoreV1().Services(svc.Namespace).UpdateStatus(ctx, cur, metav1.UpdateOptions{})
}

// ApplyEndpointSlice creates or replaces the EndpointSlice <service>-e2e of a Service with the
// given ready addresses and TCP ports (what the EndpointSlice controller or a mesh writes).
func (o Objects) ApplyEndpointSlice(ctx context.Context, ns, service string, addresses []string, ports ...int32) (*discoveryv1.EndpointSlice, error) {
	es := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Name: service + "-e2e", Namespace: ns,
			Labels: map[string]string{discoveryv1.LabelServiceName: service, discoveryv1.LabelManagedBy: "e2e"},
		},
		AddressType: discoveryv1.AddressTypeIPv4,
	}
	for _, a := range addresses {
		es.Endpoints = append(es.Endpoints, discoveryv1.Endpoint{Addresses: []string{a}, Conditions: discoveryv1.EndpointConditions{Ready: ptr(true)}})
	}
	for _, p := range ports {
		es.Ports = append(es.Ports, discoveryv1.EndpointPort{Name: ptr(fmt.Sprintf("tcp-%d", p)), Port: ptr(p), Protocol: ptr(corev1.ProtocolTCP)})
	}
	c := o.Client.DiscoveryV1().EndpointSlices(ns)
	cur, err := c.Get(ctx, es.Name, metav1.GetOptions{})
	if err == nil {
		es.ResourceVersion = cur.ResourceVersion
		return c.Update(ctx, es, metav1.UpdateOptions{})
	}
	return c.Create(ctx, es, metav1.CreateOptions{})
}

func ptr[T any](v T) *T { return &v }

func mustQuantity(s string) resource.Quantity { return resource.MustParse(s) }
