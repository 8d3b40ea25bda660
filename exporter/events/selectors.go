package events

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/selection"
)

// The Event watch policy: which server-side field selectors the watches use, and which a user may give.

// DefaultNormalReasons are --events.normal-reason's default: the Normal Events that say something
// is wrong (the kubelet's killed sandbox, image pull back-off and node conditions, the PV
// controller's claim without StorageClass, the node controller's NotReady node).
var DefaultNormalReasons = []string{"SandboxChanged", "BackOff", "FailedBinding", "NodeNotReady", "NodeNotSchedulable",
	"NodeHasDiskPressure", "NodeHasInsufficientMemory", "NodeHasInsufficientPID"}

// NoisyNormalReasons are the reasons of the Normal Events a cluster writes most — a pod's start
// and stop (the scheduler's Scheduled; the kubelet's Pulling, Pulled, Created, Started, Killing),
// its controllers' creates and deletes (SuccessfulCreate, SuccessfulDelete), a Deployment's
// scaling (ScalingReplicaSet), a volume attach (SuccessfulAttachVolume), a Job's end
// (Completed). Kubernetes' components write them as Normal only; none is counted.
var NoisyNormalReasons = []string{"Scheduled", "Pulling", "Pulled", "Created", "Started", "Killing",
	"SuccessfulCreate", "SuccessfulDelete", "ScalingReplicaSet", "SuccessfulAttachVolume", "Completed"}

// DefaultFieldSelector is --events.field-selector's default: one watch of every Event but the
// noisy Normal ones. kube-apiserver serves Events from etcd without a watch cache, so every watch
// is an etcd watch that etcd and the apiserver pay at each write and whose start reads every live
// Event: one watch costs them a ninth of the nine (type=Warning and one per default Normal
// reason) that "type=Warning" gives, at no cost to kubecause (docs/performance.md, "The control
// plane's cost"). A Warning Event with a noisy reason, which no Kubernetes component writes,
// would not be seen.
var DefaultFieldSelector = func() string {
	parts := make([]string, len(NoisyNormalReasons))
	for i, r := range NoisyNormalReasons {
		parts[i] = "reason!=" + r
	}
	return strings.Join(parts, ",")
}()

// WatchSelectors returns the server-side field selectors of the Event watches. With type=Warning,
// each Normal reason asked for gets a watch of its own (type=Normal,reason=R): the result sets are
// disjoint, so nothing is seen twice, and the apiserver filters out the Normal Events nobody asked
// for, at the price of one etcd watch each. With any other selector (the default included) there
// is one watch and the engine drops Normal Events whose reason was not asked for.
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
