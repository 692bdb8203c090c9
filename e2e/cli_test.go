package e2e

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/sidecarhq/sidecar/internal/axiomtest"
)

// `sidecar --version` prints "sidecar version ..." and exits 0.
func TestVersionFlagPrintsTheVersion(t *testing.T) {
	out, err := exec.Command(sidecarBinary, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("--version: %v\n%s", err, out)
	}
	if !strings.HasPrefix(string(out), "sidecar version ") {
		t.Fatalf("--version printed %q", out)
	}
}

// `sidecar components` lists the collector components compiled in beside ours.
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

// `sidecar health --url` (the container health check) says "healthy" while a
// sidecar runs, and fails with "not live" once it has stopped.
func TestHealthCommandTellsARunningSidecarFromAStoppedOne(t *testing.T) {
	health, otlpAddr := FreeAddr(t), FreeAddr(t)
	s := StartSidecar(t, sidecarConfig{
		signals:    []string{"logs"},
		extensions: yamlMap{"health_check": yamlMap{"endpoint": health}},
		receivers:  yamlMap{"otlp": yamlMap{"protocols": yamlMap{"http": yamlMap{"endpoint": otlpAddr}}}},
		exporters:  yamlMap{"debug": yamlMap{}},
	}.yaml())
	s.WaitListening(t, health)
	out, err := exec.Command(sidecarBinary, "health", "--url", "http://"+health+"/").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "healthy" {
		t.Fatalf("health on a running sidecar: %v %q", err, out)
	}
	if code := s.Stop(t); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	out, err = exec.Command(sidecarBinary, "health", "--url", "http://"+health+"/").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "not live") {
		t.Fatalf("health on a stopped sidecar: %v %q", err, out)
	}
}

// TestHealthCommandFollowsTheConfigsVariable: the embedded configs listen
// for health checks on $SIDECAR_HEALTH_ENDPOINT, and `sidecar health` with
// no --url asks there, so the probes in the deploy files follow a change.
func TestHealthCommandFollowsTheConfigsVariable(t *testing.T) {
	fake := axiomtest.NewForTest(t)
	env := embeddedEnv(t, fake)
	s := StartSidecar(t, "", WithArgs(), WithEnv(env...))
	health := envValue(env, "SIDECAR_HEALTH_ENDPOINT")
	s.WaitListening(t, health)
	probe := exec.Command(sidecarBinary, "health")
	probe.Env = append(cleanEnv(), env...)
	if out, err := probe.CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "healthy" {
		t.Fatalf("health with SIDECAR_HEALTH_ENDPOINT=%s: %v %q", health, err, out)
	}
}
