// Package spanlines cuts a span export into OTLP/JSON lines as the JS
// client's stdout exporter writes them (clients/js/src/encode.cjs
// encodeLines): each line a whole ExportTraceServiceRequest with its spans
// under their resource and scope, at most max bytes long with its newline,
// holding the most spans that fit (greedy, in order); a span too long for a
// line gets a line alone. Unlike the JS client, a line holds the spans of
// one resource and scope only (the load generator's exports have one).
package spanlines

import (
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// DefaultMax is the JS client's default lineBytes (64 KiB).
const DefaultMax = 64 << 10

// Cut returns td's spans as OTLP/JSON lines back to back (each ending in
// '\n') and how many lines; max <= 0 means one line for the whole export.
func Cut(td ptrace.Traces, max int) ([]byte, int, error) {
	b, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalJSON()
	if err != nil {
		return nil, 0, err
	}
	if max <= 0 {
		return append(b, '\n'), 1, nil
	}
	resources, err := read(b)
	if err != nil {
		return nil, 0, err
	}
	out := make([]byte, 0, len(b)+len(b)/16)
	n := 0
	for _, rs := range resources {
		for _, ss := range rs.scopes {
			// One resource and scope per line group: the head and tail
			// around this scope's spans.
			head := []byte(`{"resourceSpans":[{`)
			if rs.resource != nil {
				head = append(append(append(head, `"resource":`...), rs.resource...), ',')
			}
			head = append(head, `"scopeSpans":[{`...)
			if ss.scope != nil {
				head = append(append(append(head, `"scope":`...), ss.scope...), ',')
			}
			head = append(head, `"spans":[`...)
			tail := []byte{']'}
			if ss.schemaURL != nil {
				tail = append(append(tail, `,"schemaUrl":`...), ss.schemaURL...)
			}
			tail = append(tail, '}', ']')
			if rs.schemaURL != nil {
				tail = append(append(tail, `,"schemaUrl":`...), rs.schemaURL...)
			}
			tail = append(tail, "}]}\n"...)
			size, count := 0, 0 // the open line's bytes without its tail
			for _, s := range ss.spans {
				if count > 0 && size+1+len(s)+len(tail) > max {
					out = append(out, tail...)
					count = 0
				}
				if count == 0 {
					out = append(out, head...)
					size = len(head)
					n++
				} else {
					out = append(out, ',')
					size++
				}
				out = append(out, s...)
				size += len(s)
				count++
			}
			if count > 0 {
				out = append(out, tail...)
			}
		}
	}
	return out, n, nil
}
