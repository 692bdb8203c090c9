package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sidecarhq/sidecar/internal/freeport"
)

// sidecarBinary is the binary under test, built once by TestMain.
var sidecarBinary string

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "sidecar-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	sidecarBinary = filepath.Join(dir, "sidecar")
	build := exec.Command("go", "build", "-o", sidecarBinary, "../cmd/sidecar")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: building the sidecar:", err)
		return 1
	}
	return m.Run()
}

// Sidecar is a running sidecar process.
type Sidecar struct {
	cmd   *exec.Cmd
	Dir   string         // the process's working directory, a fresh temp dir
	Stdin io.WriteCloser // set when started WithStdin
	logs  lockedBuffer
	done  chan struct{}
	err   error // the Wait result, valid once done is closed
}

// Option changes how StartSidecar runs the binary.
type Option func(*startOptions)

type startOptions struct {
	env     []string
	args    []string
	argsSet bool
	stdin   bool
}

// WithEnv adds "KEY=value" variables to the sidecar's environment.
func WithEnv(kv ...string) Option { return func(o *startOptions) { o.env = append(o.env, kv...) } }

// WithArgs replaces the default arguments (--config file:<the config>);
// WithArgs() with none runs the sidecar on its embedded default config.
func WithArgs(args ...string) Option {
	return func(o *startOptions) { o.args, o.argsSet = args, true }
}

// WithStdin connects a pipe to the sidecar's stdin, exposed as Sidecar.Stdin.
func WithStdin() Option { return func(o *startOptions) { o.stdin = true } }

// StartSidecar writes configYAML to a file and starts the sidecar on it. The
// environment is the test's, less every AXIOM_* and SIDECAR_* variable, plus
// WithEnv. The process is killed when the test ends if it still runs.
func StartSidecar(t *testing.T, configYAML string, opts ...Option) *Sidecar {
	t.Helper()
	var o startOptions
	for _, opt := range opts {
		opt(&o)
	}
	dir := t.TempDir()
	if !o.argsSet {
		path := filepath.Join(dir, "config.yaml")
		if err := os.WriteFile(path, []byte(configYAML), 0o600); err != nil {
			t.Fatal(err)
		}
		o.args = []string{"--config", "file:" + path}
	}
	s := &Sidecar{Dir: dir, done: make(chan struct{})}
	s.cmd = exec.Command(sidecarBinary, o.args...)
	s.cmd.Dir = dir
	s.cmd.Env = append(cleanEnv(), o.env...)
	s.cmd.Stdout, s.cmd.Stderr = &s.logs, &s.logs
	if o.stdin {
		w, err := s.cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		s.Stdin = w
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		s.err = s.cmd.Wait()
		close(s.done)
	}()
	t.Cleanup(func() {
		select {
		case <-s.done:
		default:
			_ = s.cmd.Process.Kill()
			<-s.done
		}
		if t.Failed() {
			t.Logf("sidecar output:\n%s", s.Logs())
		}
	})
	return s
}

func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "AXIOM_") || strings.HasPrefix(kv, "SIDECAR_") || strings.HasPrefix(kv, "ECS_") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// Logs returns everything the sidecar printed so far.
func (s *Sidecar) Logs() string { return s.logs.String() }

// WaitListening waits until addr ("host:port", or a unix socket path when
// it starts with "/") accepts connections, failing the test if the sidecar
// exits or 60 s pass first.
func (s *Sidecar) WaitListening(t *testing.T, addr string) {
	t.Helper()
	network := "tcp"
	if strings.HasPrefix(addr, "/") {
		network = "unix"
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		c, err := net.DialTimeout(network, addr, time.Second)
		if err == nil {
			c.Close()
			return
		}
		select {
		case <-s.done:
			t.Fatalf("sidecar exited (%v) before listening on %s", s.err, addr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("sidecar not listening on %s after 60s: %v", addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// WaitOutput waits until the sidecar has printed substr, failing the test
// if it exits or 60 s pass first.
func (s *Sidecar) WaitOutput(t *testing.T, substr string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(s.Logs(), substr) {
		select {
		case <-s.done:
			t.Fatalf("sidecar exited (%v) before printing %q", s.err, substr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("sidecar did not print %q within 60s", substr)
		}
		time.Sleep(time.Millisecond)
	}
}

// Wait waits up to timeout for the sidecar to exit and returns its exit code.
func (s *Sidecar) Wait(timeout time.Duration) (int, error) {
	select {
	case <-s.done:
	case <-time.After(timeout):
		return -1, fmt.Errorf("sidecar still running after %s", timeout)
	}
	var exitErr *exec.ExitError
	if errors.As(s.err, &exitErr) {
		return exitErr.ExitCode(), nil
	}
	if s.err != nil {
		return -1, s.err
	}
	return 0, nil
}

// EndInput closes the sidecar's stdin, as an app that exits does, waits up
// to timeout for the sidecar to exit and returns its exit code.
func (s *Sidecar) EndInput(t *testing.T, timeout time.Duration) int {
	t.Helper()
	if err := s.Stdin.Close(); err != nil {
		t.Fatal(err)
	}
	code, err := s.Wait(timeout)
	if err != nil {
		t.Fatal(err)
	}
	return code
}

// Stop sends SIGTERM, as ECS and Kubernetes do, waits up to 60 s for the
// process to exit and returns its exit code.
func (s *Sidecar) Stop(t *testing.T) int {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Fatal(err)
	}
	code, err := s.Wait(60 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return code
}

// Kill ends the process with SIGKILL, as an OOM kill or a node failure
// would, and waits for it to be gone.
func (s *Sidecar) Kill(t *testing.T) {
	t.Helper()
	if err := s.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Fatal(err)
	}
	<-s.done
}

// FreeAddr returns a 127.0.0.1 address for a process the test starts to
// listen on, free now and no other test's until t ends (see freeport), so a
// sidecar restarted on the same ports finds them free too.
func FreeAddr(t *testing.T) string {
	t.Helper()
	return freeport.Addr(t)
}

// lockedBuffer collects process output written from several goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
