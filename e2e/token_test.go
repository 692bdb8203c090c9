package e2e

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/sidecarhq/sidecar/internal/axiomtest"
)

// A token Axiom refuses: one clear line at start, the health endpoint turns
// unhealthy with the reason and `sidecar status` prints it, while the
// liveness check every deploy file's probe runs (`sidecar health`) keeps
// passing: a restart would not fix the token, and under Kubernetes or ECS
// a failing probe restarts the sidecar or replaces the app's whole task.
// What the app writes is held, not dropped: once Axiom accepts the token
// (here: the fake learns it), everything arrives, from the queue on disk,
// after a restart.
func TestRefusedTokenHoldsDataAndTurnsHealthUnhealthy(t *testing.T) {
	fake := axiomtest.NewForTest(t, axiomtest.WithTokens("xaat-another-token"))
	env := append(embeddedEnv(t, fake), "SIDECAR_STATE_DIR="+t.TempDir())
	health := envValue(env, "SIDECAR_HEALTH_ENDPOINT")
	s := StartSidecar(t, "", WithStdin(), WithArgs("--config", "embedded:stdin", "--set", "receivers::stdout::stdin::exit_on_eof=false", "--set", "exporters::axiom::shutdown_timeout=1s"), WithEnv(env...))
	s.WaitOutput(t, "Axiom refused the token")

	var code int
	var body string
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get("http://" + health + "/")
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			code, body = resp.StatusCode, string(b)
			if code == http.StatusInternalServerError { // 503 while starting
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("health answered %d after 30s, want 500: %s", code, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !strings.Contains(body, "AXIOM_TOKEN") || strings.Contains(body, testToken) {
		t.Errorf("health answered %d %s; want 500 naming AXIOM_TOKEN, never the token", code, body)
	}
	url := "http://" + health + "/"
	out, err := exec.Command(sidecarBinary, "status", "--url", url).CombinedOutput()
	if exitStatus(err) != 1 || !strings.Contains(string(out), "refused the token") {
		t.Errorf("sidecar status: %v %s; want exit 1 and the reason", err, out)
	}
	if got := scrapeCounter(envValue(env, "SIDECAR_METRICS_PORT"), "otelcol_exporter_axiom_token_refused", `signal="logs"`); got != 1 {
		t.Errorf("otelcol_exporter_axiom_token_refused = %v, want 1", got)
	}

	// The liveness probe, once a second for longer than a Kubernetes
	// liveness probe (3 failures 10 s apart) or an ECS health check (3
	// retries 10 s apart) takes to act, while the app writes: every probe
	// passes, says why the sidecar is degraded, and the sidecar never
	// stops.
	const n = 200
	probes, sent := 0, 0
	for start := time.Now(); time.Since(start) < 31*time.Second; probes++ {
		for ; sent < min(n, 8*(probes+1)); sent++ {
			fmt.Fprintln(s.Stdin, pinoLine(sent))
		}
		out, err := exec.Command(sidecarBinary, "health", "--url", url).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "refused the token") {
			t.Fatalf("liveness probe %d: %v %s; want exit 0 with the reason", probes, err, out)
		}
		select {
		case <-s.done:
			t.Fatalf("the sidecar stopped during the probes: %v", s.err)
		case <-time.After(time.Second):
		}
	}
	for ; sent < n; sent++ {
		fmt.Fprintln(s.Stdin, pinoLine(sent))
	}
	t.Logf("%d liveness probes over 31 s, all passed", probes)
	waitAccepted(t, s, envValue(env, "SIDECAR_METRICS_PORT"), n)
	if code := s.Stop(t); code != 0 {
		t.Logf("exit code %d", code) // the stdin exit status is the receiver's
	}
	if got := fake.EventCount("logs"); got != 0 {
		t.Fatalf("%d events arrived with a refused token", got)
	}

	// The token is fixed: the held lines arrive.
	good := axiomtest.NewForTest(t)
	env2 := append(embeddedEnv(t, good), "SIDECAR_STATE_DIR="+envValue(env, "SIDECAR_STATE_DIR"))
	s = StartSidecar(t, "", WithArgs(), WithEnv(env2...))
	if err := good.WaitEvents("logs", n, 60*time.Second); err != nil {
		t.Fatalf("after the token was fixed: %v (have %d of %d)", err, good.EventCount("logs"), n)
	}
	s.Stop(t)
}

// exitStatus is the exit status of a command that ran: 0 for a nil error.
func exitStatus(err error) int {
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// Axiom down (503) is, like a refused token, a fault a restart does not
// fix: the liveness check passes and says why, `sidecar status` exits 1
// with the answer, and once Axiom is back the sidecar is healthy again and
// every line arrives.
func TestAxiomOutageKeepsTheLivenessCheckPassingAndSaysWhy(t *testing.T) {
	fake := axiomtest.NewForTest(t)
	fake.Outage("", axiomtest.Status(503))
	env := append(embeddedEnv(t, fake), "SIDECAR_STATE_DIR="+t.TempDir())
	url := "http://" + envValue(env, "SIDECAR_HEALTH_ENDPOINT") + "/"
	s := StartSidecar(t, "", WithStdin(), WithArgs("--config", "embedded:stdin", "--set", "receivers::stdout::stdin::exit_on_eof=false"), WithEnv(env...))
	const n = 100
	for i := range n {
		fmt.Fprintln(s.Stdin, pinoLine(i))
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, err := exec.Command(sidecarBinary, "status", "--url", url).CombinedOutput()
		if exitStatus(err) == 1 && strings.Contains(string(out), "503") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sidecar status during the outage: %v %s; want exit 1 naming the 503", err, out)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if out, err := exec.Command(sidecarBinary, "health", "--url", url).CombinedOutput(); err != nil || !strings.Contains(string(out), "503") {
		t.Errorf("liveness check during the outage: %v %s; want exit 0 with the reason", err, out)
	}
	fake.EndOutage("")
	if err := fake.WaitEvents("logs", n, 60*time.Second); err != nil {
		t.Fatalf("after the outage: %v", err)
	}
	deadline = time.Now().Add(30 * time.Second)
	for {
		out, err := exec.Command(sidecarBinary, "status", "--url", url).CombinedOutput()
		if err == nil && strings.TrimSpace(string(out)) == "healthy" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sidecar status after the outage: %v %s; want healthy", err, out)
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.Stop(t)
}
