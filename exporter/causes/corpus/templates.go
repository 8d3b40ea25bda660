package corpus

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"

	"sigs.k8s.io/yaml"

	"github.com/kubecause/kubecause/exporter/causes"
)

// The template inventory: the Event message templates the components kubecause serves write, read
// from their source at a pinned commit (testdata/templates/<component>.yaml), each instantiated with
// realistic values and the cause the table must give it. Where the corpus samples what people
// pasted, the inventory enumerates what the components can write.

// Inventory is one component's file.
type Inventory struct {
	Component  string `json:"component"`       // e.g. "kubelet", "containerd CRI plugin"
	Repository string `json:"repository"`      // owner/name on GitHub
	Version    string `json:"version"`         // the release read, e.g. "v1.37.2"
	Commit     string `json:"commit"`          // the commit read (40 hex digits)
	Notes      string `json:"notes,omitempty"` // how the templates reach Events, what was left out and why
	Templates  []Tmpl `json:"templates"`       // every template that reaches an Event
	file       string `json:"-"`               // the file it was loaded from
}

// Tmpl is one format string as the component's source writes it.
type Tmpl struct {
	// Source is "path/in/repo.go:LINE" at Commit.
	Source string `json:"source"`
	// Reasons are the Event reasons it is written under.
	Reasons []string `json:"reasons"`
	// Template is the format string (fmt verbs: %s %q %v %d), or the literal message.
	Template string `json:"template"`
	// Versions, when the wording is not that of Version: e.g. "1.30-1.36".
	Versions string `json:"versions,omitempty"`
	// Cases instantiate the template: Args fill its verbs in order.
	Cases []Case `json:"cases"`
}

// Case is one instantiation and the cause it must get.
type Case struct {
	Args  []any  `json:"args,omitempty"`
	Cause string `json:"cause"`
	// Why the message cannot tell more, required when Cause is unknown or a generic cause.
	Why string `json:"why,omitempty"`
	// Target, when given, is the target the table must read from the message.
	Target string `json:"target,omitempty"`
}

// TemplatesDir holds the inventory, relative to DataDir.
const TemplatesDir = "templates"

var (
	sourceRE = regexp.MustCompile(`^[A-Za-z0-9_./+-]+\.[a-z]+:[0-9]+$`)
	commitRE = regexp.MustCompile(`^[0-9a-f]{40}$`)
	badVerb  = regexp.MustCompile(`%!`)
)

// LoadInventory reads every testdata/templates/*.yaml under dataDir and checks its form.
func LoadInventory(dataDir string) ([]Inventory, error) {
	files, err := filepath.Glob(filepath.Join(dataDir, TemplatesDir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	var out []Inventory
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var inv Inventory
		if err := yaml.UnmarshalStrict(b, &inv); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Base(f), err)
		}
		inv.file = filepath.Base(f)
		if err := inv.check(); err != nil {
			return nil, fmt.Errorf("%s: %w", inv.file, err)
		}
		out = append(out, inv)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Component < out[j].Component })
	return out, nil
}

func (inv *Inventory) check() error {
	var errs []error
	if inv.Component == "" || inv.Repository == "" || inv.Version == "" {
		errs = append(errs, errors.New("component, repository and version are required"))
	}
	if !commitRE.MatchString(inv.Commit) {
		errs = append(errs, fmt.Errorf("commit %q is not 40 hex digits", inv.Commit))
	}
	if len(inv.Templates) == 0 {
		errs = append(errs, errors.New("no templates"))
	}
	for i, t := range inv.Templates {
		if !sourceRE.MatchString(t.Source) {
			errs = append(errs, fmt.Errorf("template %d: source %q is not path:line", i, t.Source))
		}
		if len(t.Reasons) == 0 || t.Template == "" || len(t.Cases) == 0 {
			errs = append(errs, fmt.Errorf("template %d (%s): reasons, template and cases are required", i, t.Source))
		}
		for j, c := range t.Cases {
			if c.Cause == "" {
				errs = append(errs, fmt.Errorf("template %d (%s) case %d: no cause", i, t.Source, j))
			}
			if msg := t.Message(c); badVerb.MatchString(msg) && !badVerb.MatchString(t.Template) {
				errs = append(errs, fmt.Errorf("template %d (%s) case %d: args do not fit the verbs: %s", i, t.Source, j, msg))
			}
		}
	}
	return errors.Join(errs...)
}

