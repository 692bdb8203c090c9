package freeport

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

func TestAddrIsBindableBelowTheEphemeralRangeAndHeldUntilTheTestEnds(t *testing.T) {
	seen := map[string]bool{}
	var held string
	t.Run("holder", func(t *testing.T) {
		for range 50 {
			addr := Addr(t)
			if seen[addr] {
				t.Fatalf("%s handed out twice", addr)
			}
			seen[addr] = true
			_, p, _ := net.SplitHostPort(addr)
			port, _ := strconv.Atoi(p)
			if port < lowest || port >= ephemeralStart() {
				t.Fatalf("port %d outside %d-%d", port, lowest, ephemeralStart()-1)
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				t.Fatalf("the process under test cannot bind %s: %v", addr, err)
			}
			ln.Close()
			held = p
		}
		// Another claimant (here another open file, as another process
		// would have) cannot take a port while its test runs...
		port, _ := strconv.Atoi(held)
		if f, ok := claim(filepath.Join(os.TempDir(), "sidecar-test-ports"), port); ok {
			f.Close()
			t.Fatalf("port %d claimed twice", port)
		}
	})
	// ...and can once it has ended.
	port, _ := strconv.Atoi(held)
	f, ok := claim(filepath.Join(os.TempDir(), "sidecar-test-ports"), port)
	if !ok {
		t.Fatalf("port %d still held after its test ended", port)
	}
	f.Close()
}
