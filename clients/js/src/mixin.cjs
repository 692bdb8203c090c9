'use strict';
const { context, trace, isSpanContextValid } = require('@opentelemetry/api');

// pinoTraceMixin is a pino `mixin`: it puts the active span's ids on every
// log line, under the names Axiom and @opentelemetry/instrumentation-pino
// use, so logs join their traces by trace_id.
function pinoTraceMixin() {
  const span = trace.getSpan(context.active());
  if (!span) return {};
  const sc = span.spanContext();
  if (!isSpanContextValid(sc)) return {};
  return {
    trace_id: sc.traceId,
    span_id: sc.spanId,
    trace_flags: sc.traceFlags.toString(16).padStart(2, '0'),
  };
}

module.exports = { pinoTraceMixin };
