'use strict';
const { diag } = require('@opentelemetry/api');
const { encodeLines } = require('./encode.cjs');

// ExportResultCode of @opentelemetry/core, which is not a dependency.
const SUCCESS = 0;
const FAILED = 1;

// The stdout receiver's default max_line_bytes: a longer line would be cut.
const DEFAULT_MAX_LINE_BYTES = 256 * 1024;

// How many bytes a destination may hold unwritten before spans are dropped.
// An export is written at once, so nothing drains during it: the bound must
// hold a whole batch (512 spans of a few KiB each) on top of what the logger
// has pending.
const DEFAULT_MAX_PENDING_BYTES = 4 * 1024 * 1024;

// How often at most a drop is reported through the OpenTelemetry diag logger.
const WARN_INTERVAL_MS = 60_000;

// StdoutSpanExporter writes each export as OTLP/JSON ExportTraceServiceRequest
// lines to a stream, for the sidecar to read from the app's stdout.
//
// It never queues: an export's lines are handed to the destination at once,
// as one string in one write call, so they never interleave with other
// writes through the same destination (such as pino's). It never grows the
// app's memory either: lines are written only as long as the destination
// then holds at most maxPendingBytes unwritten (its writableLength, or
// SonicBoom's buffered length); the spans of the others are dropped and
// counted. A destination that
// tells neither is trusted until write() returns false, then skipped until
// it emits 'drain'.
//
// A drop is policy, not failure: the export still succeeds, so that the
// app's provider.forceFlush() and shutdown() never reject because of it; it
// is counted in droppedSpans and reported through diag at most once a minute.
class StdoutSpanExporter {
  #dest;
  #maxLineBytes;
  #maxPendingBytes;
  #congested = false; // for destinations that do not tell their pending bytes
  #dropped = 0;
  #shutdown = false;
  #lastWarn = -Infinity;

  /**
   * @param {{destination?: NodeJS.WritableStream, maxLineBytes?: number, maxPendingBytes?: number}} [options]
   */
  constructor(options = {}) {
    this.#dest = options.destination || process.stdout;
    this.#maxLineBytes = options.maxLineBytes || DEFAULT_MAX_LINE_BYTES;
    this.#maxPendingBytes = options.maxPendingBytes || DEFAULT_MAX_PENDING_BYTES;
    if (typeof this.#dest.write !== 'function') {
      throw new TypeError('StdoutSpanExporter: destination has no write method');
    }
  }

  /** Spans dropped so far: destination congested or failing, a span larger than a line or unreadable. */
  get droppedSpans() {
    return this.#dropped;
  }

  // export calls resultCallback exactly once, before it returns, whatever
  // happens: the batch span processor waits for it before the next export.
  export(spans, resultCallback) {
    let result;
    try {
      result = this.#export(spans);
    } catch (error) {
      // A span the encoder cannot read: nothing of this export was written.
      this.#dropped += spans.length;
      result = { code: FAILED, error };
    }
    resultCallback(result);
  }

  // #export hands the lines that fit under maxPendingBytes to the
  // destination as one string, in one write call, and drops the spans of
  // the others.
  #export(spans) {
    if (this.#shutdown) return { code: FAILED, error: new Error('StdoutSpanExporter is shut down') };
    const room = this.#room();
    if (room <= 0) {
      // Full already: not even encoded, so that a congested app spends no
      // CPU on spans it drops.
      this.#drop(spans.length, 'destination congested');
      return { code: SUCCESS };
    }
    const { lines, tooLarge } = encodeLines(spans, this.#maxLineBytes);
    if (tooLarge) this.#drop(tooLarge, `a span larger than ${this.#maxLineBytes} bytes`);
    let text = '';
    let written = 0;
    let congested = 0;
    for (let i = 0; i < lines.length; i++) {
      if (text.length + lines[i].bytes <= room) {
        text += lines[i].text;
        written += lines[i].spans;
      } else {
        congested += lines[i].spans;
      }
    }
    if (congested) this.#drop(congested, 'destination congested');
    if (!text) return { code: SUCCESS };
    try {
      if (this.#dest.write(text) === false) this.#waitDrain();
    } catch (error) {
      // A destroyed or closed destination.
      this.#dropped += written;
      return { code: FAILED, error };
    }
    return { code: SUCCESS };
  }

  // #room is how many bytes the destination takes before it holds
  // maxPendingBytes unwritten.
  #room() {
    const d = this.#dest;
    // writableLength: Node streams, process.stdout; _len: SonicBoom (pino.destination()).
    const pending = typeof d.writableLength === 'number' ? d.writableLength : d._len;
    if (typeof pending !== 'number') return this.#congested ? 0 : Infinity;
    return this.#maxPendingBytes - pending;
  }

  #waitDrain() {
    const d = this.#dest;
    if (typeof d.writableLength === 'number' || typeof d._len === 'number') return;
    if (typeof d.once !== 'function' || this.#congested) return;
    this.#congested = true;
    d.once('drain', () => {
      this.#congested = false;
    });
  }

  #drop(n, why) {
    this.#dropped += n;
    const now = Date.now();
    if (now - this.#lastWarn >= WARN_INTERVAL_MS) {
      this.#lastWarn = now;
      diag.warn(`StdoutSpanExporter: ${why}, dropped ${n} spans (${this.#dropped} since start)`);
    }
  }

  // Nothing is held here, so there is nothing to flush; the destination
  // (shared with the logger) is the app's to flush and close.
  forceFlush() {
    return Promise.resolve();
  }

  shutdown() {
    this.#shutdown = true;
    return Promise.resolve();
  }
}

module.exports = { StdoutSpanExporter, DEFAULT_MAX_LINE_BYTES, DEFAULT_MAX_PENDING_BYTES };
