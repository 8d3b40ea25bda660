// Command kubelet builds the upstream kubelet of the newest release the real node could move to
// (docs/e2e.md, "Runtimes"): it needs containerd 2.x (hack/deps/26-containerd2.sh) and an
// apiserver of the same minor version (a kubelet must never be newer than its apiserver).
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
