// Package pages serves kubecause's own pages: the embedded runbooks (/runbooks/) and the live
// problems of the per-object view (/problems), as plain HTML without external resources and,
// for the problems, as JSON.
package pages

import (
	"bytes"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"regexp"
	"strings"
	"sync"
	"unicode"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
	"golang.org/x/text/language"
)

// RepositoryDocs is where links from a runbook to documents that are not embedded point.
const RepositoryDocs = "https://github.com/kubecause/kubecause/blob/main/docs/"

// Languages of the runbooks; the first is the default.
var languages = []language.Tag{language.English, language.Chinese}

var langMatcher = language.NewMatcher(languages)

// pageRE is a runbook page name as rules, causes and dashboards use it (alert name in lower case).
var pageRE = regexp.MustCompile(`^[a-z0-9]+$`)

// Runbooks renders the runbooks of fsys (runbooks/*.md, runbooks/zh/*.md).
type Runbooks struct {
	fsys fs.FS
	md   goldmark.Markdown
	mu   sync.Mutex
	memo map[string][]byte // rendered body by "lang/page"; the pages are fixed at build time
}

// NewRunbooks returns a renderer of the runbooks in fsys.
func NewRunbooks(fsys fs.FS) *Runbooks {
	return &Runbooks{
		fsys: fsys,
		// No html.WithUnsafe: raw HTML in the Markdown is omitted and dangerous link schemes dropped.
		md: goldmark.New(
			goldmark.WithExtensions(extension.GFM),
			goldmark.WithParserOptions(parser.WithAutoHeadingID(),
				parser.WithASTTransformers(util.Prioritized(linkRewriter{}, 100))),
		),
		memo: map[string][]byte{},
	}
}

// Lang picks the language of a request: ?lang=en|zh, else Accept-Language, else English.
func Lang(r *http.Request) string {
	switch l := r.URL.Query().Get("lang"); l {
	case "en", "zh":
		return l
	}
	tags, _, err := language.ParseAcceptLanguage(r.Header.Get("Accept-Language"))
	if err != nil || len(tags) == 0 {
		return "en"
	}
	_, i, conf := langMatcher.Match(tags...)
	if conf == language.No {
		return "en"
	}
	if base, _ := languages[i].Base(); base.String() == "zh" {
		return "zh"
	}
	return "en"
}

// file is the embedded path of a page in a language ("README" is the index).
func file(lang, page string) string {
	if lang == "zh" {
		return "runbooks/zh/" + page + ".md"
	}
	return "runbooks/" + page + ".md"
}

// render returns the HTML body of a page, the language it is in (English when the Chinese page
// is missing) and its title; ok is false when the page does not exist.
func (rb *Runbooks) render(lang, page string) (body []byte, got, title string, ok bool) {
	src, err := fs.ReadFile(rb.fsys, file(lang, page))
	if err != nil && lang != "en" {
		lang = "en"
		src, err = fs.ReadFile(rb.fsys, file(lang, page))
	}
	if err != nil {
		return nil, "", "", false
	}
	title = page
	if first, _, _ := strings.Cut(string(src), "\n"); strings.HasPrefix(first, "# ") {
		title = strings.TrimSpace(first[2:])
	}
	key := lang + "/" + page
	rb.mu.Lock()
	defer rb.mu.Unlock()
	if b, ok := rb.memo[key]; ok {
		return b, lang, title, true
	}
	var buf bytes.Buffer
	ctx := parser.NewContext(parser.WithIDs(newSlugs()))
	ctx.Set(fromKey, path.Dir(file(lang, page)))
	if err := rb.md.Convert(src, &buf, parser.WithContext(ctx)); err != nil {
		return nil, "", "", false
	}
	rb.memo[key] = buf.Bytes()
	return buf.Bytes(), lang, title, true
}

// ServeHTTP serves the index (the runbook README) at "" and a page at "<page>" or "<page>.md";
// the handler is mounted under <prefix>/runbooks/ with the prefix stripped.
func (rb *Runbooks) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/"), ".md")
	switch {
	case name == "" || name == "README":
		name = "README"
	case name == "zh" || name == "zh/README" || strings.HasPrefix(name, "zh/") && pageRE.MatchString(name[3:]):
		// The repository's layout, docs/runbooks/zh/<page>.md: the page in Chinese.
		to := strings.TrimPrefix(strings.TrimPrefix(name, "zh"), "/")
		if to == "README" {
			to = ""
		}
		// Relative: the handler does not know the prefix it is mounted under.
		w.Header().Set("Location", "../"+to+"?lang=zh")
		w.WriteHeader(http.StatusMovedPermanently)
		return
	case !pageRE.MatchString(name):
		http.NotFound(w, r)
		return
	}
	lang := Lang(r)
	body, got, title, ok := rb.render(lang, name)
	if !ok {
		http.NotFound(w, r)
		return
	}
	self := name
	if name == "README" {
		self = "./"
	}
	other := map[string]string{"en": "zh", "zh": "en"}[got]
	header(w, "text/html; charset=utf-8")
	w.Header().Set("Vary", "Accept-Language")
	_ = pageTmpl.Execute(w, pageData{
		Lang: got, Title: title, Body: template.HTML(body), //nolint:gosec // goldmark output without raw HTML
		Index: "./?lang=" + got, Problems: "../problems",
		Switch: self + "?lang=" + other, SwitchText: map[string]string{"en": "English", "zh": "中文"}[other],
	})
}

