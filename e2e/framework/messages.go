package framework

import (
	"os"
	"regexp"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/kubecause/kubecause/exporter/causes/corpus"
)

// RealMessage is one distinct Event message a real component wrote on the real node, with the
// cause the built-in table gives it when recorded. Its Cause is assigned by a person reading the
// message ("TODO" until then); the classifier's golden test holds the table to it.
type RealMessage struct {
	corpus.RealNodeMessage
	Kubecause string
}

// InterestingNormal reports the Normal reasons worth keeping: the ones that say something is
// wrong (kubecause counts some of them by default).
func InterestingNormal(reason string) bool {
	switch reason {
	case "BackOff", "SandboxChanged", "FailedBinding", "NodeNotReady", "Killing", "NodeHasDiskPressure",
		"NodeHasInsufficientMemory", "NodeHasInsufficientPID", "Rebooted", "NodeNotSchedulable":
		return true
	}
	return false
}

// variable masks what differs between two runs of the same scenario: hex IDs, UUIDs, IP
// addresses, ports, the node's bridge name, pod name suffixes (also before the "_" of
// "<pod>_<namespace>") and numbers.
var variable = regexp.MustCompile(`[0-9a-f]{12,}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|\d+(\.\d+){3}(:\d+)?|kcbr[0-9a-f]{6}|-[a-z0-9]{5,10}(-[a-z0-9]{5})?(?:\b|_)|\d+`)

// nodeCgroupRoot is the node's own cgroup root in cgroup paths ("/kubecause-<id>/kubepods/…"):
// the same message as with the kubelet's default root ("/kubepods/…").
var nodeCgroupRoot = regexp.MustCompile(`/kubecause-[0-9a-f]{6}/kubepods/`)

func messageKey(m RealMessage) string {
	msg := nodeCgroupRoot.ReplaceAllString(m.Message, "/kubepods/")
	return strings.Join([]string{m.Type, m.Reason, m.Component, m.Kind, variable.ReplaceAllString(msg, "#")}, "\x00")
}

// DistinctMessages keeps the first message of each (type, reason, component, kind, masked text).
func DistinctMessages(in []RealMessage) []RealMessage {
	seen := map[string]bool{}
	var out []RealMessage
	for _, m := range in {
		k := messageKey(m)
		if !seen[k] {
			seen[k] = true
			out = append(out, m)
		}
	}
	return out
}

// MergeRealMessages merges one recording — the messages a node of the given versions wrote —
// into the fixture at path: a message not yet in it (by masked text) is added with cause TODO,
// a known one keeps its cause; each seen message names this recording (corpus.RecordingName of
// versions) in its SeenWith, and the recording's versions are kept beside the others'. Returns
// how many messages were added.
func MergeRealMessages(path string, msgs []RealMessage, versions map[string]string) (int, error) {
	f, err := corpus.LoadRealNode(path)
	if err != nil && !os.IsNotExist(err) {
		return 0, err
	}
	rec := corpus.RecordingName(versions)
	if f.Recordings == nil {
		f.Recordings = map[string]map[string]string{}
	}
	f.Recordings[rec] = versions
	index := map[string]int{}
	for i, m := range f.Messages {
		index[messageKey(RealMessage{RealNodeMessage: m})] = i
	}
	added := 0
	for _, m := range msgs {
		k := messageKey(m)
		i, ok := index[k]
		if !ok {
			m.Cause, m.SeenWith = "TODO", nil
			f.Messages = append(f.Messages, m.RealNodeMessage)
			i = len(f.Messages) - 1
			index[k] = i
			added++
		}
		if !slices.Contains(f.Messages[i].SeenWith, rec) {
			f.Messages[i].SeenWith = append(f.Messages[i].SeenWith, rec)
		}
	}
	out, err := yaml.Marshal(f)
	if err != nil {
		return 0, err
	}
	header := "# Real Event messages written by real components on the e2e real node, and by kube-controller-manager\n" +
		"# without a node (TestMultiAttach; docs/e2e.md), byte for byte. Regenerate with `make real-messages`\n" +
		"# (TestMultiAttach: with KUBECAUSE_REAL_MESSAGES set): new messages arrive with cause TODO, for a person\n" +
		"# to assign; TestRealNodeMessages (exporter/causes/corpus) holds the cause table to them.\n"
	return added, os.WriteFile(path, append([]byte(header), out...), 0o644)
}
