package pages

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/kubecause/kubecause/docs"
	"github.com/kubecause/kubecause/exporter/causes"
	"github.com/kubecause/kubecause/exporter/events"
)

func get(t *testing.T, h http.Handler, target string, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, target, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	resp := rec.Result()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

func server(prefix string, p *Problems) *http.ServeMux {
	mux := http.NewServeMux()
	if p == nil {
		p = &Problems{Source: func() []events.Problem { return nil }}
	}
	Register(mux, prefix, NewRunbooks(docs.Runbooks), p, 0)
	return mux
}

func TestLang(t *testing.T) {
	for _, c := range []struct{ query, accept, want string }{
		{"", "", "en"},
		{"?lang=zh", "", "zh"},
		{"?lang=en", "zh-CN,zh;q=0.9", "en"},
		{"", "zh-CN,zh;q=0.9,en;q=0.8", "zh"},
		{"", "zh-TW", "zh"},
		{"", "en-US,en;q=0.9,zh;q=0.5", "en"},
		{"", "fr-FR", "en"},
		{"?lang=fr", "zh", "zh"}, // an unknown ?lang is ignored
		{"", "not a header;;;", "en"},
	} {
		r := httptest.NewRequest(http.MethodGet, "/runbooks/kubecausedown"+c.query, nil)
		if c.accept != "" {
			r.Header.Set("Accept-Language", c.accept)
		}
		if got := Lang(r); got != c.want {
			t.Errorf("Lang(%q, Accept-Language %q) = %q, want %q", c.query, c.accept, got, c.want)
		}
	}
}

var idRE = regexp.MustCompile(`<h[1-6] id="([^"]*)"`)

func ids(body string) map[string]bool {
	out := map[string]bool{}
	for _, m := range idRE.FindAllStringSubmatch(body, -1) {
		out[m[1]] = true
	}
	return out
}

// Every runbook of the built-in cause table resolves to a page with its anchor, in both
// languages, at the path the exported runbook URL has.
func TestCauseRunbookAnchors(t *testing.T) {
	mux := server("", nil)
	u, _, err := ParseExternalURL("http://127.0.0.1:9737")
	if err != nil {
		t.Fatal(err)
	}
	pattern := RunbookPattern(u)
	n := 0
	for _, c := range causes.Default().Causes() {
		if c.Runbook == "" {
			continue
		}
		link := causes.RunbookURL(pattern, c.Runbook)
		target, anchor, _ := strings.Cut(strings.TrimPrefix(link, "http://127.0.0.1:9737"), "#")
		for _, lang := range []string{"en", "zh"} {
			resp, body := get(t, mux, target+"?lang="+lang, nil)
			if resp.StatusCode != http.StatusOK {
				t.Errorf("%s (%s): %s", link, lang, resp.Status)
				continue
			}
			if !strings.Contains(body, `<html lang="`+lang+`"`) {
				t.Errorf("%s: not served in %s", link, lang)
			}
			if anchor != "" && !ids(body)[anchor] {
				t.Errorf("%s (%s): no element with id %q", link, lang, anchor)
			}
			n++
		}
	}
	if n < 100 {
		t.Errorf("only %d cause runbook links checked", n)
	}
}

func TestHeadingIDs(t *testing.T) {
	mux := server("", nil)
	_, zh := get(t, mux, "/runbooks/kubecausepodvolumefailing?lang=zh", nil)
	for _, id := range []string{"kubecausepodvolumefailing", "含义", "处理", "configmap_not_found", "mount_timeout"} {
		if !ids(zh)[id] {
			t.Errorf("zh page: no heading id %q in %v", id, ids(zh))
		}
	}
	for h, want := range map[string]string{
		"Meaning":                   "meaning",
		"`mount_timeout` (symptom)": "mount_timeout-symptom",
		"Node: DiskPressure":        "node-diskpressure",
		"诊断：命令":                     "诊断命令",
		"crash_loop_backoff":        "crash_loop_backoff",
	} {
		if got := Slug(h); got != want {
			t.Errorf("Slug(%q) = %q, want %q", h, got, want)
		}
	}
	s := newSlugs()
	for i, want := range []string{"a", "a-1", "a-2"} {
		if got := string(s.Generate([]byte("A"), 0)); got != want {
			t.Errorf("heading %d: id %q, want %q", i, got, want)
		}
	}
}

func TestRunbookLinksAndIndex(t *testing.T) {
	mux := server("/kc", nil)
	resp, en := get(t, mux, "/kc/runbooks/", nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(en, `href="kubecausepodvolumefailing?lang=en"`) ||
		!strings.Contains(en, `href="./?lang=zh"`) {
		t.Errorf("index: %s, links not rewritten:\n%s", resp.Status, en)
	}
	if strings.Contains(en, `.md"`) && !strings.Contains(en, RepositoryDocs) {
		t.Errorf("index links a .md file that is not served")
	}
	if !strings.Contains(en, `href="`+RepositoryDocs+`alerts.md"`) {
		t.Errorf("link to docs/alerts.md does not point at the repository")
	}
	_, zh := get(t, mux, "/kc/runbooks/kubecausepodevicted", map[string]string{"Accept-Language": "zh-CN"})
	if !strings.Contains(zh, `<html lang="zh"`) || !strings.Contains(zh, `href="kubecausepodevicted?lang=en"`) {
		t.Errorf("Accept-Language zh-CN: not the Chinese page with a switch to English")
	}
	if resp, _ := get(t, mux, "/kc/runbooks/kubecausedown.md", nil); resp.StatusCode != http.StatusOK {
		t.Errorf("<page>.md: %s", resp.Status)
	}
	resp, _ = get(t, mux, "/kc/runbooks/zh/kubecausedown.md", nil)
	if resp.StatusCode != http.StatusMovedPermanently || resp.Header.Get("Location") != "../kubecausedown?lang=zh" {
		t.Errorf("zh/<page>.md: %s → %q", resp.Status, resp.Header.Get("Location"))
	}
	for _, target := range []string{"/kc/runbooks/nosuchpage", "/kc/runbooks/..%2f..%2fembed.go", "/kc/runbooks/Kubecausedown", "/runbooks/kubecausedown"} {
		if resp, _ := get(t, mux, target, nil); resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s: %s, want 404", target, resp.Status)
		}
	}
	resp, _ = get(t, mux, "/kc/runbooks/kubecausedown", nil)
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
		t.Errorf("Content-Security-Policy %q lets external resources load", csp)
	}
}

