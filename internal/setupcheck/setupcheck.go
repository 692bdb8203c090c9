// Package setupcheck ends a test that needs what scripts/setup.sh installs
// (redis-server, zstd, node, the npm packages): under CI=true the test
// fails, since .ci/run runs the script first and a skip there would hide a
// test that no longer runs; elsewhere it skips with the command to run.
package setupcheck

import (
	"os"
	"testing"
)

// Missing ends t because what is missing.
func Missing(t testing.TB, what string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s missing: scripts/setup.sh should have installed it", what)
	}
	t.Skipf("%s missing: run scripts/setup.sh", what)
}