// header sets the headers of every page: no external resource may load, nothing is sniffed.
func header(w http.ResponseWriter, contentType string) {
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("Referrer-Policy", "no-referrer")
}

type pageData struct {
	Lang, Title        string
	Body               template.HTML
	Index, Problems    string
	Switch, SwitchText string
}

const style = `body{font-family:system-ui,sans-serif;max-width:62rem;margin:1rem auto;padding:0 1rem;line-height:1.45;color:#1d1d1f}
nav{border-bottom:1px solid #ccc;padding-bottom:.4rem;margin-bottom:1rem}nav a{margin-right:1rem}
pre{background:#f4f4f4;padding:.6rem;overflow-x:auto}code{background:#f4f4f4;padding:0 .2rem}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2rem .5rem;text-align:left;vertical-align:top}
:target{background:#fff3b0}body.wide{max-width:80rem}form input,form select{margin-right:.6rem}`

var pageTmpl = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="{{.Lang}}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>{{.Title}} · kubecause</title><style>` + style + `</style></head>
<body><nav><a href="{{.Index}}">Runbooks</a><a href="{{.Problems}}">Live problems</a><a href="{{.Switch}}" hreflang="{{if eq .Lang "en"}}zh{{else}}en{{end}}">{{.SwitchText}}</a></nav>
<main>{{.Body}}</main></body></html>
`))

var fromKey = parser.NewContextKey()

// linkRewriter makes relative links between runbooks point at the served pages, in the language
// of the page they lead to ("kubecausefoo.md#x" → "kubecausefoo?lang=zh#x"), and links to other
// documents of the repository at the repository.
type linkRewriter struct{}

func (linkRewriter) Transform(doc *ast.Document, _ text.Reader, pc parser.Context) {
	dir, _ := pc.Get(fromKey).(string)
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if l, ok := n.(*ast.Link); ok && entering {
			l.Destination = []byte(rewriteLink(dir, string(l.Destination)))
		}
		return ast.WalkContinue, nil
	})
}

func rewriteLink(dir, dest string) string {
	if dest == "" || strings.HasPrefix(dest, "#") || strings.Contains(dest, ":") || strings.HasPrefix(dest, "/") {
		return dest // same page, absolute, or with a scheme
	}
	target, anchor, _ := strings.Cut(dest, "#")
	if anchor != "" {
		anchor = "#" + anchor
	}
	p := path.Join(dir, target) // relative to the page's directory in the repository
	lang := "en"
	rest, ok := strings.CutPrefix(p, "runbooks/")
	if ok && strings.HasPrefix(rest, "zh/") {
		lang, rest = "zh", rest[3:]
	}
	page := strings.TrimSuffix(rest, ".md")
	if !ok || !strings.HasSuffix(rest, ".md") || (page != "README" && !pageRE.MatchString(page)) {
		return RepositoryDocs + strings.TrimPrefix(p, "./") + anchor
	}
	// Every page is served at <prefix>/runbooks/<page>, the index at <prefix>/runbooks/.
	if page == "README" {
		page = "./"
	}
	return page + "?lang=" + lang + anchor
}

// slugs are GitHub's heading anchors: lower case; letters, digits, marks, '-' and '_' kept
// (any script, so Chinese headings keep their characters); spaces to '-'; other characters
// dropped; a repeated anchor gets "-1", "-2", ….
type slugs struct{ seen map[string]int }

func newSlugs() *slugs { return &slugs{seen: map[string]int{}} }

// Slug is the GitHub anchor of a heading's text.
func Slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.M, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func (s *slugs) Generate(value []byte, _ ast.NodeKind) []byte {
	id := Slug(string(value))
	if n, ok := s.seen[id]; ok {
		s.seen[id] = n + 1
		id = fmt.Sprintf("%s-%d", id, n+1)
	}
	s.seen[id] = 0
	return []byte(id)
}

func (s *slugs) Put(value []byte) { s.seen[string(value)] = 0 }
