package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tinylib/msgp/msgp"

	"github.com/sidecarhq/sidecar/internal/axiomtest"
	"github.com/sidecarhq/sidecar/internal/freeport"
)

// TestMeasureRecordsPerCPUSecond measures, in one run, the CPU time the
// plugin (the harness process: Go runtime, decoding, encoding, sending) and
// the sidecar (the real binary, its Fluent Forward transport) spend on the
// same FireLens chunks of pino lines, shipped to a count-only fake Axiom.
// Whole-process CPU (user+system, start to exit) for both. It is a
// measurement, not a check, so it runs only when asked:
//
//	FLB_AXIOM_MEASURE=1 go test -run TestMeasureRecordsPerCPUSecond -v ./cmd/fluent-bit-axiom
func TestMeasureRecordsPerCPUSecond(t *testing.T) {
	if os.Getenv("FLB_AXIOM_MEASURE") == "" {
		t.Skip("a measurement: set FLB_AXIOM_MEASURE=1 to run it")
	}
	const chunks, perChunk = 300, 1000
	total := chunks * perChunk
	fake := axiomtest.NewForTest(t, axiomtest.WithCountOnly())
	chunk := fireLensChunk(false, 0, perChunk)
	chunkFile := writeChunk(t, "chunk.msgpack", chunk)

	// The plugin, through the harness.
	so, bin := built(t)
	cmd := exec.Command(bin, so)
	cmd.Stdin = strings.NewReader(fmt.Sprintf("init a Dataset=plugin Token=%s URL=%s\nrepeat a app %s %d\nexit a\n", testToken, fake.URL(), chunkFile, chunks))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("harness: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), fmt.Sprintf("ok=%d retry=0", chunks)) {
		t.Fatalf("harness: %s", out)
	}
	pluginCPU := cpu(cmd.ProcessState)
	if n := fake.EventCount("plugin"); n != total {
		t.Fatalf("plugin: %d events, want %d", n, total)
	}

	// The sidecar, over Fluent Forward.
	sidecarBin := filepath.Join(t.TempDir(), "sidecar")
	if b, err := exec.Command("go", "build", "-o", sidecarBin, "../sidecar").CombinedOutput(); err != nil {
		t.Fatalf("building the sidecar: %v\n%s", err, b)
	}
	addr := freeport.Addr(t)
	config := filepath.Join(t.TempDir(), "config.yaml")
	yaml := fmt.Sprintf(`receivers: {stdout: {forward: {endpoint: "%s"}}}
exporters: {axiom: {url: "%s", token: "%s", logs_dataset: sidecar}}
service:
  pipelines: {logs: {receivers: [stdout], exporters: [axiom]}}
  telemetry: {metrics: {level: none}}
`, addr, fake.URL(), testToken)
	if err := os.WriteFile(config, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	sc := exec.Command(sidecarBin, "--config", "file:"+config)
	sc.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	if err := sc.Start(); err != nil {
		t.Fatal(err)
	}
	defer sc.Process.Kill()
	conn := dialRetry(t, addr)
	r := msgp.NewReader(bufio.NewReader(conn))
	for i := range chunks {
		frame := msgp.AppendArrayHeader(nil, 3)
		frame = msgp.AppendString(frame, "app")
		frame = msgp.AppendBytes(frame, chunk)
		frame = msgp.AppendMapHeader(frame, 1)
		frame = msgp.AppendString(frame, "chunk")
		frame = msgp.AppendString(frame, fmt.Sprint(i))
		if _, err := conn.Write(frame); err != nil {
			t.Fatal(err)
		}
		if _, err := r.ReadMapHeader(); err != nil { // the ack
			t.Fatal(err)
		}
		if err := r.Skip(); err != nil {
			t.Fatal(err)
		}
		if err := r.Skip(); err != nil {
			t.Fatal(err)
		}
	}
	conn.Close()
	if err := fake.WaitEvents("sidecar", total, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	_ = sc.Process.Signal(syscall.SIGTERM)
	_ = sc.Wait()
	sidecarCPU := cpu(sc.ProcessState)

	t.Logf("%d FireLens records of pino lines (%d chunks of %d, %d bytes each), whole-process CPU:", total, chunks, perChunk, len(chunk))
	t.Logf("plugin via harness: %.2f CPU s, %.0f records per CPU-second (loop only: %s)", pluginCPU, float64(total)/pluginCPU, strings.TrimSpace(lastLine(string(out), "repeat")))
	t.Logf("sidecar forward:    %.2f CPU s, %.0f records per CPU-second", sidecarCPU, float64(total)/sidecarCPU)
	t.Logf("ratio plugin/sidecar records per CPU-second: %.2f", (float64(total)/pluginCPU)/(float64(total)/sidecarCPU))
}

func cpu(ps *os.ProcessState) float64 { return (ps.UserTime() + ps.SystemTime()).Seconds() }

func lastLine(out, prefix string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

func dialRetry(t *testing.T, addr string) net.Conn {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			return c
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
