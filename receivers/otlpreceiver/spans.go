package otlpreceiver

import (
	"google.golang.org/protobuf/encoding/protowire"
)

// Field numbers of the OTLP trace messages that lead to spans.
const (
	requestResourceSpans     = 1    // ExportTraceServiceRequest.resource_spans
	resourceScopeSpans       = 2    // ResourceSpans.scope_spans
	resourceDeprecatedScopes = 1000 // ResourceSpans.instrumentation_library_spans
	scopeSpans               = 2    // ScopeSpans.spans
)

// countSpans counts the spans of a protobuf ExportTraceServiceRequest
// without decoding them, so that the receiver's self-metrics report what
// the client sent before the filter drops most of it. Like pdata, it reads
// the deprecated instrumentation_library_spans of a ResourceSpans that has
// no scope_spans.
func countSpans(req []byte) (int, error) {
	n := 0
	err := eachField(req, func(num protowire.Number, rs []byte) error {
		if num != requestResourceSpans {
			return nil
		}
		current, deprecated, hasCurrent := 0, 0, false
		err := eachField(rs, func(num protowire.Number, ss []byte) error {
			switch num {
			case resourceScopeSpans:
				hasCurrent = true
				return countField(ss, scopeSpans, &current)
			case resourceDeprecatedScopes:
				return countField(ss, scopeSpans, &deprecated)
			}
			return nil
		})
		if hasCurrent {
			n += current
		} else {
			n += deprecated
		}
		return err
	})
	return n, err
}

// countField adds to n the occurrences of the length-delimited field num in msg.
func countField(msg []byte, num protowire.Number, n *int) error {
	return eachField(msg, func(got protowire.Number, _ []byte) error {
		if got == num {
			*n++
		}
		return nil
	})
}

// eachField calls fn with every length-delimited field of msg and skips the
// others; it fails on malformed input.
func eachField(msg []byte, fn func(protowire.Number, []byte) error) error {
	for len(msg) > 0 {
		num, typ, l := protowire.ConsumeTag(msg)
		if l < 0 {
			return protowire.ParseError(l)
		}
		msg = msg[l:]
		if typ != protowire.BytesType {
			if l = protowire.ConsumeFieldValue(num, typ, msg); l < 0 {
				return protowire.ParseError(l)
			}
			msg = msg[l:]
			continue
		}
		v, l := protowire.ConsumeBytes(msg)
		if l < 0 {
			return protowire.ParseError(l)
		}
		msg = msg[l:]
		if err := fn(num, v); err != nil {
			return err
		}
	}
	return nil
}
