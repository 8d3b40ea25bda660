package explain

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubecause/kubecause/exporter/causes"
)

// realMessages are the real Event messages of exporter/causes/testdata (the real node's and the
// corpus of messages quoted in public threads), split by whether the built-in table classifies
// them.
func realMessages(t *testing.T) (unclassified, classified []corev1.Event) {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join("..", "causes", "testdata", "corpus", "*.yaml"))
	paths = append(paths, filepath.Join("..", "causes", "testdata", "real-node.yaml"))
	tab := causes.Default()
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var ms []struct{ Kind, Reason, Type, Message string }
		if strings.HasSuffix(p, "real-node.yaml") {
			var f struct {
				Messages []struct{ Kind, Reason, Type, Message string }
			}
			err = yaml.Unmarshal(data, &f)
			for _, m := range f.Messages {
				ms = append(ms, struct{ Kind, Reason, Type, Message string }(m))
			}
		} else {
			err = yaml.Unmarshal(data, &ms)
		}
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		for _, m := range ms {
			ev := corev1.Event{InvolvedObject: corev1.ObjectReference{Kind: m.Kind, Name: "x"}, Reason: m.Reason, Type: m.Type, Message: m.Message, Count: 1}
			if tab.Classify(m.Reason, m.Message).Cause == causes.Unknown {
				unclassified = append(unclassified, ev)
			} else {
				classified = append(classified, ev)
			}
		}
	}
	if len(unclassified) < DraftMax || len(classified) == 0 {
		t.Fatalf("%d unclassified and %d classified real messages: too few for the test", len(unclassified), len(classified))
	}
	return unclassified, classified
}

// The draft cause file of --unclassified --draft, from the real messages the built-in table
// does not classify: it loads as it is, and its rules classify every message of the commonest
// templates, each template to its own draft cause, and none the built-in table classifies.
func TestDraftLoadsAndClassifiesTheMessages(t *testing.T) {
	evs, classified := realMessages(t)
	entries := Unclassified(Explain(evs, causes.Default(), "%s"))
	var b strings.Builder
	if err := PrintDraft(&b, entries); err != nil {
		t.Fatal(err)
	}
	draft, err := causes.Parse([]byte(b.String()))
	if err != nil {
		t.Fatalf("the draft does not load: %v\n%s", err, b.String())
	}
	top := map[string]bool{}
	for _, e := range entries[:DraftMax] {
		top[e.Reason+"\x00"+e.Template] = true
	}
	byTemplate := map[string]string{}
	for _, ev := range evs {
		key := ev.Reason + "\x00" + causes.Template(ev.Message)
		if !top[key] {
			continue
		}
		r := draft.Classify(ev.Reason, ev.Message)
		if !strings.HasPrefix(r.Cause, "draft_") {
			t.Errorf("draft classifies %s %q as %q, want a draft cause", ev.Reason, ev.Message, r.Cause)
			continue
		}
		if c, ok := byTemplate[key]; ok && c != r.Cause {
			t.Errorf("one template, two draft causes %s and %s", c, r.Cause)
		}
		byTemplate[key] = r.Cause
	}
	if len(byTemplate) != DraftMax {
		t.Errorf("%d templates classified, the draft has %d", len(byTemplate), DraftMax)
	}
	for _, ev := range classified {
		if r := draft.Classify(ev.Reason, ev.Message); r.Cause != causes.Unknown {
			t.Errorf("draft rule %s also takes %s %q, which the built-in table classifies", r.Rule, ev.Reason, ev.Message)
		}
	}
}

// Every real unclassified message is matched by the draft pattern of its own template, those
// whose template was cut at its length limit (a placeholder perhaps split) included.
func TestDraftPatternMatchesItsMessages(t *testing.T) {
	evs, _ := realMessages(t)
	cut := 0
	for _, ev := range evs {
		tpl := causes.Template(ev.Message)
		p := DraftPattern(tpl)
		if len(tpl) >= causes.MaxTemplateBytes-8 {
			cut++
			if strings.HasSuffix(p, "$") {
				t.Errorf("pattern %q of a cut template is anchored at the end", p)
			}
		}
		yml := "version: '1'\ncauses:\n- {name: a, category: other, meaning: m, runbook: 'p#a'}\n- {name: unknown, category: other, meaning: m, runbook: 'p#unknown'}\nrules:\n- {id: a, pattern: '" + strings.ReplaceAll(p, "'", "''") + "', cause: a}\n"
		tab, err := causes.Parse([]byte(yml))
		if err != nil {
			t.Errorf("pattern of %q: %v", ev.Message, err)
			continue
		}
		if r := tab.Classify(ev.Reason, ev.Message); r.Cause != "a" {
			t.Errorf("pattern %q does not match the message it came from, %q", p, ev.Message)
		}
	}
	if cut == 0 {
		t.Error("no real message has a cut template: the cut is not tested")
	}
}
