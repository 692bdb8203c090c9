package axiomtest

import (
	"fmt"
	"net/http"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"google.golang.org/protobuf/encoding/protowire"
)

// serveOTLP accepts an OTLP/HTTP export of traces or logs, protobuf or JSON.
func (s *Server) serveOTLP(r *http.Request, rt route) (answer, result) {
	mt := mediaType(r.Header)
	if mt != "application/x-protobuf" && mt != "application/json" {
		return messageAnswer(http.StatusUnsupportedMediaType, fmt.Sprintf("unsupported content type %q (use application/x-protobuf or application/json)", mt)), result{}
	}
	body, err := readBody(r)
	if err != nil {
		return bodyErrorAnswer(err), result{}
	}
	defer putBuffer(body)

	res := result{bytes: int64(body.Len())}
	if mt == "application/x-protobuf" && s.cfg.countOnly {
		// ExportTraceServiceRequest and ExportLogsServiceRequest share a shape:
		// field 1 resource items, their field 2 scope items, their field 2 the records.
		n, err := countProtoRecords(body.Bytes(), 3)
		if err != nil {
			return messageAnswer(http.StatusBadRequest, "invalid OTLP protobuf: "+err.Error()), result{}
		}
		if rt == routeTraces {
			res.spans = n
		} else {
			res.logRecords = n
		}
	} else if rt == routeTraces {
		td, err := unmarshalTraces(mt, body.Bytes())
		if err != nil {
			return messageAnswer(http.StatusBadRequest, "invalid OTLP traces: "+err.Error()), result{}
		}
		res.spans = td.SpanCount()
		if !s.cfg.countOnly {
			res.traces = &td
		}
	} else {
		ld, err := unmarshalLogs(mt, body.Bytes())
		if err != nil {
			return messageAnswer(http.StatusBadRequest, "invalid OTLP logs: "+err.Error()), result{}
		}
		res.logRecords = ld.LogRecordCount()
		if !s.cfg.countOnly {
			res.logs = &ld
		}
	}
	// An empty Export*ServiceResponse: zero bytes in protobuf, {} in JSON.
	a := answer{status: http.StatusOK, header: http.Header{"Content-Type": {mt}}}
	if mt == "application/json" {
		a.body = []byte("{}")
	}
	return a, res
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
