package main

import (
	"testing"
	"time"
	"unsafe"

	"github.com/fluent/fluent-bit-go/output"

	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/fluentrecords"
)

// The plugin reads chunks with the forward receiver's record code, not with
// fluent-bit-go's reflection decoder (output.NewDecoder/GetRecord), because
// that is faster even though it does more: the reflection benchmark only
// decodes records into maps, the fluentrecords one goes all the way to the
// log records the exporter sends (JSON line decoding included). Run:
//
//	go test -run '^$' -bench ChunkDecoding -benchtime 2s ./cmd/fluent-bit-axiom
//
// Figures are in bench/RESULTS.md.

func BenchmarkChunkDecodingReflectionToMaps(b *testing.B) {
	chunk := fireLensChunk(false, 0, 1000)
	b.SetBytes(int64(len(chunk)))
	b.ReportAllocs()
	for b.Loop() {
		dec := output.NewDecoder(unsafe.Pointer(&chunk[0]), len(chunk))
		n := 0
		for {
			ret, _, rec := output.GetRecord(dec)
			if ret != 0 {
				break
			}
			if _, ok := rec["log"].([]byte); ok {
				n++
			}
		}
		if n != 1000 {
			b.Fatalf("%d records", n)
		}
	}
	b.ReportMetric(float64(b.N*1000)/b.Elapsed().Seconds(), "records/s")
}

func BenchmarkChunkDecodingForwardToLogRecords(b *testing.B) {
	chunk := fireLensChunk(false, 0, 1000)
	d := fluentrecords.New(0, nil, nil)
	b.SetBytes(int64(len(chunk)))
	b.ReportAllocs()
	for b.Loop() {
		ld, err := d.Decode("app-firelens", chunk, time.Now())
		if err != nil || ld.LogRecordCount() != 1000 {
			b.Fatalf("%d records, %v", ld.LogRecordCount(), err)
		}
	}
	b.ReportMetric(float64(b.N*1000)/b.Elapsed().Seconds(), "records/s")
}
