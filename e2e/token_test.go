package e2e

import (
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
// unhealthy with the reason, and what the app writes is held, not dropped:
// once Axiom accepts the token (here: the fake learns it), everything
// arrives, from the queue on disk, after a restart.
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
	out, err := exec.Command(sidecarBinary, "health", "--url", "http://"+health+"/").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "refused the token") {
		t.Errorf("sidecar health: %v %s; want a failure that says why", err, out)
	}

	const n = 200
	for i := range n {
		fmt.Fprintln(s.Stdin, pinoLine(i))
	}
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
