package stdoutreceiver

import (
	"context"
	"errors"
	"sync"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/sidecarhq/sidecar/internal/jsontext"
	"github.com/sidecarhq/sidecar/sampling/presample"
)

// readSpans reads an OTLP/JSON span line through the sampling processor's
// pre-sampling filter (decode.Options.ReadSpans): only the spans it keeps
// become pdata, as for the otlp receiver's requests.
func (r *stdoutReceiver) readSpans(req []byte) (ptrace.Traces, int, bool, error) {
	buf := filtered.Get().(*[]byte)
	defer func() {
		if cap(*buf) <= maxPooledFiltered {
			filtered.Put(buf)
		}
	}()
	out, n, err := r.filter.FilterTracesJSON(context.Background(), (*buf)[:0], req)
	switch {
	case errors.Is(err, presample.ErrUndecided):
		// pdata reads no further than the object; ReadSpans must reject
		// anything after it.
		if end, ok := jsontext.ValueEnd(req, jsontext.SkipSpace(req, 0)); !ok || jsontext.SkipSpace(req, end) != len(req) {
			return ptrace.Traces{}, 0, false, errNotOneObject
		}
		td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(req)
		if err != nil {
			return td, 0, false, err
		}
		return td, td.SpanCount(), false, nil
	case err != nil:
		return ptrace.Traces{}, 0, false, err
	}
	*buf = out
	pr := ptraceotlp.NewExportRequest() // pdata copies what it keeps out of buf
	if err := pr.UnmarshalProto(out); err != nil {
		return ptrace.Traces{}, 0, false, err
	}
	return pr.Traces(), n, true, nil
}

var errNotOneObject = errors.New("span line: not one JSON object")

// filtered pools readSpans' buffers, up to maxPooledFiltered bytes each so
// that a rare huge line is not pinned.
var filtered = sync.Pool{New: func() any { return new([]byte) }}

const maxPooledFiltered = 1 << 20