func TestRewriteLink(t *testing.T) {
	for _, c := range []struct{ dir, dest, want string }{
		{"runbooks", "kubecausepodevicted.md", "kubecausepodevicted?lang=en"},
		{"runbooks", "kubecausenodepressure.md#diskpressure", "kubecausenodepressure?lang=en#diskpressure"},
		{"runbooks", "zh/README.md", "./?lang=zh"},
		{"runbooks", "../alerts.md", RepositoryDocs + "alerts.md"},
		{"runbooks/zh", "kubecausepodevicted.md", "kubecausepodevicted?lang=zh"},
		{"runbooks/zh", "../README.md", "./?lang=en"},
		{"runbooks/zh", "../../causes.md#unknown", RepositoryDocs + "causes.md#unknown"},
		{"runbooks", "#memory_limit_too_small", "#memory_limit_too_small"},
		{"runbooks", "https://kubernetes.io/docs/", "https://kubernetes.io/docs/"},
	} {
		if got := rewriteLink(c.dir, c.dest); got != c.want {
			t.Errorf("link %q in %s: %q, want %q", c.dest, c.dir, got, c.want)
		}
	}
}

// Raw HTML and script links in a runbook are not passed through.
func TestRunbookEscaping(t *testing.T) {
	fsys := fstest.MapFS{"runbooks/evil.md": {Data: []byte("# Evil <b>x</b>\n\n<script>alert(1)</script>\n\n" +
		"[click](javascript:alert(1)) <img src=x onerror=alert(1)> `<i>code</i>`\n")}}
	_, body := get(t, NewRunbooks(fsys), "/evil", nil)
	for _, bad := range []string{"<script>", "javascript:", "<img", "onerror", "<b>", "<i>"} {
		if strings.Contains(body, bad) {
			t.Errorf("rendered page contains %q:\n%s", bad, body)
		}
	}
	if !strings.Contains(body, "&lt;i&gt;code&lt;/i&gt;") {
		t.Errorf("code span not escaped:\n%s", body)
	}
}

