// Package explain is `kubecause explain`: offline diagnosis of Events for support engineers.
// It reads what `kubectl get events -A -o json` prints (a core/v1 EventList or List, an
// events.k8s.io/v1 list, or a bare JSON array of Events of either API), or a live cluster, and
// prints one row per Event with its cause and runbook.
package explain

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubecause/kubecause/exporter/causes"
	"github.com/kubecause/kubecause/exporter/events"
	"github.com/kubecause/kubecause/exporter/kube"
)

// Row is one explained Event.
type Row struct {
	Namespace string `json:"namespace"`
	Kind      string `json:"kind"`
	Name      string `json:"name"`
	Reason    string `json:"reason"`
	Type      string `json:"type"`
	Message   string `json:"message"`
	Cause     string `json:"cause"`
	Category  string `json:"category"`
	// Target is the shared thing the cause is about (the target label of kubecause_object_events:
	// a registry, the node, a CNI plugin, …), "" when none.
	Target     string `json:"target"`
	Count      int32  `json:"count"`
	RunbookURL string `json:"runbook_url"`
}

// rawEvent accepts both APIs' field names.
type rawEvent struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   metav1.ObjectMeta `json:"metadata"`
	// core/v1
	InvolvedObject     corev1.ObjectReference `json:"involvedObject"`
	Reason             string                 `json:"reason"`
	Message            string                 `json:"message"`
	Type               string                 `json:"type"`
	Count              int32                  `json:"count"`
	Source             corev1.EventSource     `json:"source"`
	ReportingComponent string                 `json:"reportingComponent"`
	Series             *struct {
		Count int32 `json:"count"`
	} `json:"series"`
	// events.k8s.io/v1
	Regarding           corev1.ObjectReference `json:"regarding"`
	Note                string                 `json:"note"`
	DeprecatedCount     int32                  `json:"deprecatedCount"`
	DeprecatedSource    corev1.EventSource     `json:"deprecatedSource"`
	ReportingController string                 `json:"reportingController"`
}

func (r *rawEvent) event() corev1.Event {
	ev := corev1.Event{ObjectMeta: r.Metadata, Reason: r.Reason, Type: r.Type}
	if r.Regarding.Kind != "" || r.Note != "" || r.ReportingController != "" {
		ev.InvolvedObject, ev.Message, ev.Count = r.Regarding, r.Note, r.DeprecatedCount
		ev.Source, ev.ReportingController = r.DeprecatedSource, r.ReportingController
	} else {
		ev.InvolvedObject, ev.Message, ev.Count = r.InvolvedObject, r.Message, r.Count
		ev.Source, ev.ReportingController = r.Source, r.ReportingComponent
	}
	if r.Series != nil {
		ev.Series = &corev1.EventSeries{Count: r.Series.Count}
	}
	return ev
}

// Decode reads a list or an array of Events. Errors name the position (line:column) or the item.
func Decode(r io.Reader) ([]corev1.Event, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("reading input: %w", err)
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, errors.New("input is empty: expected the output of `kubectl get events -A -o json`")
	}
	var items []json.RawMessage
	if trimmed[0] == '[' {
		if err := json.Unmarshal(data, &items); err != nil {
			return nil, positioned(data, err)
		}
	} else {
		var list struct {
			Kind  string            `json:"kind"`
			Items []json.RawMessage `json:"items"`
		}
		if err := json.Unmarshal(data, &list); err != nil {
			return nil, positioned(data, err)
		}
		if list.Items == nil {
			return nil, fmt.Errorf("input is a JSON object of kind %q without \"items\": expected an EventList, a List or an array of Events", list.Kind)
		}
		if list.Kind != "" && list.Kind != "List" && list.Kind != "EventList" {
			return nil, fmt.Errorf("input is a %s, not a list of Events: expected an EventList, a List or an array of Events", list.Kind)
		}
		items = list.Items
	}
	out := make([]corev1.Event, 0, len(items))
	for i, raw := range items {
		if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
			return nil, fmt.Errorf("item %d is null, not an Event", i)
		}
		var re rawEvent
		if err := json.Unmarshal(raw, &re); err != nil {
			return nil, fmt.Errorf("item %d: %w", i, err)
		}
		if re.Kind != "" && re.Kind != "Event" {
			return nil, fmt.Errorf("item %d: kind %q is not an Event", i, re.Kind)
		}
		ev := re.event()
		// Items of a list read from the API carry no kind: one without a reason or an involved
		// object (regarding) is no Event.
		if re.Kind == "" && (ev.Reason == "" || ev.InvolvedObject.Kind == "" && ev.InvolvedObject.Name == "") {
			return nil, fmt.Errorf("item %d is not an Event: it has no kind, and no reason or involvedObject/regarding", i)
		}
		out = append(out, ev)
	}
	return out, nil
}

