package fluentrecords

import (
	"testing"
	"time"

	"github.com/tinylib/msgp/msgp"

	"github.com/sidecarhq/sidecar/internal/workload"
)

func entry(b []byte, sec int64, fields ...[2]string) []byte {
	b = msgp.AppendArrayHeader(b, 2)
	b = msgp.AppendInt64(b, sec)
	b = msgp.AppendMapHeader(b, uint32(len(fields)))
	for _, f := range fields {
		b = msgp.AppendString(b, f[0])
		b = msgp.AppendString(b, f[1])
	}
	return b
}

func TestDecodeGivesTheReceiversRecords(t *testing.T) {
	chunk := entry(nil, 1764504000, [2]string{"log", `{"level":50,"time":1764504000123,"msg":"boom"}`}, [2]string{"source", "stderr"}, [2]string{"container_name", "app"})
	chunk = entry(chunk, 1764504001, [2]string{"log", "plain text"}, [2]string{"container_name", "app"})
	chunk = entry(chunk, 1764504002, [2]string{"nolog", "x"}) // no line: skipped and counted
	d := New(0, nil, []workload.Attr{{Key: "aws.ecs.task.id", Value: "t1"}})
	for range 2 { // buffers are reused from chunk to chunk
		ld, err := d.Decode("app-firelens", chunk, time.Unix(1764504100, 0))
		if err != nil {
			t.Fatal(err)
		}
		if ld.LogRecordCount() != 2 {
			t.Fatalf("%d records, want 2", ld.LogRecordCount())
		}
		rl := ld.ResourceLogs().At(0)
		res := rl.Resource().Attributes()
		for k, want := range map[string]string{"container_name": "app", "fluent.tag": "app-firelens", "aws.ecs.task.id": "t1"} {
			if v, ok := res.Get(k); !ok || v.Str() != want {
				t.Errorf("resource %s = %v, want %q", k, v.AsRaw(), want)
			}
		}
		rec := rl.ScopeLogs().At(0).LogRecords().At(0)
		if got := rec.Body().Str(); got != `{"level":"error","_time":1764504000123,"msg":"boom"}` {
			t.Errorf("JSON line body %s", got)
		}
		if rec.SeverityText() != "error" || rec.Timestamp().AsTime().UnixMilli() != 1764504000123 {
			t.Errorf("severity %q time %v", rec.SeverityText(), rec.Timestamp().AsTime())
		}
	}
	if d.BadRecords() != 2 {
		t.Errorf("bad records %d, want the record without a line twice", d.BadRecords())
	}
}
