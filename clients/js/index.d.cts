/** The stdout receiver's default max_line_bytes (256 KiB): no line written is longer. */
export declare const DEFAULT_MAX_LINE_BYTES: number;

/** How many bytes a destination may hold unwritten before spans are dropped (4 MiB). */
export declare const DEFAULT_MAX_PENDING_BYTES: number;

/** The part of a writable stream the exporter uses: process.stdout, a Node stream, or pino.destination() (SonicBoom). */
export interface Destination {
  write(chunk: string): boolean;
  /** Bytes accepted but not yet written (Node streams). */
  readonly writableLength?: number;
  once?(event: 'drain', listener: () => void): unknown;
}

export interface StdoutSpanExporterOptions {
  /** Where lines go; default process.stdout. Share your logger's destination so lines never interleave. */
  destination?: Destination;
  /** The longest line written, newline included; default DEFAULT_MAX_LINE_BYTES. Larger exports are split. */
  maxLineBytes?: number;
  /** Spans are dropped while the destination holds more than this many bytes unwritten; default DEFAULT_MAX_PENDING_BYTES. */
  maxPendingBytes?: number;
  /** A line is closed once the next span would take it past this many bytes; default 65,536 (64 KiB). A span larger than that gets a line of its own, up to maxLineBytes. */
  lineBytes?: number;
}

/** What the exporter reads from an SDK span (ReadableSpan of @opentelemetry/sdk-trace-base 2.x, @opentelemetry/sdk-trace 3.x). */
export interface ReadableSpanLike {
  readonly name: string;
  readonly kind: number;
  spanContext(): { traceId: string; spanId: string; traceFlags: number; isRemote?: boolean; traceState?: { serialize(): string } };
  readonly parentSpanContext?: { spanId: string; isRemote?: boolean };
  readonly startTime: [number, number];
  readonly endTime: [number, number];
  readonly status: { code: number; message?: string };
  readonly attributes: Record<string, unknown>;
  readonly links: ReadonlyArray<unknown>;
  readonly events: ReadonlyArray<unknown>;
  readonly resource: { attributes: Record<string, unknown>; schemaUrl?: string };
  readonly instrumentationScope: { name: string; version?: string; schemaUrl?: string };
  readonly droppedAttributesCount: number;
  readonly droppedEventsCount: number;
  readonly droppedLinksCount: number;
}

/** A SpanExporter writing each export as OTLP/JSON ExportTraceServiceRequest lines. */
export declare class StdoutSpanExporter {
  constructor(options?: StdoutSpanExporterOptions);
  /** Spans dropped so far: the destination was congested or failed, or a span was larger than a line or unreadable. */
  readonly droppedSpans: number;
  export(spans: ReadableSpanLike[], resultCallback: (result: { code: 0 | 1; error?: Error }) => void): void;
  forceFlush(): Promise<void>;
  shutdown(): Promise<void>;
}

export interface StdoutSpanProcessorOptions extends StdoutSpanExporterOptions {
  /** How long a span waits at most in a line that is not full, in milliseconds; default 200. */
  delayMillis?: number;
}

/**
 * A SpanProcessor that encodes each sampled span as it ends into the line being built and writes the line
 * (one write call) when it reaches lineBytes, after delayMillis, and on forceFlush() and shutdown(). Use it
 * instead of a BatchSpanProcessor with a StdoutSpanExporter: it keeps no span objects, only one line of text.
 */
export declare class StdoutSpanProcessor {
  constructor(options?: StdoutSpanProcessorOptions);
  /** Spans dropped so far: the destination was congested or failed, a span was larger than a line or unreadable, or ended after shutdown. */
  readonly droppedSpans: number;
  onStart(span: unknown, parentContext: unknown): void;
  onEnd(span: ReadableSpanLike): void;
  forceFlush(): Promise<void>;
  shutdown(): Promise<void>;
}

/** A pino `mixin` adding trace_id, span_id and trace_flags of the active span to each line. */
export declare function pinoTraceMixin(): { trace_id?: string; span_id?: string; trace_flags?: string };
