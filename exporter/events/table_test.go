package events

import (
	"math/rand/v2"
	"testing"
)

// TestEventTableAgainstMap drives the table and a Go map with the same random adds, updates,
// deletions and sweeps, over few keys (long probe runs, deletions inside them, the nil-UUID key)
// and many (segments growing), and checks they agree after every step.
func TestEventTableAgainstMap(t *testing.T) {
	for _, keys := range []int{40, 5000, 60000} {
		r := rand.New(rand.NewPCG(uint64(keys), 7))
		m := newEventTable()
		want := map[uidKey]tracked{}
		key := func() uidKey {
			var k uidKey
			i := r.IntN(keys)
			if i == 0 {
				return k // the nil UUID
			}
			k[0], k[1], k[2] = byte(i), byte(i>>8), byte(i>>16)
			k[15] = 0x5a
			return k
		}
		check := func(step int) {
			t.Helper()
			if m.len() != len(want) {
				t.Fatalf("keys=%d step %d: len %d, want %d", keys, step, m.len(), len(want))
			}
			seen := 0
			m.each(func(k uidKey, v tracked) bool {
				seen++
				if w, ok := want[k]; !ok || w != v {
					t.Fatalf("keys=%d step %d: each gave %x → %+v, the map has %+v (%v)", keys, step, k, v, w, ok)
				}
				return true
			})
			if seen != len(want) {
				t.Fatalf("keys=%d step %d: each gave %d records, want %d", keys, step, seen, len(want))
			}
		}
		for step := 0; step < 40*keys; step++ {
			k := key()
			switch op := r.IntN(100); {
			case op < 55:
				v := tracked{name: r.Uint64(), count: r.Int32(), view: int32(step), src: uint16(r.IntN(3)), list: uint8(r.IntN(3))}
				m.set(k, v)
				want[k] = v
			case op < 95:
				m.del(k)
				delete(want, k)
			case op < 96:
				src, gen := uint16(r.IntN(3)), uint8(r.IntN(3))
				gone := func(_ uidKey, v tracked) bool { return v.src == src && v.list != gen }
				m.sweep(gone, func(k uidKey, v tracked) {
					if w := want[k]; w != v {
						t.Fatalf("sweep gave %x → %+v, the map has %+v", k, v, w)
					}
					m.del(k)
				})
				for k, v := range want {
					if gone(k, v) {
						delete(want, k)
					}
				}
			}
			got, ok := m.get(k)
			if w, wok := want[k]; ok != wok || got != w {
				t.Fatalf("keys=%d step %d: get %x = %+v, %v; want %+v, %v", keys, step, k, got, ok, w, wok)
			}
			if step%(keys/4+1) == 0 {
				check(step)
			}
		}
		check(-1)
	}
}
