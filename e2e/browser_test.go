//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubecause/kubecause/e2e/framework"
	"github.com/kubecause/kubecause/exporter/causes/corpus"
	"github.com/kubecause/kubecause/exporter/pages"
	"github.com/kubecause/kubecause/internal/testenv"
	"github.com/kubecause/kubecause/rules/mixintest"
)

// chromiumPath is Debian's chromium (hack/deps/00-apt.sh installs it), or CHROMIUM_BIN.
func chromiumPath() string {
	if p := os.Getenv("CHROMIUM_BIN"); p != "" {
		return p
	}
	return "/usr/bin/chromium"
}

// artifactsDir is where the test writes what a person looks at: $E2E_ARTIFACTS/<test>, else
// bin/e2e-artifacts/<test> in the repository.
func artifactsDir(t *testing.T) string {
	t.Helper()
	base := os.Getenv("E2E_ARTIFACTS")
	if base == "" {
		root, err := framework.RepoRoot()
		check(t, err)
		base = filepath.Join(root, "bin", "e2e-artifacts")
	}
	dir := filepath.Join(base, t.Name())
	check(t, os.MkdirAll(dir, 0o755))
	t.Logf("screenshots in %s", dir)
	return dir
}

// browser starts one headless Debian chromium that reaches nothing but 127.0.0.1: no sync,
// component updates, background requests or QUIC, in a fresh profile.
func browser(t *testing.T) context.Context {
	t.Helper()
	_, err := os.Stat(chromiumPath())
	testenv.Require(t, err, "chromium", "make deps (hack/deps/00-apt.sh installs Debian's chromium)")
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chromiumPath()),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-features", "Translate,MediaRouter,OptimizationHints"),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1280, 900),
	)
	ctx, cancel := chromedp.NewContext(alloc, chromedp.WithLogf(t.Logf))
	t.Cleanup(func() { cancel(); cancelAlloc() })
	check(t, chromedp.Do(ctx, chromedp.Navigate("about:blank"))) // starts the browser
	_, err = chromedp.Call(ctx, network.Enable, network.EnableParams{})
	check(t, err)
	return ctx
}

// page is what the browser shows of a runbook link: the document's language and whether it is a
// rendered runbook (a heading in a <main> under kubecause's navigation).
type page struct {
	Lang     string `json:"lang"`
	Rendered bool   `json:"rendered"`
}

var templateRE = regexp.MustCompile(`\{\{\s*\$labels\.(\w+)\s*(\|\s*toLower\s*)?\}\}`)

// alertLinks lists every runbook link of every alert of the mixin built with kubecauseExternalURL
// and language: a link templated from a label is expanded to each value that label takes (the
// causes of the alert's categories, or the values its expression's matchers allow), as
// rules/mixin_test.go does for the repository's pages.
func alertLinks(t *testing.T, external, lang string) []string {
	var alerts []struct{ Alert, Expr, URL string }
	mixintest.Jsonnet(t, fmt.Sprintf(`local m = (import "mixin.libsonnet") + { _config+:: { kubecauseExternalURL: %q, language: %q } };
[{alert: r.alert, expr: r.expr, url: r.annotations.runbook_url} for g in m.prometheusAlerts.groups for r in g.rules if std.objectHas(r, "alert")]`,
		external, lang), &alerts)
	cats := mixintest.CauseCategories(t)
	var links []string
	for _, a := range alerts {
		// A cause alert's link is the cause's own runbook_url (kubecause_cause_info, checked from
		// causeLinks), else its page: the template's fallback.
		if _, rest, ok := strings.Cut(a.URL, "{{ else }}"); ok {
			fallback, _, _ := strings.Cut(rest, "{{ end }}")
			links = append(links, fallback)
			continue
		}
		m := templateRE.FindStringSubmatch(a.URL)
		if m == nil {
			links = append(links, a.URL)
			continue
		}
		var vals []string
		if m[1] == "cause" {
			for _, c := range cats {
				if c.Alert == a.Alert {
					vals = append(vals, c.Causes...)
				}
			}
		} else {
			vals = mixintest.LabelValues(t, a.Expr, m[1])
		}
		if len(vals) == 0 {
			t.Errorf("%s: cannot enumerate the values of %s", a.Alert, a.URL)
		}
		for _, v := range vals {
			if m[2] != "" {
				v = strings.ToLower(v)
			}
			links = append(links, templateRE.ReplaceAllString(a.URL, v))
		}
	}
	return links
}

