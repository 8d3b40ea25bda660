package causes

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

func TestUnclassifiedCounts(t *testing.T) {
	u := NewUnclassified(3)
	// Two occurrences of one failure with different names share a template (rook/rook#11372 and
	// ceph/ceph-csi#4375 wordings, with the reason they had).
	u.Observe("FailedMount", `MountVolume.MountDevice failed for volume "pvc-b38f1217-e007-433f-bc62-15b66e6671db" : rpc error: code = Internal desc = rbd image pool/csi-vol-e4d2d56e-70d5-11eb-9a1b-9ef3bde4434c is still being used`)
	u.Observe("FailedMount", `MountVolume.MountDevice failed for volume "pvc-7e9588ad-19d1-4099-bd49-30fd2b9f0d42" : rpc error: code = Internal desc = rbd image pool/csi-vol-dea80a4e-85b6-46e2-9d08-ffba10ef7825 is still being used`)
	u.Add("Failed", "b", 1)
	u.Add("Other", "c", 5)
	s := u.Snapshot()
	if s.Total != 8 || s.Overflow != 0 || len(s.Entries) != 3 {
		t.Fatalf("snapshot %+v", s)
	}
	want := []UnclassifiedEntry{
		{Reason: "Other", Template: "c", Count: 5},
		{Reason: "FailedMount", Template: `MountVolume.MountDevice failed for volume "<q>" : rpc error: code = Internal desc = rbd image pool/csi-vol-<uid> is still being used`, Count: 2},
		{Reason: "Failed", Template: "b", Count: 1},
	}
	for i := range want {
		if s.Entries[i] != want[i] {
			t.Errorf("entry %d: %+v, want %+v", i, s.Entries[i], want[i])
		}
	}
	// The same template under another reason is another pair.
	u.Add("Other", "b", 1)
	s = u.Snapshot()
	if s.Overflow != 1 {
		t.Errorf("overflow %d, want 1", s.Overflow)
	}
	// The least frequent pair ("Failed", "b", count 1) made room; the newcomer carries its count
	// as Err.
	for _, e := range s.Entries {
		if e.Reason == "Failed" {
			t.Errorf("the least frequent pair was not evicted: %+v", s.Entries)
		}
		if e.Reason == "Other" && e.Template == "b" && (e.Count != 2 || e.Err != 1) {
			t.Errorf("newcomer %+v, want count 2 with err 1", e)
		}
	}
	u.Add("x", "y", 0)
	if got := u.Snapshot(); got.Total != 9 || len(got.Entries) != 3 {
		t.Errorf("adding 0 changed the tracker: %+v", got)
	}
}

// A frequent pair survives a stream of one-off pairs much longer than the capacity, and its count
// stays exact because it is never evicted.
func TestUnclassifiedKeepsTheFrequent(t *testing.T) {
	u := NewUnclassified(10)
	for i := range 10000 {
		u.Add("FailedMount", fmt.Sprintf("noise %d", i), 1)
		if i%4 == 0 {
			u.Add("Failed", "frequent", 1)
		}
	}
	s := u.Snapshot()
	if len(s.Entries) != 10 {
		t.Fatalf("%d entries, want the capacity 10", len(s.Entries))
	}
	if top := s.Entries[0]; top.Template != "frequent" || top.Count != 2500 || top.Err != 0 {
		t.Errorf("top %+v, want the frequent pair with its exact count 2500", top)
	}
	if s.Total != 12500 || s.Overflow == 0 {
		t.Errorf("total %d overflow %d", s.Total, s.Overflow)
	}
	var sum uint64
	for _, e := range s.Entries {
		sum += e.Count
	}
	if sum != s.Total {
		t.Errorf("counts sum to %d, want the total %d (Space-Saving keeps the sum)", sum, s.Total)
	}
}

// Memory is bounded: reasons and templates are cut, the capacity is a minimum of one.
func TestUnclassifiedBounds(t *testing.T) {
	u := NewUnclassified(0)
	u.Add(strings.Repeat("r", 1000), strings.Repeat("é", 1000), 1)
	u.Add("a", "b", 1)
	s := u.Snapshot()
	if len(s.Entries) != 1 || s.Entries[0].Reason != "a" {
		t.Fatalf("capacity 0 must act as 1: %+v", s.Entries)
	}
	u = NewUnclassified(2)
	u.Add(strings.Repeat("r", 1000), strings.Repeat("é", 1000), 1)
	e := u.Snapshot().Entries[0]
	if len(e.Reason) != MaxReasonBytes || len(e.Template) > MaxTemplateBytes || !strings.HasPrefix(e.Template, "é") ||
		strings.ContainsRune(e.Template, '\uFFFD') {
		t.Errorf("reason %d bytes, template %d bytes %q", len(e.Reason), len(e.Template), e.Template[len(e.Template)-4:])
	}
}

func TestUnclassifiedConcurrent(t *testing.T) {
	u := NewUnclassified(5)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 1000 {
				u.Add("Failed", fmt.Sprintf("t%d", (i+w)%7), 1)
				if i%100 == 0 {
					u.Snapshot()
				}
			}
		}()
	}
	wg.Wait()
	if s := u.Snapshot(); s.Total != 8000 || len(s.Entries) != 5 {
		t.Errorf("total %d, entries %d", s.Total, len(s.Entries))
	}
}
