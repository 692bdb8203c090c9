// The example app's spans, for the benchmarks.
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { context, trace, SpanKind } from '@opentelemetry/api';

// requestSpans makes n requests' spans as the example app's instrumentations
// (instrumentation-http 0.223, instrumentation-ioredis 0.71, their current
// semantic conventions) record them for GET /orders/:id: a server span and
// 5 GETs and a SET as its children, in the order they end.
export function requestSpans(n) {
  const mem = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'node-app' }),
    spanProcessors: [new SimpleSpanProcessor(mem)],
  });
  const http = provider.getTracer('@opentelemetry/instrumentation-http', '0.223.0');
  const redis = provider.getTracer('@opentelemetry/instrumentation-ioredis', '0.71.0');
  for (let i = 0; i < n; i++) {
    const id = 1000 + i;
    const server = http.startSpan('GET', {
      kind: SpanKind.SERVER,
      attributes: {
        'http.request.method': 'GET', 'url.scheme': 'http', 'server.address': '127.0.0.1',
        'network.peer.address': '127.0.0.1', 'network.peer.port': 40000 + (i % 64),
        'network.protocol.version': '1.1', 'url.path': `/orders/${id}`, 'user_agent.original': 'Go-http-client/1.1',
        'client.address': '127.0.0.1', 'server.port': 3000,
      },
    });
    const parent = trace.setSpan(context.active(), server);
    const get = (key) => ({ op: 'get', text: `get ${key}:${id}` });
    for (const c of [get('order'), get('customer'), get('cart'), get('stock'), get('price'), { op: 'set', text: `set seen:${id} [1 other arguments]` }]) {
      redis.startSpan(c.op, {
        kind: SpanKind.CLIENT,
        attributes: {
          'db.operation.name': c.op, 'db.system.name': 'redis', 'db.query.text': c.text,
          'server.address': '127.0.0.1', 'server.port': 6379,
        },
      }, parent).end();
    }
    server.setAttribute('http.response.status_code', 200);
    server.end();
  }
  return mem.getFinishedSpans();
}
