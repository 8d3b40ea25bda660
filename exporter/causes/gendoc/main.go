// Command gendoc writes docs/causes.md from the built-in cause table (or -table FILE), followed
// by the table's scores on the corpus of real messages (-corpus DIR) and the messages of the
// e2e real node (-real-node FILE).
//
//	go run ./exporter/causes/gendoc -o docs/causes.md
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kubecause/kubecause/exporter/causes"
)

func main() {
	out := flag.String("o", "", "output file (default: standard output)")
	table := flag.String("table", "", "cause table file (default: the built-in table)")
	runbooks := flag.String("runbooks", "runbooks/", "link prefix of the runbook pages, relative to the output")
	corpus := flag.String("corpus", "exporter/causes/testdata/corpus", "directory of tuning.yaml and heldback.yaml")
	realNode := flag.String("real-node", causes.RealNodeFile, "the real node's messages")
	flag.Parse()
	t := causes.Default()
	if *table != "" {
		var err error
		if t, err = causes.Load(*table); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	tuning, err := causes.LoadCorpus(filepath.Join(*corpus, "tuning.yaml"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	heldBack, err := causes.LoadCorpus(filepath.Join(*corpus, "heldback.yaml"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	rn, err := causes.LoadRealNode(*realNode)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	doc := append(t.Markdown(*runbooks), causes.CorpusMarkdown(t, tuning, heldBack)...)
	doc = append(doc, causes.RealNodeMarkdown(t, rn)...)
	if *out == "" {
		_, _ = os.Stdout.Write(doc)
		return
	}
	if err := os.WriteFile(*out, doc, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
