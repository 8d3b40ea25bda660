// Command chartreadme writes the table of values in the chart's README.md from its values.yaml: one row
// per key with its default and the text of its "# --" comment. A map whose key has such a comment is one
// row (its default shown as JSON); other maps are split into their keys. The table replaces what lies
// between the README's "<!-- values:begin -->" and "<!-- values:end -->" lines; the rest of the README is
// written by hand. The output depends only on the two files (keys keep the order of values.yaml).
//
//	go run ./deploy/internal/chartreadme deploy/helm/kubecause
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
)

const (
	begin = "<!-- values:begin -->"
	end   = "<!-- values:end -->"
)

type row struct{ key, def, desc string }

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: chartreadme <chart directory>")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "chartreadme:", err)
		os.Exit(1)
	}
}

func run(chart string) error {
	values, err := os.ReadFile(filepath.Join(chart, "values.yaml"))
	if err != nil {
		return err
	}
	readmePath := filepath.Join(chart, "README.md")
	readme, err := os.ReadFile(readmePath)
	if err != nil {
		return err
	}
	table, err := Table(values)
	if err != nil {
		return err
	}
	out, err := Splice(readme, table)
	if err != nil {
		return fmt.Errorf("%s: %w", readmePath, err)
	}
	return os.WriteFile(readmePath, out, 0o644)
}

// Table renders the Markdown table of the values in values.yaml.
func Table(values []byte) (string, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(values, &doc); err != nil {
		return "", err
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return "", fmt.Errorf("values.yaml is not a map")
	}
	var rows []row
	if err := walk("", doc.Content[0], &rows); err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("| key | default | description |\n|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", r.key, r.def, r.desc)
	}
	return b.String(), nil
}

// walk appends the rows of a mapping node's keys.
func walk(prefix string, m *yaml.Node, rows *[]row) error {
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		key := k.Value
		if prefix != "" {
			key = prefix + "." + k.Value
		}
		desc, documented := description(k.HeadComment)
		if v.Kind == yaml.MappingNode && len(v.Content) > 0 && !documented {
			if err := walk(key, v, rows); err != nil {
				return err
			}
			continue
		}
		def, err := defaultOf(v)
		if err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		*rows = append(*rows, row{key: key, def: def, desc: desc})
	}
	return nil
}

// description returns the text of the "# --" comment in a key's head comment and whether there is one.
// Comment lines before "# --" are notes for readers of values.yaml only.
func description(head string) (string, bool) {
	var words []string
	found := false
	for _, line := range strings.Split(head, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "# --") {
			found = true
			line = strings.TrimPrefix(line, "# --")
		} else if !found {
			continue
		} else {
			line = strings.TrimPrefix(line, "#")
		}
		if line = strings.TrimSpace(line); line != "" {
			words = append(words, line)
		}
	}
	return strings.ReplaceAll(strings.Join(words, " "), "|", `\|`), found
}

// defaultOf renders a value as compact JSON in backticks.
func defaultOf(v *yaml.Node) (string, error) {
	var x any
	if err := v.Decode(&x); err != nil {
		return "", err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(x); err != nil {
		return "", err
	}
	s := strings.TrimSpace(buf.String())
	return "`" + strings.ReplaceAll(s, "|", `\|`) + "`", nil
}

// Splice replaces the lines between the begin and end markers of readme with table.
func Splice(readme []byte, table string) ([]byte, error) {
	s := string(readme)
	i := strings.Index(s, begin+"\n")
	j := strings.Index(s, end)
	if i < 0 || j < i {
		return nil, fmt.Errorf("no %q … %q lines", begin, end)
	}
	return []byte(s[:i+len(begin)+1] + table + s[j:]), nil
}
