// Command pause is the pod sandbox's image for the real-node e2e tests: it holds the pod's
// namespaces open until the runtime stops it. Built and imported by the tests, so no image is
// pulled from outside.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGTERM, syscall.SIGINT)
	<-c
}
