package web

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"html/template"
	"mime"
	"net/http"
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
	Node        string    `json:"node,omitempty"`
	Reason      string    `json:"reason"`
	Cause       string    `json:"cause"`
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
}

// Filter is what the form of /problems selects.
type Filter struct{ Namespace, Cause, Text string }

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
		if !f.match(p, lower) {
			continue
		}
		row := Problem{Namespace: p.Namespace, Kind: p.Kind, Name: p.Name, Node: p.Node, Reason: p.Reason, Cause: p.Cause,
			Events: p.Events, Count: p.Occurrences, LastSeen: p.LastSeen}
		if h.RunbookURL != nil {
			row.RunbookURL = h.RunbookURL(p.Cause)
		}
		l.Problems = append(l.Problems, row)
	}
	l.Matched = len(l.Problems)
	// Newest first, then by object.
	slices.SortFunc(l.Problems, func(a, b Problem) int {
		return cmp.Or(b.LastSeen.Compare(a.LastSeen), cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Kind, b.Kind),
			cmp.Compare(a.Name, b.Name), cmp.Compare(a.Reason, b.Reason), cmp.Compare(a.Cause, b.Cause))
	})
	if ctx.Err() != nil {
		return ProblemList{}, nil, nil, ctx.Err()
	}
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
	f := Filter{Namespace: q.Get("namespace"), Cause: q.Get("cause"), Text: strings.TrimSpace(q.Get("q"))}
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
	shown := l.Problems
	if len(shown) > maxRows {
		shown = shown[:maxRows]
	}
	for i := range shown {
		if !shown[i].LastSeen.IsZero() {
			shown[i].lastSeenAgo = l.Time.Sub(shown[i].LastSeen).Round(time.Second).String()
		}
	}
	jq := q
	jq.Set("format", "json")
	header(w, "text/html; charset=utf-8")
	_ = problemsTmpl.Execute(w, problemsData{List: l, Rows: shown, Filter: f, Namespaces: nss, Causes: cs,
		JSON: "?" + jq.Encode(), Lang: Lang(r)})
}

type problemsData struct {
	List               ProblemList
	Rows               []Problem
	Filter             Filter
	Namespaces, Causes []string
	JSON, Lang         string
}

func (p Problem) Ago() string { return p.lastSeenAgo }

var problemsTmpl = template.Must(template.New("problems").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>Live problems · kubecause</title><style>` + style + `</style></head>
<body class="wide"><nav><a href="runbooks/?lang={{.Lang}}">Runbooks</a><a href="{{.JSON}}">JSON</a></nav>
<h1>Live problems</h1>
<p>What the per-object view (<code>kubecause_object_events</code>) holds now: objects with a live
Event, by reason and cause. As of {{.List.Time.Format "2006-01-02 15:04:05 UTC"}}: {{.List.Entries}} entries, {{.List.Matched}} shown by the filter{{if lt (len .Rows) .List.Matched}} (the first {{len .Rows}}; narrow the filter or use the JSON){{end}}.</p>
<form method="get" action="">
<label>Namespace <select name="namespace" id="namespace"><option value="">all</option>{{range .Namespaces}}<option{{if eq . $.Filter.Namespace}} selected{{end}}>{{.}}</option>{{end}}</select></label>
<label>Cause <select name="cause" id="cause"><option value="">all</option>{{range .Causes}}<option{{if eq . $.Filter.Cause}} selected{{end}}>{{.}}</option>{{end}}</select></label>
<label>Text <input type="search" name="q" id="q" value="{{.Filter.Text}}" placeholder="pod, reason, …"></label>
<button type="submit" id="filter">Filter</button> <a href="?">clear</a>
</form>
<table id="problems"><thead><tr><th>namespace</th><th>object</th><th>node</th><th>reason</th><th>cause</th><th>Events</th><th>count</th><th>last seen</th><th>runbook</th></tr></thead><tbody>
{{range .Rows}}<tr><td>{{.Namespace}}</td><td>{{.Kind}}/{{.Name}}</td><td>{{.Node}}</td><td>{{.Reason}}</td><td>{{.Cause}}</td><td>{{.Events}}</td><td>{{.Count}}</td><td>{{if .LastSeen.IsZero}}—{{else}}<time datetime="{{.LastSeen.Format "2006-01-02T15:04:05Z07:00"}}">{{.Ago}} ago</time>{{end}}</td><td>{{if .RunbookURL}}<a href="{{.RunbookURL}}">runbook</a>{{end}}</td></tr>
{{else}}<tr><td colspan="9">No live problem{{if or .Filter.Namespace .Filter.Cause .Filter.Text}} matches the filter{{end}}.</td></tr>
{{end}}</tbody></table>
</body></html>
`))
