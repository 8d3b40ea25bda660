//go:build load

package load

import (
	"context"
	"os"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/kubecause/kubecause/e2e/framework"
)

func TestServeScratch(t *testing.T) {
	if os.Getenv("SCRATCH") == "" {
		t.Skip()
	}
	ctx := context.Background()
	work := "/tmp/scratch-cluster"
	os.RemoveAll(work)
	cl, err := framework.StartCluster(work, framework.ClusterOptions{LogDir: work})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Stop()
	gc, _ := kubernetes.NewForConfig(fastConfig(cl.Config))
	g := &Generator{Client: gc, Namespaces: 50, Workers: 16}
	var nss []string
	for i := 0; i < g.Namespaces; i++ {
		nss = append(nss, g.Namespace(i))
	}
	cl.EnsureNamespaces(ctx, nss...)
	if err := g.Seed(ctx, 50000); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(work+"/ready", []byte("1"), 0o644)
	for {
		if _, err := os.Stat(work + "/stop"); err == nil {
			return
		}
		if _, err := os.Stat(work + "/load"); err == nil {
			os.Remove(work + "/load")
			g.Run(ctx, Profile{Rate: 1000, Duration: 15 * time.Second, CreateShare: 0.2})
			os.WriteFile(work+"/loaded", []byte("1"), 0o644)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
