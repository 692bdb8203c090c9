package jsontext

import (
	"fmt"
	"testing"
)

// BenchmarkMembersPino walks ~300-byte pino lines (the decoder's benchmark
// line, receivers/stdoutreceiver/internal/decode) with Members, the walk the
// stdin decoder makes of every JSON line. Count it under valgrind to judge a
// change to walk without the rest of the decoder.
func BenchmarkMembersPino(b *testing.B) {
	lines := make([][]byte, 1024)
	size := 0
	for i := range lines {
		lines[i] = fmt.Appendf(nil, `{"level":30,"time":%d,"pid":4242,"hostname":"ip-10-0-1-17.ec2.internal",`+
			`"req":{"id":"req-%08d","method":"GET","url":"/api/orders/%d?include=items","remoteAddress":"10.0.3.4"},`+
			`"res":{"statusCode":200},"responseTime":%d.25,"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","msg":"request completed"}`,
			1764504000000+i, i, i%1000, i%300)
		size += len(lines[i])
	}
	members := make([]Member, 0, 16)
	b.SetBytes(int64(size / len(lines)))
	b.ReportAllocs()
	for b.Loop() {
		for _, line := range lines {
			var ok bool
			if members, _, ok = Members(line, 0, members); !ok || len(members) != 9 {
				b.Fatalf("%s: %d members, %v", line, len(members), ok)
			}
		}
	}
}
