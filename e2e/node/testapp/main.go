// Command testapp is the workload of the real-node e2e tests: one small static binary whose
// flags make a container misbehave the way the seed scenarios' workloads did, so the kubelet,
// the runtime and the controllers write real Events about it.
package main

import (
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"
)

func main() {
	listen := flag.String("listen", "", "serve TCP on this address (e.g. :8080) and stay up")
	exit := flag.Int("exit", -1, "exit with this code after -after")
	after := flag.Duration("after", 0, "wait this long before -exit")
	allocMiB := flag.Int("alloc-mib", 0, "allocate and touch this many MiB, then stay up")
	fillDir := flag.String("fill-dir", "", "write 1 MiB files into this directory until a write fails or -fill-mib is reached, then stay up")
	fillMiB := flag.Int("fill-mib", 0, "with -fill-dir: stop after this many MiB (0: until a write fails)")
	openFiles := flag.Bool("open-files", false, "open files until the process' own RLIMIT_NOFILE is reached, then panic (never touches host-wide limits)")
	nofile := flag.Uint64("nofile", 256, "with -open-files: lower the process' own open-file limit to this first")
	flag.Parse()

	if *openFiles {
		exhaustFiles(*nofile)
	}
	if *allocMiB > 0 {
		hold := make([][]byte, 0, *allocMiB)
		for i := 0; i < *allocMiB; i++ {
			b := make([]byte, 1<<20)
			for j := range b {
				b[j] = byte(j)
			}
			hold = append(hold, b)
		}
		fmt.Printf("allocated %d MiB\n", len(hold))
		defer func() { _ = hold }()
	}
	if *fillDir != "" {
		fill(*fillDir, *fillMiB)
	}
	if *listen != "" {
		l, err := net.Listen("tcp", *listen)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		fmt.Printf("listening on %s\n", l.Addr())
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
	}
	if *exit >= 0 {
		time.Sleep(*after)
		fmt.Printf("exiting with %d\n", *exit)
		os.Exit(*exit)
	}
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGTERM, syscall.SIGINT)
	<-c
}

func fill(dir string, maxMiB int) {
	buf := make([]byte, 1<<20)
	for i := 0; maxMiB == 0 || i < maxMiB; i++ {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("fill-%05d", i)), buf, 0o644); err != nil {
			fmt.Fprintf(os.Stderr, "fill stopped after %d MiB: %v\n", i, err)
			return
		}
	}
	fmt.Printf("filled %d MiB\n", maxMiB)
}

// exhaustFiles reproduces seed S4's failure inside the container only: the process lowers its
// own RLIMIT_NOFILE, opens files until open fails, and panics on the error.
func exhaustFiles(limit uint64) {
	lim := syscall.Rlimit{Cur: limit, Max: limit}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		fmt.Fprintln(os.Stderr, "setrlimit:", err)
	}
	var open []*os.File
	for {
		f, err := os.Open("/proc/self/status")
		if err != nil {
			panic(fmt.Sprintf("after %d open files: %v", len(open), err))
		}
		open = append(open, f)
	}
}