// Message is the case's message: the template with its args.
func (t Tmpl) Message(c Case) string {
	if len(c.Args) == 0 {
		return t.Template
	}
	args := make([]any, len(c.Args))
	for i, a := range c.Args {
		if f, ok := a.(float64); ok && f == float64(int64(f)) {
			a = int64(f) // YAML numbers decode as float64; %d wants an integer
		}
		args[i] = a
	}
	return fmt.Sprintf(t.Template, args...)
}

// Outcome is the table's answer on one case of one template, under one reason.
type Outcome struct {
	Inventory, Source, Reason, Message, Want, Got, Why string
	// WantTarget is the case's target ("" when it names none), GotTarget the table's.
	WantTarget, GotTarget string
}

// Wrong is true when the table's cause is not the inventory's, or its target not the one the case
// names.
func (o Outcome) Wrong() bool {
	return o.Got != o.Want || o.WantTarget != "" && o.GotTarget != o.WantTarget
}

// Check classifies every case of every template under each of its reasons.
func Check(t *causes.Table, invs []Inventory) []Outcome {
	var out []Outcome
	for _, inv := range invs {
		for _, tm := range inv.Templates {
			for _, c := range tm.Cases {
				msg := tm.Message(c)
				for _, r := range tm.Reasons {
					res := t.Classify(r, msg)
					out = append(out, Outcome{inv.Component, tm.Source, r, msg, c.Cause, res.Cause, c.Why, c.Target, res.Target})
				}
			}
		}
	}
	return out
}

// InventoryMarkdown is docs/causes.md's per-component table: templates, cases, and of the cases
// those given a specific cause, those deliberately unknown or generic, and those the table gets wrong.
func InventoryMarkdown(t *causes.Table, invs []Inventory) []byte {
	var b bytes.Buffer
	b.WriteString("\n## Every template upstream writes\n\n")
	b.WriteString("The Event message templates of the components kubecause serves, read from their source at the\n")
	b.WriteString("commit named (`exporter/causes/testdata/templates/`), each instantiated with realistic values and\n")
	b.WriteString("classified under each reason it is written with (a *case*). *Specific*: the case's cause is a\n")
	b.WriteString("specific one and the table gives it; *unknown by design*: the message cannot tell (the file says\n")
	b.WriteString("why) and the table gives `unknown` or the reason's generic cause; *wrong*: the table's answer\n")
	b.WriteString("differs, or its target differs from the one a case names (a test keeps it at 0).\n\n")
	b.WriteString("| component | version | commit | templates | cases | specific | unknown by design | wrong |\n")
	b.WriteString("|---|---|---|--:|--:|--:|--:|--:|\n")
	outcomes := Check(t, invs)
	var sumT, sumC, sumS, sumU, sumW int
	for _, inv := range invs {
		var cases, spec, unk, wrong int
		for _, o := range outcomes {
			if o.Inventory != inv.Component {
				continue
			}
			cases++
			switch {
			case o.Wrong():
				wrong++
			case isGeneric(t, o.Want):
				unk++
			default:
				spec++
			}
		}
		fmt.Fprintf(&b, "| %s | %s | [`%.12s`](https://github.com/%s/tree/%s) | %d | %d | %d | %d | %d |\n",
			inv.Component, inv.Version, inv.Commit, inv.Repository, inv.Commit, len(inv.Templates), cases, spec, unk, wrong)
		sumT += len(inv.Templates)
		sumC, sumS, sumU, sumW = sumC+cases, sumS+spec, sumU+unk, sumW+wrong
	}
	fmt.Fprintf(&b, "| **all** | | | %d | %d | %d | %d | %d |\n", sumT, sumC, sumS, sumU, sumW)
	return b.Bytes()
}

func isGeneric(t *causes.Table, name string) bool {
	if name == "unknown" {
		return true
	}
	c, ok := t.Cause(name)
	return ok && c.Generic
}
