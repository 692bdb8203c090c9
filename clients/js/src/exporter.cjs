'use strict';
const { encodeLines } = require('./encode.cjs');
const { Outlet, DEFAULT_MAX_LINE_BYTES } = require('./outlet.cjs');

// ExportResultCode of @opentelemetry/core, which is not a dependency.
const SUCCESS = 0;
const FAILED = 1;

// StdoutSpanExporter writes each export as OTLP/JSON ExportTraceServiceRequest
// lines to a stream, for the sidecar to read from the app's stdout.
//
// It never queues: an export's lines are handed to the destination at once,
// as one string in one write call, so they never interleave with other
// writes through the same destination (such as pino's). It never grows the
// app's memory either: lines are written only as long as the destination
// then holds at most maxPendingBytes unwritten (see Outlet); the spans of
// the others are dropped and counted.
//
// A drop is policy, not failure: the export still succeeds, so that the
// app's provider.forceFlush() and shutdown() never reject because of it; it
// is counted in droppedSpans and reported through diag at most once a minute.
class StdoutSpanExporter {
  #out;
  #maxLineBytes;
  #shutdown = false;

  /**
   * @param {{destination?: NodeJS.WritableStream, maxLineBytes?: number, maxPendingBytes?: number}} [options]
   */
  constructor(options = {}) {
    this.#out = new Outlet('StdoutSpanExporter', options);
    this.#maxLineBytes = options.maxLineBytes || DEFAULT_MAX_LINE_BYTES;
  }

  /** Spans dropped so far: destination congested or failing, a span larger than a line or unreadable. */
  get droppedSpans() {
    return this.#out.dropped;
  }

  // export calls resultCallback exactly once, before it returns, whatever
  // happens: the batch span processor waits for it before the next export.
  export(spans, resultCallback) {
    let result;
    try {
      result = this.#export(spans);
    } catch (error) {
      // A span the encoder cannot read: nothing of this export was written.
      this.#out.dropped += spans.length;
      result = { code: FAILED, error };
    }
    resultCallback(result);
  }

  // #export hands the lines that fit under maxPendingBytes to the
  // destination as one string, in one write call, and drops the spans of
  // the others.
  #export(spans) {
    if (this.#shutdown) return { code: FAILED, error: new Error('StdoutSpanExporter is shut down') };
    const room = this.#out.room();
    if (room <= 0) {
      // Full already: not even encoded, so that a congested app spends no
      // CPU on spans it drops.
      this.#out.drop(spans.length, 'destination congested');
      return { code: SUCCESS };
    }
    const { lines, tooLarge } = encodeLines(spans, this.#maxLineBytes);
    if (tooLarge) this.#out.drop(tooLarge, `a span larger than ${this.#maxLineBytes} bytes`);
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
    if (congested) this.#out.drop(congested, 'destination congested');
    if (!text) return { code: SUCCESS };
    try {
      this.#out.write(text);
    } catch (error) {
      // A destroyed or closed destination.
      this.#out.dropped += written;
      return { code: FAILED, error };
    }
    return { code: SUCCESS };
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

module.exports = { StdoutSpanExporter };
