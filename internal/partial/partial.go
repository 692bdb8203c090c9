// Package partial reads a partial refusal: the pipeline took part of what a
// receiver offered and refused the rest, which it names in the error
// (consumererror.Logs or Traces; the axiom exporter's, for data heavier
// than its queue, see exporters/axiomexporter/parts.go). A receiver offers
// again only that rest, and counts in its standard metrics (receiverhelper's
// accepted and refused items) what the offer took as accepted and only the
// rest as refused.
package partial

import (
	"context"
	"errors"

	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Logs is what of ld the pipeline did not take when it returned err: all
// of it, or the rest a partial refusal names.
func Logs(ld plog.Logs, err error) plog.Logs {
	if p, ok := errors.AsType[consumererror.Logs](err); ok {
		return p.Data()
	}
	return ld
}

// Traces is what of td the pipeline did not take when it returned err: all
// of it, or the rest a partial refusal names.
func Traces(td ptrace.Traces, err error) ptrace.Traces {
	if p, ok := errors.AsType[consumererror.Traces](err); ok {
		return p.Data()
	}
	return td
}

// EndOp ends, through end (an ObsReport's End*Op), an operation that
// offered n items and returned err, of which left were not taken: the
// others are accepted and those left refused. With err nil, left is 0.
func EndOp(ctx context.Context, end func(context.Context, string, int, error), format string, n, left int, err error) {
	if err != nil && left < n {
		end(ctx, format, n-left, nil)
		n = left
	}
	end(ctx, format, n, err)
}