// positioned turns a JSON error into one that names line and column.
func positioned(data []byte, err error) error {
	var off int64 = -1
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	}
	if off < 0 {
		return fmt.Errorf("malformed input: %w", err)
	}
	// The decoder reports how many bytes it read, the offending one included: that byte is at
	// index off-1 (columns and bytes count from 1).
	off = min(max(off, 1), int64(len(data)))
	bad := off - 1
	line := 1 + bytes.Count(data[:bad], []byte("\n"))
	col := bad - int64(bytes.LastIndexByte(data[:bad], '\n'))
	return fmt.Errorf("malformed input at line %d, column %d (byte %d): %w", line, col, off, err)
}

// List reads the Events of a live cluster, page by page.
func List(ctx context.Context, client kube.Client, namespace, fieldSelector string) ([]corev1.Event, error) {
	var out []corev1.Event
	opts := metav1.ListOptions{FieldSelector: fieldSelector, Limit: 500}
	for {
		obj, err := client.List(ctx, kube.Events, namespace, opts)
		if err != nil {
			return nil, fmt.Errorf("listing Events: %w", err)
		}
		l, ok := obj.(*corev1.EventList)
		if !ok {
			return nil, fmt.Errorf("listing Events: got %T", obj)
		}
		out = append(out, l.Items...)
		if l.Continue == "" {
			return out, nil
		}
		opts.Continue = l.Continue
	}
}

// Explain classifies Events.
func Explain(evs []corev1.Event, t *causes.Table, runbookPattern string) []Row {
	rows := make([]Row, 0, len(evs))
	for i := range evs {
		ev := &evs[i]
		res := t.Classify(ev.Reason, ev.Message)
		c, _ := t.Cause(res.Cause)
		ns := ev.InvolvedObject.Namespace
		if ns == "" && ev.InvolvedObject.Kind == "" {
			ns = ev.Namespace
		}
		rows = append(rows, Row{
			Namespace: ns, Kind: ev.InvolvedObject.Kind, Name: ev.InvolvedObject.Name,
			Reason: ev.Reason, Type: ev.Type, Message: ev.Message,
			Cause: res.Cause, Category: c.Category, Target: events.Target(res, ev), Count: events.Occurrences(ev),
			RunbookURL: causes.RunbookURL(runbookPattern, c.Runbook),
		})
	}
	return rows
}

// Print writes rows as a table ("" or "table") or as a JSON array ("json"). Whoever can create an
// Event chooses its strings: in the table, every byte that is not a printable character is
// escaped (\n, \x1b, \u202e, …), and so is the backslash, so nothing reaches the terminal as a
// control sequence and nothing is ambiguous. JSON escapes control characters itself.
func Print(w io.Writer, rows []Row, format string) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if rows == nil {
			rows = []Row{}
		}
		return enc.Encode(rows)
	case "", "table":
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAMESPACE\tOBJECT\tREASON\tCAUSE\tTARGET\tCOUNT\tRUNBOOK")
		for _, r := range rows {
			fmt.Fprintf(tw, "%s\t%s/%s\t%s\t%s\t%s\t%s\t%s\n", dash(printable(r.Namespace)), printable(r.Kind), printable(r.Name),
				printable(r.Reason), printable(r.Cause), dash(printable(r.Target)), strconv.Itoa(int(r.Count)), dash(printable(r.RunbookURL)))
		}
		return tw.Flush()
	}
	return fmt.Errorf("unknown output format %q (want table or json)", format)
}

// Unclassified are the templates of the rows' unclassified messages, by (reason, template),
// most frequent first, counting occurrences: what a rule should be written for.
func Unclassified(rows []Row) []causes.UnclassifiedEntry {
	// A dump is finite: keep every pair (capacity = rows), so counts are exact.
	u := causes.NewUnclassified(max(len(rows), 1))
	for _, r := range rows {
		if r.Cause == causes.Unknown {
			u.Add(r.Reason, causes.Template(r.Message), uint64(r.Count))
		}
	}
	return u.Snapshot().Entries
}

// PrintUnclassified writes the templates as a table or a JSON array, escaped as Print does.
func PrintUnclassified(w io.Writer, entries []causes.UnclassifiedEntry, format string) error {
	switch format {
	case "json":
		type entry struct {
			Reason   string `json:"reason"`
			Template string `json:"template"`
			Count    uint64 `json:"count"`
		}
		out := make([]entry, 0, len(entries))
		for _, e := range entries {
			out = append(out, entry{e.Reason, e.Template, e.Count})
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	case "", "table":
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "COUNT\tREASON\tTEMPLATE")
		for _, e := range entries {
			fmt.Fprintf(tw, "%d\t%s\t%s\n", e.Count, printable(e.Reason), printable(e.Template))
		}
		return tw.Flush()
	}
	return fmt.Errorf("unknown output format %q (want table or json)", format)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// printable escapes s for a terminal: control and other non-graphic characters, invalid UTF-8
// and the backslash; everything else is left as is.
func printable(s string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || r == '\\' || !unicode.IsGraphic(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case !unicode.IsGraphic(r) && r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		case !unicode.IsGraphic(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
		i += size
	}
	return b.String()
}
