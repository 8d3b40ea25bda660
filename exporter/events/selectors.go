package events

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/selection"
)

// The Event watch policy: which server-side field selectors the watches use, and which a user may give.

// WatchSelectors returns the server-side field selectors of the Event watches. With the default
// type=Warning, each Normal reason asked for gets a watch of its own (type=Normal,reason=R): the
// result sets are disjoint, so nothing is seen twice, and the apiserver still filters out the many
// Normal Events nobody asked for. With any other selector there is one watch and the engine drops
// Normal Events whose reason was not asked for.
func WatchSelectors(base string, normalReasons, excluded []string) []string {
	out := []string{fieldSelector(base, excluded)}
	if base != "type=Warning" {
		return out
	}
	for _, r := range normalReasons {
		out = append(out, fieldSelector("type=Normal,reason="+r, excluded))
	}
	return out
}

// fieldSelector adds the excluded namespaces to the user's selector (server-side).
func fieldSelector(base string, excluded []string) string {
	parts := []string{}
	if base != "" {
		parts = append(parts, base)
	}
	for _, ns := range excluded {
		parts = append(parts, "metadata.namespace!="+ns)
	}
	return strings.Join(parts, ",")
}

// eventFields are the fields the apiserver can select core/v1 Events by.
var eventFields = []string{"metadata.name", "metadata.namespace", "involvedObject.kind", "involvedObject.namespace",
	"involvedObject.name", "involvedObject.uid", "involvedObject.apiVersion", "involvedObject.resourceVersion",
	"involvedObject.fieldPath", "reason", "reportingComponent", "source", "type"}

// CheckSelector checks that a field selector parses, names only fields of Events, and does not
// ask for an empty type or reason (which no Event has: such a watch would see nothing).
func CheckSelector(s string) error {
	sel, err := fields.ParseSelector(s)
	if err != nil {
		return err
	}
	for _, r := range sel.Requirements() {
		if !slices.Contains(eventFields, r.Field) {
			return fmt.Errorf("%q is not a field Events can be selected by (%s)", r.Field, strings.Join(eventFields, ", "))
		}
		if r.Value == "" && r.Operator != selection.NotEquals && (r.Field == "type" || r.Field == "reason") {
			return fmt.Errorf("%s with an empty value selects no Event", r.Field)
		}
	}
	return nil
}
