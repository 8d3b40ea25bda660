package causes

import (
	"fmt"
	"regexp"

	distref "github.com/distribution/reference"
)

// The target of a cause is the one shared thing an occurrence of it is about — a registry, a node,
// a CNI plugin, a CSI driver, a StorageClass, a quota, a webhook — so that the many objects one
// outage breaks group into one incident (cause, target). A cause's `target` field in the table says
// where it is read from:
//
//	registry    the registry host of the image reference the message quotes (image "…"),
//	            docker.io for a bare name such as "nginx:1.25"
//	node        the Event's node: the kubelet's source.host, or the Node the Event is about
//	<regexp>    a Go RE2 regular expression with a named group (?P<target>…): the first non-empty
//	            group of that name in the first match in the message
//
// A cause without `target` has none ("").
const (
	TargetRegistry = "registry"
	TargetNode     = "node"
	// TargetGroup is the name of the group a target pattern captures.
	TargetGroup = "target"
)

// target is a compiled `target` of a cause.
type target struct {
	kind   string         // TargetRegistry, TargetNode or "" for a pattern
	re     *regexp.Regexp // the pattern, with groups at groups
	groups []int
}

// compileTarget checks and compiles a cause's `target` field; a pattern is compiled only if spend
// (the table's pattern budget) lets it.
func compileTarget(spec string, spend func(pattern, this string) error) (*target, error) {
	switch spec {
	case "":
		return nil, nil
	case TargetRegistry, TargetNode:
		return &target{kind: spec}, nil
	}
	if err := spend(spec, "target"); err != nil {
		return nil, err
	}
	re, err := regexp.Compile(spec)
	if err != nil {
		return nil, fmt.Errorf("neither %q nor %q, and not a valid regular expression: %v", TargetRegistry, TargetNode, err)
	}
	tg := &target{re: re}
	for i, name := range re.SubexpNames() {
		if name == TargetGroup {
			tg.groups = append(tg.groups, i)
		}
	}
	if len(tg.groups) == 0 {
		return nil, fmt.Errorf("must be %q, %q or a regular expression with a named group (?P<%s>…), got %q",
			TargetRegistry, TargetNode, TargetGroup, spec)
	}
	return tg, nil
}

// extract reads the target from a message (already stripped of the aggregation prefix and cut).
// The result may share memory with message: a caller that keeps it copies it.
func (tg *target) extract(message string) string {
	switch tg.kind {
	case TargetRegistry:
		return Registry(message)
	case TargetNode:
		return ""
	}
	loc := tg.re.FindStringSubmatchIndex(message)
	if loc == nil {
		return ""
	}
	for _, g := range tg.groups {
		if s, e := loc[2*g], loc[2*g+1]; s >= 0 && e > s {
			return message[s:e]
		}
	}
	return ""
}

// imageRefRE finds the image reference a kubelet or runtime message quotes: `Failed to pull image
// "ref"`, `Back-off pulling image "ref"`, `failed to get sandbox image "ref"`, and the escaped
// `failed pulling image \"ref\"` of errors quoted again (old kubelets' FailedSync).
var imageRefRE = regexp.MustCompile(`(?i)image (?:tag )?\\*"([^"\\\s]+)\\*"`)

// Registry returns the registry host of the first image reference quoted in message
// (image "…"), as the container runtimes resolve it: "docker.io" for a name without a host
// ("nginx:1.25", "library/nginx"), the host with its port otherwise
// ("registry.example.com:5000"). It returns "" when the message quotes no image or the
// reference does not parse (github.com/distribution/reference, what containerd and docker use).
// The result may share memory with message.
func Registry(message string) string {
	m := imageRefRE.FindStringSubmatchIndex(message)
	if m == nil {
		return ""
	}
	ref := message[m[2]:m[3]]
	named, err := distref.ParseNormalizedNamed(ref)
	if err != nil {
		return ""
	}
	return distref.Domain(named)
}