var now = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)

func problems() *Problems {
	view := []events.Problem{
		{Namespace: "real-s1", Kind: "Pod", Name: "app-1", Reason: "FailedMount", Cause: "configmap_not_found", Events: 1, Occurrences: 7, LastSeen: now.Add(-time.Minute)},
		{Namespace: "real-s5", Kind: "Pod", Name: "agent-mz6d4", Node: "worker-2", Reason: "BackOff", Cause: "crash_loop_backoff", Events: 2, Occurrences: 30, LastSeen: now.Add(-10 * time.Second)},
		{Namespace: "", Kind: "Node", Name: "kubecause-node", Node: "kubecause-node", Reason: "NodeHasDiskPressure", Cause: "node_disk_pressure", Events: 1, Occurrences: 1, LastSeen: now.Add(-time.Hour)},
		{Namespace: "real-s1", Kind: "Pod", Name: "x<script>", Reason: "<b>odd</b>", Cause: "unknown", Events: 1, Occurrences: 1},
	}
	return &Problems{
		Source:     func() []events.Problem { return view },
		RunbookURL: func(c string) string { return "https://kc.example/runbooks/page#" + c },
		Now:        func() time.Time { return now },
	}
}

func TestProblemsJSON(t *testing.T) {
	mux := server("", problems())
	for _, hdr := range []map[string]string{nil, {"Accept": "application/json"}} {
		target := "/problems?format=json"
		if hdr != nil {
			target = "/problems"
		}
		resp, body := get(t, mux, target, hdr)
		if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
			t.Fatalf("%s: Content-Type %q", target, ct)
		}
		var l ProblemList
		if err := json.Unmarshal([]byte(body), &l); err != nil {
			t.Fatal(err)
		}
		if l.Entries != 4 || l.Matched != 4 || len(l.Problems) != 4 || !l.Time.Equal(now) {
			t.Errorf("entries %d, matched %d, %d problems, time %v", l.Entries, l.Matched, len(l.Problems), l.Time)
		}
		first := l.Problems[0] // newest first
		if first.Name != "agent-mz6d4" || first.Count != 30 || first.Events != 2 || first.Cause != "crash_loop_backoff" ||
			first.RunbookURL != "https://kc.example/runbooks/page#crash_loop_backoff" || !first.LastSeen.Equal(now.Add(-10*time.Second)) {
			t.Errorf("first problem %+v", first)
		}
		if l.Problems[0].Node != "worker-2" || l.Problems[1].Node != "" || l.Problems[2].Node != "kubecause-node" {
			t.Errorf("node: %+v", l.Problems)
		}
	}
	var raw map[string][]map[string]any
	_, body := get(t, mux, "/problems?format=json", nil)
	_ = json.Unmarshal([]byte(body), &raw)
	for _, k := range []string{"namespace", "kind", "name", "reason", "cause", "target", "events", "count", "last_seen", "runbook_url"} {
		if _, ok := raw["problems"][0][k]; !ok {
			t.Errorf("JSON problem has no %q: %v", k, raw["problems"][0])
		}
	}
}

