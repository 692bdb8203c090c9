package cachegrind

import (
	"os"
	"path/filepath"
	"testing"
)

func TestInstructionRefs(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "cg.log")
	// As valgrind 3.19 writes it at exit (cache simulation off).
	if err := os.WriteFile(log, []byte("==123== \n==123== I   refs:      3,046,589,067\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	n, err := InstructionRefs(log)
	if err != nil || n != 3046589067 {
		t.Fatalf("InstructionRefs = %d, %v; want 3046589067", n, err)
	}
	empty := filepath.Join(dir, "empty.log")
	if err := os.WriteFile(empty, []byte("==123== killed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := InstructionRefs(empty); err == nil {
		t.Fatal("a log without a count: no error")
	}
}
