package pages

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"html/template"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/kubecause/kubecause/exporter/events"
)

// maxRows bounds the rows of the HTML page; the JSON has every matching entry (the view is capped).
const maxRows = 1000

// MaxQueryBytes bounds the text filter (q) of /problems: longer than any field it is matched
// against (a name or node name is at most 253 bytes), so no filter that can match is refused, and
// the cost of a request is bounded by the view's cap times this, not by what the client sends.
const MaxQueryBytes = 256

// checkEvery is how many entries the filter reads between two looks at the request's context.
const checkEvery = 1024

// Problems serves /problems: the per-object view now, filterable by namespace, cause and text.
type Problems struct {
	// Source returns the per-object view (events.Engine.Problems).
	Source func() []events.Problem
	// RunbookURL returns the runbook link of a cause ("" when none).
	RunbookURL func(cause string) string
	// Now is the clock (tests replace it).
	Now func() time.Time
	// Guard counts refused requests (nil: not counted).
	Guard *Guard
}

// Problem is one row of /problems?format=json.
type Problem struct {
	Namespace string `json:"namespace"`
	Kind      string `json:"kind"`
	Name      string `json:"name"`
	// Node is the node the problem is on when known (events.Problem.Node).
	Node   string `json:"node,omitempty"`
	Reason string `json:"reason"`
	Cause  string `json:"cause"`
	// Target is the shared thing the cause is about (events.Problem.Target), "" when none.
	Target      string    `json:"target"`
	Events      int       `json:"events"`
	Count       int64     `json:"count"`
	LastSeen    time.Time `json:"last_seen"`
	RunbookURL  string    `json:"runbook_url,omitempty"`
	lastSeenAgo string
}

// ProblemList is the JSON document of /problems?format=json.
type ProblemList struct {
	Time time.Time `json:"time"`
	// Entries is the size of the per-object view, Matched how many entries the filter kept.
	Entries  int       `json:"entries"`
	Matched  int       `json:"matched"`
	Problems []Problem `json:"problems"`
	// Incidents groups the matched problems by (cause, target): one outage, many objects.
	Incidents []Incident `json:"incidents"`
}

// Incident is the problems of one cause on one target (a registry, a node, a CNI plugin, …): what
// one fix repairs. Problems without a target are grouped by cause alone (target "").
type Incident struct {
	Cause  string `json:"cause"`
	Target string `json:"target"`
	// Objects, Namespaces and Nodes are how many distinct ones the incident's problems name
	// (an object with two reasons of the same cause counts once).
	Objects    int `json:"objects"`
	Namespaces int `json:"namespaces"`
	Nodes      int `json:"nodes"`
	// Problems is how many entries of the view (rows of "problems") it groups; Events and Count
	// add up theirs.
	Problems   int       `json:"problems"`
	Events     int       `json:"events"`
	Count      int64     `json:"count"`
	LastSeen   time.Time `json:"last_seen"`
	RunbookURL string    `json:"runbook_url,omitempty"`
	rows       []Problem
}

// Filter is what the form of /problems selects; Target (the target parameter, exact) keeps one
// incident's target, as an incident's link does.
type Filter struct{ Namespace, Cause, Text, Target string }

// match says whether the filter keeps p; lower is f.Text in lower case (computed once per
// request, not once per entry).
func (f Filter) match(p events.Problem, lower string) bool {
	if f.Namespace != "" && p.Namespace != f.Namespace || f.Cause != "" && p.Cause != f.Cause {
		return false
	}
	if lower == "" {
		return true
	}
	for _, s := range [...]string{p.Namespace, p.Kind, p.Name, p.Node, p.Reason, p.Cause} {
		// ToLower returns s itself when it has no upper case: no copy for most fields.
		if len(s) >= len(lower) && strings.Contains(strings.ToLower(s), lower) {
			return true
		}
	}
	return false
}

