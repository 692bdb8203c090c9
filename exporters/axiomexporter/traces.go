package axiomexporter

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sync"
	"time"

	"github.com/klauspost/compress/gzip"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.uber.org/zap"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/sidecarhq/sidecar/internal/axiomclient"
	"github.com/sidecarhq/sidecar/internal/outcome"
)

// tracesExporter posts spans, OTLP as-is, to Axiom's /v1/traces. This is
// plain net/http: axiom-go's OTLP support wraps the OTel SDK exporter,
// which takes SDK spans, not the collector's pdata.
type tracesExporter struct {
	*base
	endpoint string
	gzips    sync.Pool // *gzipBuffer
}

type gzipBuffer struct {
	buf bytes.Buffer
	w   *gzip.Writer
}

func newTracesExporter(cfg *Config, set exporter.Settings) (*tracesExporter, error) {
	b, err := newBase(cfg, set, "traces", cfg.TracesDataset, cfg.TracesDataset+".otlp.ndjson")
	if err != nil {
		return nil, err
	}
	return &tracesExporter{base: b, endpoint: cfg.apiBaseURL().JoinPath("v1", "traces").String()}, nil
}

func (e *tracesExporter) start(ctx context.Context, host component.Host) error {
	return e.base.start(ctx, host, "spans")
}

func (e *tracesExporter) pushTraces(ctx context.Context, td ptrace.Traces) (err error) {
	ctx, end := e.pushStarted(ctx)
	defer end()
	defer func(spans int) {
		if err == nil || consumererror.IsPermanent(err) {
			e.finished(spans)
		}
		if err == nil {
			outcome.Delivered(spans)
		}
	}(td.SpanCount())
	if e.file != nil {
		line, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalJSON()
		if err != nil {
			return consumererror.NewPermanent(err)
		}
		return e.file.write(append(line, '\n'))
	}
	return e.send(ctx, td)
}

// send delivers td as one request. When Axiom finds it too large (413) it
// sends each half of the spans on its own, and so on down to a single
// span, which is dropped and counted.
func (e *tracesExporter) send(ctx context.Context, td ptrace.Traces) error {
	body, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if err != nil {
		return consumererror.NewPermanent(err)
	}
	gz := e.getGzip()
	defer e.gzips.Put(gz)
	gz.buf.Reset()
	gz.w.Reset(&gz.buf)
	if _, err = gz.w.Write(body); err == nil {
		err = gz.w.Close()
	}
	if err != nil {
		return consumererror.NewPermanent(err)
	}
	spans := td.SpanCount()
	err = e.deliver(ctx, spans, func(ctx context.Context) error { return e.post(ctx, gz.buf.Bytes(), spans) })
	if !errors.Is(err, errTooLarge) {
		return err
	}
	if spans <= 1 {
		return e.tooLarge(spans, len(body))
	}
	first, rest := splitSpans(td, spans/2)
	if err = e.send(ctx, first); err != nil && !consumererror.IsPermanent(err) {
		return err // cut off by shutdown: the whole request stays queued
	}
	return errors.Join(err, e.send(ctx, rest))
}

// errTooLarge marks a 413 answer, which send splits instead of dropping.
var errTooLarge = errors.New("request too large")

// splitSpans copies the first n spans of td into one Traces and the rest
// into another.
func splitSpans(td ptrace.Traces, n int) (ptrace.Traces, ptrace.Traces) {
	seen := 0
	parts := cutSpans(td, func(ptrace.ResourceSpans, ptrace.ScopeSpans, ptrace.Span) bool {
		seen++
		return seen == n+1
	})
	for len(parts) < 2 {
		parts = append(parts, ptrace.NewTraces())
	}
	return parts[0], parts[1]
}

