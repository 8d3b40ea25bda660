package corpus

import (
	"bytes"
	"fmt"
	"os"
	"sort"

	"sigs.k8s.io/yaml"

	"github.com/kubecause/kubecause/exporter/causes"
)

// RealNodeFile holds the messages real components wrote on the e2e real node (kubelet,
// containerd, runc, the scheduler and the controllers), byte for byte, each with the cause a
// person assigned after reading it. `make real-messages` merges new ones in.
const RealNodeFile = DataDir + "/real-node.yaml"

// RealNodeMessages is that file.
type RealNodeMessages struct {
	Versions map[string]string `json:"versions"`
	Messages []RealNodeMessage `json:"messages"`
}

// RealNodeMessage is one distinct message and the cause assigned to it.
type RealNodeMessage struct {
	Reason    string `json:"reason"`
	Type      string `json:"type"`
	Component string `json:"component"`
	Kind      string `json:"kind"`
	Message   string `json:"message"`
	Cause     string `json:"cause"`
}

// LoadRealNode reads and strictly decodes a real-node message file.
func LoadRealNode(path string) (RealNodeMessages, error) {
	var f RealNodeMessages
	b, err := os.ReadFile(path)
	if err != nil {
		return f, err
	}
	if err := yaml.UnmarshalStrict(b, &f); err != nil {
		return f, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// RealNodeMarkdown is the docs/causes.md section listing the real node's messages with the
// assigned cause and the table's.
func RealNodeMarkdown(t *causes.Table, f RealNodeMessages) []byte {
	var b bytes.Buffer
	b.WriteString("\n## Messages from the real node\n\n")
	var vs []string
	for k, v := range f.Versions {
		vs = append(vs, k+" "+v)
	}
	sort.Strings(vs)
	fmt.Fprintf(&b, "Every distinct message the real components wrote in the e2e real-node test (docs/e2e.md), byte\n"+
		"for byte, with the cause assigned to it and the table's cause (`%s`; `make real-messages`\n"+
		"records new ones). Versions: %s.\n\n", RealNodeFile, codeList(vs))
	b.WriteString("| type | reason | component | kind | message | cause | table |\n|---|---|---|---|---|---|---|\n")
	for _, m := range f.Messages {
		got := t.Classify(m.Reason, m.Message).Cause
		mark := code(got)
		if got != m.Cause {
			mark += " ✗"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", m.Type, code(m.Reason), m.Component, m.Kind, code(m.Message), code(m.Cause), mark)
	}
	return b.Bytes()
}