func TestProblemsFilterAndHTML(t *testing.T) {
	mux := server("", problems())
	for q, want := range map[string][]string{
		"namespace=real-s1":                           {"app-1", "x<script>"},
		"cause=crash_loop_backoff":                    {"agent-mz6d4"},
		"q=DISKPRESSURE":                              {"kubecause-node"},
		"namespace=real-s1&cause=unknown":             {"x<script>"},
		"namespace=real-s5&cause=configmap_not_found": {},
	} {
		_, body := get(t, mux, "/problems?format=json&"+q, nil)
		var l ProblemList
		if err := json.Unmarshal([]byte(body), &l); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, p := range l.Problems {
			got = append(got, p.Name)
		}
		if strings.Join(got, ",") != strings.Join(want, ",") || l.Entries != 4 {
			t.Errorf("%s: %v (of %d), want %v", q, got, l.Entries, want)
		}
	}
	resp, body := get(t, mux, "/problems?namespace=real-s1", map[string]string{"Accept": "text/html,application/xhtml+xml"})
	if ct := resp.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Fatalf("Content-Type %q", ct)
	}
	for _, want := range []string{`<td>Pod/app-1</td>`, `<option selected>real-s1</option>`, `<form method="get"`,
		`href="https://kc.example/runbooks/page#configmap_not_found"`, "1m0s ago", "x&lt;script&gt;", "&lt;b&gt;odd&lt;/b&gt;"} {
		if !strings.Contains(body, want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
	if strings.Contains(body, "agent-mz6d4") || strings.Contains(body, "<script>") || strings.Contains(body, "<b>") {
		t.Errorf("HTML shows a filtered-out row or unescaped text:\n%s", body)
	}
	if resp, _ := get(t, mux, "/problems", nil); resp.Header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Errorf("no Accept: %q, want HTML", resp.Header.Get("Content-Type"))
	}
}

func TestProblemsBounded(t *testing.T) {
	view := make([]events.Problem, maxRows+5)
	for i := range view {
		view[i] = events.Problem{Namespace: "n", Kind: "Pod", Name: "p", Reason: "BackOff", Cause: "crash_loop_backoff"}
	}
	_, body := get(t, server("", &Problems{Source: func() []events.Problem { return view }}), "/problems", nil)
	if n := strings.Count(body, "<td>Pod/p</td>"); n != maxRows || !strings.Contains(body, "the first 1000") {
		t.Errorf("%d rows shown of %d, want %d with a note", n, len(view), maxRows)
	}
}

func TestParseExternalURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://kc.example.com":    "",
		"https://kc.example.com/":   "",
		"http://127.0.0.1:9737/kc/": "/kc",
		"https://proxy/a/b":         "/a/b",
	} {
		u, prefix, err := ParseExternalURL(in)
		if err != nil || prefix != want {
			t.Errorf("ParseExternalURL(%q) = %q, %v; want %q", in, prefix, err, want)
			continue
		}
		if p := RunbookPattern(u); p != strings.TrimRight(in, "/")+"/runbooks/%s" {
			t.Errorf("RunbookPattern(%q) = %q", in, p)
		}
	}
	for _, bad := range []string{"", "kc.example.com", "ftp://kc", "https://kc/?a=b", "https://u:p@kc/", "https://kc/#x", "http:///path", "https://kc/%7Bx%7D"} {
		if _, _, err := ParseExternalURL(bad); err == nil {
			t.Errorf("ParseExternalURL(%q) accepted", bad)
		}
	}
}

