package sampling

import (
	"fmt"
	"maps"
	"math"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/sidecarhq/sidecar/internal/rawevent"
)

func mustMatcher(t testing.TB, c MatchConfig) *matcher {
	t.Helper()
	m, err := compileMatch(&c)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func redisSpan(name string) (ptrace.Span, pcommon.Map) {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "shop")
	rs.Resource().Attributes().PutStr("deployment.environment", "production")
	sp := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sp.SetName(name)
	sp.SetKind(ptrace.SpanKindClient)
	sp.Attributes().PutStr("db.system", "redis")
	sp.Attributes().PutInt("db.redis.database_index", 2)
	return sp, rs.Resource().Attributes()
}

func TestMatchSpan(t *testing.T) {
	sp, res := redisSpan("get user:1")
	view := func() *spanView {
		v := pdataSpanView(sp, spanResource{attrs: mapAttrs(res), service: "shop"})
		return &v
	}
	cases := []struct {
		name string
		c    MatchConfig
		want bool
	}{
		{"empty matches", MatchConfig{}, true},
		{"kind", MatchConfig{Kind: []string{"client"}}, true},
		{"other kind", MatchConfig{Kind: []string{"server"}}, false},
		{"operation case-insensitive from span name", MatchConfig{Operation: []string{"MGET", "GET"}}, true},
		{"operation miss", MatchConfig{Operation: []string{"SET"}}, false},
		{"attr equals", MatchConfig{Attributes: map[string]any{"db.system": "redis"}}, true},
		{"attr equals miss", MatchConfig{Attributes: map[string]any{"db.system": "mysql"}}, false},
		{"attr int in", MatchConfig{Attributes: map[string]any{"db.redis.database_index": []any{1, 2}}}, true},
		{"attr int as string", MatchConfig{Attributes: map[string]any{"db.redis.database_index": "2"}}, true},
		{"attr exists", MatchConfig{Attributes: map[string]any{"db.system": map[string]any{"exists": true}}}, true},
		{"attr not exists", MatchConfig{Attributes: map[string]any{"peer.service": map[string]any{"exists": false}}}, true},
		{"attr missing", MatchConfig{Attributes: map[string]any{"peer.service": "x"}}, false},
		{"attr regex", MatchConfig{Attributes: map[string]any{"db.system": map[string]any{"regex": "^re"}}}, true},
		{"resource regex", MatchConfig{ResourceAttributes: map[string]any{"deployment.environment": map[string]any{"regex": "^prod"}}}, true},
		{"service list", MatchConfig{Service: []any{"a", "shop"}}, true},
		{"service glob miss", MatchConfig{Service: map[string]any{"glob": "pay*"}}, false},
		{"span name glob", MatchConfig{SpanName: map[string]any{"glob": "get user:*"}}, true},
		{"span name exact miss", MatchConfig{SpanName: "get"}, false},
		{"status", MatchConfig{Status: []string{"unset"}}, true},
		{"status miss", MatchConfig{Status: []string{"error"}}, false},
		{"logs only", MatchConfig{Signal: "logs"}, false},
	}
	for _, c := range cases {
		if got := mustMatcher(t, c.c).matchSpan(view()); got != c.want {
			t.Errorf("%s: got %v", c.name, got)
		}
	}
	sp.Attributes().PutStr("db.operation.name", "HGETALL")
	if op := spanOperation(sp.Name(), mapAttrs(sp.Attributes())); op != "HGETALL" {
		t.Errorf("operation %q, want db.operation.name", op)
	}
}

