'use strict';
const { StdoutSpanExporter } = require('./src/exporter.cjs');
const { StdoutSpanProcessor } = require('./src/processor.cjs');
const { DEFAULT_MAX_LINE_BYTES, DEFAULT_MAX_PENDING_BYTES } = require('./src/outlet.cjs');
const { pinoTraceMixin } = require('./src/mixin.cjs');

module.exports = { StdoutSpanExporter, StdoutSpanProcessor, pinoTraceMixin, DEFAULT_MAX_LINE_BYTES, DEFAULT_MAX_PENDING_BYTES };
