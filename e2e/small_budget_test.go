package e2e

import (
	"bufio"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sidecarhq/sidecar/internal/axiomtest"
)

// The smallest memory budget the config accepts (8.5 MiB) holds an in-memory queue
// of about one request (1 MiB), smaller than what one stdin batch of
// ~300-byte lines at max rate weighs (1 MiB of lines, more as events): the
// batch must still go (in parts), not be refused on every retry with the
// app's writes blocked behind it for good.
func TestStdinAtTheSmallestBudgetNeverBlocksForGood(t *testing.T) {
	for _, tc := range []struct {
		name     string
		exporter yamlMap
		storage  bool
	}{
		{"memory queue", yamlMap{"memory": "8704KiB", "sending_queue": yamlMap{"block_on_overflow": false}}, false},
		{"disk queue", yamlMap{"memory": "8704KiB", "disk": "2176KiB"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := axiomtest.NewForTest(t)
			cfg := stdinConfig(fake.URL(), yamlMap{"when_full": "block"}, tc.exporter)
			if tc.storage {
				cfg.extensions = yamlMap{"dir_storage": yamlMap{"directory": t.TempDir()}}
				cfg.exporters["axiom"].(yamlMap)["sending_queue"] = yamlMap{"storage": "dir_storage"}
			}
			s := StartSidecar(t, cfg.yaml(), WithStdin())
			w := bufio.NewWriterSize(s.Stdin, 1<<20)
			pad := strings.Repeat("p", 220) // ~300-byte lines, as pino's with a request's fields
			const n = 60000
			done := make(chan error, 1)
			go func() {
				for i := range n {
					fmt.Fprintf(w, `{"level":30,"time":%d,"pid":1,"hostname":"h","seq":%d,"pad":"%s","msg":"line %d"}`+"\n", 1767225600000+i, i, pad, i)
				}
				if err := w.Flush(); err != nil {
					done <- err
					return
				}
				done <- s.Stdin.Close()
			}()
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(60 * time.Second):
				s.Kill(t)
				t.Fatalf("the app's writes still blocked after 60 s:\n%s", lastOf(s.Logs(), 3000))
			}
			code, err := s.Wait(60 * time.Second)
			if err != nil || code != 0 {
				t.Fatalf("exit %d, %v:\n%s", code, err, lastOf(s.Logs(), 3000))
			}
			if missing, duplicated := countSeqs(t, fake.Events("app-logs"), n); missing != 0 || duplicated != 0 {
				t.Fatalf("%d of %d lines missing, %d duplicated", missing, n, duplicated)
			}
		})
	}
}

func lastOf(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
