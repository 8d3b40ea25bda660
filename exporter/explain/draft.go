package explain

import (
	"fmt"
	"io"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/kubecause/kubecause/exporter/causes"
)

// DraftMax is how many templates --draft writes an entry for: the commonest.
const DraftMax = 10

// The placeholders causes.Template puts where messages vary, and what a draft pattern reads in
// their place: a quoted string may be empty, the others are one word at least.
var placeholderRE = regexp.MustCompile(`<(?:q|url|uid|hex|ip|path|name|n)>`)

// nonName is what a reason loses to become part of a cause name.
var nonName = regexp.MustCompile(`[^a-z0-9]+`)

// DraftPattern is a rule pattern for a template: anchored at the start (after white space), its words as they are,
// each placeholder any text, each space any run of white space (the template collapsed them),
// anchored at the end unless the template was cut.
func DraftPattern(template string) string {
	cut := len(template) >= causes.MaxTemplateBytes-8
	if cut { // the cut may have split a placeholder
		if i := strings.LastIndexByte(template, '<'); i >= 0 && !strings.Contains(template[i:], ">") {
			template = template[:i]
		}
	}
	var b strings.Builder
	// Leading space: a message may keep the space client-go's aggregator prefix left before it
	// ("(combined from similar events):  Admission webhook …"), which the template drops.
	b.WriteString(`^\s*`)
	last := 0
	literal := func(s string) {
		for i, w := range strings.Split(s, " ") {
			if i > 0 {
				b.WriteString(`\s+`)
			}
			b.WriteString(regexp.QuoteMeta(w))
		}
	}
	for _, m := range placeholderRE.FindAllStringIndex(template, -1) {
		literal(template[last:m[0]])
		if template[m[0]:m[1]] == "<q>" {
			b.WriteString(".*?")
		} else {
			b.WriteString(`\S+`)
		}
		last = m[1]
	}
	literal(template[last:])
	if !cut {
		b.WriteString(`\s*$`)
	}
	return b.String()
}

// draftCause is the placeholder name of the i-th draft: draft_<reason>_<i>.
func draftCause(reason string, i int) string {
	r := strings.Trim(nonName.ReplaceAllString(strings.ToLower(reason), "_"), "_")
	if r == "" || r[0] < 'a' || r[0] > 'z' {
		r = "event" + r
	}
	return fmt.Sprintf("draft_%s_%d", r, i)
}

// PrintDraft writes a cause file with one draft cause and rule for each of the commonest
// templates (DraftMax): the rule takes the template's reason and DraftPattern; the cause a
// placeholder name, category and runbook to replace. With the fallback cause it needs, the file
// loads as it is (--causes.file, --config.check).
func PrintDraft(w io.Writer, entries []causes.UnclassifiedEntry) error {
	type cause struct {
		Name     string `yaml:"name"`
		Category string `yaml:"category"`
		Meaning  string `yaml:"meaning"`
		Runbook  string `yaml:"runbook"`
	}
	type rule struct {
		ID      string   `yaml:"id"`
		Reasons []string `yaml:"reasons,omitempty"`
		Pattern string   `yaml:"pattern"`
		Cause   string   `yaml:"cause"`
	}
	var f struct {
		Version string  `yaml:"version"`
		Causes  []cause `yaml:"causes"`
		Rules   []rule  `yaml:"rules"`
	}
	f.Version = "0.0.1-draft"
	if len(entries) > DraftMax {
		entries = entries[:DraftMax]
	}
	for i, e := range entries {
		name := draftCause(e.Reason, i+1)
		f.Causes = append(f.Causes, cause{
			Name:     name,
			Category: "other",
			Meaning:  fmt.Sprintf("TODO: what %d occurrences of %q mean.", e.Count, e.Template),
			Runbook:  "https://wiki.example.com/kubecause#" + name,
		})
		r := rule{ID: "draft." + strings.TrimPrefix(name, "draft_"), Pattern: DraftPattern(e.Template), Cause: name}
		if e.Reason != "" {
			r.Reasons = []string{e.Reason}
		}
		f.Rules = append(f.Rules, r)
	}
	f.Causes = append(f.Causes, cause{Name: causes.Unknown, Category: "other", Meaning: "No rule matched the Event.", Runbook: "kubecauseunclassifiedevents#unknown"})
	if _, err := io.WriteString(w, draftHeader); err != nil {
		return err
	}
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(f); err != nil {
		return err
	}
	return enc.Close()
}

const draftHeader = `# Draft cause-file entries for the commonest messages no rule of the table classifies
# (kubecause explain --unclassified --draft). The file loads as it is; to use the entries:
#   - give each cause a name that says why (a label value queries use), its category (the alert
#     that shows it: volume, sandbox, image, probe, container, scheduling, eviction, storage,
#     workload; other has none), its meaning, podStart (platform: counts against the pod-start
#     SLO; workload), a target if it is about a shared thing, and your runbook's link;
#   - narrow each pattern to the words that tell the failure;
#   - copy the causes and rules into your copy of the cause table, the rules before the
#     catch-all rule of the same reason (first match wins), and check it:
#     kubecause --causes.file=<file> --config.check
# docs/causes.md, "Your own cause table", walks through it.
`
