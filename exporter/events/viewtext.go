package events

import (
	"bufio"
	"io"
	"strconv"
	"strings"
)

// The per-object view is rendered straight to the text exposition format, the way
// kube-state-metrics serves its per-object series. Going through client_golang's Gather for tens
// of thousands of const metrics costs about a second per scrape (every series is built as a
// protobuf message, sorted and re-encoded); this path costs a few milliseconds
// (docs/performance.md).
//
// Entries are copied a chunk at a time under the engine's lock and written without it, so a scrape
// neither blocks event processing for long nor holds a copy of the whole view (at 100k objects a
// full copy was 4 MB, live during the scrape, and the GC sized the heap after it). A series must
// not appear twice in one scrape: while a scrape runs, the view does not reuse the slots of freed
// entries, and the scrape stops at the slots that existed when it began, so an entry freed and
// re-created meanwhile lands beyond them (view.move).

const (
	viewEventsName = "kubecause_object_events"
	viewLastName   = "kubecause_object_event_last_timestamp_seconds"

	// viewChunk entries are copied per lock hold (about 45 KB).
	viewChunk = 512
)

var labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

// viewLine is one series of the view as copied under the lock.
type viewLine struct {
	tuple tupleKey
	name  string
	value int64
}

// viewChunkOf copies the live entries of slots [from, to) with value, under the lock. ok is false
// when the view had to reuse slots since the scrape began (epoch changed): the rest of the
// scrape could then repeat a series, so it stops.
func (e *Engine) viewChunkOf(dst []viewLine, from, to int, epoch uint64, value func(*viewEntry) int64) ([]viewLine, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	v := e.view
	if v.epoch != epoch {
		return dst, false
	}
	for i := from; i < to; i++ {
		if en := &v.entries[i]; en.events > 0 {
			dst = append(dst, viewLine{tuple: v.tuples.keys[en.tuple], name: en.name, value: value(en)})
		}
	}
	return dst, true
}

// WriteView writes the per-object view (kubecause_object_events and
// kubecause_object_event_last_timestamp_seconds) in the Prometheus text format 0.0.4.
// The families are complete blocks, so they can follow any other text exposition. Lines are
// written straight into a buffered writer; a scrape allocates one chunk and nothing per line.
// With names (the name[] parameters of a scrape), only the families named are written.
func (e *Engine) WriteView(w io.Writer, names ...string) error {
	wantEvents, wantLast := len(names) == 0, len(names) == 0
	for _, n := range names {
		wantEvents = wantEvents || n == viewEventsName
		wantLast = wantLast || n == viewLastName
	}
	if !wantEvents && !wantLast {
		return nil
	}
	e.mu.Lock()
	bound, epoch := len(e.view.entries), e.view.epoch
	e.view.scrapes++
	e.mu.Unlock()
	defer func() {
		e.mu.Lock()
		e.view.scrapes--
		e.mu.Unlock()
	}()
	bw := bufio.NewWriterSize(w, 64<<10)
	chunk := make([]viewLine, 0, viewChunk)
	var num []byte
	write := func(name, help string, value func(*viewEntry) int64) {
		bw.WriteString("# HELP " + name + " " + help + "\n# TYPE " + name + " gauge\n")
		for from := 0; from < bound; from += viewChunk {
			var ok bool
			chunk, ok = e.viewChunkOf(chunk[:0], from, min(from+viewChunk, bound), epoch, value)
			if !ok {
				return
			}
			for i := range chunk {
				l := &chunk[i]
				bw.WriteString(name)
				writeLabel(bw, `{namespace="`, l.tuple.namespace)
				writeLabel(bw, `",kind="`, l.tuple.kind)
				writeLabel(bw, `",name="`, l.name)
				writeLabel(bw, `",reason="`, l.tuple.reason)
				writeLabel(bw, `",cause="`, l.tuple.cause)
				bw.WriteString(`"} `)
				num = strconv.AppendInt(num[:0], l.value, 10)
				bw.Write(num)
				bw.WriteByte('\n')
			}
		}
	}
	if wantEvents {
		write(viewEventsName, "Occurrences recorded on the live Events of an object with this reason and cause.",
			func(s *viewEntry) int64 { return s.occ })
	}
	if wantLast {
		write(viewLastName, "Time of the latest occurrence on the live Events of an object with this reason and cause.",
			func(s *viewEntry) int64 { return s.last })
	}
	return bw.Flush()
}

// writeLabel writes prefix and the escaped label value.
func writeLabel(bw *bufio.Writer, prefix, value string) {
	bw.WriteString(prefix)
	if strings.ContainsAny(value, "\\\"\n") {
		_, _ = labelEscaper.WriteString(bw, value)
		return
	}
	bw.WriteString(value)
}
