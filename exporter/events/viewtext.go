package events

import (
	"bufio"
	"io"
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

type viewSample struct {
	key       viewKey
	occ, last int64
}

func (e *Engine) viewSamples() []viewSample {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]viewSample, 0, e.view.len())
	for i := range e.view.entries {
		if en := &e.view.entries[i]; en.events > 0 {
			out = append(out, viewSample{key: e.view.key(int32(i)), occ: en.occ, last: en.last})
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
	samples := e.viewSamples()
	bw := bufio.NewWriterSize(w, 64<<10)
	var num []byte
	write := func(name, help string, value func(*viewSample) int64) {
		bw.WriteString("# HELP " + name + " " + help + "\n# TYPE " + name + " gauge\n")
		for i := range samples {
			s := &samples[i]
			bw.WriteString(name)
			writeLabel(bw, `{namespace="`, s.key.namespace)
			writeLabel(bw, `",kind="`, s.key.kind)
			writeLabel(bw, `",name="`, s.key.name)
			writeLabel(bw, `",reason="`, s.key.reason)
			writeLabel(bw, `",cause="`, s.key.cause)
			bw.WriteString(`"} `)
			num = strconv.AppendInt(num[:0], value(s), 10)
			bw.Write(num)
			bw.WriteByte('\n')
		}
	}
	if wantEvents {
		write(viewEventsName, "Occurrences recorded on the live Events of an object with this reason and cause.",
			func(s *viewSample) int64 { return s.occ })
	}
	if wantLast {
		write(viewLastName, "Time of the latest occurrence on the live Events of an object with this reason and cause.",
			func(s *viewSample) int64 { return s.last })
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
