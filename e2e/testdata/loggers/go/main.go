// Command loggers records what real Go loggers print, the same on every run
// (a fixed clock), into the directory given as its argument: zap.ndjson
// (zap's production JSON encoder), logrus.ndjson (logrus's JSONFormatter)
// and slog.ndjson (log/slog's JSONHandler). The stdout receiver's formats
// table and e2e/loggers_test.go are built on these files.
//
//	cd e2e/testdata/loggers/go && go run . ../recorded
package main

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/sirupsen/logrus"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

var start = time.Date(2025, 11, 30, 12, 0, 0, 123456789, time.UTC)

type fixedClock struct{ n *int }

func (c fixedClock) Now() time.Time {
	*c.n++
	return start.Add(time.Duration(*c.n) * time.Millisecond)
}
func (fixedClock) NewTicker(d time.Duration) *time.Ticker { return time.NewTicker(d) }

func main() {
	dir := os.Args[1]
	create := func(name string) *os.File {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			panic(err)
		}
		return f
	}

	zf := create("zap.ndjson")
	n := 0
	enc := zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig())
	zl := zap.New(zapcore.NewCore(enc, zapcore.AddSync(zf), zapcore.DebugLevel), zap.WithClock(fixedClock{&n}))
	zl.Debug("cache miss", zap.String("key", "user:42"))
	zl.Info("request completed", zap.String("method", "GET"), zap.Int("status", 200), zap.Duration("took", 57*time.Millisecond))
	zl.Warn("slow query", zap.String("trace_id", "4bf92f3577b34da6a3ce929d0e0e4736"), zap.String("span_id", "00f067aa0ba902b7"))
	zl.Error("connect failed", zap.Error(errors.New("connect ECONNREFUSED")))
	zl.Named("db").With(zap.String("module", "pool")).Info("child logger", zap.String("module", "call"))
	zl.DPanic("dpanic in production logs and goes on")
	zf.Close()

	lf := create("logrus.ndjson")
	ll := logrus.New()
	ll.SetOutput(lf)
	ll.SetFormatter(&logrus.JSONFormatter{})
	ll.SetLevel(logrus.TraceLevel)
	at := func(i int) *logrus.Entry { return ll.WithTime(start.Add(time.Duration(i) * time.Millisecond)) }
	at(1).Trace("tick")
	at(2).WithField("method", "GET").WithField("status", 200).Info("request completed")
	at(3).WithField("free", "1G").Warn("disk low")
	at(4).WithError(errors.New("connect ECONNREFUSED")).Error("connect failed")
	at(5).WithFields(logrus.Fields{"level": "user", "time": "user", "msg": "user"}).Info("keys logrus also writes")
	lf.Close()

	sf := create("slog.ndjson")
	sl := slog.New(slog.NewJSONHandler(sf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx := context.Background()
	rec := func(i int, lv slog.Level, msg string, attrs ...slog.Attr) {
		r := slog.NewRecord(start.Add(time.Duration(i)*time.Millisecond), lv, msg, 0)
		r.AddAttrs(attrs...)
		if err := sl.Handler().Handle(ctx, r); err != nil {
			panic(err)
		}
	}
	rec(1, slog.LevelDebug, "cache miss", slog.String("key", "user:42"))
	rec(2, slog.LevelInfo, "request completed", slog.String("method", "GET"), slog.Int("status", 200))
	rec(3, slog.LevelWarn+2, "between warn and error")
	rec(4, slog.LevelError, "connect failed", slog.Any("err", errors.New("connect ECONNREFUSED")))
	rec(5, slog.LevelInfo, "grouped", slog.Group("req", slog.String("method", "GET"), slog.String("url", "/orders")))
	sl = sl.With("module", "db")
	sl.Handler().Handle(ctx, func() slog.Record {
		r := slog.NewRecord(start.Add(6*time.Millisecond), slog.LevelInfo, "child logger", 0)
		r.AddAttrs(slog.String("module", "call"))
		return r
	}())
	sf.Close()
}
