package explain

import (
	"context"
	"io"
	"os"
	"slices"
	"time"

	"github.com/alecthomas/kingpin/v2"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubecause/kubecause/exporter/causes"
	"github.com/kubecause/kubecause/exporter/events"
	"github.com/kubecause/kubecause/exporter/kube"
)

// Options are what `kubecause explain` reads and prints.
type Options struct {
	File         string // --file: a file, "-" for standard input, "" for the live cluster
	Output       string // --output: table or json
	Unclassified bool   // --unclassified
	Draft        bool   // --draft: a draft cause file for the unclassified templates

	// From the application's flags (main sets them after parsing).
	Kube kube.Options // the live cluster's client
	// Events selects the live cluster's Events: its namespaces (--namespace, --events.namespace),
	// field selector and Normal reasons.
	Events         events.Options
	RunbookPattern string
}

// AddCommand adds the explain command and its flags to app. Its flags set o, except --namespace,
// which adds to namespaces: the exporter's --events.namespace adds to the same.
func AddCommand(app *kingpin.Application, o *Options, namespaces *[]string) *kingpin.CmdClause {
	ex := app.Command("explain", "Explain Events offline: one row per Event with its cause and runbook.")
	ex.Flag("file", "File with `kubectl get events -A -o json` output; - for stdin. Without it, the live cluster is read.").Short('f').StringVar(&o.File)
	ex.Flag("output", "Output format: table or json.").Short('o').Default("table").EnumVar(&o.Output, "table", "json")
	ex.Flag("unclassified", "Instead of one row per Event, list the templates of the messages no rule classifies (names, UIDs, IPs, numbers, quoted strings and paths masked), most frequent first: what to write a rule for (docs/causes.md).").BoolVar(&o.Unclassified)
	ex.Flag("draft", "With the templates of --unclassified (implied), print a draft cause file: for each of the commonest, a rule of its reason with the template as an anchored pattern and a placeholder cause to name, categorise and link to your runbook. It loads as it is (--causes.file, docs/causes.md).").BoolVar(&o.Draft)
	ex.Flag("namespace", "Live cluster: only this namespace.").Short('n').StringsVar(namespaces)
	return ex
}

// Args returns the command line args with `-f -` and `--file -` spelt `--file=-`, for the flag
// parser (kingpin) to read before parsing: it reads a lone "-" as an empty value, and explain
// would then read the live cluster instead of standard input. Nothing after "--" is changed.
func Args(args []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		if args[i] == "--" {
			return append(out, args[i:]...)
		}
		if (args[i] == "-f" || args[i] == "--file") && i+1 < len(args) && args[i+1] == "-" {
			out = append(out, "--file=-")
			i++
			continue
		}
		out = append(out, args[i])
	}
	return out
}

// Run reads the Events (o.File; stdin for "-"; the live cluster for ""), explains them with the
// table and prints them, or the templates of the unclassified ones, to stdout.
func Run(ctx context.Context, o Options, table *causes.Table, stdin io.Reader, stdout io.Writer) error {
	evs, err := read(ctx, o, stdin)
	if err != nil {
		return err
	}
	rows := Explain(evs, table, o.RunbookPattern)
	if o.Draft {
		return PrintDraft(stdout, Unclassified(rows))
	}
	if o.Unclassified {
		return PrintUnclassified(stdout, Unclassified(rows), o.Output)
	}
	return Print(stdout, rows, o.Output)
}

func read(ctx context.Context, o Options, stdin io.Reader) ([]corev1.Event, error) {
	switch o.File {
	case "":
		client, _, err := kube.ClientFor(o.Kube)
		if err != nil {
			return nil, err
		}
		return listLive(ctx, client, o.Events)
	case "-":
		return Decode(stdin)
	}
	f, err := os.Open(o.File)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Decode(f)
}

// listLive lists the Events of each namespace asked for (all without one) with each field
// selector of the exporter's watches (excluded namespaces left out of them), within a minute,
// and keeps those the exporter counts: Normal Events only of the reasons it counts.
func listLive(ctx context.Context, client kube.Client, o events.Options) ([]corev1.Event, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var all []corev1.Event
	for _, ns := range o.Scopes() {
		for _, sel := range events.WatchSelectors(o.FieldSelector, o.NormalReasons, nil) {
			evs, err := List(ctx, client, ns, sel)
			if err != nil {
				return nil, err
			}
			for _, ev := range evs {
				if ev.Type != corev1.EventTypeNormal || slices.Contains(o.NormalReasons, ev.Reason) {
					all = append(all, ev)
				}
			}
		}
	}
	return all, nil
}
