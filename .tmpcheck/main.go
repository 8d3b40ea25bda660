package main

import (
	"fmt"
	"os"

	"github.com/kubecause/kubecause/e2e/framework"
)

func main() {
	p, a, err := framework.BuildTestImages(os.Args[1])
	fmt.Println(p.Tarball, a.Tarball, err)
}
