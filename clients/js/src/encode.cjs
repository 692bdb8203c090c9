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
// This runs in the app, for every span it makes, so the JSON text is
// written straight into one reused byte buffer, without building the
// request's objects or concatenating strings (V8 builds a concatenation as
// a tree and copies it flat when the string is first read: as costly as the
// encoding itself). Constant text is copied from bytes made once, and an
// attribute's `{"key":...,"value":` once per key; a string is copied
// character by character while it needs no escape, and goes through
// JSON.stringify only when it does. A finished line leaves the buffer as one
// flat string.
//
// The text is ASCII: every other character is written as a \u escape (the
// same JSON value). Container runtimes cut long lines into 16 KiB pieces
// at byte offsets, and docker's json-file driver replaces a character cut
// in two with U+FFFD; an ASCII line cannot be cut inside a character, and
// its length in characters is its length in bytes.

const HAS_IS_REMOTE = 0x100;
const IS_REMOTE = 0x200;

const NON_ASCII = /[\u0080-\uffff]/g;

function escapeChar(c) {
  return '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0');
}

// The buffer the text is written into, from 0 to pos. It grows for a large
// span and goes back to its first size after an export that grew it, so
// that one huge span does not stay allocated.
const BUFFER_BYTES = 128 * 1024;
let buf = Buffer.allocUnsafe(BUFFER_BYTES);
let pos = 0;

function reserve(n) {
  if (pos + n <= buf.length) return;
  const grown = Buffer.allocUnsafe(Math.max(2 * buf.length, pos + n));
  buf.copy(grown, 0, 0, pos);
  buf = grown;
}

function release() {
  pos = 0;
  if (buf.length > BUFFER_BYTES) buf = Buffer.allocUnsafe(BUFFER_BYTES);
}

// text is the written text from start to pos, as a string.
function text(start) {
  return buf.toString('latin1', start, pos);
}

// copy is a copy of the bytes written from start to pos (Buffer's slice
// would share them).
function copy(start) {
  return Uint8Array.prototype.slice.call(buf, start, pos);
}

// bytes is constant ASCII text as bytes, for raw.
function bytes(s) {
  return Buffer.from(s, 'latin1');
}

function raw(b) {
  const n = b.length;
  reserve(n);
  if (n > 8) buf.set(b, pos);
  else for (let i = 0; i < n; i++) buf[pos + i] = b[i];
  pos += n;
}

function char(c) {
  reserve(1);
  buf[pos++] = c;
}

// ascii writes a string of ASCII characters as they are.
function ascii(s) {
  const n = s.length;
  reserve(n);
  for (let i = 0; i < n; i++) buf[pos + i] = s.charCodeAt(i);
  pos += n;
}

// string writes JSON.stringify(s) of a string, in ASCII: s between quotes
// when it has only printable ASCII characters but " and \ (what
// JSON.stringify leaves as is), else JSON.stringify's text with its
// non-ASCII characters escaped.
function string(s) {
  const n = s.length;
  reserve(n + 2);
  let p = pos;
  buf[p++] = 0x22;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) {
      ascii(JSON.stringify(s).replace(NON_ASCII, escapeChar));
      return;
    }
    buf[p++] = c;
  }
  buf[p++] = 0x22;
  pos = p;
}

// uint writes a non-negative integer below 2^31 in decimal; width pads it
// with zeros.
function uint(n, width) {
  let digits = 1;
  for (let m = n; m >= 10; m = (m / 10) | 0) digits++;
  if (digits < width) digits = width;
  reserve(digits);
  for (let i = pos + digits - 1; i >= pos; i--) {
    buf[i] = 0x30 + (n % 10);
    n = (n / 10) | 0;
  }
  pos += digits;
}

// number writes JSON.stringify(n) of a number.
function number(n) {
  if (n >= 0 && n < 0x80000000 && n === Math.floor(n)) uint(n, 1); // -0 too: "0"
  else ascii(Number.isFinite(n) ? '' + n : 'null');
}

// member writes `,"name":value` (name: the bytes of `,"name":`) for a
// member JSON.stringify writes, nothing for one it leaves out (an undefined
// value).
function member(name, value) {
  if (typeof value === 'string') {
    raw(name);
    string(value);
  } else if (typeof value === 'number') {
    raw(name);
    number(value);
  } else if (value !== undefined) {
    const json = JSON.stringify(value);
    if (json === undefined) return;
    raw(name);
    ascii(json.replace(NON_ASCII, escapeChar));
  }
}

// firstMember takes the comma off the first member written since start (an
// object's members are written each with a comma before it).
function firstMember(start) {
  if (pos > start && buf[start] === 0x2c) {
    buf.copyWithin(start, start + 1, pos);
    pos--;
  }
}

