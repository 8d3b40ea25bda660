package events

import "time"

// Problem is one entry of the per-object view (kubecause_object_events): an object with at least
// one live Event of a reason and cause.
type Problem struct {
	Namespace, Kind, Name, Reason, Cause string
	// Target is the shared thing the cause is about — a registry host, the node, a CNI plugin, a
	// CSI driver, … (the cause's target in the cause table) — "" when it has none, "_overflow"
	// when --object-view.max-targets distinct values were already in the view.
	Target string
	// Node is the node the entry's Events name (the kubelet's source.host), or the object itself
	// when it is a Node; "" when no Event named one (the scheduler's, a controller's).
	Node string
	// Events is the number of live Events behind the entry, Occurrences what they recorded.
	Events      int
	Occurrences int64
	// LastSeen is the newest occurrence (zero when unknown).
	LastSeen time.Time
}

// Problems returns a copy of the per-object view as it is now, in no particular order. It holds
// at most --object-view.max-series entries (the view's cap).
func (e *Engine) Problems() []Problem {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]Problem, 0, e.view.len())
	for i := range e.view.entries {
		en := &e.view.entries[i]
		if en.born == 0 {
			continue // a free slot
		}
		p := Problem{Namespace: en.key.namespace, Kind: en.key.kind, Name: en.key.name, Reason: en.key.reason,
			Cause: en.key.cause, Target: en.key.target, Events: int(en.events), Occurrences: en.occ}
		if p.Node = en.node; p.Node == "" && p.Kind == "Node" {
			p.Node = p.Name
		}
		if en.last > 0 {
			p.LastSeen = time.Unix(en.last, 0).UTC()
		}
		out = append(out, p)
	}
	return out
}