// dashboardLinks lists every link URL in the mixin's dashboards built with kubecauseExternalURL
// and language, but the ones Grafana fills from a query (the causes' runbook_url, checked from
// kubecause_cause_info).
func dashboardLinks(t *testing.T, external, lang string) []string {
	var dashboards map[string]any
	mixintest.Jsonnet(t, fmt.Sprintf(`((import "mixin.libsonnet") + { _config+:: { kubecauseExternalURL: %q, language: %q } }).grafanaDashboards`,
		external, lang), &dashboards)
	var links []string
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if s, ok := x.(string); ok && k == "url" && !strings.Contains(s, "${") {
					links = append(links, s)
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(dashboards)
	return links
}

// causeLinks are the runbook_url labels of kubecause_cause_info as kubecause serves them.
func causeLinks(t *testing.T, metricsURL string) []string {
	resp, err := http.Get(metricsURL)
	check(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	check(t, err)
	var links []string
	for _, m := range regexp.MustCompile(`(?m)^kubecause_cause_info\{.*runbook_url="([^"]*)"`).FindAllStringSubmatch(string(body), -1) {
		links = append(links, m[1])
	}
	return links
}

// withLang puts ?lang= into a link that has none (before its anchor).
func withLang(link, lang string) string {
	doc, anchor, _ := strings.Cut(link, "#")
	if strings.Contains(doc, "?") {
		return link
	}
	return doc + "?lang=" + lang + "#" + anchor
}

// checkLinks opens each distinct document of links in the browser once and checks that it is a
// rendered runbook in lang and that every anchor the links name is a heading of it.
func checkLinks(t *testing.T, ctx context.Context, base, lang string, links []string) (nlinks, ndocs int) {
	docs := map[string][]string{}
	for _, l := range links {
		if !strings.HasPrefix(l, base+"/runbooks/") {
			t.Errorf("runbook link %q is not under %s/runbooks/", l, base)
			continue
		}
		doc, anchor, _ := strings.Cut(l, "#")
		docs[doc] = append(docs[doc], anchor)
	}
	keys := make([]string, 0, len(docs))
	for k := range docs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, doc := range keys {
		anchors := docs[doc]
		if err := chromedp.Do(ctx, chromedp.Navigate(doc)); err != nil {
			t.Errorf("%s: %v", doc, err)
			continue
		}
		p, err := chromedp.Run(ctx, chromedp.Evaluate[page](`({lang: document.documentElement.lang, rendered: !!document.querySelector("nav + main h1")})`))
		check(t, err)
		missing, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](fmt.Sprintf(
			`%s.filter(a => a !== "" && !/^H[1-6]$/.test((document.getElementById(a) || {}).tagName))`, must[[]byte](t)(json.Marshal(anchors)))))
		check(t, err)
		if !p.Rendered || p.Lang != lang {
			t.Errorf("%s: rendered %v, language %q; want a rendered runbook in %s", doc, p.Rendered, p.Lang, lang)
		}
		for _, a := range missing {
			t.Errorf("%s#%s: no heading with that id", doc, a)
		}
	}
	return len(links), len(docs)
}

