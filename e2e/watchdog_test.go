package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sidecarhq/sidecar/internal/axiomtest"
)

// watchdogFlags run the shipped stdin config with wedged_after cut from 5
// minutes to 2 seconds (and the exporter's timeout to 1 s), so that a test
// sees in seconds what the watchdog does.
var watchdogFlags = []string{"--config", "embedded:default", "--config", "embedded:stdin",
	"--config", "yaml:extensions::watchdog::wedged_after: 2s",
	"--config", "yaml:exporters::axiom::timeout: 1s"}

// A wedged pipeline fails liveness. The state folder's write of the first
// queued record hangs, as on a volume that stops answering: its temporary
// file is a FIFO nobody reads, so opening it blocks for good, inside the
// stdout receiver's hand-off to the pipeline. The health endpoint itself
// still answers; `sidecar health` must fail, naming the stage.
func TestAWedgedPipelineFailsLiveness(t *testing.T) {
	fake := axiomtest.NewForTest(t)
	state := t.TempDir()
	queue := filepath.Join(state, "exporter_axiom__logs")
	if err := os.MkdirAll(queue, 0o750); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(queue, "0#") // dir_storage writes key "0" through "0#"
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	env := append(embeddedEnv(t, fake), "SIDECAR_STATE_DIR="+state)
	url := "http://" + envValue(env, "SIDECAR_HEALTH_ENDPOINT") + "/"
	s := StartSidecar(t, "", WithArgs(watchdogFlags...), WithEnv(env...), WithStdin())
	t.Cleanup(func() {
		// Let the hung write through, so the sidecar can be stopped.
		if f, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
	s.WaitListening(t, envValue(env, "SIDECAR_HEALTH_ENDPOINT"))
	if _, err := s.Stdin.Write([]byte(pinoLine(0) + "\n")); err != nil {
		t.Fatal(err)
	}

	deadline := time.Now().Add(60 * time.Second) // only bounds a failing test
	for {
		out, err := exec.Command(sidecarBinary, "health", "--url", url).CombinedOutput()
		if err != nil {
			if !strings.Contains(string(out), "pipeline wedged: receiver/stdout handing records to the pipeline") {
				t.Fatalf("sidecar health failed, but not for the wedge: %s", out)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sidecar health still passes 60 s after the pipeline wedged: %s", out)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if logs := s.Logs(); !strings.Contains(logs, "pipeline wedged") || !strings.Contains(logs, "goroutine") {
		t.Errorf("no error line with the goroutines' stacks in the log:\n%s", logs)
	}
}

// Nothing Axiom does trips the watchdog, even at 2 s: a 430 with its reset
// an hour away while the app writes far more than the disk budget holds (the
// queue fills and refuses, the receiver drops), then 503s, then answers
// slower than the exporter's timeout. Liveness passes throughout, and once
// Axiom is back the data flows.
func TestAxiomOutagesNeverTripTheWatchdog(t *testing.T) {
	fake := axiomtest.NewForTest(t)
	env := append(embeddedEnv(t, fake), "SIDECAR_STATE_DIR="+t.TempDir())
	url := "http://" + envValue(env, "SIDECAR_HEALTH_ENDPOINT") + "/"
	args := WithArgs(append(watchdogFlags, "--config", "yaml:exporters::axiom::disk: 8MiB")...)
	s := StartSidecar(t, "", args, WithEnv(env...), WithStdin())
	s.WaitListening(t, envValue(env, "SIDECAR_HEALTH_ENDPOINT"))
	probes := 0
	probe := func() {
		t.Helper()
		out, err := exec.Command(sidecarBinary, "health", "--url", url).CombinedOutput()
		if err != nil {
			t.Fatalf("sidecar health failed while Axiom misbehaved: %v %s", err, out)
		}
		probes++
	}
	sent := 0
	for _, phase := range []struct {
		name  string
		fault axiomtest.Fault
	}{
		{"430, reset in an hour", axiomtest.IngestLimited(time.Now().Add(time.Hour))},
		{"503", axiomtest.Status(503)},
		{"slower than the timeout", axiomtest.Slow(3 * time.Second)},
	} {
		fake.Outage("", phase.fault)
		app := &timedWriter{rate: appRate}
		app.writeFor(t, s.Stdin, 2*time.Second)
		sent += app.sent
		for range 8 { // 4 s: twice wedged_after, past any one wait
			probe()
			time.Sleep(500 * time.Millisecond)
		}
		t.Logf("%s: %d lines written, liveness passed", phase.name, app.sent)
	}
	fake.EndOutage("")
	app := &timedWriter{rate: appRate}
	app.writeFor(t, s.Stdin, time.Second)
	sent += app.sent
	probe()
	s.EndInput(t, 60*time.Second)
	if strings.Contains(s.Logs(), "pipeline wedged") {
		t.Fatalf("the watchdog fired:\n%s", s.Logs())
	}
	if fake.EventCount("logs") == 0 {
		t.Fatal("nothing arrived once Axiom was back")
	}
	t.Logf("%d liveness probes passed; %d events arrived of %d lines", probes, fake.EventCount("logs"), sent)
}
