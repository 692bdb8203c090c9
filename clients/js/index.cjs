'use strict';
const { StdoutSpanExporter, DEFAULT_MAX_LINE_BYTES, DEFAULT_MAX_PENDING_BYTES } = require('./src/exporter.cjs');
const { pinoTraceMixin } = require('./src/mixin.cjs');

module.exports = { StdoutSpanExporter, pinoTraceMixin, DEFAULT_MAX_LINE_BYTES, DEFAULT_MAX_PENDING_BYTES };
