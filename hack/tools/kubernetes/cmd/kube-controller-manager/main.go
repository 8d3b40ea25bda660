// Command kube-controller-manager builds the upstream kube-controller-manager from the same
// pinned k8s.io/kubernetes release as the apiserver, for the real-node e2e tests and the demo.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-controller-manager/app"
)

func main() {
	os.Exit(cli.Run(app.NewControllerManagerCommand()))
}
