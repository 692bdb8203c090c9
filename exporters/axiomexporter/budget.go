package axiomexporter

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
)

// ByteSize is a size in bytes, written in a config as a number of bytes or
// with a binary unit: 512KiB, 32MiB, 1GiB.
type ByteSize int64

var byteUnits = []struct {
	suffix string
	scale  int64
}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"B", 1}}

// UnmarshalText reads "1GiB", "512 KiB" or "1048576".
func (s *ByteSize) UnmarshalText(text []byte) error {
	str := strings.TrimSpace(string(text))
	scale := int64(1)
	for _, u := range byteUnits {
		if num, ok := strings.CutSuffix(str, u.suffix); ok {
			str, scale = strings.TrimSpace(num), u.scale
			break
		}
	}
	n, err := strconv.ParseInt(str, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/scale {
		return fmt.Errorf("%q is not a size: write bytes or a number with KiB, MiB or GiB", text)
	}
	*s = ByteSize(n * scale)
	return nil
}

func (s ByteSize) String() string {
	for _, u := range byteUnits {
		if s >= ByteSize(u.scale) && int64(s)%u.scale == 0 {
			return strconv.FormatInt(int64(s)/u.scale, 10) + u.suffix
		}
	}
	return strconv.FormatInt(int64(s), 10) + "B"
}

// Budget defaults. A 1 MiB-line workload with Axiom down must stay within a
// 96 MB peak RSS (the e2e memory test), of which the process itself, its
// receivers and the garbage collector's headroom take the larger part.
const (
	defaultMemoryBudget    = 16 << 20
	defaultDiskBudget      = 1 << 30
	defaultMaxRequestBytes = 4 << 20
	// minRequestBytes keeps a request able to hold one record at the
	// receivers' longest line (Axiom's 1 MB field limit) with its fields.
	minRequestBytes = 1<<20 + 64<<10
	// requestCost is how many times its uncompressed size one request costs
	// in memory while in flight: the batch as pdata, the NDJSON (or
	// protobuf) body and its compressed copy.
	requestCost = 3
	// maxInFlight caps the requests one signal sends at once.
	maxInFlight = 4
)

// signalShare is the part of each budget one signal's exporter gets: logs
// and traces have one each, so each gets half.
const signalShare = 2

// batchBytes is the largest batch (and uncompressed request) one signal
// builds: max_request_bytes, or less when the memory budget is small, but
// never below one maximal record.
func (c *Config) batchBytes() int64 {
	mem := int64(c.Memory) / signalShare
	return max(minRequestBytes, min(int64(c.MaxRequestBytes), mem/(requestCost+1)))
}

// queueConfig derives the sending queue from the budgets: sizes in bytes;
// the queue itself on disk within the disk budget when it has storage, in
// memory within the memory budget otherwise; as many requests in flight as
// the memory budget pays for beside the batch being built.
func (c *Config) queueConfig() configoptional.Optional[exporterhelper.QueueBatchConfig] {
	q := c.QueueConfig.Get()
	if q == nil {
		return c.QueueConfig
	}
	out := *q
	batch := c.batchBytes()
	mem := int64(c.Memory) / signalShare
	inFlight := max(1, min(maxInFlight, (mem-batch)/(requestCost*batch)))
	out.Sizer = exporterhelper.RequestSizerTypeBytes
	out.NumConsumers = int(inFlight)
	if out.StorageID != nil {
		out.QueueSize = int64(c.Disk) / signalShare
	} else {
		out.QueueSize = max(batch, mem-inFlight*requestCost*batch)
	}
	if b := out.Batch.Get(); b != nil {
		bc := *b
		bc.Sizer = exporterhelper.RequestSizerTypeBytes
		bc.MaxSize = batch
		bc.MinSize = min(bc.MaxSize, batch/2)
		if bc.FlushTimeout <= 0 {
			bc.FlushTimeout = time.Second
		}
		out.Batch = configoptional.Some(bc)
	}
	return configoptional.Some(out)
}