// incidents groups rows (sorted newest first) by (cause, target), newest incident first, then the
// one with more objects; each keeps its rows in their order.
func incidents(rows []Problem) []Incident {
	type key struct{ cause, target string }
	idx := map[key]int{}
	out := []Incident{}
	type seen struct{ objects, namespaces, nodes map[string]bool }
	var sets []seen
	for _, p := range rows {
		k := key{p.Cause, p.Target}
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, Incident{Cause: p.Cause, Target: p.Target, RunbookURL: p.RunbookURL, LastSeen: p.LastSeen})
			sets = append(sets, seen{map[string]bool{}, map[string]bool{}, map[string]bool{}})
		}
		in, s := &out[i], sets[i]
		s.objects[p.Namespace+"/"+p.Kind+"/"+p.Name] = true
		if p.Namespace != "" {
			s.namespaces[p.Namespace] = true
		}
		if p.Node != "" {
			s.nodes[p.Node] = true
		}
		in.Problems++
		in.Events += p.Events
		in.Count += p.Count
		if p.LastSeen.After(in.LastSeen) {
			in.LastSeen = p.LastSeen
		}
		in.rows = append(in.rows, p)
	}
	for i := range out {
		out[i].Objects, out[i].Namespaces, out[i].Nodes = len(sets[i].objects), len(sets[i].namespaces), len(sets[i].nodes)
	}
	slices.SortStableFunc(out, func(a, b Incident) int {
		return cmp.Or(b.LastSeen.Compare(a.LastSeen), cmp.Compare(b.Objects, a.Objects),
			cmp.Compare(a.Cause, b.Cause), cmp.Compare(a.Target, b.Target))
	})
	return out
}

// list filters the view. It stops, with the context's error, when the request's context is done
// (the client went away): a request costs nothing once nobody waits for it.
func (h *Problems) list(ctx context.Context, f Filter) (ProblemList, []string, []string, error) {
	now := time.Now
	if h.Now != nil {
		now = h.Now
	}
	all := h.Source()
	l := ProblemList{Time: now().UTC().Truncate(time.Second), Entries: len(all), Problems: []Problem{}}
	nss, cs := map[string]bool{}, map[string]bool{}
	lower := strings.ToLower(f.Text)
	for i, p := range all {
		if i%checkEvery == 0 && ctx.Err() != nil {
			return ProblemList{}, nil, nil, ctx.Err()
		}
		if p.Namespace != "" { // cluster-scoped objects (nodes): found by the text filter
			nss[p.Namespace] = true
		}
		cs[p.Cause] = true
		if !f.match(p, lower) || f.Target != "" && p.Target != f.Target {
			continue
		}
		row := Problem{Namespace: p.Namespace, Kind: p.Kind, Name: p.Name, Node: p.Node, Reason: p.Reason, Cause: p.Cause,
			Target: p.Target, Events: p.Events, Count: p.Occurrences, LastSeen: p.LastSeen}
		if h.RunbookURL != nil {
			row.RunbookURL = h.RunbookURL(p.Cause)
		}
		l.Problems = append(l.Problems, row)
	}
	l.Matched = len(l.Problems)
	// Newest first, then by object.
	slices.SortFunc(l.Problems, func(a, b Problem) int {
		return cmp.Or(b.LastSeen.Compare(a.LastSeen), cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Kind, b.Kind),
			cmp.Compare(a.Name, b.Name), cmp.Compare(a.Reason, b.Reason), cmp.Compare(a.Cause, b.Cause),
			cmp.Compare(a.Target, b.Target))
	})
	if ctx.Err() != nil {
		return ProblemList{}, nil, nil, ctx.Err()
	}
	l.Incidents = incidents(l.Problems)
	return l, sortedKeys(nss), sortedKeys(cs), nil
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// wantsJSON: ?format=json, or an Accept header that prefers application/json.
func wantsJSON(r *http.Request) bool {
	switch r.URL.Query().Get("format") {
	case "json":
		return true
	case "html":
		return false
	}
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		if mt == "application/json" {
			return true
		}
		if mt == "text/html" {
			return false
		}
	}
	return false
}

func (h *Problems) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	q := r.URL.Query()
	f := Filter{Namespace: q.Get("namespace"), Cause: q.Get("cause"), Text: strings.TrimSpace(q.Get("q")), Target: q.Get("target")}
	if len(f.Text) > MaxQueryBytes {
		h.Guard.refuse(HandlerPages, RefusedQueryTooLong)
		http.Error(w, fmt.Sprintf("the text filter (q) is longer than %d bytes", MaxQueryBytes), http.StatusBadRequest)
		return
	}
	l, nss, cs, err := h.list(r.Context(), f)
	if err != nil {
		return // the client went away: nobody reads an answer
	}
	w.Header().Set("Vary", "Accept")
	if wantsJSON(r) {
		header(w, "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(l)
		return
	}
	// The first maxRows rows, grouped by incident (each incident's rows in its order).
	var shown []Incident
	rows := 0
	for _, in := range l.Incidents {
		if rows >= maxRows {
			break
		}
		in.rows = slices.Clone(in.rows[:min(len(in.rows), maxRows-rows)])
		rows += len(in.rows)
		for i := range in.rows {
			if !in.rows[i].LastSeen.IsZero() {
				in.rows[i].lastSeenAgo = l.Time.Sub(in.rows[i].LastSeen).Round(time.Second).String()
			}
		}
		shown = append(shown, in)
	}
	jq := q
	jq.Set("format", "json")
	header(w, "text/html; charset=utf-8")
	_ = problemsTmpl.Execute(w, problemsData{List: l, Incidents: shown, Rows: rows, Filter: f, Namespaces: nss, Causes: cs,
		JSON: "?" + jq.Encode(), Lang: Lang(r)})
}

