'use strict';
const { encodeLines } = require('./encode.cjs');
const { Outlet, DEFAULT_MAX_LINE_BYTES, DEFAULT_LINE_BYTES } = require('./outlet.cjs');

// ExportResultCode of @opentelemetry/core, which is not a dependency.
const SUCCESS = 0;
const FAILED = 1;

// StdoutSpanExporter writes each export as OTLP/JSON ExportTraceServiceRequest
// lines to a stream, for the sidecar to read from the app's stdout.
//
// It never queues: an export's lines are handed to the destination before
// export returns, each whole in one write call, so they never interleave
// with other writes through the same destination (such as pino's). A line
// holds up to lineBytes (64 KiB, under V8's largest regular heap object, so
// that no line is a string in the large-object space, freed only by a full
// GC). It never grows the
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
  #lineBytes;
  #shutdown = false;

  /**
   * @param {{destination?: NodeJS.WritableStream, maxLineBytes?: number, lineBytes?: number, maxPendingBytes?: number}} [options]
   */
  constructor(options = {}) {
    this.#out = new Outlet('StdoutSpanExporter', options);
    this.#maxLineBytes = options.maxLineBytes || DEFAULT_MAX_LINE_BYTES;
    this.#lineBytes = Math.min(options.lineBytes || DEFAULT_LINE_BYTES, this.#maxLineBytes);
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
  // destination, and drops the spans of the others.
  #export(spans) {
    if (this.#shutdown) return { code: FAILED, error: new Error('StdoutSpanExporter is shut down') };
    let room = this.#out.room();
    if (room <= 0) {
      // Full already: not even encoded, so that a congested app spends no
      // CPU on spans it drops.
      this.#out.drop(spans.length, 'destination congested');
      return { code: SUCCESS };
    }
    const { lines, tooLarge } = encodeLines(spans, this.#maxLineBytes, this.#lineBytes);
    if (tooLarge) this.#out.drop(tooLarge, `a span larger than ${this.#maxLineBytes} bytes`);
    let congested = 0;
    for (let i = 0; i < lines.length; i++) {
      if (lines[i].bytes > room) {
        congested += lines[i].spans;
        continue;
      }
      try {
        this.#out.write(lines[i].text);
      } catch (error) {
        // A destroyed or closed destination: this line and the rest are lost.
        for (let j = i; j < lines.length; j++) this.#out.dropped += lines[j].spans;
        this.#out.dropped += congested;
        return { code: FAILED, error };
      }
      room = this.#out.room();
    }
    if (congested) this.#out.drop(congested, 'destination congested');
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
