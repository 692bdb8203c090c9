package otlpreceiver

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/plog"
)

// logsOf is one resource's records with the given bodies, each with a
// time unless its body starts with "untimed".
func logsOf(bodies ...string) plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", "shop")
	lrs := rl.ScopeLogs().AppendEmpty().LogRecords()
	for _, b := range bodies {
		lr := lrs.AppendEmpty()
		lr.Body().SetStr(b)
		if len(b) < 7 || b[:7] != "untimed" {
			lr.SetTimestamp(1764504000000000000)
		}
	}
	return ld
}

func bodiesOf(ld plog.Logs) []string {
	var out []string
	eachLogRecord(ld, func(lr plog.LogRecord) { out = append(out, lr.Body().Str()) })
	return out
}

// Records taken from a request refused in part are skipped once when it
// comes back, identical ones counted: of two identical records one taken
// and one refused, the retry offers one. A third try (or another request
// with the same records) skips nothing: each skip forgets its record.
func TestTakenLogsSkipEachTakenRecordOnce(t *testing.T) {
	tk := newTakenLogs()
	offered := logsOf("a", "a", "b", "c")
	tk.remember(offered, logsOf("a", "c"), nil)
	retry := logsOf("a", "a", "b", "c")
	skipped := tk.skip(retry)
	if got := bodiesOf(retry); len(skipped) != 2 || len(got) != 2 || got[0] != "a" || got[1] != "c" {
		t.Fatalf("the retry offers %q (%d skipped), want [a c]", got, len(skipped))
	}
	again := logsOf("a", "a", "b", "c")
	if tk.skip(again); again.LogRecordCount() != 4 {
		t.Fatalf("a record skipped twice: %q left", bodiesOf(again))
	}
	// A retry refused whole is sent again: what it skipped is remembered again.
	tk.remember(retry, retry, skipped)
	third := logsOf("a", "a", "b", "c")
	if tk.skip(third); third.LogRecordCount() != 2 {
		t.Fatalf("after a retry refused whole, %q left, want [a c]", bodiesOf(third))
	}
}

// A record without a time is not remembered (identical ones are likely two
// events), and nothing is when the rest is not records of the request as
// offered.
func TestTakenLogsRememberOnlyWhatTheyCanKnow(t *testing.T) {
	tk := newTakenLogs()
	tk.remember(logsOf("untimed", "b"), plog.NewLogs(), nil)
	retry := logsOf("untimed", "b")
	if tk.skip(retry); len(bodiesOf(retry)) != 1 || bodiesOf(retry)[0] != "untimed" {
		t.Fatalf("the retry offers %q, want [untimed]", bodiesOf(retry))
	}
	tk = newTakenLogs()
	tk.remember(logsOf("a", "b"), logsOf("changed"), nil)
	if tk.count != 0 {
		t.Fatalf("%d records remembered from a rest that is not part of the request", tk.count)
	}
}

// Remembered records are forgotten after takenFor, and never more than
// maxTaken are kept.
func TestTakenLogsAreBounded(t *testing.T) {
	tk := newTakenLogs()
	tk.remember(logsOf("x", "y"), plog.NewLogs(), nil)
	big := plog.NewLogs()
	lrs := big.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
	for i := range maxTaken + 10 {
		lr := lrs.AppendEmpty()
		lr.SetTimestamp(1)
		lr.Body().SetInt(int64(i))
	}
	for k, e := range tk.taken { // older than big's
		e.at--
		tk.taken[k] = e
	}
	tk.remember(big, plog.NewLogs(), nil)
	if tk.count > maxTaken {
		t.Fatalf("%d records remembered, at most %d", tk.count, maxTaken)
	}
	old := logsOf("x", "y")
	if tk.skip(old); old.LogRecordCount() != 2 {
		t.Fatal("the oldest were kept over maxTaken")
	}
	tk.until.Store(1) // as if takenFor had passed
	if tk.skip(big); big.LogRecordCount() != maxTaken+10 || tk.taken != nil {
		t.Fatalf("after takenFor %d skipped", maxTaken+10-big.LogRecordCount())
	}
}
