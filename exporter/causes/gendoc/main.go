// Command gendoc writes docs/causes.md from the built-in cause table (or -table FILE).
//
//	go run ./exporter/causes/gendoc -o docs/causes.md
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/kubecause/kubecause/exporter/causes"
)

func main() {
	out := flag.String("o", "", "output file (default: standard output)")
	table := flag.String("table", "", "cause table file (default: the built-in table)")
	runbooks := flag.String("runbooks", "runbooks/", "link prefix of the runbook pages, relative to the output")
	flag.Parse()
	t := causes.Default()
	if *table != "" {
		var err error
		if t, err = causes.Load(*table); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	doc := t.Markdown(*runbooks)
	if *out == "" {
		_, _ = os.Stdout.Write(doc)
		return
	}
	if err := os.WriteFile(*out, doc, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
