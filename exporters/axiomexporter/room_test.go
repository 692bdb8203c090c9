package axiomexporter

import (
	"context"
	"errors"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sidecarhq/sidecar/internal/backpressure"
)

// The floor that refuses data without weighing it is never above its
// weight, whatever the records hold, and for stdin's lines it is close
// enough to the weight to tell a full queue from one with room.
func TestFloorIsAtMostTheWeight(t *testing.T) {
	mapBody := plog.NewLogs()
	lrs := mapBody.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
	lrs.AppendEmpty().Body().SetEmptyMap().PutStr("msg", "a map body")
	lrs.AppendEmpty().Body().SetInt(42)
	lrs.AppendEmpty() // no body
	lrs.AppendEmpty().Body().SetStr("\x01\xff invalid UTF-8 and controls, escaped longer")
	for name, ld := range map[string]plog.Logs{
		"pino lines": pinoLines(500), "forward records": forwardRecords(500), "firelens records": fireLensRecords(500),
		"text lines": stringLogs(500), "no timestamps": sizedLogs(10, 200, 3000, 1<<20),
		"with a resource": stdoutRecords(50, shortLine, nil, map[string]string{"fluent.tag": "app"}),
		"other bodies":    mapBody,
	} {
		for _, batch := range []int64{1000, 2 << 20} {
			w := newLogsWeigher(batch)
			if floor, weight := w.floor(ld), w.weigh(ld); floor > weight {
				t.Errorf("%s, batch %d: floor %d over the weight %d", name, batch, floor, weight)
			} else if name == "pino lines" && batch > 1000 && floor < weight*9/10 {
				t.Errorf("pino lines: floor %d under 90%% of the weight %d", floor, weight)
			}
		}
	}
}

// An offer that cannot fit beside what the queue holds is refused without
// reaching the queue: by its floor, or by the figure its refusal carried
// when the receiver retries after it (the floor, or the weight the queue
// found), however many other offers came between. Never while the queue
// holds nothing, and data that fits goes to the queue, which alone admits
// (and weighs) it.
func TestRoomRefusesWhatCannotFitWithoutWeighing(t *testing.T) {
	w := newLogsWeigher(2 << 20)
	ld := pinoLines(100)
	floor, weight := int64(w.floor(ld)), int64(w.weigh(ld))
	if floor >= weight {
		t.Fatalf("test needs a floor (%d) under the weight (%d)", floor, weight)
	}
	room := &queueRoom{capacity: 10 * weight, w: w}
	pushes, full := 0, false
	push := func(ctx context.Context, ld plog.Logs) error {
		pushes++
		r := w.request(ld)
		made(ctx, r)
		r.BytesSize() // the queue weighs it
		if full {
			return exporterhelper.ErrQueueIsFull
		}
		return nil
	}
	// expect offers ld, retrying after the refusal after when not nil, and
	// returns the offer's refusal.
	expect := func(step string, ld plog.Logs, after error, wantPush bool, wantErr error) error {
		t.Helper()
		ctx := context.Background()
		if after != nil {
			ctx = backpressure.Retry(ctx, after)
		}
		before := pushes
		err := room.offer(ctx, ld, push)
		if !errors.Is(err, wantErr) || (err == nil) != (wantErr == nil) {
			t.Errorf("%s: offer returned %v, want %v", step, err, wantErr)
		} else if err != nil && backpressure.Freed(err) == nil {
			t.Errorf("%s: a refusal for want of room does not say when there is room", step)
		}
		if got := pushes > before; got != wantPush {
			t.Errorf("%s: reached the queue: %v, want %v", step, got, wantPush)
		}
		return err
	}

	full = true
	refused := expect("empty queue, too heavy even so", ld, nil, true, exporterhelper.ErrQueueIsFull)
	expect("empty queue again: never refused here", ld, refused, true, exporterhelper.ErrQueueIsFull)
	full = false
	ld = pinoLines(100) // the same records, not the data refused above
	room.add(room.capacity - floor + 1)
	refused = expect("floor does not fit", ld, nil, false, exporterhelper.ErrQueueIsFull)
	expect("retried after it", ld, refused, false, exporterhelper.ErrQueueIsFull)
	room.add(-1)
	full = true
	refused = expect("floor fits: the queue decides", ld, nil, true, exporterhelper.ErrQueueIsFull)
	full = false
	expect("retried: its weight, found by the queue, does not fit", ld, refused, false, exporterhelper.ErrQueueIsFull)
	other := pinoLines(1)
	expect("other data that fits", other, nil, true, nil)
	expect("retried after other offers: the weight is still carried", ld, refused, false, exporterhelper.ErrQueueIsFull)
	expect("offered anew: only its floor counts", ld, nil, true, nil)
	lone := pinoLines(100)
	expect("retried after the refusal of other data: only its floor counts", lone, refused, true, nil)
	otherRoom := &queueRoom{capacity: room.capacity, w: w}
	byOtherRoom := otherRoom.refuse(exporterhelper.ErrQueueIsFull, nil, lone, 1<<40)
	expect("retried after another room's refusal: only its floor counts", lone, byOtherRoom, true, nil)
	room.add(-(room.capacity - floor))
	if room.held != 0 {
		t.Fatalf("held %d after every Unref", room.held)
	}

	off := &queueRoom{}
	off.add(1 << 40)
	if err := off.offer(context.Background(), ld, push); err != nil || off.held != 0 {
		t.Errorf("a disabled room refused (%v) or counted (%d)", err, off.held)
	}
}

