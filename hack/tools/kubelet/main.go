// Command kubelet builds the upstream kubelet from a pinned k8s.io/kubernetes release for the
// real-node e2e tests and the demo. 1.35 is the last release that runs on containerd 1.x
// (Debian's), and kubelet 1.35 against apiserver 1.36 is inside the version-skew policy.
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
