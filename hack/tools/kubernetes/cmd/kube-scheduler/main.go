// Command kube-scheduler builds the upstream kube-scheduler from the same pinned
// k8s.io/kubernetes release as the apiserver, for the real-node e2e tests and the demo.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"
)

func main() {
	os.Exit(cli.Run(app.NewSchedulerCommand()))
}
