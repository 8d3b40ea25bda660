package events

// The Event TTL (the apiserver's --event-ttl) as far as kubecause can tell, and the estimate of
// the Events created and expired inside a watch gap that it bounds (docs/metrics.md).

import (
	"math"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubecause/kubecause/exporter/events/snapshotfile"
)

// defaultEventTTL is the apiserver's default --event-ttl.
const defaultEventTTL = time.Hour

// The Event TTL is learnt from the ages at deletion of the last ttlSamples deletions, once there
// are ttlMinSamples (eventTTL).
const (
	ttlSamples    = 256
	ttlMinSamples = 10
)

// ttlEstimate is what kubecause can tell of the Event TTL (the apiserver's --event-ttl), in
// seconds (eventTTL), from the ages of the Events it sees. Guarded by Engine.mu.
type ttlEstimate struct {
	// expiryAges: the ages at deletion (from the last occurrence) of the last deletions taken for
	// expiries, a ring filled up to expiries; listedAge the oldest age of an Event seen in a list;
	// aliveAges the ttlMinSamples oldest ages at which Events were seen alive (in a list, or at
	// their deletion), ascending, aliveN of them.
	expiryAges [ttlSamples]int32
	expiries   int
	listedAge  int64
	aliveAges  [ttlMinSamples]int32
	aliveN     int
}

// listed records an Event seen in a list age seconds after its last write.
func (t *ttlEstimate) listed(age int64) {
	t.listedAge = max(t.listedAge, age)
	t.seenAlive(age)
}

// deleted records an Event deleted age seconds after its last write: it expires --event-ttl after
// its last write, so its age tells the TTL, unless it was deleted young (with its namespace or by
// hand).
func (t *ttlEstimate) deleted(age int64) {
	t.seenAlive(age)
	if age*aliveSlack >= t.aliveTTL() {
		t.expiryAges[t.expiries%ttlSamples] = int32(age)
		t.expiries++
	}
}

// gapEstimate estimates the Events of a source created and expired inside the gap that ends with
// a relist at now: Events created at the rate seen between the previous list (listedAt) and the
// last contact, in the part of the gap longer than the TTL (an Event created later in the gap is still there and
// is counted by the relist). Each stands for at least one occurrence.
func (t *ttlEstimate) gapEstimate(created, listedAt, contact, now int64) float64 {
	watched := contact - listedAt
	expired := now - contact - t.eventTTL()
	if watched <= 0 || expired <= 0 || created == 0 {
		return 0
	}
	return float64(created) / float64(watched) * float64(expired)
}

// eventTTL is the Event TTL as far as kubecause can tell, in seconds. Once ttlMinSamples Events
// were seen deleted, a low quantile (the 10th percentile) of the ages at deletion of the last
// ttlSamples: most deletions are expiries at the TTL; a few are younger (deleted by hand) and
// some older — etcd renews every lease when a member becomes leader (a restart, a leader
// change), so the Events alive then live up to a TTL longer. Before that, the apiserver's
// default of one hour, or the age of the oldest Event seen alive in a list if that is older.
func (t *ttlEstimate) eventTTL() int64 {
	if ttl := t.deletionTTL(); ttl > 0 {
		return ttl
	}
	return max(int64(defaultEventTTL/time.Second), t.listedAge)
}

// deletionTTL is the TTL learnt from the ages at deletion (eventTTL), 0 before ttlMinSamples;
// never below aliveTTL/aliveSlack, so that deletions of young Events (a namespace deleted with
// them, as CI and preview environments do all day) cannot teach a TTL far shorter than Events
// were seen to live.
func (t *ttlEstimate) deletionTTL() int64 {
	n := min(t.expiries, ttlSamples)
	if n < ttlMinSamples {
		return 0
	}
	ages := slices.Clone(t.expiryAges[:n])
	slices.Sort(ages)
	return max(int64(ages[n/10]), t.aliveTTL()/aliveSlack)
}

// aliveSlack: a deletion younger than aliveTTL/aliveSlack is taken for no expiry. An Event seen
// alive may be up to about two TTLs old (etcd renews every lease when a member becomes leader,
// and the apiserver's leases run up to 5 % longer than the TTL), so an expiry is no younger than
// about half of aliveTTL; a quarter leaves room.
const aliveSlack = 4

// aliveTTL is the ttlMinSamples-th oldest age at which an Event was seen alive (in a list, or at
// its deletion), 0 before ttlMinSamples: the TTL is at least about that. Not the oldest, so that
// one Event whose recorder's clock is behind cannot raise it.
func (t *ttlEstimate) aliveTTL() int64 {
	if t.aliveN < ttlMinSamples {
		return 0
	}
	return int64(t.aliveAges[0])
}

// seenAlive records that an Event was alive age seconds after its last write, keeping the
// ttlMinSamples oldest ages.
func (t *ttlEstimate) seenAlive(age int64) {
	a := int32(min(age, math.MaxInt32))
	if t.aliveN < ttlMinSamples {
		t.aliveAges[t.aliveN] = a
		t.aliveN++
		slices.Sort(t.aliveAges[:t.aliveN])
		return
	}
	if a <= t.aliveAges[0] {
		return
	}
	i := 0 // the youngest kept makes room; a goes where it keeps them ascending
	for i+1 < ttlMinSamples && t.aliveAges[i+1] < a {
		t.aliveAges[i] = t.aliveAges[i+1]
		i++
	}
	t.aliveAges[i] = a
}

// writtenAgo is how long before now an Event was last written (its latest occurrence), but no
// longer than since the apiserver created it: a recorder's clock behind, or a forged timestamp,
// cannot make an Event look older than it is. false when the Event carries no time.
func writtenAgo(ev *corev1.Event, now int64) (int64, bool) {
	ts := eventTime(ev)
	if ts <= 0 {
		return 0, false
	}
	age := now - ts
	if !ev.CreationTimestamp.IsZero() {
		age = min(age, now-ev.CreationTimestamp.Unix())
	}
	return min(max(age, 0), math.MaxInt32), true
}

// take writes what was learnt of the TTL into a snapshot.
func (t *ttlEstimate) take(s *snapshotfile.Snapshot) {
	s.TTL, s.DeletionTTL, s.ListedAge = t.eventTTL(), t.deletionTTL(), t.listedAge
}

// restore takes up what a snapshot learnt of the TTL: its TTL from deletions as ttlMinSamples
// deletions at that age, when none was seen yet, and the oldest age seen in a list.
func (t *ttlEstimate) restore(s *snapshotfile.Snapshot) {
	t.listedAge = max(t.listedAge, s.ListedAge)
	if s.DeletionTTL <= 0 || t.expiries > 0 {
		return
	}
	for range ttlMinSamples {
		t.expiryAges[t.expiries] = int32(min(s.DeletionTTL, math.MaxInt32))
		t.expiries++
	}
}
