'use strict';
// OTLP/JSON encoding of SDK spans (ReadableSpan of @opentelemetry/sdk-trace
// 2.x and 3.x), byte for byte what @opentelemetry/otlp-transformer's JSON
// serializer (JSON.stringify of its request object) produces, but for
// non-ASCII characters: hex ids, nanosecond timestamps as decimal strings,
// integer attributes as JSON numbers, bytes as base64, span kind shifted by
// one (the API has no UNSPECIFIED), span flags carrying the W3C trace flags
// plus the HAS_IS_REMOTE/IS_REMOTE bits, members in the transformer's order
// and left out where it leaves them undefined. The test suite holds it to
// otlp-transformer's output.
//
// The JSON text is written directly, without building the request's objects
// first: this runs in the app, for every span it makes. Each span is encoded
// once (span) and added to the line being built, grouped under its resource
// and scope; a line is closed when the next span would take it past the
// limit.
//
// The text is ASCII: every other character is written as a \u escape (the
// same JSON value). Container runtimes cut long lines into 16 KiB pieces
// at byte offsets, and docker's json-file driver replaces a character cut
// in two with U+FFFD; an ASCII line cannot be cut inside a character, and
// its length in characters is its length in bytes.

const HAS_IS_REMOTE = 0x100;
const IS_REMOTE = 0x200;

// Strings JSON.stringify writes as they are: printable ASCII but " and \.
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;
const NON_ASCII = /[\u0080-\uffff]/g;

function escapeChar(c) {
  return '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0');
}

// str is JSON.stringify(s) in ASCII.
function str(s) {
  if (typeof s === 'string' && PLAIN.test(s)) return '"' + s + '"';
  const j = JSON.stringify(s);
  return j === undefined ? j : j.replace(NON_ASCII, escapeChar);
}

// num is JSON.stringify(n) for a number.
function num(n) {
  return Number.isFinite(n) ? '' + n : 'null';
}

// member is `,"name":value` for a member JSON.stringify writes, or nothing
// for one it leaves out (an undefined value).
function member(name, value) {
  const json = typeof value === 'number' ? num(value) : str(value);
  return json === undefined ? '' : ',"' + name + '":' + json;
}

// nanos is otlp-transformer's timestamp: the HrTime [seconds, nanoseconds]
// as a decimal count of nanoseconds.
function nanos(hr) {
  const sec = Math.trunc(hr[0]);
  const ns = Math.trunc(hr[1]);
  if (sec === 0 && ns >= 0) return '"' + ns + '"';
  if (sec > 0 && ns >= 0 && ns < 1e9) return '"' + sec + ('' + ns).padStart(9, '0') + '"';
  return '"' + (BigInt(sec) * 1000000000n + BigInt(ns)) + '"';
}

function flags(traceFlags, isRemote) {
  return (traceFlags & 0xff) | HAS_IS_REMOTE | (isRemote ? IS_REMOTE : 0);
}

function anyValue(v) {
  switch (typeof v) {
    case 'string':
      return '{"stringValue":' + str(v) + '}';
    case 'number':
      return (Number.isInteger(v) ? '{"intValue":' : '{"doubleValue":') + num(v) + '}';
    case 'boolean':
      return v ? '{"boolValue":true}' : '{"boolValue":false}';
    case 'object':
      break;
    default:
      return '{}';
  }
  if (v instanceof Uint8Array) return '{"bytesValue":"' + Buffer.from(v).toString('base64') + '"}';
  if (Array.isArray(v)) {
    let out = '{"arrayValue":{"values":[';
    for (let i = 0; i < v.length; i++) out += (i ? ',' : '') + anyValue(v[i]);
    return out + ']}}';
  }
  if (v === null) return '{}';
  return '{"kvlistValue":{"values":' + keyValues(v) + '}}';
}

function keyValues(attrs) {
  const keys = Object.keys(attrs);
  let out = '[';
  for (let i = 0; i < keys.length; i++) {
    out += (i ? ',{"key":' : '{"key":') + str(keys[i]) + ',"value":' + anyValue(attrs[keys[i]]) + '}';
  }
  return out + ']';
}

function traceState(ctx) {
  return ctx.traceState ? ctx.traceState.serialize() : undefined;
}

