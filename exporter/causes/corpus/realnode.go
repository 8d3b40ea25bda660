package corpus

import (
	"bytes"
	"fmt"
	"os"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/kubecause/kubecause/exporter/causes"
)

// RealNodeFile holds the messages real components wrote on the e2e real node (kubelet,
// containerd, runc, the scheduler and the controllers), byte for byte, each with the cause a
// person assigned after reading it. `make real-messages` merges new ones in.
const RealNodeFile = DataDir + "/real-node.yaml"

// RealNodeMessages is that file.
type RealNodeMessages struct {
	// Recordings are the node's versions (kubelet, containerRuntime, runc, kernel) in each
	// recording, by the recording's name (RecordingName): the node runs other versions over
	// time, and a message is true only of the versions that wrote it.
	Recordings map[string]map[string]string `json:"recordings"`
	Messages   []RealNodeMessage            `json:"messages"`
}

// RealNodeMessage is one distinct message and the cause assigned to it.
type RealNodeMessage struct {
	Reason    string `json:"reason"`
	Type      string `json:"type"`
	Component string `json:"component"`
	Kind      string `json:"kind"`
	Message   string `json:"message"`
	Cause     string `json:"cause"`
	// SeenWith names the recordings (keys of Recordings) whose node wrote this message.
	SeenWith []string `json:"seenWith"`
}

// RecordingName names a recording by the node versions that shape the messages: the kubelet
// and the container runtime ("kubelet v1.35.4, containerd 1.6.20"); a recording without a node,
// of messages only kube-controller-manager wrote (the attach-detach controller's, e2e
// TestMultiAttach), by that ("kube-controller-manager v1.37.2").
func RecordingName(versions map[string]string) string {
	if versions["kubelet"] == "" && versions["containerRuntime"] == "" && versions["kubeControllerManager"] != "" {
		return "kube-controller-manager " + versions["kubeControllerManager"]
	}
	var parts []string
	if v := versions["kubelet"]; v != "" {
		parts = append(parts, "kubelet "+v)
	}
	if v := versions["containerRuntime"]; v != "" {
		// "containerd://2.4.2" as the Node reports it.
		if name, ver, ok := strings.Cut(v, "://"); ok {
			v = name + " " + ver
		}
		parts = append(parts, v)
	}
	if len(parts) == 0 {
		return "unknown versions"
	}
	return strings.Join(parts, ", ")
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
	for _, m := range f.Messages {
		for _, r := range m.SeenWith {
			if _, ok := f.Recordings[r]; !ok {
				return f, fmt.Errorf("%s: %s %q seen with %q, which is not among the recordings", path, m.Reason, m.Message, r)
			}
		}
	}
	return f, nil
}

// RealNodeMarkdown is the docs/causes.md section listing the real node's messages with the
// assigned cause and the table's.
func RealNodeMarkdown(t *causes.Table, f RealNodeMessages) []byte {
	var b bytes.Buffer
	b.WriteString("\n## Messages from the real node\n\n")
	names := make([]string, 0, len(f.Recordings))
	for name := range f.Recordings {
		names = append(names, name)
	}
	sort.Strings(names)
	fmt.Fprintf(&b, "Every distinct message the real components wrote in the e2e real-node test, and kube-controller-manager\n"+
		"in TestMultiAttach without a node (docs/e2e.md), byte for byte, with the cause assigned to it and\n"+
		"the table's cause (`%s`; `make real-messages` records new ones), and the\n"+
		"versions that wrote it. Recordings:\n\n", RealNodeFile)
	for _, name := range names {
		var vs []string
		for k, v := range f.Recordings[name] {
			vs = append(vs, k+" "+v)
		}
		sort.Strings(vs)
		fmt.Fprintf(&b, "- %s: %s\n", name, codeList(vs))
	}
	b.WriteString("\n| type | reason | component | kind | message | cause | table | seen with |\n|---|---|---|---|---|---|---|---|\n")
	for _, m := range f.Messages {
		got := t.Classify(m.Reason, m.Message).Cause
		mark := code(got)
		if got != m.Cause {
			mark += " ✗"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", m.Type, code(m.Reason), m.Component, m.Kind, code(m.Message), code(m.Cause), mark, strings.Join(m.SeenWith, "; "))
	}
	return b.Bytes()
}
