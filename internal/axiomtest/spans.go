package axiomtest

import (
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// flattenSpans turns spans into Axiom's trace event shape (research §3.5).
// Axiom splits attributes outside the semantic conventions into
// attributes.custom; the fake keeps all of them in "attributes" because that
// split depends on Axiom's semconv tables. duration is a time.Duration;
// status.code is "UNSET", "OK" or "ERROR"; kind is lower case ("server").
func flattenSpans(td ptrace.Traces) []map[string]any {
	out := make([]map[string]any, 0, td.SpanCount())
	for _, rs := range td.ResourceSpans().All() {
		resource := rs.Resource().Attributes().AsRaw()
		service, _ := resource["service.name"].(string)
		for _, ss := range rs.ScopeSpans().All() {
			scope := map[string]any{"name": ss.Scope().Name(), "version": ss.Scope().Version()}
			for _, sp := range ss.Spans().All() {
				out = append(out, map[string]any{
					"_time":          sp.StartTimestamp().AsTime().UTC().Format(time.RFC3339Nano),
					"trace_id":       sp.TraceID().String(),
					"span_id":        sp.SpanID().String(),
					"parent_span_id": sp.ParentSpanID().String(),
					"name":           sp.Name(),
					"kind":           strings.ToLower(sp.Kind().String()),
					"duration":       time.Duration(sp.EndTimestamp() - sp.StartTimestamp()),
					"error":          sp.Status().Code() == ptrace.StatusCodeError,
					"status.code":    strings.ToUpper(sp.Status().Code().String()),
					"status.message": sp.Status().Message(),
					"service.name":   service,
					"attributes":     sp.Attributes().AsRaw(),
					"resource":       resource,
					"events":         spanEvents(sp),
					"links":          spanLinks(sp),
					"scope":          scope,
				})
			}
		}
	}
	return out
}

func spanEvents(sp ptrace.Span) []map[string]any {
	events := make([]map[string]any, 0, sp.Events().Len())
	for _, e := range sp.Events().All() {
		events = append(events, map[string]any{
			"name":       e.Name(),
			"_time":      e.Timestamp().AsTime().UTC().Format(time.RFC3339Nano),
			"attributes": e.Attributes().AsRaw(),
		})
	}
	return events
}

func spanLinks(sp ptrace.Span) []map[string]any {
	links := make([]map[string]any, 0, sp.Links().Len())
	for _, l := range sp.Links().All() {
		links = append(links, map[string]any{
			"trace_id":   l.TraceID().String(),
			"span_id":    l.SpanID().String(),
			"attributes": l.Attributes().AsRaw(),
		})
	}
	return links
}