// nanos writes otlp-transformer's timestamp: the HrTime [seconds,
// nanoseconds] as a decimal count of nanoseconds (the quotes around it are
// the caller's).
function nanos(hr) {
  const sec = Math.trunc(hr[0]);
  const ns = Math.trunc(hr[1]);
  if (sec === 0 && ns >= 0) number(ns);
  else if (sec > 0 && sec < 0x80000000 && ns >= 0 && ns < 1e9) {
    uint(sec, 1);
    uint(ns, 9);
  } else ascii('' + (BigInt(sec) * 1000000000n + BigInt(ns)));
}

function flags(traceFlags, isRemote) {
  uint((traceFlags & 0xff) | HAS_IS_REMOTE | (isRemote ? IS_REMOTE : 0), 1);
}

const STRING_VALUE = bytes('{"stringValue":');
const INT_VALUE = bytes('{"intValue":');
const DOUBLE_VALUE = bytes('{"doubleValue":');
const TRUE_VALUE = bytes('{"boolValue":true}');
const FALSE_VALUE = bytes('{"boolValue":false}');
const BYTES_VALUE = bytes('{"bytesValue":"');
const ARRAY_VALUE = bytes('{"arrayValue":{"values":[');
const KVLIST_VALUE = bytes('{"kvlistValue":{"values":');
const EMPTY_OBJECT = bytes('{}');
const CLOSE_2 = bytes(']}}');
const CLOSE_1 = bytes('}}');
const QUOTE_BRACE = bytes('"}');

function anyValue(v) {
  switch (typeof v) {
    case 'string':
      raw(STRING_VALUE);
      string(v);
      char(0x7d);
      return;
    case 'number':
      raw(Number.isInteger(v) ? INT_VALUE : DOUBLE_VALUE);
      number(v);
      char(0x7d);
      return;
    case 'boolean':
      raw(v ? TRUE_VALUE : FALSE_VALUE);
      return;
    case 'object':
      break;
    default:
      raw(EMPTY_OBJECT);
      return;
  }
  if (v instanceof Uint8Array) {
    raw(BYTES_VALUE);
    ascii(Buffer.from(v).toString('base64'));
    raw(QUOTE_BRACE);
  } else if (Array.isArray(v)) {
    raw(ARRAY_VALUE);
    for (let i = 0; i < v.length; i++) {
      if (i) char(0x2c);
      anyValue(v[i]);
    }
    raw(CLOSE_2);
  } else if (v === null) {
    raw(EMPTY_OBJECT);
  } else {
    raw(KVLIST_VALUE);
    keyValues(v);
    raw(CLOSE_1);
  }
}

// keyOpenings holds, for the attribute keys seen, the bytes of
// `{"key":"<key>","value":` (any) and of that followed by `{"stringValue":`
// (string): apps use a few keys over and over, mostly with string values.
// Bounded, for an app that makes keys from data.
const keyOpenings = new Map();
const MAX_KEYS = 1024;
const KEY = bytes('{"key":');
const VALUE = bytes(',"value":');

function keyOpening(k) {
  const known = keyOpenings.get(k);
  if (known !== undefined) return known;
  const start = pos;
  raw(KEY);
  string(k);
  raw(VALUE);
  const any = copy(start);
  raw(STRING_VALUE);
  const opening = { any, string: copy(start) };
  pos = start;
  if (keyOpenings.size < MAX_KEYS) keyOpenings.set(k, opening);
  return opening;
}

function keyValues(attrs) {
  const keys = Object.keys(attrs);
  char(0x5b);
  for (let i = 0; i < keys.length; i++) {
    if (i) char(0x2c);
    const v = attrs[keys[i]];
    if (typeof v === 'string') {
      raw(keyOpening(keys[i]).string);
      string(v);
      raw(CLOSE_1);
    } else {
      raw(keyOpening(keys[i]).any);
      anyValue(v);
      char(0x7d);
    }
  }
  char(0x5d);
}

function traceState(ctx) {
  return ctx.traceState ? ctx.traceState.serialize() : undefined;
}

const ATTRIBUTES = bytes('{"attributes":');
const EMPTY_LIST = bytes('[]');
const NAME = bytes(',"name":');
const TIME = bytes(',"timeUnixNano":"');
const TIME_END = bytes('","droppedAttributesCount":');
const DROPPED_ATTRIBUTES = bytes(',"droppedAttributesCount":');
const SPAN_ID = bytes(',"spanId":');
const TRACE_ID = bytes(',"traceId":');
const TRACE_STATE = bytes(',"traceState":');
const FLAGS = bytes(',"flags":');

