package events

import (
	"bufio"
	"io"
	"slices"
	"strconv"
	"strings"
)

// The per-object view is rendered straight to the text exposition format, the way
// kube-state-metrics serves its per-object series: keys are copied under the lock, then written
// without it. Going through client_golang's Gather for tens of thousands of const metrics costs
// about a second per scrape (every series is built as a protobuf message, sorted and re-encoded);
// this path costs a few milliseconds (docs/performance.md).

const (
	viewEventsName = "kubecause_object_events"
	viewLastName   = "kubecause_object_event_last_timestamp_seconds"
)

var labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

// viewSnapshot is a copy of the live view entries (40 bytes each: the name, a tuple index and
// the counts) and of the small table of label tuples they index, taken under the engine's lock.
type viewSnapshot struct {
	entries []viewEntry
	tuples  []tupleKey
}

func (e *Engine) viewSnapshot() viewSnapshot {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := viewSnapshot{entries: make([]viewEntry, 0, e.view.len()), tuples: slices.Clone(e.view.tuples.keys)}
	for i := range e.view.entries {
		if en := &e.view.entries[i]; en.events > 0 {
			out.entries = append(out.entries, *en)
		}
	}
	return out
}

// WriteView writes the per-object view (kubecause_object_events and
// kubecause_object_event_last_timestamp_seconds) in the Prometheus text format 0.0.4.
// The families are complete blocks, so they can follow any other text exposition. Lines are
// written straight into a buffered writer: a scrape allocates the snapshot and nothing per line.
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
	snap := e.viewSnapshot()
	bw := bufio.NewWriterSize(w, 64<<10)
	var num []byte
	write := func(name, help string, value func(*viewEntry) int64) {
		bw.WriteString("# HELP " + name + " " + help + "\n# TYPE " + name + " gauge\n")
		for i := range snap.entries {
			s := &snap.entries[i]
			t := &snap.tuples[s.tuple]
			bw.WriteString(name)
			writeLabel(bw, `{namespace="`, t.namespace)
			writeLabel(bw, `",kind="`, t.kind)
			writeLabel(bw, `",name="`, s.name)
			writeLabel(bw, `",reason="`, t.reason)
			writeLabel(bw, `",cause="`, t.cause)
			bw.WriteString(`"} `)
			num = strconv.AppendInt(num[:0], value(s), 10)
			bw.Write(num)
			bw.WriteByte('\n')
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
