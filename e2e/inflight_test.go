package e2e

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/klauspost/compress/s2"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/sidecarhq/sidecar/exporters/axiomexporter"
	"github.com/sidecarhq/sidecar/internal/axiomtest"
)

// inFlight is what one kill -9 cut off, and so what the next start may send
// a second time. It is read from the state folder the dead process left and
// from what the fake had stored by then:
//   - exporter: records that Axiom accepted during the run the kill ended
//     but that the disk queue still listed as being sent (handed to the
//     batcher or to an HTTP request): the answer, or the queue's note of
//     it, came too late, and the next start sends them again. (Records
//     accepted in an earlier run and still listed were counted at that
//     run's kill: they are sent again once, however many kills pass
//     before.) The sidecar bounds these: at most num_consumers requests of
//     a batch each, plus one source batch split across two requests
//     (exporterInFlightCap).
//   - reread (files): records past the offset the receiver had saved that
//     were already queued or delivered; the next start reads them again. The
//     offset is saved after every batch, so these are at most the batch
//     being handed over (1 MiB of lines, receivers/stdoutreceiver README).
//
// Forward clients resend what was not acknowledged; the tests count that
// on the client side.
type inFlight struct {
	exporter, exporterBytes int
	reread, rereadBytes     int
}

func (f inFlight) String() string {
	return fmt.Sprintf("%d records accepted by Axiom but still listed as being sent (%.1f KB), %d read again from files (%.1f KB)",
		f.exporter, float64(f.exporterBytes)/1e3, f.reread, float64(f.rereadBytes)/1e3)
}

func (f *inFlight) add(g inFlight) {
	f.exporter += g.exporter
	f.exporterBytes += g.exporterBytes
	f.reread += g.reread
	f.rereadBytes += g.rereadBytes
}

// sourceBatchBytes is the largest batch a source hands to the pipeline (a
// tailed file's 1 MiB; stdin and forward batches are smaller), so the
// largest receiver request the batcher may split across two requests.
const sourceBatchBytes = 1 << 20

// exporterInFlightCap is the most the default config can have accepted by
// Axiom but still listed as being sent at a kill, in bytes: the requests in
// flight (num_consumers, each at most a batch's max_size, both derived from
// the budgets) plus the rest of a source batch the batcher split across two
// requests.
func exporterInFlightCap() int {
	q := axiomexporter.NewFactory().CreateDefaultConfig().(*axiomexporter.Config).QueueConfig.Get()
	return q.NumConsumers*int(q.Batch.Get().MaxSize) + sourceBatchBytes
}

// measureInFlight reads what the kill that just happened cut off. n is how
// many seqs were written so far; logFile is the tailed file (files only,
// else ""), whose lines are seqs 0, 1, ... in order. before is how often
// each seq had arrived at the previous kill; it returns the same now.
func measureInFlight(t *testing.T, fake *axiomtest.Server, state string, n int, logFile string, before []int) (inFlight, []int) {
	t.Helper()
	if !fake.WaitIdle(30 * time.Second) {
		t.Fatal("the fake still has connections open 30 s after the kill")
	}
	arrived, _ := tally(t, fake, "logs", n)
	queue := clientDir(state, "exporter_axiom__logs")
	var f inFlight
	if queue == "" {
		return f, arrived // killed before the queue was opened
	}
	for _, index := range beingSent(t, queue) {
		for _, seq := range seqsIn(t, filepath.Join(queue, strconv.FormatUint(index, 10)), n) {
			if seq >= len(before) && arrived[seq] > 0 || seq < len(before) && arrived[seq] > before[seq] {
				f.exporter++
				f.exporterBytes += len(pinoLine(seq))
			}
		}
	}
	if logFile == "" {
		return f, arrived
	}
	queued := make([]bool, n)
	entries, err := os.ReadDir(queue)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if _, err := strconv.ParseUint(e.Name(), 10, 64); err == nil {
			for _, seq := range seqsIn(t, filepath.Join(queue, e.Name()), n) {
				queued[seq] = true
			}
		}
	}
	for seq := committedLines(t, state, logFile); seq < n; seq++ {
		if arrived[seq] > 0 || queued[seq] {
			f.reread++
			f.rereadBytes += len(pinoLine(seq))
		}
	}
	return f, arrived
}

// clientDir finds a dir_storage client's folder under the state folder, or
// returns "".
func clientDir(state, name string) string {
	var found string
	_ = filepath.WalkDir(state, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && d.Name() == name {
			found = path
			return filepath.SkipAll
		}
		return nil
	})
	return found
}

// storedValue reads a dir_storage file: magic, the value's length, the
// value (an S2 block with the packed magic, ds\x00\x02).
func storedValue(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 8 || (string(b[:4]) != "ds\x00\x01" && string(b[:4]) != "ds\x00\x02") {
		t.Fatalf("%s is not a dir_storage value", path)
	}
	n := int(binary.LittleEndian.Uint32(b[4:8]))
	if string(b[:4]) == "ds\x00\x02" {
		v, err := s2.Decode(nil, b[8:8+n])
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return v
	}
	return b[8 : 8+n]
}

// beingSent returns the indices exporterhelper's persistent queue lists
// as being sent in its metadata (qmv0: PersistentMetadata, field 5
// currently_dispatched_items, repeated fixed64).
func beingSent(t *testing.T, queue string) []uint64 {
	t.Helper()
	b := storedValue(t, filepath.Join(queue, "qmv0"))
	var out []uint64
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			t.Fatal("queue metadata is not protobuf")
		}
		b = b[n:]
		switch {
		case num == 5 && typ == protowire.BytesType:
			packed, m := protowire.ConsumeBytes(b)
			for len(packed) >= 8 {
				out = append(out, binary.LittleEndian.Uint64(packed))
				packed = packed[8:]
			}
			n = m
		case num == 5 && typ == protowire.Fixed64Type:
			v, m := protowire.ConsumeFixed64(b)
			out = append(out, v)
			n = m
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			t.Fatal("queue metadata is not protobuf")
		}
		b = b[n:]
	}
	return out
}

var seqField = regexp.MustCompile(`"seq":(\d+)`)

// seqsIn returns the seqs of the lines in a queued request (the lines'
// bytes are in its protobuf as they were written); a missing file has
// none.
func seqsIn(t *testing.T, path string, n int) []int {
	t.Helper()
	var out []int
	for _, m := range seqField.FindAllSubmatch(storedValue(t, path), -1) {
		if seq, err := strconv.Atoi(string(m[1])); err == nil && seq < n {
			out = append(out, seq)
		}
	}
	return out
}

// committedLines is how many lines of logFile lie before the offset the
// stdout receiver saved for it.
func committedLines(t *testing.T, state, logFile string) int {
	t.Helper()
	dir := clientDir(state, "receiver_stdout__files")
	if dir == "" {
		return 0
	}
	raw := storedValue(t, filepath.Join(dir, "tail.offsets"))
	if raw == nil {
		return 0
	}
	var cp struct {
		Files []struct {
			Path   string `json:"path"`
			Offset int64  `json:"offset"`
		} `json:"files"`
	}
	if err := json.Unmarshal(raw, &cp); err != nil {
		t.Fatal(err)
	}
	content, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range cp.Files {
		if f.Path == logFile || len(cp.Files) == 1 {
			return bytes.Count(content[:min(int(f.Offset), len(content))], []byte("\n"))
		}
	}
	return 0
}