function event(e) {
  raw(ATTRIBUTES);
  if (e.attributes) keyValues(e.attributes);
  else raw(EMPTY_LIST);
  member(NAME, e.name);
  raw(TIME);
  nanos(e.time);
  raw(TIME_END);
  number(e.droppedAttributesCount || 0);
  char(0x7d);
}

function link(l) {
  const c = l.context;
  raw(ATTRIBUTES);
  if (l.attributes) keyValues(l.attributes);
  else raw(EMPTY_LIST);
  member(SPAN_ID, c.spanId);
  member(TRACE_ID, c.traceId);
  member(TRACE_STATE, traceState(c));
  raw(DROPPED_ATTRIBUTES);
  number(l.droppedAttributesCount || 0);
  raw(FLAGS);
  flags(c.traceFlags, c.isRemote);
  char(0x7d);
}

function list(items, encode) {
  char(0x5b);
  for (let i = 0; i < items.length; i++) {
    if (i) char(0x2c);
    encode(items[i]);
  }
  char(0x5d);
}

const PARENT_SPAN_ID = bytes(',"parentSpanId":');
const KIND = bytes(',"kind":');
const START_TIME = bytes(',"startTimeUnixNano":"');
// The kinds of the API (0 to 4) with the start time's opening, in one piece.
const KIND_START_TIME = [1, 2, 3, 4, 5].map((k) => bytes(`,"kind":${k},"startTimeUnixNano":"`));
const END_TIME = bytes('","endTimeUnixNano":"');
const SPAN_ATTRIBUTES = bytes('","attributes":');
const EVENTS = bytes(',"events":');
const DROPPED_EVENTS = bytes(',"droppedEventsCount":');
const STATUS = bytes(',"status":{');
const CODE = bytes(',"code":');
const MESSAGE = bytes(',"message":');
const LINKS = bytes('},"links":');
const DROPPED_LINKS = bytes(',"droppedLinksCount":');
// What most spans have after their attributes, in pieces: nothing dropped,
// no events, status UNSET without a message, no links.
const NO_EVENTS = bytes(',"droppedAttributesCount":0,"events":[],"droppedEventsCount":0,"status":{');
const STATUS_UNSET = bytes('"code":0');
const NO_LINKS = bytes('},"links":[],"droppedLinksCount":0,"flags":');

// writeSpan writes the JSON text of one span.
function writeSpan(s) {
  const ctx = s.spanContext();
  const parent = s.parentSpanContext;
  const status = s.status;
  char(0x7b);
  const members = pos;
  member(TRACE_ID, ctx.traceId);
  member(SPAN_ID, ctx.spanId);
  firstMember(members);
  if (parent && parent.spanId) member(PARENT_SPAN_ID, parent.spanId);
  member(TRACE_STATE, traceState(ctx));
  member(NAME, s.name);
  const kind = s.kind;
  if (kind >= 0 && kind <= 4 && Number.isInteger(kind)) raw(KIND_START_TIME[kind]);
  else {
    raw(KIND);
    if (kind == null) char(0x30);
    else number(kind + 1);
    raw(START_TIME);
  }
  nanos(s.startTime);
  raw(END_TIME);
  nanos(s.endTime);
  raw(SPAN_ATTRIBUTES);
  keyValues(s.attributes);
  if (s.droppedAttributesCount === 0 && s.events.length === 0 && s.droppedEventsCount === 0) raw(NO_EVENTS);
  else {
    member(DROPPED_ATTRIBUTES, s.droppedAttributesCount);
    raw(EVENTS);
    list(s.events, event);
    member(DROPPED_EVENTS, s.droppedEventsCount);
    raw(STATUS);
  }
  if (status.code === 0 && status.message === undefined) raw(STATUS_UNSET);
  else {
    const statusMembers = pos;
    member(CODE, status.code);
    member(MESSAGE, status.message);
    firstMember(statusMembers);
  }
  if (s.links.length === 0 && s.droppedLinksCount === 0) raw(NO_LINKS);
  else {
    raw(LINKS);
    list(s.links, link);
    member(DROPPED_LINKS, s.droppedLinksCount);
    raw(FLAGS);
  }
  flags(ctx.traceFlags, parent && parent.isRemote);
  char(0x7d);
}

// span is the JSON text of one span.
function span(s) {
  pos = 0;
  try {
    writeSpan(s);
    return text(0);
  } finally {
    release();
  }
}

// capture is the text write(arg) writes, as a string.
function capture(write, arg) {
  const start = pos;
  write(arg);
  const t = text(start);
  pos = start;
  return t;
}

const SCHEMA_URL = bytes(',"schemaUrl":');
const VERSION = bytes(',"version":');

