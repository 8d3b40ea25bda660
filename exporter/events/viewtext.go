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
// The families are complete blocks, so they can follow any other text exposition.
func (e *Engine) WriteView(w io.Writer) error {
	samples := e.viewSamples()
	bw := bufio.NewWriterSize(w, 64<<10)
	labels := make([]string, len(samples))
	for i, s := range samples {
		labels[i] = `{namespace="` + labelEscaper.Replace(s.key.namespace) +
			`",kind="` + labelEscaper.Replace(s.key.kind) +
			`",name="` + labelEscaper.Replace(s.key.name) +
			`",reason="` + labelEscaper.Replace(s.key.reason) +
			`",cause="` + labelEscaper.Replace(s.key.cause) + `"} `
	}
	var num []byte
	write := func(name, help string, value func(viewSample) int64) {
		bw.WriteString("# HELP " + name + " " + help + "\n# TYPE " + name + " gauge\n")
		for i, s := range samples {
			bw.WriteString(name)
			bw.WriteString(labels[i])
			num = strconv.AppendInt(num[:0], value(s), 10)
			bw.Write(num)
			bw.WriteByte('\n')
		}
	}
	write(viewEventsName, "Occurrences recorded on the live Events of an object with this reason and cause.",
		func(s viewSample) int64 { return s.occ })
	write(viewLastName, "Time of the latest occurrence on the live Events of an object with this reason and cause.",
		func(s viewSample) int64 { return s.last })
	return bw.Flush()
}