func TestMatchLog(t *testing.T) {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", "api")
	rec := rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	rec.Body().SetStr(`{"level":"info","route":"/he\u0061lth","status":200,"ok":true}`)
	rec.Attributes().PutStr("stream", "stdout")
	rec.SetSeverityText("INFO")
	v := &logView{rec: rec, resAttrs: rl.Resource().Attributes(), service: "api"}
	cases := []struct {
		name string
		c    MatchConfig
		want bool
	}{
		{"body escaped string", MatchConfig{Body: map[string]any{"route": "/health"}}, true},
		{"body glob on escaped", MatchConfig{Body: map[string]any{"route": map[string]any{"glob": "/heal*"}}}, true},
		{"body regex", MatchConfig{Body: map[string]any{"route": map[string]any{"regex": "th$"}}}, true},
		{"body number", MatchConfig{Body: map[string]any{"status": 200}}, true},
		{"body bool", MatchConfig{Body: map[string]any{"ok": true}}, true},
		{"body missing", MatchConfig{Body: map[string]any{"user": map[string]any{"exists": true}}}, false},
		{"body absent", MatchConfig{Body: map[string]any{"user": map[string]any{"exists": false}}}, true},
		{"severity text", MatchConfig{Severity: []string{"info", "debug"}}, true},
		{"severity miss", MatchConfig{Severity: []string{"error"}}, false},
		{"attributes", MatchConfig{Attributes: map[string]any{"stream": "stdout"}}, true},
		{"service", MatchConfig{Service: "api"}, true},
		{"span rule never matches logs", MatchConfig{Kind: []string{"client"}}, false},
	}
	for _, c := range cases {
		if got := mustMatcher(t, c.c).matchLog(v); got != c.want {
			t.Errorf("%s: got %v", c.name, got)
		}
	}
	rec.SetSeverityNumber(plog.SeverityNumberError)
	if !mustMatcher(t, MatchConfig{Severity: []string{"error"}}).matchLog(v) {
		t.Error("severity number not used")
	}
	mapRec := rl.ScopeLogs().At(0).LogRecords().AppendEmpty()
	mapRec.Body().SetEmptyMap().PutStr("route", "/health")
	if !mustMatcher(t, MatchConfig{Body: map[string]any{"route": "/health"}}).matchLog(&logView{rec: mapRec, resAttrs: v.resAttrs}) {
		t.Error("map body not matched")
	}
}

func TestGlob(t *testing.T) {
	cases := []struct {
		p, s string
		want bool
	}{
		{"*", "", true}, {"GET /api/*", "GET /api/v1/users", true}, {"a?c", "abc", true}, {"a?c", "ac", false},
		{"*b*b", "abab", true}, {"*b*b", "abba", false}, {"x", "xy", false}, {"", "", true},
	}
	for _, c := range cases {
		if got := globMatch(c.p, c.s); got != c.want {
			t.Errorf("glob(%q, %q) = %v", c.p, c.s, got)
		}
	}
}

func TestMatchDoesNotAllocate(t *testing.T) {
	sp, res := redisSpan("GET user:1")
	m := mustMatcher(t, MatchConfig{
		Kind: []string{"client"}, Operation: []string{"get"}, SpanName: map[string]any{"regex": "^GET "},
		Attributes:         map[string]any{"db.system.name": []any{"redis", "valkey"}, "db.redis.database_index": 2},
		ResourceAttributes: map[string]any{"deployment.environment": map[string]any{"glob": "prod*"}},
	})
	lm := mustMatcher(t, MatchConfig{Body: map[string]any{"route": map[string]any{"regex": "^/h"}, "status": 200}})
	ld := plog.NewLogs()
	rec := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	rec.Body().SetStr(`{"level":"info","route":"/h\u0065alth","status":200}`)
	lv := &logView{rec: rec, resAttrs: pcommon.NewMap()}
	allocs := testing.AllocsPerRun(200, func() {
		v := pdataSpanView(sp, spanResource{attrs: mapAttrs(res), service: "shop"})
		if !m.matchSpan(&v) || !lm.matchLog(lv) {
			t.Fatal("no match")
		}
	})
	if allocs != 0 {
		t.Errorf("allocations per match: %v", allocs)
	}
}

