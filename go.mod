module github.com/kubecause/kubecause

go 1.26.0