function event(e) {
  return '{"attributes":' + (e.attributes ? keyValues(e.attributes) : '[]') +
    member('name', e.name) +
    ',"timeUnixNano":' + nanos(e.time) +
    ',"droppedAttributesCount":' + num(e.droppedAttributesCount || 0) + '}';
}

function link(l) {
  const c = l.context;
  return '{"attributes":' + (l.attributes ? keyValues(l.attributes) : '[]') +
    member('spanId', c.spanId) + member('traceId', c.traceId) + member('traceState', traceState(c)) +
    ',"droppedAttributesCount":' + num(l.droppedAttributesCount || 0) +
    ',"flags":' + flags(c.traceFlags, c.isRemote) + '}';
}

function list(items, encode) {
  if (items.length === 0) return '[]';
  let out = '[' + encode(items[0]);
  for (let i = 1; i < items.length; i++) out += ',' + encode(items[i]);
  return out + ']';
}

// span is the JSON text of one span.
function span(s) {
  const ctx = s.spanContext();
  const parent = s.parentSpanContext;
  const status = s.status;
  return '{' + (member('traceId', ctx.traceId) + member('spanId', ctx.spanId)).slice(1) +
    (parent && parent.spanId ? member('parentSpanId', parent.spanId) : '') +
    member('traceState', traceState(ctx)) +
    member('name', s.name) +
    ',"kind":' + (s.kind == null ? 0 : num(s.kind + 1)) +
    ',"startTimeUnixNano":' + nanos(s.startTime) +
    ',"endTimeUnixNano":' + nanos(s.endTime) +
    ',"attributes":' + keyValues(s.attributes) +
    member('droppedAttributesCount', s.droppedAttributesCount) +
    ',"events":' + list(s.events, event) +
    member('droppedEventsCount', s.droppedEventsCount) +
    ',"status":{' + (member('code', status.code) + member('message', status.message)).slice(1) + '}' +
    ',"links":' + list(s.links, link) +
    member('droppedLinksCount', s.droppedLinksCount) +
    ',"flags":' + flags(ctx.traceFlags, parent && parent.isRemote) + '}';
}

// A resource's or scope's group: the text that opens it (up to its list of
// children), the text that closes it, and its children (spans for
// encodeLines, their text for Line).
function resourceGroup(r) {
  const schema = r.schemaUrl ? member('schemaUrl', r.schemaUrl) : '';
  return {
    head: '{"resource":{"attributes":' + keyValues(r.attributes) + ',"droppedAttributesCount":0' + schema + '},"scopeSpans":[',
    tail: ']' + schema + '}',
    scopes: [],
    byKey: new Map(), // scope key → group
    byScope: new Map(), // scope object → group
  };
}

function scopeGroup(sc) {
  let scope = '{' + (member('name', sc.name) + member('version', sc.version)).slice(1);
  if (sc.attributes && Object.keys(sc.attributes).length > 0) {
    scope += ',"attributes":' + keyValues(sc.attributes) + ',"droppedAttributesCount":' + num(sc.droppedAttributesCount ?? 0);
  }
  return { head: '{"scope":' + scope + '},"spans":[', tail: ']' + member('schemaUrl', sc.schemaUrl) + '}', spans: [], text: '' };
}

// scopeKey is what otlp-transformer groups scopes by.
function scopeKey(sc) {
  return sc.name + '@' + (sc.version || '') + ':' + (sc.schemaUrl || '');
}

const LINE_HEAD = '{"resourceSpans":[';
const LINE_TAIL = ']}\n';

// Line is one ExportTraceServiceRequest line built span by span. It groups
// its spans by resource (by identity, as the SDK shares one Resource per
// provider) and by scope (name, version and schema URL), in order of first
// appearance, as otlp-transformer does: its text is the transformer's
// encoding of the spans added. (encodeLines, for the exporter, groups a
// whole export first and writes its lines in one pass: less work per span
// than this, which the processor needs as spans end one by one.)
class Line {
  /** The length of the text take() returns, newline included (the text is ASCII: bytes too). */
  bytes = LINE_HEAD.length + LINE_TAIL.length;
  /** The spans added. */
  spans = 0;
  #resources = new Map(); // resource → group

