// Command kube-apiserver builds the upstream kube-apiserver from a pinned
// k8s.io/kubernetes release, for the end-to-end tests and the demo.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

func main() {
	os.Exit(cli.Run(app.NewAPIServerCommand()))
}
