package queuemeta

import (
	"context"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sidecarhq/sidecar/extensions/dirstorage"
)

type storageHost struct {
	component.Host
	exts map[component.ID]component.Component
}

func (h storageHost) GetExtensions() map[component.ID]component.Component { return h.exts }

func someLogs(n int) plog.Logs {
	ld := plog.NewLogs()
	lrs := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
	for range n {
		lrs.AppendEmpty().Body().SetStr("line")
	}
	return ld
}

// Parse reads what exporterhelper's own persistent queue wrote: requests
// waiting and being sent, and their records, then an empty queue.
func TestParseReadsTheQueuesOwnMetadata(t *testing.T) {
	ctx := context.Background()
	sf := dirstorage.NewFactory()
	scfg := sf.CreateDefaultConfig().(*dirstorage.Config)
	scfg.Directory = t.TempDir()
	ext, err := sf.Create(ctx, extensiontest.NewNopSettings(sf.Type()), scfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := ext.Start(ctx, componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	defer ext.Shutdown(ctx)
	storageID := component.NewID(sf.Type())
	host := storageHost{Host: componenttest.NewNopHost(), exts: map[component.ID]component.Component{storageID: ext}}

	q := exporterhelper.NewDefaultQueueConfig()
	q.StorageID = &storageID
	q.NumConsumers = 1
	q.Batch = configoptional.None[exporterhelper.BatchConfig]()
	set := exportertest.NewNopSettings(component.MustNewType("test"))
	pushing, release := make(chan struct{}, 3), make(chan struct{})
	exp, err := exporterhelper.NewLogs(ctx, set, &struct{}{}, func(context.Context, plog.Logs) error {
		pushing <- struct{}{}
		<-release
		return nil
	}, exporterhelper.WithQueue(configoptional.Some(q)))
	if err != nil {
		t.Fatal(err)
	}
	if err := exp.Start(ctx, host); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{4, 5, 6} {
		if err := exp.ConsumeLogs(ctx, someLogs(n)); err != nil {
			t.Fatal(err)
		}
	}
	<-pushing // one request is being sent, two wait

	client, err := ext.(storage.Extension).GetClient(ctx, component.KindExporter, set.ID, "logs")
	if err != nil {
		t.Fatal(err)
	}
	read := func() Meta {
		b, err := client.Get(ctx, Key)
		if err != nil {
			t.Fatal(err)
		}
		m, err := Parse(b)
		if err != nil {
			t.Fatalf("%x: %v", b, err)
		}
		return m
	}
	if m := read(); m != (Meta{Items: 15, Requests: 3}) {
		t.Fatalf("with one request in flight and two waiting: %+v", m)
	}
	close(release)
	<-pushing
	<-pushing // a persistent queue stops reading at Shutdown: let it send all
	if err := exp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if m := read(); m != (Meta{}) {
		t.Fatalf("after everything was sent: %+v", m)
	}
	if m, err := Parse(nil); err != nil || m != (Meta{}) {
		t.Fatalf("no metadata: %+v, %v", m, err)
	}
}
