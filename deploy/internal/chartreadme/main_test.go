package main

import (
	"strings"
	"testing"
)

func TestTable(t *testing.T) {
	values := `# file comment
image:
  # -- Image repository.
  repository: ghcr.io/x
  tag: ""
# a note only
# -- Container resources,
# two lines | with a pipe.
resources:
  limits:
    memory: 256Mi
list:
  - a
empty: {}
`
	got, err := Table([]byte(values))
	if err != nil {
		t.Fatal(err)
	}
	want := "| key | default | description |\n|---|---|---|\n" +
		"| `image.repository` | `\"ghcr.io/x\"` | Image repository. |\n" +
		"| `image.tag` | `\"\"` |  |\n" +
		"| `resources` | `{\"limits\":{\"memory\":\"256Mi\"}}` | Container resources, two lines \\| with a pipe. |\n" +
		"| `list` | `[\"a\"]` |  |\n" +
		"| `empty` | `{}` |  |\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestSplice(t *testing.T) {
	out, err := Splice([]byte("# t\n"+begin+"\nold\n"+end+"\ntail\n"), "new\n")
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != "# t\n"+begin+"\nnew\n"+end+"\ntail\n" {
		t.Errorf("got %q", out)
	}
	if _, err := Splice([]byte("no markers"), "x"); err == nil || !strings.Contains(err.Error(), "values:begin") {
		t.Errorf("missing markers: %v", err)
	}
}