// cutSpans copies td's spans, in order, into parts: a new part begins
// before each span startsPart says so (it sees every span once, in order).
// Each span goes under a copy of its resource and scope.
func cutSpans(td ptrace.Traces, startsPart func(ptrace.ResourceSpans, ptrace.ScopeSpans, ptrace.Span) bool) []ptrace.Traces {
	var (
		parts  []ptrace.Traces
		cur    ptrace.Traces
		ss     ptrace.ScopeSpans
		ri, si = -1, -1
	)
	rss := td.ResourceSpans()
	for i := range rss.Len() {
		rs := rss.At(i)
		sss := rs.ScopeSpans()
		for j := range sss.Len() {
			scope := sss.At(j)
			spans := scope.Spans()
			for k := range spans.Len() {
				span := spans.At(k)
				if starts := startsPart(rs, scope, span); starts || len(parts) == 0 {
					cur = ptrace.NewTraces()
					parts = append(parts, cur)
					ri = -1
				}
				if ri != i || si != j {
					dst := cur.ResourceSpans().AppendEmpty()
					rs.Resource().CopyTo(dst.Resource())
					dst.SetSchemaUrl(rs.SchemaUrl())
					ss = dst.ScopeSpans().AppendEmpty()
					scope.Scope().CopyTo(ss.Scope())
					ss.SetSchemaUrl(scope.SchemaUrl())
					ri, si = i, j
				}
				span.CopyTo(ss.Spans().AppendEmpty())
			}
		}
	}
	return parts
}

func (e *tracesExporter) getGzip() *gzipBuffer {
	if gz, ok := e.gzips.Get().(*gzipBuffer); ok {
		return gz
	}
	w, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed)
	return &gzipBuffer{w: w}
}

// post makes one request with a ready gzip body of spans spans.
func (e *tracesExporter) post(ctx context.Context, body []byte, spans int) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.endpoint, bytes.NewReader(body))
	if err != nil {
		return consumererror.NewPermanent(err)
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("Content-Encoding", "gzip")
	req.Header.Set("Authorization", "Bearer "+string(e.cfg.Token))
	req.Header.Set("X-Axiom-Dataset", e.dataset)
	req.Header.Set("User-Agent", "sidecar-axiom-exporter")
	resp, err := e.client.Do(req)
	if err != nil {
		e.tel.request(ctx, 0)
		return fmt.Errorf("POST %s: %w", e.endpoint, err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	e.tel.request(ctx, resp.StatusCode)
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		e.accepted()
		rejected := partialRejectedSpans(resp.Header.Get("Content-Type"), answer)
		e.tel.sent.Add(ctx, int64(spans)-rejected, e.tel.signalAttributes)
		if rejected > 0 {
			e.tel.failed.Add(ctx, rejected, e.tel.signalAttributes)
			if e.partialLogged.allow(time.Now()) {
				e.set.Logger.Warn("Axiom rejected some spans (logged at most once a minute, counted in otelcol_exporter_axiom_failed_items)",
					zap.String("dataset", e.dataset), zap.Int64("rejected", rejected))
			}
		}
		return nil
	}
	err = fmt.Errorf("Axiom answered %s: %s", resp.Status, errorMessage(resp.StatusCode, resp.Header.Get("Content-Type"), answer))
	if refusedToken(resp.StatusCode) {
		return e.tokenRefused(resp.StatusCode, err)
	}
	switch axiomclient.Classify(resp.StatusCode) {
	case axiomclient.Throttle:
		return retryError(err, axiomclient.Reset(resp.StatusCode, resp.Header, time.Now()))
	case axiomclient.Retry:
		return err
	default:
		if resp.StatusCode == http.StatusRequestEntityTooLarge {
			return consumererror.NewPermanent(fmt.Errorf("%w: %w", errTooLarge, err))
		}
		return e.rejected(resp.StatusCode, spans, len(body), err)
	}
}

// partialRejectedSpans reads partial_success.rejected_spans from an OTLP
// answer; an empty or unreadable answer counts as full success.
func partialRejectedSpans(contentType string, answer []byte) int64 {
	if len(answer) == 0 {
		return 0
	}
	resp := ptraceotlp.NewExportResponse()
	var err error
	if mediaType(contentType) == "application/json" {
		err = resp.UnmarshalJSON(answer)
	} else {
		err = resp.UnmarshalProto(answer)
	}
	if err != nil {
		return 0
	}
	return resp.PartialSuccess().RejectedSpans()
}

// errorMessage extracts a readable reason from an error answer: an OTLP
// google.rpc.Status, else what axiomclient reads from Axiom's answers.
func errorMessage(status int, contentType string, answer []byte) string {
	if mediaType(contentType) == "application/x-protobuf" {
		var st spb.Status
		if proto.Unmarshal(answer, &st) == nil && st.GetMessage() != "" {
			return st.GetMessage()
		}
	}
	return axiomclient.Message(status, contentType, answer)
}

func mediaType(contentType string) string {
	mt, _, _ := mime.ParseMediaType(contentType)
	return mt
}