// TestBrowserRunbooksAndProblems: with --web.external-url, every runbook link of every alert and
// dashboard of the mixin (built with kubecauseExternalURL) and every cause kubecause exports
// opens, in a real browser, a rendered runbook with the linked section, in English and Chinese.
// /problems shows the objects of real Events with their causes, filters them without
// JavaScript, links their runbook sections, and its JSON holds the same rows.
func TestBrowserRunbooksAndProblems(t *testing.T) {
	ctx := browser(t)
	out := artifactsDir(t)
	cluster, dir, bins := startCluster(t)
	addr, err := framework.FreeAddr()
	check(t, err)
	// The external URL has a path, as behind a proxy that forwards /kubecause/… unchanged.
	base := "http://" + addr + "/kubecause"
	p := framework.NewProcess("kubecause", dir, bins.Kubecause, "--web.listen-address="+addr,
		"--kubeconfig="+cluster.KubeconfigPath, "--no-endpoint-checks.enabled", "--web.external-url="+base)
	check(t, p.Start())
	t.Cleanup(func() {
		_ = p.Stop()
		if t.Failed() {
			t.Log(p.Log(4000))
		}
	})
	check(t, framework.WaitHTTP("http://"+addr+"/readyz", 60*time.Second, p))

	// The landing page links both pages, under the external URL's path.
	check(t, chromedp.Do(ctx, chromedp.Navigate("http://"+addr+"/")))
	hrefs, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("a")].map(a => a.href)`))
	check(t, err)
	for _, want := range []string{base + "/problems", base + "/runbooks/"} {
		if !slices.Contains(hrefs, want) {
			t.Errorf("the landing page does not link %s: %q", want, hrefs)
		}
	}

	start := time.Now()
	nlinks, ndocs := 0, 0
	count := func(l, d int) { nlinks, ndocs = nlinks+l, ndocs+d }
	for _, lang := range []string{"en", "zh"} {
		count(checkLinks(t, ctx, base, lang, alertLinks(t, base, lang)))
		count(checkLinks(t, ctx, base, lang, dashboardLinks(t, base, lang)))
		var links []string
		for _, l := range causeLinks(t, "http://"+addr+"/metrics") {
			links = append(links, withLang(l, lang))
		}
		if len(links) < 50 {
			t.Fatalf("%d runbook links in kubecause_cause_info", len(links))
		}
		count(checkLinks(t, ctx, base, lang, links))
	}
	t.Logf("%d runbook links (alerts, dashboards, causes; en and zh): %d documents opened in %v", nlinks, ndocs, time.Since(start).Round(time.Millisecond))

	// Without ?lang, Accept-Language picks the language, and the page links the other one.
	_, err = chromedp.Call(ctx, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: network.Headers{"Accept-Language": "zh-CN,zh;q=0.9"}})
	check(t, err)
	check(t, chromedp.Do(ctx, chromedp.Navigate(base+"/runbooks/kubecausepodvolumefailing#configmap_not_found")))
	lang, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.documentElement.lang`))
	check(t, err)
	switchTo, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("nav a[hreflang]").href`))
	check(t, err)
	if lang != "zh" || switchTo != base+"/runbooks/kubecausepodvolumefailing?lang=en" {
		t.Errorf("Accept-Language zh-CN: page in %q, switch link %q", lang, switchTo)
	}
	screenshot(t, ctx, filepath.Join(out, "runbook-zh.png"))
	_, err = chromedp.Call(ctx, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: network.Headers{}})
	check(t, err)
	check(t, chromedp.Do(ctx, chromedp.Navigate(base+"/runbooks/kubecausepodvolumefailing?lang=en#configmap_not_found")))
	screenshot(t, ctx, filepath.Join(out, "runbook-en.png"))

	problems(t, ctx, cluster, base, out)
}

func screenshot(t *testing.T, ctx context.Context, path string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	check(t, err)
	check(t, os.WriteFile(path, png, 0o644))
}

// problems writes Events with real messages (exporter/causes/testdata/real-node.yaml) about two
// pods and a node and checks /problems in the browser.
func problems(t *testing.T, ctx context.Context, cluster *framework.Cluster, base, out string) {
	root, err := framework.RepoRoot()
	check(t, err)
	real, err := corpus.LoadRealNode(filepath.Join(root, "exporter", "causes", "testdata", "real-node.yaml"))
	check(t, err)
	message := func(cause, kind string) corpus.RealNodeMessage {
		for _, m := range real.Messages {
			if m.Cause == cause && m.Kind == kind && m.Type == corev1.EventTypeWarning {
				return m
			}
		}
		t.Fatalf("no real %s message of cause %s", kind, cause)
		return corpus.RealNodeMessage{}
	}
	type want struct {
		ns, kind, name, node, cause string
		count                       int64
	}
	wants := []want{
		{"shop", "Pod", "cart-7d9f8", "kubecause-node", "configmap_not_found", 3},
		{"batch", "Pod", "report-x2k4q", "", "scheduling_insufficient_resources", 1},
		{"", "Node", "kubecause-node", "kubecause-node", "image_fs_not_ready", 1},
	}
	bg := context.Background()
	check(t, cluster.EnsureNamespaces(bg, "shop", "batch"))
	for i, w := range wants {
		m := message(w.cause, w.kind)
		obj := &metav1.ObjectMeta{Namespace: w.ns, Name: w.name, UID: types.UID(fmt.Sprintf("00000000-0000-4000-8000-00000000000%d", i))}
		// The node is the kubelet's (source.host); the scheduler and the node controller name none.
		rec := &framework.Recorder{Client: cluster.Client, Component: m.Component}
		if m.Component == "kubelet" {
			rec.Host = "kubecause-node"
		}
		ev, err := rec.Emit(bg, framework.Ref(obj, w.kind, "v1"), m.Type, m.Reason, m.Message)
		check(t, err)
		if w.count > 1 {
			check(t, ev.Repeat(bg, int32(w.count-1)))
		}
	}
	jsonURL := base + "/problems?format=json"
	var list pages.ProblemList
	check(t, framework.Poll(bg, 30*time.Second, func() (bool, error) {
		resp, err := http.Get(jsonURL)
		if err != nil {
			return false, nil
		}
		defer resp.Body.Close()
		list = pages.ProblemList{}
		if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
			return false, err
		}
		total := int64(0)
		for _, p := range list.Problems {
			total += p.Count
		}
		return len(list.Problems) == len(wants) && total == 5, nil
	}))
	for _, w := range wants {
		i := slices.IndexFunc(list.Problems, func(p pages.Problem) bool {
			return p.Namespace == w.ns && p.Kind == w.kind && p.Name == w.name && p.Cause == w.cause && p.Count == w.count && p.Node == w.node
		})
		if i < 0 {
			t.Errorf("JSON lacks %+v: %+v", w, list.Problems)
		} else if !strings.HasPrefix(list.Problems[i].RunbookURL, base+"/runbooks/") {
			t.Errorf("%s: runbook_url %q is not kubecause's", w.name, list.Problems[i].RunbookURL)
		}
	}

	// The HTML rows as the browser shows them, compared with the JSON.
	type row struct {
		NS      string `json:"ns"`
		Object  string `json:"object"`
		Node    string `json:"node"`
		Reason  string `json:"reason"`
		Cause   string `json:"cause"`
		Count   string `json:"count"`
		Runbook string `json:"runbook"`
	}
	rows := func() []row {
		rs, err := chromedp.Run(ctx, chromedp.Evaluate[[]row](`[...document.querySelectorAll("#problems tbody tr")].filter(r => r.cells.length == 9).map(r => ({
			ns: r.cells[0].innerText, object: r.cells[1].innerText, node: r.cells[2].innerText, reason: r.cells[3].innerText,
			cause: r.cells[4].innerText, count: r.cells[6].innerText, runbook: (r.cells[8].querySelector("a") || {}).href || ""}))`))
		check(t, err)
		return rs
	}
	check(t, chromedp.Do(ctx, chromedp.Navigate(base+"/problems")))
	got := rows()
	if len(got) != len(list.Problems) {
		t.Errorf("the page shows %d rows, the JSON %d", len(got), len(list.Problems))
	}
	for _, p := range list.Problems {
		r := row{p.Namespace, p.Kind + "/" + p.Name, p.Node, p.Reason, p.Cause, fmt.Sprint(p.Count), p.RunbookURL}
		if !slices.Contains(got, r) {
			t.Errorf("the page lacks the JSON's row %+v; it shows %+v", r, got)
		}
	}
	screenshot(t, ctx, filepath.Join(out, "problems.png"))

	// Filters are a plain GET form: choose a namespace and submit.
	waitURL := func(part string) {
		t.Helper()
		check(t, framework.Poll(bg, 10*time.Second, func() (bool, error) {
			loc, err := chromedp.Run(ctx, chromedp.Location())
			return err == nil && strings.Contains(loc, part), nil
		}))
		check(t, chromedp.Do(ctx, chromedp.WaitReady(chromedp.CSS("#problems tbody"))))
	}
	check(t, chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS("#namespace"), "shop"), chromedp.Click(chromedp.CSS("#filter"))))
	waitURL("namespace=shop")
	if got := rows(); len(got) != 1 || got[0].Object != "Pod/cart-7d9f8" {
		t.Errorf("namespace shop: %+v", got)
	}
	check(t, chromedp.Do(ctx, chromedp.Navigate(base+"/problems"), chromedp.SendKeys(chromedp.CSS("#q"), "insufficient"),
		chromedp.Click(chromedp.CSS("#filter"))))
	waitURL("q=insufficient")
	if got := rows(); len(got) != 1 || got[0].Cause != "scheduling_insufficient_resources" {
		t.Errorf("text insufficient: %+v", got)
	}
	screenshot(t, ctx, filepath.Join(out, "problems-filtered.png"))

	// A row's runbook link opens the section of its cause.
	var target string
	check(t, chromedp.Do(ctx, chromedp.Navigate(base+"/problems?cause=configmap_not_found"),
		chromedp.Click(chromedp.CSS(`#problems tbody a`))))
	waitRunbook := framework.Poll(bg, 10*time.Second, func() (bool, error) {
		var err error
		target, err = chromedp.Run(ctx, chromedp.Evaluate[string](`(document.querySelector(":target") || {}).id || ""`))
		return err == nil && target == "configmap_not_found", nil
	})
	if waitRunbook != nil {
		t.Errorf("the runbook link of configmap_not_found leads to section %q: %v", target, waitRunbook)
	}
}
