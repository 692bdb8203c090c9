package setupcheck

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The CI and local behaviours run in a child process, since Missing ends
// the test that calls it.
func TestMissingFailsUnderCIAndSkipsElsewhere(t *testing.T) {
	if what := os.Getenv("SETUPCHECK_CHILD"); what != "" {
		Missing(t, what)
		return
	}
	for _, c := range []struct {
		ci, want string
		fails    bool
	}{
		{"true", "zstd missing: scripts/setup.sh should have installed it", true},
		{"", "zstd missing: run scripts/setup.sh", false},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestMissingFailsUnderCIAndSkipsElsewhere$", "-test.v")
		cmd.Env = append(os.Environ(), "SETUPCHECK_CHILD=zstd", "CI="+c.ci)
		out, err := cmd.CombinedOutput()
		if failed := err != nil; failed != c.fails {
			t.Errorf("CI=%q: failed %v, want %v\n%s", c.ci, failed, c.fails, out)
		}
		if !strings.Contains(string(out), c.want) {
			t.Errorf("CI=%q: output lacks %q:\n%s", c.ci, c.want, out)
		}
		if !c.fails && !strings.Contains(string(out), "--- SKIP") {
			t.Errorf("CI=%q: the test did not skip:\n%s", c.ci, out)
		}
	}
}
