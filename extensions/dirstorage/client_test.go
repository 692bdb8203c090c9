package dirstorage

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
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

// A deleted key's file is kept as a spare (up to maxSpares, each up to
// maxSpareSize) and the next writes through a file overwrite the spares,
// larger or smaller than what they held, so that the kernel reuses the
// pages it cached for them. Every key reads back exactly its value, from
// the writer and the next process; a spare is never a key's value, and
// Close removes the spares.
func TestDeletedFilesAreReusedByLaterWrites(t *testing.T) {
	for _, fsync := range []bool{false, true} {
		ctx := context.Background()
		dir := t.TempDir()
		c := &client{dir: dir, fsync: fsync}
		// Random bytes, which pack leaves as they are: the sizes below
		// are the files' sizes.
		value := func(key, n int) []byte {
			b := make([]byte, n)
			var seed [32]byte
			seed[0], seed[1] = byte(key), byte(n)
			_, _ = rand.NewChaCha8(seed).Read(b)
			return b
		}
		sizes := map[int]int{}
		for key := range maxSpares + 2 {
			sizes[key] = 5000 + 3000*key
			if err := c.Set(ctx, strconv.Itoa(key), value(key, sizes[key])); err != nil {
				t.Fatal(err)
			}
		}
		tooLarge := strconv.Itoa(maxSpares + 2)
		if err := c.Set(ctx, tooLarge, value(0, maxSpareSize+1)); err != nil {
			t.Fatal(err)
		}
		if err := c.Delete(ctx, tooLarge); err != nil { // first, while a slot is free
			t.Fatal(err)
		}
		spareInodes := map[uint64]bool{}
		for key := range maxSpares + 2 {
			if err := c.Delete(ctx, strconv.Itoa(key)); err != nil {
				t.Fatal(err)
			}
		}
		for slot := range maxSpares {
			var st unix.Stat_t
			if err := unix.Stat(c.sparePath(slot), &st); err != nil {
				t.Fatalf("fsync %v: spare %d: %v", fsync, slot, err)
			}
			if st.Size > maxSpareSize {
				t.Fatalf("fsync %v: a file of %d bytes was kept as a spare", fsync, st.Size)
			}
			spareInodes[st.Ino] = true
		}
		if entries, _ := os.ReadDir(dir); len(entries) != maxSpares {
			t.Fatalf("fsync %v: %d files after deleting every key; want the %d spares", fsync, len(entries), maxSpares)
		}
		next := &client{dir: dir}
		for key := range maxSpares + 3 {
			if v, err := next.Get(ctx, strconv.Itoa(key)); v != nil || err != nil {
				t.Fatalf("fsync %v: deleted key %d reads %d bytes, %v", fsync, key, len(v), err)
			}
		}

		// Smaller and larger than any spare held; two more than the spares.
		reused := 0
		for i := range maxSpares + 2 {
			key, n := 100+i, []int{10, 40000}[i%2]
			sizes[key] = n
			if err := c.Set(ctx, strconv.Itoa(key), value(key, n)); err != nil {
				t.Fatal(err)
			}
			var st unix.Stat_t
			if err := unix.Stat(c.path(strconv.Itoa(key)), &st); err != nil {
				t.Fatal(err)
			}
			if spareInodes[st.Ino] {
				reused++
			}
			if st.Size != int64(headerSize+n) {
				t.Errorf("fsync %v: key %d's file has %d bytes; want %d", fsync, key, st.Size, headerSize+n)
			}
		}
		if reused != maxSpares {
			t.Errorf("fsync %v: %d writes took a spare's file; want %d", fsync, reused, maxSpares)
		}
		for key := 100; key < 100+maxSpares+2; key++ {
			for _, reader := range []*client{c, next} {
				got, err := reader.Get(ctx, strconv.Itoa(key))
				if err != nil || !bytes.Equal(got, value(key, sizes[key])) {
					t.Fatalf("fsync %v: key %d reads %d bytes, %v; want %d", fsync, key, len(got), err, sizes[key])
				}
			}
		}
		if err := c.Delete(ctx, "100"); err != nil {
			t.Fatal(err)
		}
		if err := c.Close(ctx); err != nil {
			t.Fatal(err)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != maxSpares+1 {
			t.Errorf("fsync %v: %d files after Close; want the %d keys left, no spare", fsync, len(entries), maxSpares+1)
		}
	}
}

// A spare that a killed process left behind is neither read as a key nor
// in the way: the next write into its slot replaces it.
func TestASpareLeftByAKilledProcessIsReplaced(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	c := &client{dir: dir}
	if err := os.WriteFile(c.sparePath(0), []byte("left by a killed process"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := c.Set(ctx, "1", []byte("one")); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, "1"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(c.sparePath(0))
	if err != nil || !bytes.Contains(b, []byte("one")) {
		t.Fatalf("slot 0 holds %q, %v; want the deleted key's file", b, err)
	}
	if err := c.Set(ctx, "2", []byte("two")); err != nil {
		t.Fatal(err)
	}
	if got, err := c.Get(ctx, "2"); err != nil || string(got) != "two" {
		t.Fatalf("read %q, %v", got, err)
	}
}

// A large value that compresses is stored packed (smaller than it is) and
// reads back whole, from the client that wrote it and from a new one (a
// restart); a large value in the unpacked form earlier versions wrote
// still reads, so a queue left by them drains after an upgrade.
func TestLargeValuesArePackedAndEarlierFilesRead(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	c := &client{dir: dir}
	line := []byte(`{"level":30,"time":1733140000000,"pid":7,"hostname":"app","msg":"request served","status":200}` + "\n")
	packed := bytes.Repeat(line, 10000)
	if err := c.Set(ctx, "1", packed); err != nil {
		t.Fatal(err)
	}
	var st unix.Stat_t
	if err := unix.Stat(c.path("1"), &st); err != nil {
		t.Fatal(err)
	}
	if st.Size >= int64(len(packed))/2 {
		t.Errorf("a %d-byte value of log lines takes %d bytes on disk; want it packed", len(packed), st.Size)
	}
	earlier := bytes.Repeat([]byte("earlier "), 8000)
	file := append([]byte(magic), 0, 0, 0, 0)
	binary.LittleEndian.PutUint32(file[len(magic):], uint32(len(earlier)))
	if err := os.WriteFile(c.path("2"), append(file, earlier...), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, reader := range []*client{c, {dir: dir}} {
		if got, err := reader.Get(ctx, "1"); err != nil || !bytes.Equal(got, packed) {
			t.Errorf("packed value reads back %d bytes, %v; want %d", len(got), err, len(packed))
		}
		if got, err := reader.Get(ctx, "2"); err != nil || !bytes.Equal(got, earlier) {
			t.Errorf("earlier unpacked value reads back %d bytes, %v; want %d", len(got), err, len(earlier))
		}
	}
}
