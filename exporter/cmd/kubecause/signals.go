package main

import (
	"log/slog"
	"os"
	"os/signal"
	"syscall"
)

// ignoreHangup logs SIGHUP until stop is called; before and after, it is ignored without a word
// (package hangup ignores it from the start of the process). kubecause reads its configuration
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
		signal.Ignore(syscall.SIGHUP) // Stop gave SIGHUP its default action back: ending the process
		close(done)
	}
}
