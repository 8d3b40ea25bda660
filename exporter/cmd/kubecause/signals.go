package main

import (
	"log/slog"
	"os"
	"os/signal"
	"syscall"
)

// ignoreHangup logs and ignores SIGHUP until stop is called. kubecause reads its configuration
// once, at start: there is nothing to reload, and a hang-up (a closed terminal, a process
// manager's "reload") must not end it silently, which is what Go does with an unhandled SIGHUP.
func ignoreHangup(logger *slog.Logger) (stop func()) {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-c:
				logger.Warn("SIGHUP received and ignored: kubecause reads its configuration only at start; restart it to apply a change")
			case <-done:
				return
			}
		}
	}()
	return func() {
		signal.Stop(c)
		close(done)
	}
}
