// Package hangup ignores SIGHUP from the start of the process: imported by kubecause's main, its
// initializer runs before those of the Kubernetes libraries (Go initializes packages in import
// path order, dependencies first), some milliseconds after exec, where a SIGHUP in the ~50 ms
// before main took its signals ended the process. main then logs each SIGHUP (ignoreHangup).
package hangup

import (
	"os/signal"
	"syscall"
)

func init() { signal.Ignore(syscall.SIGHUP) }