// TestDynamicKeyOperation checks that a dynamic rule keyed by operation sees
// each span's own operation, worked out on first use in every decision.
func TestDynamicKeyOperation(t *testing.T) {
	d := newDynamicRule(&RuleConfig{TargetPerSecond: 1, Key: []string{"operation"}})
	_, spans := newBatch("shop")
	gen := newSpanGen(2)
	get := gen.redisLeaf(spans, gen.traceID(), gen.spanID(), 1000)
	set := gen.redisLeaf(spans, gen.traceID(), gen.spanID(), 1000)
	set.SetName("SET k")
	named := gen.redisLeaf(spans, gen.traceID(), gen.spanID(), 1000)
	named.SetName("SET k")
	named.Attributes().PutStr("db.operation.name", "GET")

	hash := func(sp ptrace.Span) uint64 {
		v := pdataSpanView(sp, spanResource{})
		return d.keyHash(&v)
	}
	if hash(get) == hash(set) {
		t.Fatal("GET and SET spans share a key")
	}
	if hash(get) != hash(named) {
		t.Fatal("db.operation.name GET and span name GET give different keys")
	}
	lower := gen.redisLeaf(spans, gen.traceID(), gen.spanID(), 1000)
	lower.Attributes().PutStr("db.operation.name", "get")
	if hash(get) != hash(lower) {
		t.Fatal("operations get and GET give different keys")
	}

	bySystem := newDynamicRule(&RuleConfig{TargetPerSecond: 1, Key: []string{"db.system"}})
	stable := gen.redisLeaf(spans, gen.traceID(), gen.spanID(), 1000)
	stable.Attributes().Remove("db.system")
	stable.Attributes().PutStr("db.system.name", "redis")
	oldView, stableView := pdataSpanView(get, spanResource{}), pdataSpanView(stable, spanResource{})
	if bySystem.keyHash(&oldView) != bySystem.keyHash(&stableView) {
		t.Fatal("db.system and db.system.name give different keys")
	}
}

// The records of a raw scope carry its attributes (rawevent.Shared: the
// stdout receiver's log.iostream): rules read them as the records' own,
// and a record's own attribute of the same key wins.
func TestLogRulesReadARawScopesSharedAttributes(t *testing.T) {
	cfg := testConfig(RuleConfig{Name: "no-stderr", Match: MatchConfig{Signal: "logs", Attributes: map[string]any{"log.iostream": "stderr"}}, Probability: math.Ldexp(1, -56)})
	p := newPipeline(t, cfg, true)
	ld := newLogBatch("api")
	rl := ld.ResourceLogs().At(0)
	rl.ScopeLogs().RemoveIf(func(plog.ScopeLogs) bool { return true })
	for _, stream := range []string{"stdout", "stderr"} {
		sl := rl.ScopeLogs().AppendEmpty()
		rawevent.MarkRawScope(sl)
		sl.Scope().Attributes().PutStr("log.iostream", stream)
		for i := range 50 {
			rec := sl.LogRecords().AppendEmpty()
			rec.SetTimestamp(pcommon.Timestamp(i))
			rec.Body().SetStr(fmt.Sprintf(`{"level":"info","i":%d,"from":%q}`, i, stream))
		}
		own := sl.LogRecords().AppendEmpty()
		own.Body().SetStr(`{"level":"info","own":"stdout"}`)
		own.Attributes().PutStr("log.iostream", "stdout")
	}
	if err := p.logs.ConsumeLogs(t.Context(), ld); err != nil {
		t.Fatal(err)
	}
	kept := map[string]int{}
	for _, rec := range p.logRec.records {
		if _, weighed := rec.Attributes().Get(WeightAttribute); weighed {
			t.Errorf("%s: matched the stderr rule", rec.Body().Str())
		}
		switch body := rec.Body().Str(); {
		case strings.Contains(body, `"own"`):
			kept["own"]++
		case strings.Contains(body, `"stderr"`):
			kept["stderr"]++
		default:
			kept["stdout"]++
		}
	}
	if want := map[string]int{"stdout": 50, "own": 2}; !maps.Equal(kept, want) {
		t.Errorf("kept %v, want %v (the stderr scope's records dropped)", kept, want)
	}
}
