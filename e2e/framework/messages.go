package framework

import (
	"os"
	"regexp"
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

// MergeRealMessages adds the messages not yet in the fixture at path (by masked text) with
// cause TODO, keeps every existing entry and its cause, records versions, and returns how many
// were added.
func MergeRealMessages(path string, msgs []RealMessage, versions map[string]string) (int, error) {
	f, err := corpus.LoadRealNode(path)
	if err != nil && !os.IsNotExist(err) {
		return 0, err
	}
	seen := map[string]bool{}
	for _, m := range f.Messages {
		seen[messageKey(RealMessage{RealNodeMessage: m})] = true
	}
	added := 0
	for _, m := range msgs {
		if seen[messageKey(m)] {
			continue
		}
		seen[messageKey(m)] = true
		m.Cause = "TODO"
		f.Messages = append(f.Messages, m.RealNodeMessage)
		added++
	}
	if f.Versions == nil {
		f.Versions = map[string]string{}
	}
	for k, v := range versions {
		f.Versions[k] = v
	}
	out, err := yaml.Marshal(f)
	if err != nil {
		return 0, err
	}
	header := "# Real Event messages written by real components on the e2e real node (docs/e2e.md), byte for\n" +
		"# byte. Regenerate with `make real-messages`: new messages arrive with cause TODO, for a person\n" +
		"# to assign; TestRealNodeMessages (exporter/causes/corpus) holds the cause table to them.\n"
	return added, os.WriteFile(path, append([]byte(header), out...), 0o644)
}
