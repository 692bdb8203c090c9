import cjs from './index.cjs';

export const { StdoutSpanExporter, StdoutSpanProcessor, pinoTraceMixin, DEFAULT_MAX_LINE_BYTES, DEFAULT_MAX_PENDING_BYTES } = cjs;
