// Command unseen checks the candidate lines of the next blind round before they are labelled
// into a set: it prints each line whose masked message another corpus file already holds, whose
// thread one of them cites, or that repeats an earlier candidate once masked. It never classifies:
// a collector can run it without learning what the table would answer.
//
//	go run ./exporter/causes/corpus/unseen candidates.yaml [more.yaml ...]
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kubecause/kubecause/exporter/causes"
	"github.com/kubecause/kubecause/exporter/causes/corpus"
)

func main() {
	data := flag.String("data", corpus.DataDir, "directory of corpus/*.yaml and real-node.yaml")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: unseen [-data DIR] candidates.yaml ...")
		os.Exit(2)
	}
	n, err := run(*data, flag.Args())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if n > 0 {
		fmt.Fprintf(os.Stderr, "%d line(s) not new\n", n)
		os.Exit(1)
	}
}

func run(data string, candidates []string) (int, error) {
	held, err := filepath.Glob(filepath.Join(data, "corpus", "*.yaml"))
	if err != nil {
		return 0, err
	}
	held = append(held, filepath.Join(data, "real-node.yaml"))
	var others []string
	for _, h := range held {
		if !isCandidate(h, candidates) {
			others = append(others, h)
		}
	}
	seen, err := corpus.LoadSeen(others)
	if err != nil {
		return 0, err
	}
	bad := 0
	mine := map[string]string{}
	for _, path := range candidates {
		lines, err := corpus.Load(path)
		if err != nil {
			return 0, err
		}
		for i, l := range lines {
			where := fmt.Sprintf("%s:%d (%s)", path, i, l.Source)
			why := seen.Check(l)
			key := l.Reason + "\x00" + causes.Template(l.Message)
			if prev, dup := mine[key]; dup {
				why = append(why, "same reason and masked message as "+prev)
			}
			mine[key] = where
			for _, w := range why {
				fmt.Printf("%s: %s\n", where, w)
				bad++
			}
		}
	}
	return bad, nil
}

// isCandidate reports whether path is one of the candidate files (the same file, however named).
func isCandidate(path string, candidates []string) bool {
	fa, err := os.Stat(path)
	if err != nil {
		return false
	}
	for _, c := range candidates {
		if fb, err := os.Stat(c); err == nil && os.SameFile(fa, fb) {
			return true
		}
	}
	return false
}
