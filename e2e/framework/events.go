package framework

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// CombinedPrefix is what client-go's core/v1 recorder puts before the latest message when it
// aggregates 10 distinct messages of the same (source, object, type, reason) into a new Event.
const CombinedPrefix = "(combined from similar events): "

// Ref is the object an Event is about.
func Ref(obj metav1.Object, kind, apiVersion string) corev1.ObjectReference {
	return corev1.ObjectReference{
		Kind:            kind,
		APIVersion:      apiVersion,
		Namespace:       obj.GetNamespace(),
		Name:            obj.GetName(),
		UID:             obj.GetUID(),
		ResourceVersion: obj.GetResourceVersion(),
	}
}

// PodRef is the reference the kubelet puts in a pod's Events.
func PodRef(p *corev1.Pod) corev1.ObjectReference { return Ref(p, "Pod", "v1") }

// eventName is how both recorders name Events: <object name>.<hex nanoseconds>.
func eventName(ref corev1.ObjectReference, t time.Time) string {
	return fmt.Sprintf("%s.%x", ref.Name, t.UnixNano())
}

// Recorder writes core/v1 Events the way client-go's tools/record recorder does for a
// component such as the kubelet (source {component, host}): a create with count 1, then
// PATCHes of count and lastTimestamp for repeats.
type Recorder struct {
	Client    kubernetes.Interface
	Component string // "kubelet"
	Host      string // node name
}

// Kubelet returns the recorder of the kubelet on node.
func Kubelet(c kubernetes.Interface, node string) *Recorder {
	return &Recorder{Client: c, Component: "kubelet", Host: node}
}

// CoreEvent is one core/v1 Event written by a Recorder.
type CoreEvent struct {
	r     *Recorder
	Event *corev1.Event
}

// Count is the Event's current count.
func (e *CoreEvent) Count() int32 { return e.Event.Count }

// Emit creates a new Event (count 1), as the recorder does for the first occurrence.
func (r *Recorder) Emit(ctx context.Context, ref corev1.ObjectReference, eventType, reason, message string) (*CoreEvent, error) {
	return r.create(ctx, ref, eventType, reason, message, 1, "")
}

// EmitCombined creates the aggregate Event the recorder writes after 10 distinct messages:
// a new Event whose message is CombinedPrefix + message.
func (r *Recorder) EmitCombined(ctx context.Context, ref corev1.ObjectReference, eventType, reason, message string) (*CoreEvent, error) {
	return r.create(ctx, ref, eventType, reason, CombinedPrefix+message, 1, "")
}

func (r *Recorder) create(ctx context.Context, ref corev1.ObjectReference, eventType, reason, message string, count int32, name string) (*CoreEvent, error) {
	now := time.Now()
	if name == "" {
		name = eventName(ref, now)
	}
	ns := ref.Namespace
	if ns == "" {
		ns = metav1.NamespaceDefault
	}
	ev := &corev1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: name, Namespace: ns},
		InvolvedObject:      ref,
		Reason:              reason,
		Message:             message,
		Source:              corev1.EventSource{Component: r.Component, Host: r.Host},
		FirstTimestamp:      metav1.NewTime(now),
		LastTimestamp:       metav1.NewTime(now),
		Count:               count,
		Type:                eventType,
		ReportingController: r.Component,
		ReportingInstance:   r.Host,
	}
	created, err := r.Client.CoreV1().Events(ns).Create(ctx, ev, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("creating event %s %s: %w", reason, name, err)
	}
	return &CoreEvent{r: r, Event: created}, nil
}

// Repeat records n more occurrences in one write: count += n and lastTimestamp = now, a
// strategic-merge PATCH as the recorder sends. n > 1 is the spam filter's jump (occurrences
// counted while writes were held back, carried by the next write that passes).
func (e *CoreEvent) Repeat(ctx context.Context, n int32) error {
	return e.SetCount(ctx, e.Event.Count+n)
}

// SetCount patches count to exactly count.
func (e *CoreEvent) SetCount(ctx context.Context, count int32) error {
	patch, err := json.Marshal(map[string]any{
		"count":         count,
		"lastTimestamp": metav1.NewTime(time.Now()),
	})
	if err != nil {
		return err
	}
	ev, err := e.r.Client.CoreV1().Events(e.Event.Namespace).Patch(ctx, e.Event.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		return fmt.Errorf("patching event %s to count %d: %w", e.Event.Name, count, err)
	}
	e.Event = ev
	return nil
}

// Delete deletes the Event, as the apiserver does when --event-ttl passes.
func (e *CoreEvent) Delete(ctx context.Context) error {
	return e.r.Client.CoreV1().Events(e.Event.Namespace).Delete(ctx, e.Event.Name, metav1.DeleteOptions{})
}

// Recreate is what the recorder does when a PATCH gets NotFound because the Event expired:
// it creates the Event again under the same name with the accumulated count (count+n).
// The contract counts an Event created while watching as +1, whatever its count.
func (e *CoreEvent) Recreate(ctx context.Context, n int32) error {
	ne, err := e.r.create(ctx, e.Event.InvolvedObject, e.Event.Type, e.Event.Reason, e.Event.Message, e.Event.Count+n, e.Event.Name)
	if err != nil {
		return err
	}
	e.Event = ne.Event
	return nil
}

// SeriesRecorder writes events.k8s.io/v1 Events the way client-go's tools/events broadcaster
// does for kube-scheduler: a create without series, then merge PATCHes of series.
type SeriesRecorder struct {
	Client     kubernetes.Interface
	Controller string // reportingController, "default-scheduler"
	Instance   string // reportingInstance
	Action     string // "Scheduling"
}

// Scheduler returns the recorder of kube-scheduler.
func Scheduler(c kubernetes.Interface) *SeriesRecorder {
	return &SeriesRecorder{Client: c, Controller: "default-scheduler", Instance: "default-scheduler-e2e-control-plane", Action: "Scheduling"}
}

// SeriesEvent is one events.k8s.io/v1 Event.
type SeriesEvent struct {
	r     *SeriesRecorder
	Event *eventsv1.Event
}

// Emit creates the Event for the first occurrence (no series).
func (r *SeriesRecorder) Emit(ctx context.Context, regarding corev1.ObjectReference, eventType, reason, note string) (*SeriesEvent, error) {
	now := time.Now()
	ev := &eventsv1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: eventName(regarding, now), Namespace: regarding.Namespace},
		EventTime:           metav1.NewMicroTime(now),
		ReportingController: r.Controller,
		ReportingInstance:   r.Instance,
		Action:              r.Action,
		Reason:              reason,
		Regarding:           regarding,
		Note:                note,
		Type:                eventType,
	}
	created, err := r.Client.EventsV1().Events(regarding.Namespace).Create(ctx, ev, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("creating events.k8s.io event %s: %w", reason, err)
	}
	return &SeriesEvent{r: r, Event: created}, nil
}

// SetSeries flushes the series: series.count = count (≥ 2), lastObservedTime = now.
func (e *SeriesEvent) SetSeries(ctx context.Context, count int32) error {
	patch, err := json.Marshal(map[string]any{"series": eventsv1.EventSeries{Count: count, LastObservedTime: metav1.NewMicroTime(time.Now())}})
	if err != nil {
		return err
	}
	ev, err := e.r.Client.EventsV1().Events(e.Event.Namespace).Patch(ctx, e.Event.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		return fmt.Errorf("patching series of %s to %d: %w", e.Event.Name, count, err)
	}
	e.Event = ev
	return nil
}
