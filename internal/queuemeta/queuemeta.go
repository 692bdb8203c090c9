// Package queuemeta reads the bookkeeping of exporterhelper's persistent
// sending queue: the value it keeps under Key in the storage client it
// opens for an exporter and a signal (GetClient(kind exporter, the
// exporter's ID, "logs"/"traces"/"metrics")). It is the protobuf message
// PersistentMetadata of exporterhelper/internal/queue/meta.proto (v0.165.0),
// read field by field since the type is internal to exporterhelper.
//
// Its readers: the axiom exporter, for the records its queue keeps at exit
// (the summary line of `app | sidecar`), and internal/drain, which lets a
// persistent queue empty before its exporter shuts down.
package queuemeta

import (
	"google.golang.org/protobuf/encoding/protowire"
)

// Key is the storage key of the queue's metadata.
const Key = "qmv0"

// The fields of PersistentMetadata.
const (
	itemsField      = 1 // sfixed64: records (log records, spans) queued
	readIndexField  = 3 // fixed64
	writeIndexField = 4 // fixed64
	dispatchedField = 5 // repeated fixed64: requests being sent
)

// Meta is what a queue holds: requests waiting or being sent, and the
// records in them.
type Meta struct {
	Items    int64
	Requests int64
}

// Parse reads a queue's metadata; no metadata (nil) is an empty queue.
func Parse(b []byte) (Meta, error) {
	var (
		m                 Meta
		read, write, sent uint64
	)
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return Meta{}, protowire.ParseError(n)
		}
		b = b[n:]
		switch {
		case typ == protowire.Fixed64Type && (num == itemsField || num == readIndexField || num == writeIndexField || num == dispatchedField):
			v, n := protowire.ConsumeFixed64(b)
			if n < 0 {
				return Meta{}, protowire.ParseError(n)
			}
			b = b[n:]
			switch num {
			case itemsField:
				m.Items = max(0, int64(v))
			case readIndexField:
				read = v
			case writeIndexField:
				write = v
			default:
				sent++
			}
		case typ == protowire.BytesType && num == dispatchedField: // packed
			packed, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return Meta{}, protowire.ParseError(n)
			}
			b = b[n:]
			sent += uint64(len(packed) / 8)
		default:
			n := protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return Meta{}, protowire.ParseError(n)
			}
			b = b[n:]
		}
	}
	if write >= read {
		m.Requests = int64(write-read) + int64(sent)
	}
	return m, nil
}
