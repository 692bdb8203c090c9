package dirstorage

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"golang.org/x/sys/unix"

	"github.com/sidecarhq/sidecar/extensions/dirstorage/internal/metadata"
)

func startClient(t *testing.T, dir, name string) storage.Client {
	t.Helper()
	ext, err := newExtension(&Config{Directory: dir}, extensiontest.NewNopSettings(metadata.Type))
	if err != nil {
		t.Fatal(err)
	}
	if err := ext.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	c, err := ext.GetClient(context.Background(), component.KindExporter, component.MustNewID("axiom"), name)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestClientKeepsValuesAcrossOpens(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	c := startClient(t, dir, "logs")
	for key, value := range map[string]string{"qmv0": "meta", "0": "item zero", "../x": "odd key", ".": "dot", "": "empty"} {
		if err := c.Set(ctx, key, []byte(value)); err != nil {
			t.Fatalf("Set(%q): %v", key, err)
		}
	}
	if err := c.Delete(ctx, "0"); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, "never-set"); err != nil {
		t.Errorf("deleting a missing key: %v", err)
	}

	again := startClient(t, dir, "logs") // the next process
	for key, want := range map[string]string{"qmv0": "meta", "../x": "odd key", ".": "dot", "": "empty"} {
		if got, err := again.Get(ctx, key); err != nil || string(got) != want {
			t.Errorf("Get(%q) = %q, %v; want %q", key, got, err, want)
		}
	}
	if got, err := again.Get(ctx, "0"); got != nil || err != nil {
		t.Errorf("deleted key: %q, %v; want nil, nil", got, err)
	}
	if got, err := startClient(t, dir, "traces").Get(ctx, "qmv0"); got != nil || err != nil {
		t.Errorf("another client sees %q, %v", got, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "x")); err == nil {
		t.Error("a key escaped its client's directory")
	}
}

