'use strict';
// OTLP/JSON encoding of SDK spans (ReadableSpan of @opentelemetry/sdk-trace
// 2.x and 3.x), field for field what @opentelemetry/otlp-transformer's JSON
// serializer produces: hex ids, nanosecond timestamps as decimal strings,
// integer attributes as JSON numbers, bytes as base64, span kind shifted by
// one (the API has no UNSPECIFIED), and span flags carrying the W3C trace
// flags plus the HAS_IS_REMOTE/IS_REMOTE bits. The test suite holds it to
// otlp-transformer's output.
//
// Spans are encoded one by one into JSON text, then grouped by resource and
// scope, so that a request can be cut into lines of bounded byte size
// without encoding anything twice.
//
// The text is ASCII: every other character is written as a \u escape (the
// same JSON value). Container runtimes cut long lines into 16 KiB pieces
// at byte offsets, and docker's json-file driver replaces a character cut
// in two with U+FFFD; an ASCII line cannot be cut inside a character.

const HAS_IS_REMOTE = 0x100;
const IS_REMOTE = 0x200;

function nanos(hr) {
  const sec = Math.trunc(hr[0]);
  const ns = String(Math.trunc(hr[1]));
  return sec === 0 ? ns : sec + ns.padStart(9, '0');
}

function spanFlags(traceFlags, isRemote) {
  return (traceFlags & 0xff) | HAS_IS_REMOTE | (isRemote ? IS_REMOTE : 0);
}

function anyValue(v) {
  switch (typeof v) {
    case 'string':
      return { stringValue: v };
    case 'number':
      return Number.isInteger(v) ? { intValue: v } : { doubleValue: v };
    case 'boolean':
      return { boolValue: v };
  }
  if (v instanceof Uint8Array) return { bytesValue: Buffer.from(v).toString('base64') };
  if (Array.isArray(v)) return { arrayValue: { values: v.map(anyValue) } };
  if (v !== null && typeof v === 'object') return { kvlistValue: { values: keyValues(v) } };
  return {};
}

function keyValues(attrs) {
  const out = [];
  for (const key of Object.keys(attrs)) out.push({ key, value: anyValue(attrs[key]) });
  return out;
}

function spanObject(s) {
  const ctx = s.spanContext();
  const parent = s.parentSpanContext;
  return {
    traceId: ctx.traceId,
    spanId: ctx.spanId,
    parentSpanId: parent && parent.spanId ? parent.spanId : undefined,
    traceState: ctx.traceState ? ctx.traceState.serialize() : undefined,
    name: s.name,
    kind: s.kind == null ? 0 : s.kind + 1,
    startTimeUnixNano: nanos(s.startTime),
    endTimeUnixNano: nanos(s.endTime),
    attributes: keyValues(s.attributes),
    droppedAttributesCount: s.droppedAttributesCount,
    events: s.events.map((e) => ({
      attributes: e.attributes ? keyValues(e.attributes) : [],
      name: e.name,
      timeUnixNano: nanos(e.time),
      droppedAttributesCount: e.droppedAttributesCount || 0,
    })),
    droppedEventsCount: s.droppedEventsCount,
    status: { code: s.status.code, message: s.status.message },
    links: s.links.map((l) => ({
      attributes: l.attributes ? keyValues(l.attributes) : [],
      spanId: l.context.spanId,
      traceId: l.context.traceId,
      traceState: l.context.traceState ? l.context.traceState.serialize() : undefined,
      droppedAttributesCount: l.droppedAttributesCount || 0,
      flags: spanFlags(l.context.traceFlags, l.context.isRemote),
    })),
    droppedLinksCount: s.droppedLinksCount,
    flags: spanFlags(ctx.traceFlags, parent && parent.isRemote),
  };
}

function resourceObject(r) {
  const o = { attributes: keyValues(r.attributes), droppedAttributesCount: 0 };
  if (r.schemaUrl) o.schemaUrl = r.schemaUrl;
  return o;
}

function scopeObject(sc) {
  const o = { name: sc.name, version: sc.version };
  if (sc.attributes && Object.keys(sc.attributes).length > 0) {
    o.attributes = keyValues(sc.attributes);
    o.droppedAttributesCount = sc.droppedAttributesCount || 0;
  }
  return o;
}

const NON_ASCII = /[\u0080-\uffff]/g;
const HAS_NON_ASCII = /[\u0080-\uffff]/;

function escapeChar(c) {
  return '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0');
}

