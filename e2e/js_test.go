package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/sidecarhq/sidecar/internal/setupcheck"
)

// jsClientDir holds an npm package that scripts/setup.sh installs from its
// lockfile.
const jsClientDir = "../clients/js"

// nodeBinary returns the node on PATH.
func nodeBinary(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("node")
	if err != nil {
		setupcheck.Missing(t, "node")
	}
	return p
}

// npmInstalled returns the absolute path of file in the npm package at dir,
// ending the test if npm ci has not run there.
func npmInstalled(t *testing.T, dir, file string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join(dir, file))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		setupcheck.Missing(t, p)
	}
	return p
}

// runJSClientTests runs clients/js's test files with the given runtime's
// test runner, failing the test with the runner's output if any fails.
func runJSClientTests(t *testing.T, runtime string, args ...string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(jsClientDir, "test", "*.test.mjs"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no test files in %s/test: %v", jsClientDir, err)
	}
	for i, f := range files {
		files[i] = filepath.Join("test", filepath.Base(f))
	}
	cmd := exec.Command(runtime, append(args, files...)...)
	cmd.Dir = jsClientDir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", filepath.Base(runtime), args, err, out)
	}
}

// The npm client's own suite (OTLP/JSON encoding against otlp-transformer,
// line splitting, drops under congestion, CJS/ESM/types, no torn line on a
// real pipe shared with pino) passes under Node's test runner.
func TestJSClientSuitePassesUnderNode(t *testing.T) {
	npmInstalled(t, jsClientDir, "node_modules/@opentelemetry/otlp-transformer")
	runJSClientTests(t, nodeBinary(t), "--test")
}

// The same files pass under Bun's test runner.
func TestJSClientSuitePassesUnderBun(t *testing.T) {
	bun := npmInstalled(t, jsClientDir, "node_modules/.bin/bun")
	runJSClientTests(t, bun, "test")
}
