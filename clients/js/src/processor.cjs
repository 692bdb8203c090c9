'use strict';
const { Line, span } = require('./encode.cjs');
const { Outlet, DEFAULT_MAX_LINE_BYTES, DEFAULT_LINE_BYTES } = require('./outlet.cjs');

// TraceFlags.SAMPLED of @opentelemetry/api.
const SAMPLED = 1;

// How long a span waits at most in a line that is not full.
const DEFAULT_DELAY_MS = 200;

// How many spans wait at most for their resource's attributes (the batch
// processor's default queue): only spans that end while resource detectors
// still run, at start-up.
const MAX_WAITING_SPANS = 2048;

// StdoutSpanProcessor is a SpanProcessor that encodes each sampled span as
// it ends into the line being built, and writes that line to a stream (one
// write call, a whole line) when it reaches lineBytes, after delayMillis,
// and on forceFlush() and shutdown(). Unlike the BatchSpanProcessor with a
// StdoutSpanExporter it keeps no span object: a span is garbage as soon as
// it has ended, and the only thing held is one line of text.
//
// The destination is bounded as the exporter's is (see Outlet): a span that
// ends while the destination holds maxPendingBytes unwritten is dropped
// without being encoded, and a line that would take it past the bound is
// dropped whole; both are counted in droppedSpans. onEnd never throws into
// the app's code that ended the span.
class StdoutSpanProcessor {
  #out;
  #maxLineBytes;
  #lineBytes;
  #delay;
  #line = new Line();
  #timer = null;
  #shutdown = false;
  #waiting = null; // spans whose resource's attributes were still pending
  #settling = null; // the promise of their resource's attributes

  /**
   * @param {{destination?: NodeJS.WritableStream, maxLineBytes?: number, lineBytes?: number, delayMillis?: number, maxPendingBytes?: number}} [options]
   */
  constructor(options = {}) {
    this.#out = new Outlet('StdoutSpanProcessor', options);
    this.#maxLineBytes = options.maxLineBytes || DEFAULT_MAX_LINE_BYTES;
    this.#lineBytes = Math.min(options.lineBytes || DEFAULT_LINE_BYTES, this.#maxLineBytes);
    this.#delay = options.delayMillis ?? DEFAULT_DELAY_MS;
  }

  /** Spans dropped so far: destination congested or failing, a span larger than a line or unreadable, ended after shutdown. */
  get droppedSpans() {
    return this.#out.dropped;
  }

  onStart() {}

  onEnd(s) {
    try {
      if ((s.spanContext().traceFlags & SAMPLED) === 0) return;
      if (this.#shutdown) {
        this.#out.drop(1, 'a span ended after shutdown');
        return;
      }
      // Detected attributes still pending: the batch processor waits for
      // them before it exports; so does this.
      if (s.resource.asyncAttributesPending) this.#wait(s);
      else this.#add(s);
    } catch {
      // A span the encoder cannot read.
      this.#out.drop(1, 'a span could not be encoded');
    }
  }

  #add(s) {
    try {
      if (this.#out.room() <= this.#line.bytes) {
        // Full already: not even encoded.
        this.#out.drop(1, 'destination congested');
        return;
      }
      const json = span(s);
      const line = this.#line;
      if (!line.add(s, json, this.#lineBytes)) {
        if (line.spans > 0) this.#write();
        // A span larger than lineBytes gets a line of its own, up to maxLineBytes.
        if (!line.add(s, json, this.#maxLineBytes)) {
          this.#out.drop(1, `a span larger than ${this.#maxLineBytes} bytes`);
          return;
        }
      }
      if (line.bytes >= this.#lineBytes) this.#write();
      else if (this.#timer === null) this.#startTimer();
    } catch {
      // A span the encoder cannot read.
      this.#out.drop(1, 'a span could not be encoded');
    }
  }

  #wait(s) {
    if (this.#waiting === null) {
      this.#waiting = [];
      const settled = (ok) => {
        const spans = this.#waiting;
        this.#waiting = this.#settling = null;
        for (const w of spans) {
          // Another resource may still be pending; one whose attributes
          // failed is encoded with those it has.
          if (ok && w.resource.asyncAttributesPending) this.#wait(w);
          else this.#add(w);
        }
      };
      this.#settling = s.resource.waitForAsyncAttributes().then(() => settled(true), () => settled(false));
    }
    if (this.#waiting.length < MAX_WAITING_SPANS) this.#waiting.push(s);
    else this.#out.drop(1, 'too many spans waiting for their resource\'s attributes');
  }

  #startTimer() {
    this.#timer = setTimeout(() => {
      this.#timer = null;
      if (this.#line.spans > 0) this.#write();
    }, this.#delay);
    // Like the batch processor's timer, it does not keep the app running:
    // the app's shutdown() writes the last line.
    if (typeof this.#timer.unref === 'function') this.#timer.unref();
  }

  // #write hands the line to the destination, or drops its spans if the
  // destination has no room for it or throws.
  #write() {
    const { text, spans, bytes } = this.#line.take();
    if (bytes > this.#out.room()) {
      this.#out.drop(spans, 'destination congested');
      return;
    }
    try {
      this.#out.write(text);
    } catch (error) {
      this.#out.drop(spans, `destination failed (${error.message})`);
    }
  }

  // forceFlush writes the line being built (after the spans waiting for
  // their resource's attributes). What the destination then holds is the
  // app's to flush (it is shared with the logger).
  async forceFlush() {
    while (this.#settling) await this.#settling;
    if (this.#line.spans > 0) this.#write();
  }

  async shutdown() {
    if (this.#shutdown) return;
    this.#shutdown = true;
    while (this.#settling) await this.#settling;
    if (this.#line.spans > 0) this.#write();
    clearTimeout(this.#timer);
    this.#timer = null;
  }
}

module.exports = { StdoutSpanProcessor, DEFAULT_LINE_BYTES, DEFAULT_DELAY_MS };