type problemsData struct {
	List               ProblemList
	Incidents          []Incident
	Rows               int // rows shown
	Filter             Filter
	Namespaces, Causes []string
	JSON, Lang         string
}

func (p Problem) Ago() string { return p.lastSeenAgo }

// Link is the query of /problems that shows only this incident.
func (in Incident) Link() string {
	return "?" + url.Values{"cause": {in.Cause}, "target": {in.Target}}.Encode()
}

// Rows are the incident's rows shown on the page.
func (in Incident) Rows() []Problem { return in.rows }

var problemsTmpl = template.Must(template.New("problems").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>Live problems · kubecause</title><style>` + style + `</style></head>
<body class="wide"><nav><a href="runbooks/?lang={{.Lang}}">Runbooks</a><a href="{{.JSON}}">JSON</a></nav>
<h1>Live problems</h1>
<p>What the per-object view (<code>kubecause_object_events</code>) holds now: objects with a live
Event, by reason and cause. As of {{.List.Time.Format "2006-01-02 15:04:05 UTC"}}: {{.List.Entries}} entries, {{.List.Matched}} shown by the filter{{if lt .Rows .List.Matched}} (the first {{.Rows}}; narrow the filter or use the JSON){{end}}, in {{len .List.Incidents}} incident{{if ne (len .List.Incidents) 1}}s{{end}}: one cause on one target (a registry, a node, a CNI plugin, a CSI driver, …), the objects it breaks beneath.</p>
<form method="get" action="">
<label>Namespace <select name="namespace" id="namespace"><option value="">all</option>{{range .Namespaces}}<option{{if eq . $.Filter.Namespace}} selected{{end}}>{{.}}</option>{{end}}</select></label>
<label>Cause <select name="cause" id="cause"><option value="">all</option>{{range .Causes}}<option{{if eq . $.Filter.Cause}} selected{{end}}>{{.}}</option>{{end}}</select></label>
<label>Text <input type="search" name="q" id="q" value="{{.Filter.Text}}" placeholder="pod, reason, …"></label>
{{if .Filter.Target}}<input type="hidden" name="target" value="{{.Filter.Target}}">{{end}}<button type="submit" id="filter">Filter</button> <a href="?">clear</a>
</form>
<table id="problems"><thead><tr><th>namespace</th><th>object</th><th>node</th><th>reason</th><th>cause</th><th>Events</th><th>count</th><th>last seen</th><th>runbook</th></tr></thead>
{{range .Incidents}}<tbody class="incident"><tr><th colspan="9" scope="rowgroup"><code>{{.Cause}}</code>{{if .Target}} on <code>{{.Target}}</code>{{end}}: {{.Objects}} object{{if ne .Objects 1}}s{{end}} in {{.Namespaces}} namespace{{if ne .Namespaces 1}}s{{end}}{{if .Nodes}}, on {{.Nodes}} node{{if ne .Nodes 1}}s{{end}}{{end}}, {{.Count}} occurrences{{if .RunbookURL}} · <a href="{{.RunbookURL}}">runbook</a>{{end}} · <a href="{{.Link}}">only this incident</a></th></tr>
{{range .Rows}}<tr><td>{{.Namespace}}</td><td>{{.Kind}}/{{.Name}}</td><td>{{.Node}}</td><td>{{.Reason}}</td><td>{{.Cause}}</td><td>{{.Events}}</td><td>{{.Count}}</td><td>{{if .LastSeen.IsZero}}—{{else}}<time datetime="{{.LastSeen.Format "2006-01-02T15:04:05Z07:00"}}">{{.Ago}} ago</time>{{end}}</td><td>{{if .RunbookURL}}<a href="{{.RunbookURL}}">runbook</a>{{end}}</td></tr>
{{end}}</tbody>
{{else}}<tbody><tr><td colspan="9">No live problem{{if or .Filter.Namespace .Filter.Cause .Filter.Text .Filter.Target}} matches the filter{{end}}.</td></tr></tbody>
{{end}}</table>
</body></html>
`))