function resourceHead(r) {
  ascii('{"resource":{"attributes":');
  keyValues(r.attributes);
  ascii(',"droppedAttributesCount":0');
  if (r.schemaUrl) member(SCHEMA_URL, r.schemaUrl);
  ascii('},"scopeSpans":[');
}

function resourceTail(r) {
  char(0x5d);
  if (r.schemaUrl) member(SCHEMA_URL, r.schemaUrl);
  char(0x7d);
}

function scopeHead(sc) {
  ascii('{"scope":{');
  const members = pos;
  member(NAME, sc.name);
  member(VERSION, sc.version);
  firstMember(members);
  if (sc.attributes && Object.keys(sc.attributes).length > 0) {
    ascii(',"attributes":');
    keyValues(sc.attributes);
    raw(DROPPED_ATTRIBUTES);
    number(sc.droppedAttributesCount ?? 0);
  }
  ascii('},"spans":[');
}

function scopeTail(sc) {
  char(0x5d);
  member(SCHEMA_URL, sc.schemaUrl);
  char(0x7d);
}

// A group's head and tail: the text that opens it (up to its list of
// children) and the text that closes it, as strings (for Line) and bytes
// (for encodeLines).
function ends(headOf, tailOf, x) {
  const head = capture(headOf, x);
  const tail = capture(tailOf, x);
  return { head, tail, headBytes: bytes(head), tailBytes: bytes(tail) };
}

// A resource's or scope's group: its head and tail, and its children
// (spans for encodeLines, their text for Line).
function resourceGroup(r) {
  return {
    ...ends(resourceHead, resourceTail, r),
    scopes: [],
    byKey: new Map(), // scope key → group
    byScope: new Map(), // scope object → group
  };
}

function scopeGroup(sc) {
  return { ...ends(scopeHead, scopeTail, sc), spans: [], text: '' };
}

// scopeKey is what otlp-transformer groups scopes by.
function scopeKey(sc) {
  return sc.name + '@' + (sc.version || '') + ':' + (sc.schemaUrl || '');
}

const LINE_HEAD = '{"resourceSpans":[';
const LINE_TAIL = ']}\n';
const LINE_HEAD_BYTES = bytes(LINE_HEAD);
const LINE_TAIL_BYTES = bytes(LINE_TAIL);

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
// `{text, spans, bytes}`: the text ends in "\n" and is bytes long; spans is
// how many spans it holds. A line is closed when the next span would take
// it past lineBytes (default maxBytes); a span that does not fit under
// lineBytes alone gets a line of its own, up to maxBytes (newline
// included), and is left out when it cannot fit even that: the count of
// those is `tooLarge`.
function encodeLines(spans, maxBytes, lineBytes = maxBytes) {
  const lines = [];
  let tooLarge = 0;
  let count = 0; // the spans in the line being built, in buf from 0 to pos
  let res = null; // the resource and scope groups open in it
  let scope = null;

  // close ends the line, the text from 0 to pos.
  const close = () => {
    raw(scope.tailBytes);
    raw(res.tailBytes);
    raw(LINE_TAIL_BYTES);
    lines.push({ text: text(0), spans: count, bytes: pos });
    pos = 0;
    count = 0;
  };

  pos = 0;
  try {
    for (const r of group(spans)) {
      for (const sc of r.scopes) {
        const closing = sc.tailBytes.length + r.tailBytes.length + LINE_TAIL_BYTES.length;
        for (let i = 0; i < sc.spans.length; i++) {
          const before = pos; // the end of the line without this span
          if (count === 0) {
            raw(LINE_HEAD_BYTES);
            raw(r.headBytes);
            raw(sc.headBytes);
          } else if (r === res && sc === scope) {
            char(0x2c);
          } else if (r === res) {
            raw(scope.tailBytes);
            char(0x2c);
            raw(sc.headBytes);
          } else {
            raw(scope.tailBytes);
            raw(res.tailBytes);
            char(0x2c);
            raw(r.headBytes);
            raw(sc.headBytes);
          }
          const start = pos;
          writeSpan(sc.spans[i]);
          if (pos + closing > lineBytes && count > 0) {
            // Too long with this span: the line ends before it, and the
            // span opens the next one.
            const json = copy(start);
            pos = before;
            close();
            raw(LINE_HEAD_BYTES);
            raw(r.headBytes);
            raw(sc.headBytes);
            raw(json);
          }
          res = r;
          scope = sc;
          if (pos + closing <= lineBytes) {
            count++;
          } else if (pos + closing <= maxBytes) {
            // Alone and over lineBytes: a line of its own.
            count++;
            close();
          } else {
            tooLarge++;
            pos = 0;
            count = 0;
          }
        }
      }
    }
    if (count > 0) close();
    return { lines, tooLarge };
  } finally {
    release();
  }
}

module.exports = { encodeLines, Line, span };
