// Command kubelet builds the upstream kubelet from the same pinned k8s.io/kubernetes release as
// the control plane, in the same go build, for the real-node e2e tests and the demo. It runs on
// containerd 2.x (Kubernetes 1.35 was the last release for containerd 1.x).
package main

import (
	"context"
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kubelet/app"
)

func main() {
	os.Exit(cli.Run(app.NewKubeletCommand(context.Background())))
}
