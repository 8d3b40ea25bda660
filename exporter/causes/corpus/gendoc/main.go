// Command gendoc writes docs/causes.md from the built-in cause table (or -table FILE), followed
// by the table's scores on the corpus of real messages and the messages of the e2e real node
// (both under -data DIR).
//
//	go run ./exporter/causes/corpus/gendoc -o docs/causes.md
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/kubecause/kubecause/exporter/causes"
	"github.com/kubecause/kubecause/exporter/causes/corpus"
)

func main() {
	out := flag.String("o", "", "output file (default: standard output)")
	table := flag.String("table", "", "cause table file (default: the built-in table)")
	runbooks := flag.String("runbooks", "runbooks/", "link prefix of the runbook pages, relative to the output")
	data := flag.String("data", corpus.DataDir, "directory of corpus/{tuning,heldback,blind}.yaml and real-node.yaml")
	flag.Parse()
	if err := run(*out, *table, *runbooks, *data); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(out, table, runbooks, data string) error {
	t := causes.Default()
	if table != "" {
		var err error
		if t, err = causes.Load(table); err != nil {
			return err
		}
	}
	doc, err := corpus.Page(t, runbooks, data)
	if err != nil {
		return err
	}
	if out == "" {
		_, err = os.Stdout.Write(doc)
		return err
	}
	return os.WriteFile(out, doc, 0o644)
}
