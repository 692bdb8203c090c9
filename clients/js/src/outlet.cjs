'use strict';
const { diag } = require('@opentelemetry/api');

// The stdout receiver's default max_line_bytes: a longer line would be cut.
const DEFAULT_MAX_LINE_BYTES = 256 * 1024;

// A line is closed once the next span would take it past this many bytes:
// well under V8's largest regular heap object (128 KiB), so that no line goes
// to the large-object space, freed only by a full GC. A larger span gets a
// line of its own, up to the max_line_bytes.
const DEFAULT_LINE_BYTES = 64 * 1024;

// How many bytes a destination may hold unwritten before spans are dropped.
// An export is written at once, so nothing drains during it: the bound must
// hold a whole batch (512 spans of a few KiB each) on top of what the logger
// has pending.
const DEFAULT_MAX_PENDING_BYTES = 4 * 1024 * 1024;

// How often at most a drop is reported through the OpenTelemetry diag logger.
const WARN_INTERVAL_MS = 60_000;

// Outlet is where span lines leave: a destination stream, bounded by the
// bytes it holds unwritten, and the count of the spans dropped on the way.
//
// room() reads how many bytes the destination holds unwritten (its
// writableLength, or SonicBoom's buffered length). A destination that tells
// neither is trusted until write() returns false, then has no room until it
// emits 'drain'.
class Outlet {
  #dest;
  #maxPendingBytes;
  #who;
  #congested = false; // for destinations that do not tell their pending bytes
  #lastWarn = -Infinity;
  dropped = 0;

  constructor(who, options) {
    this.#who = who;
    this.#dest = options.destination || process.stdout;
    this.#maxPendingBytes = options.maxPendingBytes || DEFAULT_MAX_PENDING_BYTES;
    if (typeof this.#dest.write !== 'function') {
      throw new TypeError(`${who}: destination has no write method`);
    }
  }

  // room is how many bytes the destination takes before it holds
  // maxPendingBytes unwritten.
  room() {
    const d = this.#dest;
    // writableLength: Node streams, process.stdout; _len: SonicBoom (pino.destination()).
    const pending = typeof d.writableLength === 'number' ? d.writableLength : d._len;
    if (typeof pending !== 'number') return this.#congested ? 0 : Infinity;
    return this.#maxPendingBytes - pending;
  }

  // write hands text to the destination in one write call; it throws what
  // the destination throws (a destroyed or closed stream).
  write(text) {
    if (this.#dest.write(text) === false) this.#waitDrain();
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

  // drop counts n spans dropped and reports it through diag, at most once
  // a minute.
  drop(n, why) {
    this.dropped += n;
    const now = Date.now();
    if (now - this.#lastWarn >= WARN_INTERVAL_MS) {
      this.#lastWarn = now;
      diag.warn(`${this.#who}: ${why}, dropped ${n} spans (${this.dropped} since start)`);
    }
  }
}

module.exports = { Outlet, DEFAULT_MAX_LINE_BYTES, DEFAULT_LINE_BYTES, DEFAULT_MAX_PENDING_BYTES };