  // add adds a span and its JSON (span(s)) if the line stays at most
  // maxBytes long, and tells whether it did.
  add(s, json, maxBytes) {
    let res = this.#resources.get(s.resource);
    let grow = json.length;
    let scope;
    if (res) {
      scope = res.byScope.get(s.instrumentationScope) || res.byKey.get(scopeKey(s.instrumentationScope));
      grow += 1; // the comma before it, in its scope or before its new scope
    } else {
      res = resourceGroup(s.resource);
      grow += res.head.length + res.tail.length + (this.#resources.size ? 1 : 0);
    }
    if (!scope) {
      scope = scopeGroup(s.instrumentationScope);
      grow += scope.head.length + scope.tail.length;
    }
    if (this.bytes + grow > maxBytes) return false;
    if (!this.#resources.has(s.resource)) this.#resources.set(s.resource, res);
    if (scope.text === '') {
      res.scopes.push(scope);
      res.byKey.set(scopeKey(s.instrumentationScope), scope);
      scope.text = json;
    } else {
      scope.text += ',' + json;
    }
    res.byScope.set(s.instrumentationScope, scope);
    this.bytes += grow;
    this.spans++;
    return true;
  }

  // take returns the line's text and spans and empties it.
  take() {
    let text = LINE_HEAD;
    let r = 0;
    for (const res of this.#resources.values()) {
      text += (r++ ? ',' : '') + res.head;
      for (let i = 0; i < res.scopes.length; i++) text += (i ? ',' : '') + res.scopes[i].head + res.scopes[i].text + res.scopes[i].tail;
      text += res.tail;
    }
    const line = { text: text + LINE_TAIL, spans: this.spans, bytes: this.bytes };
    this.#resources = new Map();
    this.bytes = LINE_HEAD.length + LINE_TAIL.length;
    this.spans = 0;
    return line;
  }
}

// group sorts spans by resource (by identity, as the SDK shares one Resource
// per provider) and by scope (name, version and schema URL), in order of
// first appearance, as otlp-transformer does. A scope's key is made once
// per scope object (one per tracer), not once per span.
function group(spans) {
  const resources = new Map();
  for (let i = 0; i < spans.length; i++) {
    const s = spans[i];
    let res = resources.get(s.resource);
    if (!res) {
      res = resourceGroup(s.resource);
      resources.set(s.resource, res);
    }
    const sc = s.instrumentationScope;
    let scope = res.byScope.get(sc);
    if (!scope) {
      const key = scopeKey(sc);
      scope = res.byKey.get(key);
      if (!scope) {
        scope = scopeGroup(sc);
        res.byKey.set(key, scope);
        res.scopes.push(scope);
      }
      res.byScope.set(sc, scope);
    }
    scope.spans.push(s);
  }
  return resources.values();
}

// encodeLines encodes spans as ExportTraceServiceRequest JSON lines, each
// `{text, spans, bytes}`: the text ends in "\n" and is bytes long, at most
// maxBytes (newline included); spans is how many spans it holds. A span that
// cannot fit in a line of its own is left out; the count of those is
// `tooLarge`.
function encodeLines(spans, maxBytes) {
  const lines = [];
  let tooLarge = 0;
  let text = ''; // the line being built, without its closing
  let count = 0; // the spans in it
  let res = null; // the resource and scope groups open in it
  let scope = null;

  for (const r of group(spans)) {
    for (const sc of r.scopes) {
      const close = sc.tail + r.tail + LINE_TAIL; // what closes a line ending in this scope
      for (let i = 0; i < sc.spans.length; i++) {
        const json = span(sc.spans[i]);
        let prefix; // what goes before the span in the open line
        if (count === 0) prefix = null;
        else if (r === res && sc === scope) prefix = ',';
        else if (r === res) prefix = scope.tail + ',' + sc.head;
        else prefix = scope.tail + res.tail + ',' + r.head + sc.head;
        if (prefix !== null && text.length + prefix.length + json.length + close.length <= maxBytes) {
          text += prefix + json;
        } else {
          if (count > 0) {
            const line = text + scope.tail + res.tail + LINE_TAIL;
            lines.push({ text: line, spans: count, bytes: line.length });
          }
          text = LINE_HEAD + r.head + sc.head;
          count = 0;
          if (text.length + json.length + close.length > maxBytes) {
            tooLarge++;
            continue;
          }
          text += json;
        }
        count++;
        res = r;
        scope = sc;
      }
    }
  }
  if (count > 0) {
    const line = text + scope.tail + res.tail + LINE_TAIL;
    lines.push({ text: line, spans: count, bytes: line.length });
  }
  return { lines, tooLarge };
}

module.exports = { encodeLines, Line, span };
