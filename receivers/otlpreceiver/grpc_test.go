package otlpreceiver

import (
	"bytes"
	"context"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// goroutineID is the running goroutine's number, from its stack's header
// ("goroutine 42 [running]:").
func goroutineID() uint64 {
	b := make([]byte, 64)
	b = b[:runtime.Stack(b, false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	id, _ := strconv.ParseUint(string(b[:bytes.IndexByte(b, ' ')]), 10, 64)
	return id
}

// Exports are handled on gRPC's stream workers, whose stacks have grown to
// what a request needs, rather than on a new goroutine each, which grew
// its stack (copying it) on every request.
func TestGRPCExportsRunOnReusedGoroutines(t *testing.T) {
	var mu sync.Mutex
	handlers := map[uint64]bool{}
	sink, _ := consumer.NewTraces(func(context.Context, ptrace.Traces) error {
		mu.Lock()
		defer mu.Unlock()
		handlers[goroutineID()] = true
		return nil
	})
	r := start(t, testConfig(t), sinks{traces: sink})
	client := ptraceotlp.NewGRPCClient(dial(t, r.grpcAddr()))
	const exports = 10
	for range exports {
		if _, err := client.Export(context.Background(), ptraceotlp.NewExportRequestFromTraces(traces("a"))); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond) // the worker is back waiting for the next
	}
	if n := len(handlers); n > runtime.GOMAXPROCS(0) {
		t.Fatalf("%d exports ran on %d goroutines, want at most GOMAXPROCS (%d) workers", exports, n, runtime.GOMAXPROCS(0))
	}
}
