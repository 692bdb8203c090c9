package main

import (
	"os"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// newLogger writes to stderr, where Fluent Bit's own log goes, in a line
// format close to Fluent Bit's ("[level] [output:axiom] message fields").
// The token is never a field: configopaque hides it in the exporter, and
// configuration errors do not carry it.
func newLogger() *zap.Logger {
	enc := zapcore.NewConsoleEncoder(zapcore.EncoderConfig{
		TimeKey:        "time",
		LevelKey:       "level",
		NameKey:        "logger",
		MessageKey:     "msg",
		EncodeTime:     zapcore.ISO8601TimeEncoder,
		EncodeLevel:    zapcore.LowercaseLevelEncoder,
		EncodeDuration: zapcore.StringDurationEncoder,
		EncodeName:     zapcore.FullNameEncoder,
	})
	level := zapcore.InfoLevel
	if os.Getenv("FLB_AXIOM_DEBUG") != "" {
		level = zapcore.DebugLevel
	}
	return zap.New(zapcore.NewCore(enc, zapcore.Lock(os.Stderr), level)).Named("output:axiom")
}
