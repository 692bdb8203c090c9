'use strict';
const { diag } = require('@opentelemetry/api');
const { encodeLines } = require('./encode.cjs');

// ExportResultCode of @opentelemetry/core, which is not a dependency.
const SUCCESS = 0;
const FAILED = 1;

// How often at most a drop is reported through the OpenTelemetry diag logger.
const WARN_INTERVAL_MS = 60_000;

// The stdout receiver's default max_line_bytes: a longer line would be cut.
const DEFAULT_MAX_LINE_BYTES = 256 * 1024;

// StdoutSpanExporter writes each export as OTLP/JSON ExportTraceServiceRequest
// lines to a stream, for the sidecar to read from the app's stdout.
//
// It never queues: every line is handed to the destination at once, with
// one write call each, so lines never interleave with other writes through
// the same destination (such as pino's). It never grows the app's memory
// either: once the destination reports its buffer full (write() returns
// false), further spans are dropped and counted until it emits 'drain'.
// A drop is policy, not failure: the export still succeeds, so that the
// app's provider.forceFlush() and shutdown() never reject because of it; it
// is counted in droppedSpans and reported through diag at most once a minute.
class StdoutSpanExporter {
  #dest;
  #maxLineBytes;
  #congested = false;
  #dropped = 0;
  #shutdown = false;
  #lastWarn = -Infinity;

  /**
   * @param {{destination?: NodeJS.WritableStream, maxLineBytes?: number}} [options]
   */
  constructor(options = {}) {
    this.#dest = options.destination || process.stdout;
    this.#maxLineBytes = options.maxLineBytes || DEFAULT_MAX_LINE_BYTES;
    if (typeof this.#dest.write !== 'function') {
      throw new TypeError('StdoutSpanExporter: destination has no write method');
    }
  }

  /** Spans dropped so far: destination congested, or a span larger than a line. */
  get droppedSpans() {
    return this.#dropped;
  }

  export(spans, resultCallback) {
    if (this.#shutdown) {
      resultCallback({ code: FAILED, error: new Error('StdoutSpanExporter is shut down') });
      return;
    }
    if (this.#congested) {
      this.#drop(spans.length, 'destination congested');
      resultCallback({ code: SUCCESS });
      return;
    }
    const { lines, tooLarge } = encodeLines(spans, this.#maxLineBytes);
    let lost = tooLarge;
    for (let i = 0; i < lines.length; i++) {
      if (this.#congested) {
        lost += lines[i].spans;
        continue;
      }
      try {
        if (this.#dest.write(lines[i].text) === false) this.#waitDrain();
      } catch (error) {
        // A destroyed or closed destination: this export and the rest are lost.
        for (; i < lines.length; i++) lost += lines[i].spans;
        this.#dropped += lost;
        resultCallback({ code: FAILED, error });
        return;
      }
    }
    if (lost) this.#drop(lost, tooLarge ? `a span larger than ${this.#maxLineBytes} bytes` : 'destination congested');
    resultCallback({ code: SUCCESS });
  }

  #waitDrain() {
    if (typeof this.#dest.once !== 'function') return;
    this.#congested = true;
    this.#dest.once('drain', () => {
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

module.exports = { StdoutSpanExporter, DEFAULT_MAX_LINE_BYTES };
