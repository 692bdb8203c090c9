// Package loadgen generates the benchmark inputs: pino log lines of an HTTP
// service, CRI container-log framing, and OTLP spans of an HTTP service that
// talks to Redis through ioredis.
package loadgen

import (
	"math/rand/v2"
	"strconv"
	"time"
)

var (
	routes = []struct{ method, path string }{
		{"GET", "/api/orders/"}, {"GET", "/api/users/"}, {"POST", "/api/checkout"},
		{"GET", "/api/products/"}, {"PUT", "/api/cart/"}, {"GET", "/health"},
	}
	userAgents = []string{
		"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15",
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36",
		"okhttp/4.12.0",
		"Bun/1.1.8",
	}
	errorStack = `Error: connect ECONNREFUSED 10.0.4.12:6379\n    at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1595:16)\n    at RedisClient.sendCommand (/app/node_modules/ioredis/built/Redis.js:389:28)\n    at OrdersService.load (/app/src/orders/service.ts:88:21)\n    at async Router.handle (/app/src/http/router.ts:41:9)`
)

// Pino builds pino JSON lines like an HTTP service's request logs: about
// 300 bytes each, one in fifty an error with a stack trace. It is
// deterministic for a given seed and not safe for concurrent use.
type Pino struct {
	rng *rand.Rand
	seq uint64
}

// NewPino returns a generator seeded with seed.
func NewPino(seed uint64) *Pino {
	return &Pino{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

// Append appends one line (with its trailing newline) stamped with t as
// pino's epoch-millisecond `time`, which the sink reads back for latency.
func (p *Pino) Append(dst []byte, t time.Time) []byte {
	p.seq++
	r := routes[p.rng.IntN(len(routes))]
	isErr := p.rng.IntN(50) == 0
	status := 200
	switch {
	case isErr:
		status = 500
	case r.method == "POST":
		status = 201
	case p.rng.IntN(20) == 0:
		status = 404
	}
	level := 30
	if isErr {
		level = 50
	}
	dst = append(dst, `{"level":`...)
	dst = strconv.AppendInt(dst, int64(level), 10)
	dst = append(dst, `,"time":`...)
	dst = strconv.AppendInt(dst, t.UnixMilli(), 10)
	dst = append(dst, `,"pid":7,"hostname":"api-7d9f8c6b5-x2k4q","reqId":"req-`...)
	dst = strconv.AppendUint(dst, p.seq, 36)
	dst = append(dst, `","req":{"method":"`...)
	dst = append(dst, r.method...)
	dst = append(dst, `","url":"`...)
	dst = append(dst, r.path...)
	if r.path[len(r.path)-1] == '/' {
		dst = strconv.AppendInt(dst, int64(p.rng.IntN(100000)), 10)
	}
	dst = append(dst, `","remoteAddress":"10.0.`...)
	dst = strconv.AppendInt(dst, int64(p.rng.IntN(255)), 10)
	dst = append(dst, '.')
	dst = strconv.AppendInt(dst, int64(p.rng.IntN(255)), 10)
	dst = append(dst, `"},"res":{"statusCode":`...)
	dst = strconv.AppendInt(dst, int64(status), 10)
	dst = append(dst, `},"responseTime":`...)
	dst = strconv.AppendFloat(dst, float64(p.rng.IntN(50000))/100, 'f', 2, 64)
	dst = append(dst, `,"userAgent":"`...)
	dst = append(dst, userAgents[p.rng.IntN(len(userAgents))]...)
	if isErr {
		dst = append(dst, `","err":{"type":"Error","message":"connect ECONNREFUSED 10.0.4.12:6379","stack":"`...)
		dst = append(dst, errorStack...)
		dst = append(dst, `"},"msg":"request errored"}`...)
	} else {
		dst = append(dst, `","msg":"request completed"}`...)
	}
	return append(dst, '\n')
}

// AppendCRI appends line framed as one full CRI (containerd, CRI-O) log
// line: `<RFC 3339 nano time> stdout F <line>`. line must end in '\n'.
func AppendCRI(dst []byte, t time.Time, line []byte) []byte {
	dst = t.UTC().AppendFormat(dst, "2006-01-02T15:04:05.000000000Z07:00")
	dst = append(dst, " stdout F "...)
	return append(dst, line...)
}