// A refusal, the room's own or the queue's, carries a channel that the
// next Unref closes, and not before: the receiver retries then. An Unref
// between the offer and the refusal has closed it already.
func TestRoomRefusalSaysWhenThereIsRoom(t *testing.T) {
	w := newLogsWeigher(2 << 20)
	ld := pinoLines(100)
	room := &queueRoom{capacity: int64(w.floor(ld)), w: w}
	queueFull := func(context.Context, plog.Logs) error { return exporterhelper.ErrQueueIsFull }
	ready := func(ch <-chan struct{}) bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}

	room.add(1)
	byRoom := backpressure.Freed(room.offer(context.Background(), ld, queueFull))
	room.add(-1)
	byQueue := backpressure.Freed(room.offer(context.Background(), ld, queueFull))
	if byRoom == nil || byQueue == nil {
		t.Fatal("a refusal without a channel")
	}
	if !ready(byRoom) {
		t.Error("the Unref after the room's refusal did not close its channel")
	}
	if ready(byQueue) {
		t.Error("the queue's refusal is closed before any Unref")
	}
	room.add(1) // a Ref frees nothing
	if ready(byQueue) {
		t.Error("a Ref closed the channel")
	}
	room.add(-1)
	if !ready(byQueue) {
		t.Error("the Unref did not close the queue's refusal's channel")
	}

	racing := func(ctx context.Context, ld plog.Logs) error {
		room.add(-1) // a request finishes while this offer is made
		return exporterhelper.ErrQueueIsFull
	}
	room.add(1)
	room.capacity = 1 << 40 // the room lets it through to the queue
	if !ready(backpressure.Freed(room.offer(context.Background(), ld, racing))) {
		t.Error("room freed during the offer: the refusal must say so at once")
	}
}

// The room follows only a memory queue that refuses when full: a disk
// queue, or one that blocks or waits for results, calls no Ref.
func TestRoomOnlyForAMemoryQueueThatRefuses(t *testing.T) {
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	q := cfg.QueueConfig.Get()
	if q == nil {
		t.Fatal("default config has no queue")
	}
	q.StorageID = nil
	q.WaitForResult, q.BlockOnOverflow = false, false
	if got := newQueueRoom(cfg, nil).capacity; got != q.QueueSize || got <= 0 {
		t.Errorf("memory queue: capacity %d, want its size %d", got, q.QueueSize)
	}
	q.BlockOnOverflow = true
	if got := newQueueRoom(cfg, nil).capacity; got != 0 {
		t.Errorf("blocking queue: capacity %d, want 0 (off)", got)
	}
	q.BlockOnOverflow, q.WaitForResult = false, true
	if got := newQueueRoom(cfg, nil).capacity; got != 0 {
		t.Errorf("queue waiting for results: capacity %d, want 0 (off)", got)
	}
	q.WaitForResult = false
	id := component.MustNewID("file_storage")
	q.StorageID = &id
	if got := newQueueRoom(cfg, nil).capacity; got != 0 {
		t.Errorf("disk queue: capacity %d, want 0 (off)", got)
	}
}