// One registry outage breaks pods of several namespaces on several nodes: /problems groups them
// into one incident (cause, target), the objects beneath, in the JSON and on the page.
func TestProblemsIncidents(t *testing.T) {
	const reg = "registry.example.com:5000"
	view := []events.Problem{
		{Namespace: "shop", Kind: "Pod", Name: "cart-1", Node: "worker-1", Reason: "Failed", Cause: "image_registry_unreachable", Target: reg, Events: 1, Occurrences: 3, LastSeen: now.Add(-30 * time.Second)},
		{Namespace: "shop", Kind: "Pod", Name: "cart-1", Node: "worker-1", Reason: "BackOff", Cause: "image_pull_backoff", Target: reg, Events: 1, Occurrences: 9, LastSeen: now.Add(-30 * time.Second)},
		{Namespace: "shop", Kind: "Pod", Name: "cart-2", Node: "worker-2", Reason: "Failed", Cause: "image_registry_unreachable", Target: reg, Events: 1, Occurrences: 2, LastSeen: now.Add(-20 * time.Second)},
		{Namespace: "web", Kind: "Pod", Name: "front-1", Node: "worker-1", Reason: "Failed", Cause: "image_registry_unreachable", Target: reg, Events: 2, Occurrences: 4, LastSeen: now.Add(-40 * time.Second)},
		{Namespace: "web", Kind: "Pod", Name: "front-2", Node: "worker-1", Reason: "Failed", Cause: "image_registry_unreachable", Target: "docker.io", Events: 1, Occurrences: 1, LastSeen: now.Add(-5 * time.Second)},
		{Namespace: "ops", Kind: "Pod", Name: "agent-1", Node: "worker-3", Reason: "FailedCreatePodSandBox", Cause: "disk_full", Target: "worker-3", Events: 1, Occurrences: 1, LastSeen: now.Add(-time.Hour)},
	}
	mux := server("", &Problems{Source: func() []events.Problem { return view },
		RunbookURL: func(c string) string { return "https://kc.example/runbooks/page#" + c }, Now: func() time.Time { return now }})
	var l ProblemList
	_, body := get(t, mux, "/problems?format=json", nil)
	if err := json.Unmarshal([]byte(body), &l); err != nil {
		t.Fatal(err)
	}
	type got struct {
		cause, target                        string
		objects, namespaces, nodes, problems int
		count                                int64
	}
	var gs []got
	for _, in := range l.Incidents {
		gs = append(gs, got{in.Cause, in.Target, in.Objects, in.Namespaces, in.Nodes, in.Problems, in.Count})
	}
	want := []got{ // newest first
		{"image_registry_unreachable", "docker.io", 1, 1, 1, 1, 1},
		{"image_registry_unreachable", reg, 3, 2, 2, 3, 9},
		{"image_pull_backoff", reg, 1, 1, 1, 1, 9},
		{"disk_full", "worker-3", 1, 1, 1, 1, 1},
	}
	if !slices.Equal(gs, want) {
		t.Errorf("incidents\n%+v\nwant\n%+v", gs, want)
	}
	if len(l.Problems) != 6 || l.Problems[0].Target != "docker.io" {
		t.Errorf("problems: %+v", l.Problems)
	}

	// The page: each incident's header, then its objects, before the next incident.
	_, page := get(t, mux, "/problems", nil)
	hdr := `<code>image_registry_unreachable</code> on <code>registry.example.com:5000</code>: 3 objects in 2 namespaces, on 2 nodes, 9 occurrences`
	i := strings.Index(page, hdr)
	if i < 0 {
		t.Fatalf("page lacks the incident header %q:\n%s", hdr, page)
	}
	next := strings.Index(page[i:], `<code>image_pull_backoff</code>`)
	section := page[i : i+next]
	for _, obj := range []string{"Pod/cart-1", "Pod/cart-2", "Pod/front-1"} {
		if !strings.Contains(section, "<td>"+obj+"</td>") {
			t.Errorf("%s is not under its incident:\n%s", obj, section)
		}
	}
	if strings.Contains(section, "Pod/front-2") {
		t.Errorf("front-2 (another registry) is under registry.example.com:5000:\n%s", section)
	}
	if !strings.Contains(page, "in 4 incidents") {
		t.Errorf("page does not say how many incidents:\n%s", page)
	}

	// The incident's link keeps it alone; the other filters still apply with it.
	link := `?cause=image_registry_unreachable&amp;target=registry.example.com%3A5000`
	if !strings.Contains(section, link) {
		t.Errorf("incident has no link %q:\n%s", link, section)
	}
	for q, wantNames := range map[string]string{
		"cause=image_registry_unreachable&target=registry.example.com:5000":                "cart-2,cart-1,front-1",
		"cause=image_registry_unreachable&target=registry.example.com:5000&namespace=shop": "cart-2,cart-1",
		"target=worker-3": "agent-1",
		"q=front":         "front-2,front-1",
	} {
		_, body := get(t, mux, "/problems?format=json&"+q, nil)
		var l ProblemList
		if err := json.Unmarshal([]byte(body), &l); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, p := range l.Problems {
			names = append(names, p.Name)
		}
		if strings.Join(names, ",") != wantNames {
			t.Errorf("%s: %v, want %s", q, names, wantNames)
		}
	}
}
