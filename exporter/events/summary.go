package events

import (
	"hash/fnv"

	"github.com/google/uuid"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Occurrences is the number of occurrences an Event object stands for, as Kubernetes counts them:
// core/v1 `count`, or events.k8s.io `series.count`; an object without either stands for one.
func Occurrences(ev *corev1.Event) int32 {
	n := ev.Count
	if ev.Series != nil && ev.Series.Count > n {
		n = ev.Series.Count
	}
	if n < 1 {
		n = 1
	}
	return n
}

// eventTime is the time of the latest occurrence:
// max(lastTimestamp, eventTime, series.lastObservedTime), falling back to firstTimestamp and creation.
func eventTime(ev *corev1.Event) int64 {
	var t int64
	for _, c := range []int64{
		unixOf(ev.LastTimestamp.Time.Unix(), ev.LastTimestamp.IsZero()),
		unixOf(ev.EventTime.Unix(), ev.EventTime.IsZero()),
		seriesTime(ev.Series),
	} {
		if c > t {
			t = c
		}
	}
	if t == 0 && !ev.FirstTimestamp.IsZero() {
		t = ev.FirstTimestamp.Unix()
	}
	if t == 0 && !ev.CreationTimestamp.IsZero() {
		t = ev.CreationTimestamp.Unix()
	}
	return t
}

// firstTime is the time of the first occurrence: firstTimestamp (core/v1 recorders), else
// eventTime (events.k8s.io recorders), else the object's creation.
func firstTime(ev *corev1.Event) int64 {
	switch {
	case !ev.FirstTimestamp.IsZero():
		return ev.FirstTimestamp.Unix()
	case !ev.EventTime.IsZero():
		return ev.EventTime.Unix()
	}
	return ev.CreationTimestamp.Unix()
}

func unixOf(v int64, zero bool) int64 {
	if zero {
		return 0
	}
	return v
}

func seriesTime(s *corev1.EventSeries) int64 {
	if s == nil || s.LastObservedTime.IsZero() {
		return 0
	}
	return s.LastObservedTime.Unix()
}

// component is the reporting component: source.component (core/v1 recorders) or
// reportingController (events.k8s.io recorders, which leave source empty).
func component(ev *corev1.Event) string {
	if ev.Source.Component != "" {
		return ev.Source.Component
	}
	return ev.ReportingController
}

// uidKey is the compact map key of a tracked Event: its UID as 16 bytes, not the 36-byte string
// (48 B less per live Event, docs/performance.md).
type uidKey [16]byte

// keyOf turns a UID into a uidKey. Kubernetes UIDs are RFC 4122 UUIDs in their 36-character form;
// anything else (another spelling included) is hashed (FNV-128a), so a malformed UID costs no more
// memory than a proper one.
func keyOf(uid types.UID) (uidKey, bool) {
	s := string(uid)
	if s == "" {
		return uidKey{}, false
	}
	if len(s) == 36 {
		if u, err := uuid.Parse(s); err == nil {
			return uidKey(u), true
		}
	}
	var k uidKey
	h := fnv.New128a()
	_, _ = h.Write([]byte(s))
	copy(k[:], h.Sum(nil))
	return k, true
}

// nameHash identifies an Event object by namespace/name. The core/v1 recorder re-creates an expired
// Event under the same name with its accumulated count; the hash lets kubecause recognise that.
func nameHash(namespace, name string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(namespace))
	_, _ = h.Write([]byte{0})
	_, _ = h.Write([]byte(name))
	return h.Sum64()
}
