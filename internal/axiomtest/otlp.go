package axiomtest

import (
	"fmt"
	"net/http"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/protobuf/encoding/protowire"
)

// serveOTLP accepts an OTLP/HTTP export of traces or logs, protobuf or JSON.
// rejectFirst > 0 (a scripted PartialFailure) drops that many records and
// reports them in partial_success.
func (s *Server) serveOTLP(r *http.Request, rt route, rejectFirst int) (answer, result) {
	mt := mediaType(r.Header)
	if mt != "application/x-protobuf" && mt != "application/json" {
		return messageAnswer(http.StatusUnsupportedMediaType, fmt.Sprintf("unsupported content type %q (use application/x-protobuf or application/json)", mt)), result{}
	}
	body, err := readBody(r, s.cfg.maxBody)
	if err != nil {
		return bodyErrorAnswer(err), result{}
	}
	defer putBuffer(body)

	res := result{bytes: int64(body.Len())}
	var records, rejected int
	switch {
	case mt == "application/x-protobuf" && s.cfg.countOnly:
		// ExportTraceServiceRequest and ExportLogsServiceRequest share a shape:
		// field 1 resource items, their field 2 scope items, their field 2 the records.
		n, err := countProtoRecords(body.Bytes(), 3)
		if err != nil {
			return messageAnswer(http.StatusBadRequest, "invalid OTLP protobuf: "+err.Error()), result{}
		}
		rejected = min(rejectFirst, n)
		records = n - rejected
	case rt == routeTraces:
		td, err := unmarshalTraces(mt, body.Bytes())
		if err != nil {
			return messageAnswer(http.StatusBadRequest, "invalid OTLP traces: "+err.Error()), result{}
		}
		rejected = dropFirstSpans(td, rejectFirst)
		records = td.SpanCount()
		if !s.cfg.countOnly {
			res.traces = &td
		}
	default:
		ld, err := unmarshalLogs(mt, body.Bytes())
		if err != nil {
			return messageAnswer(http.StatusBadRequest, "invalid OTLP logs: "+err.Error()), result{}
		}
		rejected = dropFirstLogRecords(ld, rejectFirst)
		records = ld.LogRecordCount()
		if !s.cfg.countOnly {
			res.logs = &ld
		}
	}
	if rt == routeTraces {
		res.spans = records
	} else {
		res.logRecords = records
	}
	return otlpAnswer(mt, rt, rejected), res
}

// otlpAnswer is the 200 Export*ServiceResponse: empty (zero bytes in
// protobuf, {} in JSON) unless records were rejected.
func otlpAnswer(mt string, rt route, rejected int) answer {
	a := answer{status: http.StatusOK, header: http.Header{"Content-Type": {mt}}}
	if rejected == 0 {
		if mt == "application/json" {
			a.body = []byte("{}")
		}
		return a
	}
	const msg = "rejected by scripted partial failure"
	var err error
	if rt == routeTraces {
		resp := ptraceotlp.NewExportResponse()
		resp.PartialSuccess().SetRejectedSpans(int64(rejected))
		resp.PartialSuccess().SetErrorMessage(msg)
		if mt == "application/json" {
			a.body, err = resp.MarshalJSON()
		} else {
			a.body, err = resp.MarshalProto()
		}
	} else {
		resp := plogotlp.NewExportResponse()
		resp.PartialSuccess().SetRejectedLogRecords(int64(rejected))
		resp.PartialSuccess().SetErrorMessage(msg)
		if mt == "application/json" {
			a.body, err = resp.MarshalJSON()
		} else {
			a.body, err = resp.MarshalProto()
		}
	}
	if err != nil {
		panic("axiomtest: marshal OTLP response: " + err.Error()) // cannot fail for these messages
	}
	return a
}

// dropFirstSpans removes the first n spans and returns how many it removed.
func dropFirstSpans(td ptrace.Traces, n int) int {
	dropped := 0
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			ss.Spans().RemoveIf(func(ptrace.Span) bool {
				if dropped < n {
					dropped++
					return true
				}
				return false
			})
		}
	}
	return dropped
}

// dropFirstLogRecords removes the first n log records and returns how many it removed.
func dropFirstLogRecords(ld plog.Logs, n int) int {
	dropped := 0
	for _, rl := range ld.ResourceLogs().All() {
		for _, sl := range rl.ScopeLogs().All() {
			sl.LogRecords().RemoveIf(func(plog.LogRecord) bool {
				if dropped < n {
					dropped++
					return true
				}
				return false
			})
		}
	}
	return dropped
}

func unmarshalTraces(mt string, b []byte) (ptrace.Traces, error) {
	if mt == "application/json" {
		return (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(b)
	}
	return (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(b)
}

func unmarshalLogs(mt string, b []byte) (plog.Logs, error) {
	if mt == "application/json" {
		return (&plog.JSONUnmarshaler{}).UnmarshalLogs(b)
	}
	return (&plog.ProtoUnmarshaler{}).UnmarshalLogs(b)
}

// countProtoRecords counts the messages depth levels down an OTLP export
// request, following field 1 at the top and field 2 below, without decoding them.
func countProtoRecords(b []byte, depth int) (int, error) {
	want := protowire.Number(2)
	if depth == 3 {
		want = 1
	}
	n := 0
	for len(b) > 0 {
		num, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			return 0, protowire.ParseError(l)
		}
		b = b[l:]
		if num == want && typ == protowire.BytesType {
			v, l := protowire.ConsumeBytes(b)
			if l < 0 {
				return 0, protowire.ParseError(l)
			}
			b = b[l:]
			if depth == 1 {
				n++
				continue
			}
			c, err := countProtoRecords(v, depth-1)
			if err != nil {
				return 0, err
			}
			n += c
			continue
		}
		l = protowire.ConsumeFieldValue(num, typ, b)
		if l < 0 {
			return 0, protowire.ParseError(l)
		}
		b = b[l:]
	}
	return n, nil
}
