package e2e

import (
	"os/exec"
	"strings"
	"testing"
)

func TestVersion(t *testing.T) {
	out, err := exec.Command(sidecarBinary, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("--version: %v\n%s", err, out)
	}
	if !strings.HasPrefix(string(out), "sidecar version ") {
		t.Fatalf("--version printed %q", out)
	}
}

func TestComponentsListsTheDistribution(t *testing.T) {
	out, err := exec.Command(sidecarBinary, "components").CombinedOutput()
	if err != nil {
		t.Fatalf("components: %v\n%s", err, out)
	}
	for _, name := range []string{"otlp", "memory_limiter", "debug", "otlp_http", "health_check", "file_storage"} {
		if !strings.Contains(string(out), "name: "+name+"\n") {
			t.Errorf("components does not list %s:\n%s", name, out)
		}
	}
}
