import cjs from './index.cjs';

export const { StdoutSpanExporter, pinoTraceMixin, DEFAULT_MAX_LINE_BYTES } = cjs;
