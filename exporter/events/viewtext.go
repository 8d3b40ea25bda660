package events

import (
	"bufio"
	"io"
	"slices"
	"strconv"
	"strings"
)

// The per-object view is rendered straight to the text exposition format, the way
// kube-state-metrics serves its per-object series: going through client_golang's Gather builds,
// sorts and re-encodes every series (docs/performance.md).
//
// Entries are copied a chunk at a time under the engine's lock and written without it, so a scrape
// neither blocks event processing for long nor holds a copy of the whole view. A scrape writes the
// entries born before it started that are still live when their chunk is copied: an entry live
// for the whole scrape is written exactly once (it never changes slot), and an entry freed and
// born again meanwhile is not written a second time (its new birth is after the start).

// viewChunk entries are copied per lock hold (a variable so that fuzzing can interleave churn
// with small chunks).
var viewChunk = 512

var labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

// viewLine is one series of the view as copied under the lock.
type viewLine struct {
	key   viewKey
	value int64
}

// viewChunkOf copies, under the lock, the entries of slots [from, to) born at or before seq.
func (e *Engine) viewChunkOf(dst []viewLine, from, to int, seq uint64, value func(*viewEntry) int64) []viewLine {
	e.mu.Lock()
	defer e.mu.Unlock()
	v := e.view
	to = min(to, len(v.entries))
	for i := from; i < to; i++ {
		if en := &v.entries[i]; en.events > 0 && en.born <= seq {
			dst = append(dst, viewLine{key: en.key, value: value(en)})
		}
	}
	return dst
}

// WriteView writes the per-object view (kubecause_object_events and
// kubecause_object_event_last_timestamp_seconds) in the Prometheus text format 0.0.4.
// The families are complete blocks, so they can follow any other text exposition. Lines are
// written straight into a buffered writer; a scrape allocates one chunk and nothing per line.
// With names (the name[] parameters of a scrape), only the families named are written.
// An error means w failed and the output is incomplete.
func (e *Engine) WriteView(w io.Writer, names ...string) error {
	wantEvents, wantLast := wanted(names, viewEventsName), wanted(names, viewLastName)
	if !wantEvents && !wantLast {
		return nil
	}
	e.mu.Lock()
	bound, seq := len(e.view.entries), e.view.seq
	e.mu.Unlock()
	bw := bufio.NewWriterSize(w, 64<<10)
	chunk := make([]viewLine, 0, viewChunk)
	var num []byte
	write := func(name, help string, value func(*viewEntry) int64) error {
		bw.WriteString("# HELP " + name + " " + help + "\n# TYPE " + name + " gauge\n")
		for from := 0; from < bound; from += viewChunk {
			chunk = e.viewChunkOf(chunk[:0], from, from+viewChunk, seq, value)
			if afterViewChunk != nil {
				afterViewChunk()
			}
			for i := range chunk {
				l := &chunk[i]
				bw.WriteString(name)
				writeLabel(bw, `{namespace="`, l.key.namespace)
				writeLabel(bw, `",kind="`, l.key.kind)
				writeLabel(bw, `",name="`, l.key.name)
				writeLabel(bw, `",reason="`, l.key.reason)
				writeLabel(bw, `",cause="`, l.key.cause)
				writeLabel(bw, `",target="`, l.key.target)
				bw.WriteString(`"} `)
				num = strconv.AppendInt(num[:0], l.value, 10)
				bw.Write(num)
				bw.WriteByte('\n')
			}
			if _, err := bw.Write(nil); err != nil {
				return err // the reader is gone or timed out: stop copying
			}
		}
		return nil
	}
	if wantEvents {
		if err := write(viewEventsName, viewEventsHelp,
			func(s *viewEntry) int64 { return s.occ }); err != nil {
			return err
		}
	}
	if wantLast {
		if err := write(viewLastName, viewLastHelp,
			func(s *viewEntry) int64 { return s.last }); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// wanted reports whether a scrape asking for names (all when none) asks for family name.
func wanted(names []string, name string) bool {
	return len(names) == 0 || slices.Contains(names, name)
}

// viewWanted reports whether a scrape asking for names writes the view.
func viewWanted(names []string) bool {
	return wanted(names, viewEventsName) || wanted(names, viewLastName)
}

// afterViewChunk, when set (tests only), runs after each chunk is copied, without the lock.
var afterViewChunk func()

// writeLabel writes prefix and the escaped label value.
func writeLabel(bw *bufio.Writer, prefix, value string) {
	bw.WriteString(prefix)
	if strings.ContainsAny(value, "\\\"\n") {
		_, _ = labelEscaper.WriteString(bw, value)
		return
	}
	bw.WriteString(value)
}
