package stdoutreceiver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/forward"
	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/stdin"
	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/tail"
)

// extHost is a component.Host with the given extensions.
type extHost map[component.ID]component.Component

func (h extHost) GetExtensions() map[component.ID]component.Component { return h }

var storageID = component.MustNewID("file_storage")

// fileStorage starts a real file_storage extension keeping its data in dir.
func fileStorage(t *testing.T, dir string) extHost {
	t.Helper()
	f := filestorage.NewFactory()
	cfg := f.CreateDefaultConfig().(*filestorage.Config)
	cfg.Directory = dir
	ext, err := f.Create(context.Background(), extensiontest.NewNopSettings(f.Type()), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := ext.Start(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ext.Shutdown(context.Background()) })
	return extHost{storageID: ext}
}

func filesConfig(dir string) *Config {
	cfg := createDefaultConfig().(*Config)
	cfg.Stdin = configoptional.None[stdin.Config]()
	cfg.Forward = configoptional.None[forward.Config]()
	fc := tail.NewDefaultConfig()
	fc.Include = []string{filepath.Join(dir, "*.log")}
	fc.StartAt = tail.StartAtBeginning
	fc.Format = tail.FormatRaw
	fc.PollInterval = 20 * time.Millisecond
	cfg.Files = configoptional.Some(fc)
	id := storageID
	cfg.Storage = &id
	return cfg
}

func waitRecords(t *testing.T, sink *consumertest.LogsSink, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for sink.LogRecordCount() < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d records after 30s, want %d", sink.LogRecordCount(), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func bodies(sink *consumertest.LogsSink) []string {
	var out []string
	for _, ld := range sink.AllLogs() {
		forEachRecord(ld, func(_ plog.ScopeLogs, lr plog.LogRecord) { out = append(out, lr.Body().Str()) })
	}
	return out
}

// The files transport gets its offsets store from the storage extension
// named in the config: a second receiver on the same storage resumes where
// the first stopped, with no line lost or repeated.
func TestReceiverFilesResumeFromStorage(t *testing.T) {
	logDir, storeDir := t.TempDir(), t.TempDir()
	path := filepath.Join(logDir, "app.log")
	if err := os.WriteFile(path, []byte("one\ntwo\nthree\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f := NewFactory()
	set := receivertest.NewNopSettings(f.Type()) // the same receiver ID in both runs
	run := func(sink *consumertest.LogsSink, want int) {
		host := fileStorage(t, storeDir)
		r, err := f.CreateLogs(context.Background(), set, filesConfig(logDir), sink)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Start(context.Background(), host); err != nil {
			t.Fatal(err)
		}
		waitRecords(t, sink, want)
		if err := r.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		for _, ext := range host {
			if err := ext.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
	}
	first := new(consumertest.LogsSink)
	run(first, 3)
	if got := strings.Join(bodies(first), ","); got != "one,two,three" {
		t.Fatalf("first run read %s", got)
	}
	res := first.AllLogs()[0].ResourceLogs().At(0).Resource().Attributes()
	if v, _ := res.Get("log.file.path"); v.Str() != path {
		t.Errorf("log.file.path = %q", v.Str())
	}

	fh, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprint(fh, "four\nfive\n")
	fh.Close()
	second := new(consumertest.LogsSink)
	run(second, 2)
	if got := strings.Join(bodies(second), ","); got != "four,five" {
		t.Fatalf("after a restart read %s, want four,five", got)
	}
}

func TestReceiverStorageErrors(t *testing.T) {
	for name, host := range map[string]extHost{
		"missing":       {},
		"not a storage": {storageID: componentWithoutStorage{}},
	} {
		t.Run(name, func(t *testing.T) {
			f := NewFactory()
			r, err := f.CreateLogs(context.Background(), receivertest.NewNopSettings(f.Type()), filesConfig(t.TempDir()), new(consumertest.LogsSink))
			if err != nil {
				t.Fatal(err)
			}
			defer r.Shutdown(context.Background())
			if err := r.Start(context.Background(), host); err == nil || !strings.Contains(err.Error(), "storage") {
				t.Fatalf("Start error %v, want a storage error", err)
			}
		})
	}
}

type componentWithoutStorage struct{}

func (componentWithoutStorage) Start(context.Context, component.Host) error { return nil }
func (componentWithoutStorage) Shutdown(context.Context) error              { return nil }
