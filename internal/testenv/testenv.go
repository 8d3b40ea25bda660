// Package testenv decides what a test does when something it runs on is missing: on a
// developer's machine it skips, saying what is missing and how to install it; under CI=true
// (what .ci/run runs with) it fails, so a CI machine that lost a tool cannot stay green
// without the test.
package testenv

import (
	"fmt"
	"os"
	"testing"
)

// CI is true when the tests run under CI (CI=true, as .ci/run runs them).
func CI() bool { return os.Getenv("CI") == "true" }

// Require ends the test when missing is not nil: a skip outside CI, a failure under CI. what
// names the missing thing, install how to get it (a make deps step).
func Require(t testing.TB, missing error, what, install string) {
	t.Helper()
	if missing == nil {
		return
	}
	msg := fmt.Sprintf("%s missing: %v (install: %s)", what, missing, install)
	if CI() {
		t.Fatalf("%s; under CI=true a test may not skip for a missing dependency", msg)
	}
	t.Skip(msg)
}