func TestBatchAppliesDistinctKeysLastFirst(t *testing.T) {
	ctx := context.Background()
	c := startClient(t, t.TempDir(), "")
	if err := c.Set(ctx, "item", []byte("old")); err != nil {
		t.Fatal(err)
	}
	get := storage.GetOperation("item")
	// Read first, so that reversed it would see the new value.
	if err := c.Batch(ctx, get, storage.SetOperation("item", []byte("new"))); err != nil {
		t.Fatal(err)
	}
	if string(get.Value) != "old" {
		t.Errorf("ops on one key ran out of order: read %q", get.Value)
	}
	// The queue's shape: bookkeeping first, item second. Make the item's
	// write fail: the bookkeeping must not have been written.
	blocked := filepath.Join(c.(*client).dir, escape("1")+"#")
	if err := os.Mkdir(blocked, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(blocked, "x"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	err := c.Batch(ctx, storage.SetOperation("meta", []byte("points at 1")), storage.SetOperation("1", []byte("item one")))
	if err == nil {
		t.Fatal("the item's write did not fail; the test shows nothing")
	}
	if got, _ := c.Get(ctx, "meta"); got != nil {
		t.Errorf("bookkeeping %q was written although its item was not", got)
	}
}

// A key rewritten with values of every size (in place when small, renamed
// when large or new) always reads back as exactly its last value, from the
// writing client and from the next process.
func TestRewrittenKeyReadsBackItsLastValue(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	c := startClient(t, dir, "logs")
	values := [][]byte{
		[]byte("a long first value of the bookkeeping key"),
		[]byte("short"),
		make([]byte, 10000), // over a page: renamed
		[]byte("small again, in place over the large file"),
		{},
	}
	for i, v := range values {
		if err := c.Set(ctx, "qmv0", v); err != nil {
			t.Fatal(err)
		}
		for _, reader := range []storage.Client{c, startClient(t, dir, "logs")} {
			got, err := reader.Get(ctx, "qmv0")
			if err != nil || string(got) != string(v) {
				t.Fatalf("write %d: read %d bytes %q, %v; want %d bytes", i, len(got), got, err, len(v))
			}
		}
	}
	if err := c.Delete(ctx, "qmv0"); err != nil {
		t.Fatal(err)
	}
	if err := c.Set(ctx, "qmv0", []byte("after delete")); err != nil {
		t.Fatal(err)
	}
	if got, _ := startClient(t, dir, "logs").Get(ctx, "qmv0"); string(got) != "after delete" {
		t.Fatalf("after delete and set: %q", got)
	}
	if err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}
	// A file this extension did not write is an error, not a value.
	if err := os.WriteFile(filepath.Join(c.(*client).dir, "qmv0"), []byte("xx"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(ctx, "qmv0"); err == nil {
		t.Error("a foreign file was read as a value")
	}
}

// The persistent queue's move at start (read the requests an earlier
// process was sending, delete them in one batch, write them again under
// new keys) must not lose them to a kill in between: a batch of deletes
// only takes effect at the next batch that reads.
func TestBatchOfDeletesWaitsForTheNextRead(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	c := startClient(t, dir, "logs")
	for _, key := range []string{"qmv0", "7", "8"} {
		if err := c.Set(ctx, key, []byte("v"+key)); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Batch(ctx, storage.DeleteOperation("7"), storage.DeleteOperation("8")); err != nil {
		t.Fatal(err)
	}
	if v, err := c.Get(ctx, "7"); err != nil || v != nil {
		t.Fatalf("a deleted key reads %q, %v", v, err)
	}
	if err := c.Batch(ctx, storage.SetOperation("qmv0", []byte("meta")), storage.SetOperation("9", []byte("v7"))); err != nil {
		t.Fatal(err)
	}
	// Killed here, the next process still finds the requests.
	if v, _ := startClient(t, dir, "logs").Get(ctx, "8"); string(v) != "v8" {
		t.Fatalf("after the delete batch the next process reads %q", v)
	}
	files := filepath.Join(dir, "exporter_axiom__logs")
	if _, err := os.Stat(filepath.Join(files, "8")); err != nil {
		t.Fatalf("the deleted request's file is gone before the next read: %v", err)
	}
	get := storage.GetOperation("9")
	if err := c.Batch(ctx, storage.SetOperation("qmv0", []byte("meta2")), get); err != nil || string(get.Value) != "v7" {
		t.Fatalf("read %q, %v", get.Value, err)
	}
	for _, key := range []string{"7", "8"} {
		if _, err := os.Stat(filepath.Join(files, key)); !os.IsNotExist(err) {
			t.Fatalf("%s still on disk after the next read: %v", key, err)
		}
	}
}

// The move's writes take the old keys' files: a kill part way through it
// leaves each request under one key, the new one or the old one, so the
// next start (which moves the old keys still listed) sends none twice.
func TestMoveKilledHalfWayLeavesEachRequestOnce(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	c := startClient(t, dir, "logs")
	for _, key := range []string{"7", "8", "9"} {
		if err := c.Set(ctx, key, []byte("request "+key)); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Batch(ctx, storage.DeleteOperation("7"), storage.DeleteOperation("8"), storage.DeleteOperation("9")); err != nil {
		t.Fatal(err)
	}
	for i, key := range []string{"10", "11"} { // 7 and 8 moved, then killed
		meta := []byte("meta listing 7 8 9 as being sent, write index " + key)
		value := []byte("request " + []string{"7", "8"}[i])
		if err := c.Batch(ctx, storage.SetOperation("qmv0", meta), storage.SetOperation(key, value)); err != nil {
			t.Fatal(err)
		}
	}
	next := startClient(t, dir, "logs")
	copies := map[string][]string{}
	for _, key := range []string{"7", "8", "9", "10", "11"} {
		v, err := next.Get(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if v != nil {
			copies[string(v)] = append(copies[string(v)], key)
		}
	}
	for _, want := range []string{"request 7", "request 8", "request 9"} {
		if len(copies[want]) != 1 {
			t.Errorf("%q is under keys %v after the kill: want exactly one", want, copies[want])
		}
	}
	if got := copies["request 7"]; len(got) == 1 && got[0] != "10" {
		t.Errorf("request 7 is under %v, not its new key 10", got)
	}
}

// writeBoth writes the header and then the whole value, here through a
// pipe whose reader takes them 64 KiB at a time.
func TestWriteBothWritesHeaderThenValue(t *testing.T) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil { // blocking, as a regular file's writes are
		t.Fatal(err)
	}
	r := os.NewFile(uintptr(p[0]), "pipe")
	defer r.Close()
	header, value := []byte("head"), make([]byte, 1<<20)
	for i := range value {
		value[i] = byte(i * 7)
	}
	got := make(chan []byte)
	go func() { b, _ := io.ReadAll(r); got <- b }()
	err := writeBoth(p[1], header, value)
	unix.Close(p[1])
	if err != nil {
		t.Fatal(err)
	}
	if b := <-got; !bytes.Equal(b, append(header, value...)) {
		t.Errorf("the pipe got %d bytes, not the %d of the header and value", len(b), len(header)+len(value))
	}
}

// A key's file is read whole, and a missing one reads as no value.
func TestReadFileReadsTheWholeFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "k")
	want := bytes.Repeat([]byte("0123456789"), 100_000)
	if err := os.WriteFile(path, want, 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := readFile(path); err != nil || !bytes.Equal(b, want) {
		t.Errorf("readFile: %d bytes, %v; want %d", len(b), err, len(want))
	}
	if _, err := readFile(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("readFile of a missing file: %v; want fs.ErrNotExist", err)
	}
}