// json is JSON.stringify(v) in ASCII.
function json(v) {
  const s = JSON.stringify(v);
  return HAS_NON_ASCII.test(s) ? s.replace(NON_ASCII, escapeChar) : s;
}

// A JSON member `,"schemaUrl":"…"`, or nothing when the URL is unset.
function schemaMember(url) {
  return url === undefined ? '' : ',"schemaUrl":' + json(url);
}

// wrap is a JSON object opened by head and closed by tail, with their size.
function wrap(head, tail) {
  return { head, tail, bytes: head.length + tail.length };
}

// group sorts spans by resource (by identity, as the SDK shares one Resource
// per provider) and by scope (name, version, schema URL), in order of first
// appearance, each span already encoded as JSON text with its byte size.
function group(spans) {
  const resources = new Map();
  for (const s of spans) {
    let res = resources.get(s.resource);
    if (!res) {
      const obj = resourceObject(s.resource);
      res = wrap('{"resource":' + json(obj) + ',"scopeSpans":[', ']' + schemaMember(obj.schemaUrl) + '}');
      res.scopes = new Map();
      resources.set(s.resource, res);
    }
    const sc = s.instrumentationScope;
    const key = sc.name + '@' + (sc.version || '') + ':' + (sc.schemaUrl || '');
    let scope = res.scopes.get(key);
    if (!scope) {
      scope = wrap('{"scope":' + json(scopeObject(sc)) + ',"spans":[', ']' + schemaMember(sc.schemaUrl) + '}');
      scope.spans = [];
      res.scopes.set(key, scope);
    }
    const text = json(spanObject(s));
    scope.spans.push({ json: text, bytes: text.length });
  }
  return resources;
}

const LINE_HEAD = '{"resourceSpans":[';
const LINE_TAIL = ']}\n';
const LINE_BYTES = LINE_HEAD.length + LINE_TAIL.length;

// encodeLines encodes spans as ExportTraceServiceRequest JSON lines, each
// `{text, spans, bytes}`: the text ends in "\n" and is bytes long, at most
// maxBytes (newline included); spans is how many spans it holds. A span that cannot
// fit in a line of its own is left out; the count of those is `tooLarge`.
function encodeLines(spans, maxBytes) {
  const lines = [];
  let tooLarge = 0;
  let parts = null; // the line being built, as text pieces
  let count = 0; // the spans in it
  let bytes = 0; // its byte size once closed
  let openRes = null; // the resource group open in the line, if any
  let openScope = null;

  const closeScope = () => {
    if (openScope) parts.push(openScope.tail);
    openScope = null;
  };
  const closeRes = () => {
    closeScope();
    if (openRes) parts.push(openRes.tail);
    openRes = null;
  };
  const closeLine = () => {
    if (!parts) return;
    closeRes();
    parts.push(LINE_TAIL);
    lines.push({ text: parts.join(''), spans: count, bytes });
    parts = null;
  };
  // cost is what adding span (json bytes n) to the current line takes,
  // counting the groups it has to open and the commas.
  const cost = (res, scope, n) => {
    if (!parts) return Infinity;
    let c = n;
    if (openRes !== res) {
      c += (openRes ? 1 : 0) + res.bytes + scope.bytes;
    } else if (openScope !== scope) {
      c += 1 + scope.bytes;
    } else {
      c += 1;
    }
    return c;
  };
  const open = (res, scope) => {
    if (openRes !== res) {
      closeRes();
      if (parts.length > 1) parts.push(',');
      parts.push(res.head);
      openRes = res;
    }
    if (openScope !== scope) {
      closeScope();
      if (parts[parts.length - 1] !== res.head) parts.push(',');
      parts.push(scope.head);
      openScope = scope;
      return;
    }
    parts.push(',');
  };

  for (const res of group(spans).values()) {
    for (const scope of res.scopes.values()) {
      for (const span of scope.spans) {
        let c = cost(res, scope, span.bytes);
        if (bytes + c > maxBytes) {
          closeLine();
          parts = [LINE_HEAD];
          bytes = LINE_BYTES;
          count = 0;
          c = cost(res, scope, span.bytes);
          if (bytes + c > maxBytes) {
            parts = null;
            tooLarge++;
            continue;
          }
        }
        open(res, scope);
        parts.push(span.json);
        bytes += c;
        count++;
      }
    }
  }
  closeLine();
  return { lines, tooLarge };
}

module.exports = { encodeLines };
