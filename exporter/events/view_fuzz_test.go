package events

import (
	"bytes"
	"fmt"
	"maps"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
)

// FuzzViewExposition drives the per-object view with Events added, repeated and expiring — before a
// scrape and between the chunks the scrape copies — and checks the scrape: it parses, writes no
// series twice, writes every entry that lived through it in both families, and writes only
// entries that existed when it began. The seed corpus runs in `go test`; fuzz further with
//
//	go test ./exporter/events -run '^$' -fuzz FuzzViewExposition -fuzztime 30s
func FuzzViewExposition(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 0x80, 0x41, 0x42, 0x00, 0x08, 0x80, 0xc3, 0x43, 0x03})
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 0x80, 0x40, 0x41, 0x42, 0x43, 0x00, 0x01, 0x02, 0x03, 0x80, 0x44, 0x04})
	f.Add(bytes.Repeat([]byte{0x01, 0x41, 0x80, 0x09, 0x49, 0xca}, 8))
	// Three disk_full Events on three nodes against a cap of two targets, one of them expiring
	// and coming back during the scrape.
	f.Add([]byte{0x09, 0x0c, 0x0f, 0x00, 0x01, 0x80, 0x49, 0x80, 0x09, 0x80, 0xcf, 0x4c})
	f.Fuzz(func(t *testing.T, ops []byte) {
		defer func(n int) { viewChunk = n }(viewChunk)
		viewChunk = 2
		h := newHarness(t, func(c *Config) { c.MaxObjectSeries = 6; c.MaxTargets = 2 })
		h.sync()
		// 16 Events on 8 objects; Event i belongs to pod-(i%8) and has reason FailedMount or
		// FailedCreatePodSandBox (so two Events of a pod may share an entry or not); pod-7 is in
		// namespace shop, the others in istio-system (so that shop's entries evict the others').
		live := make([]*corev1.Event, 16)
		next := 0
		apply := func(b byte) {
			i := int(b & 15)
			switch b >> 6 {
			case 0, 3: // the Event appears, or repeats
				if ev := live[i]; ev != nil {
					ev = ev.DeepCopy()
					ev.Count += int32(b>>6) + 1
					h.update(ev)
					live[i] = ev
					return
				}
				reason, msg := "FailedMount", msgS1
				if i >= 8 && i%3 == 0 {
					reason, msg = "FailedCreatePodSandBox", "no space left on device"
				}
				next++
				ev := kubeletEvent(uid(next), fmt.Sprintf("pod-%d.%x", i%8, next), 1, reason, msg)
				ev.InvolvedObject.Name = fmt.Sprintf("pod-%d", i%8)
				if i%8 == 7 {
					ev.Namespace, ev.InvolvedObject.Namespace = "shop", "shop"
				}
				// disk_full's target is the node: three nodes against a cap of two targets.
				ev.Source.Host = fmt.Sprintf("node-%d", next%3)
				h.add(ev)
				live[i] = ev
			case 1: // it expires
				if ev := live[i]; ev != nil {
					if err := h.src.Delete(ev); err != nil {
						t.Fatal(err)
					}
					live[i] = nil
				}
			}
			// 2: a chunk boundary of the scrape (nothing happens)
		}
		// Up to the first 0x80-0xbf byte: before the scrape; the rest, a byte per chunk copied.
		k := 0
		for ; k < len(ops) && ops[k]>>6 != 2; k++ {
			apply(ops[k])
		}
		type birth struct {
			key  viewKey
			born uint64
		}
		entries := func() map[birth]bool {
			out := map[birth]bool{}
			for _, en := range h.e.view.entries {
				if en.events > 0 {
					out[birth{en.key, en.born}] = true
				}
			}
			return out
		}
		atStart := entries()
		throughout := entries()
		afterViewChunk = func() {
			if k < len(ops) {
				apply(ops[k])
				k++
			}
			now := entries()
			for b := range throughout {
				if !now[b] {
					delete(throughout, b)
				}
			}
		}
		defer func() { afterViewChunk = nil }()
		var buf bytes.Buffer
		if err := h.e.WriteView(&buf); err != nil {
			t.Fatal(err)
		}
		afterViewChunk = nil
		text := buf.String()
		p := expfmt.NewTextParser(model.UTF8Validation)
		if _, err := p.TextToMetricFamilies(strings.NewReader(text)); err != nil {
			t.Fatalf("scrape does not parse: %v\n%s", err, text)
		}
		id := func(family string, k viewKey) string {
			return fmt.Sprintf(`%s{namespace="%s",kind="%s",name="%s",reason="%s",cause="%s",target="%s"}`,
				family, k.namespace, k.kind, k.name, k.reason, k.cause, k.target)
		}
		for _, family := range []string{viewEventsName, viewLastName} {
			got := series(t, text, family)
			for b := range throughout {
				if _, ok := got[id(family, b.key)]; !ok {
					t.Errorf("%s: entry live through the scrape is missing", id(family, b.key))
				}
			}
			startIDs := map[string]bool{}
			for b := range atStart {
				startIDs[id(family, b.key)] = true
			}
			for s := range got {
				if !startIDs[s] {
					t.Errorf("%s written, but it did not exist when the scrape began", s)
				}
			}
		}
		// A quiet scrape shows each entry with at least one and at most all the occurrences of the
		// live Events of its key (an Event refused at the cap joins its entry at its next update).
		buf.Reset()
		if err := h.e.WriteView(&buf); err != nil {
			t.Fatal(err)
		}
		// An entry's target is its Events' node or, past the cap, the overflow value: the
		// occurrences are summed over targets.
		untargeted := regexp.MustCompile(`,target="[^"]*"`)
		sums := map[string]int32{}
		for _, ev := range live {
			if ev != nil {
				cause, _ := classify(ev.Reason, ev.Message)
				k := viewKey{namespace: ev.InvolvedObject.Namespace, kind: "Pod", name: ev.InvolvedObject.Name, reason: ev.Reason, cause: cause}
				sums[untargeted.ReplaceAllString(id(viewEventsName, k), "")] += ev.Count
			}
		}
		got := series(t, buf.String(), viewEventsName)
		byKey := map[string]int32{}
		targets := map[string]bool{}
		for s, v := range got {
			var n int32
			fmt.Sscan(v, &n)
			if n < 1 {
				t.Errorf("%s = %s, want at least 1", s, v)
			}
			byKey[untargeted.ReplaceAllString(s, "")] += n
			if m := regexp.MustCompile(`target="([^"]*)"`).FindStringSubmatch(s); m[1] != "" && m[1] != overflow {
				targets[m[1]] = true
			}
		}
		for s, n := range byKey {
			if n > sums[s] {
				t.Errorf("%s: %d occurrences over its targets, want at most %d (the live Events' occurrences)", s, n, sums[s])
			}
		}
		if len(targets) > 2 {
			t.Errorf("scrape has %d distinct targets %v, cap 2", len(targets), targets)
		}
		perTarget := map[string]int32{}
		for _, en := range h.e.view.entries {
			if en.events > 0 && en.key.target != "" && en.key.target != overflow {
				perTarget[en.key.target]++
			}
		}
		if !maps.Equal(perTarget, h.e.view.targets) {
			t.Errorf("view counts targets %v, its entries have %v", h.e.view.targets, perTarget)
		}
		if len(got) != h.e.view.len() {
			t.Errorf("quiet scrape has %d series, the view %d entries", len(got), h.e.view.len())
		}
		if n := h.e.view.len(); n > 6 || len(h.e.view.entries) > 6 {
			t.Errorf("view holds %d entries in %d slots, cap 6", n, len(h.e.view.entries))
		}
	})
}
