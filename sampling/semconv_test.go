package sampling

import (
	"regexp"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// TestSemconvTable checks the table's shape: every name in one row only,
// and a version for every rename.
func TestSemconvTable(t *testing.T) {
	seen := map[string]string{}
	version := regexp.MustCompile(`^1\.\d+\.\d+$`)
	for _, r := range semconvRenames {
		if !version.MatchString(r.since) || len(r.old) == 0 {
			t.Errorf("%s: want old names and a version, got %v %q", r.stable, r.old, r.since)
		}
		for _, n := range append([]string{r.stable}, r.old...) {
			if row, dup := seen[n]; dup {
				t.Errorf("%s is in the rows of %s and %s", n, row, r.stable)
			}
			seen[n] = r.stable
		}
	}
	if got := attrNames("db.system"); !slices.Equal(got, []string{"db.system", "db.system.name"}) {
		t.Errorf("attrNames(db.system) = %v", got)
	}
	if got := attrNames("server.address"); !slices.Equal(got, []string{"server.address", "net.peer.name", "net.host.name"}) {
		t.Errorf("attrNames(server.address) = %v", got)
	}
	if got := attrNames("custom.key"); !slices.Equal(got, []string{"custom.key"}) {
		t.Errorf("attrNames(custom.key) = %v", got)
	}
}

// TestOldAndStableNamesAreOneKey matches rules written with either name
// against spans carrying either name, as instrumentations before and after
// their move to the stable conventions write them.
func TestOldAndStableNamesAreOneKey(t *testing.T) {
	span := func(attrs map[string]any) *spanView {
		td := ptrace.NewTraces()
		sp := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
		sp.SetKind(ptrace.SpanKindClient)
		if err := sp.Attributes().FromRaw(attrs); err != nil {
			t.Fatal(err)
		}
		v := pdataSpanView(sp, newSpanResource(mapAttrs(pcommon.NewMap())))
		return &v
	}
	old := span(map[string]any{"db.system": "redis", "http.status_code": 503, "http.target": "/health", "peer.service": "cache"})
	stable := span(map[string]any{"db.system.name": "redis", "http.response.status_code": 503, "url.path": "/health", "service.peer.name": "cache"})
	both := span(map[string]any{"db.system": "redis", "db.system.name": "redis"})
	cases := []struct {
		attrs            map[string]any
		old, stable, dup bool
	}{
		{map[string]any{"db.system": "redis"}, true, true, true},
		{map[string]any{"db.system.name": "redis"}, true, true, true},
		{map[string]any{"db.system.name": "postgresql"}, false, false, false},
		{map[string]any{"http.status_code": []any{500, 503}}, true, true, false},
		{map[string]any{"http.response.status_code": 503}, true, true, false},
		{map[string]any{"url.path": map[string]any{"glob": "/health*"}}, true, true, false},
		{map[string]any{"peer.service": "cache"}, true, true, false},
		{map[string]any{"db.system": map[string]any{"exists": false}}, false, false, false},
		{map[string]any{"db.system.name": map[string]any{"exists": true}}, true, true, true},
		{map[string]any{"http.method": map[string]any{"exists": false}}, true, true, true},
	}
	for _, c := range cases {
		m := mustMatcher(t, MatchConfig{Attributes: c.attrs})
		if got := m.matchSpan(old); got != c.old {
			t.Errorf("%v on old names: %v", c.attrs, got)
		}
		if got := m.matchSpan(stable); got != c.stable {
			t.Errorf("%v on stable names: %v", c.attrs, got)
		}
		if got := m.matchSpan(both); got != c.dup {
			t.Errorf("%v on both names: %v", c.attrs, got)
		}
	}
}

// TestOperation checks the operation of spans as clients write them, and
// that rules and summaries ignore its case.
func TestOperation(t *testing.T) {
	cases := []struct {
		name  string
		attrs map[string]any
		want  string
	}{
		{"get", map[string]any{"db.system.name": "redis", "db.operation.name": "get", "db.query.text": "get key:1"}, "get"}, // ioredis, stable conventions
		{"GET", map[string]any{"db.system": "redis", "db.statement": "get key:1"}, "GET"},                                   // old conventions: the span name says it
		{"GET key:1", map[string]any{"db.system": "redis"}, "GET"},
		{"EVALSHA", map[string]any{"db.operation": "EVALSHA"}, "EVALSHA"},
		{"MULTI", map[string]any{"db.operation.name": "MULTI"}, "MULTI"},
		{"PIPELINE", map[string]any{"db.operation.name": "BATCH GET"}, "GET"},
		{"incr", map[string]any{"db.operation.name": "MULTI incr"}, "incr"},   // ioredis, a command in a transaction
		{"redis-INCR", map[string]any{"db.operation.name": "MULTI"}, "MULTI"}, // node-redis, the same
		{"pg.query:SELECT postgres", map[string]any{"db.query.text": "select count(*) from products"}, "select"},
		{"pg.query:INSERT postgres", map[string]any{"db.statement": "\n  INSERT INTO t VALUES ($1)"}, "INSERT"},
		{"SELECT shop.users", map[string]any{"db.operation.name": "SELECT"}, "SELECT"},
		{"HTTP GET", map[string]any{"http.method": "GET"}, "GET"},
		{"GET /users/:id", map[string]any{"http.request.method": "GET"}, "GET"},
		{"GET", map[string]any{"db.operation.name": ""}, "GET"},
		{"work", nil, "work"},
	}
	for _, c := range cases {
		attrs := pcommon.NewMap()
		if err := attrs.FromRaw(c.attrs); err != nil {
			t.Fatal(err)
		}
		if got := spanOperation(c.name, mapAttrs(attrs)); got != c.want {
			t.Errorf("%q %v: operation %q, want %q", c.name, c.attrs, got, c.want)
		}
	}

	table := newSummaryTable(2, time.Time{})
	for _, c := range []struct{ op, want string }{{"get", "GET"}, {"GET", "GET"}, {"Get", "GET"}, {"evalsha", "EVALSHA"}, {"hgetall", "HGETALL"}} {
		if got := table.operation(c.op); got != c.want {
			t.Errorf("summary operation of %q: %q, want %q", c.op, got, c.want)
		}
	}
	if len(table.upper) != 2 {
		t.Errorf("%d upper-case forms remembered, want max_groups (2)", len(table.upper))
	}
	if allocs := testing.AllocsPerRun(100, func() { table.operation("get") }); allocs != 0 {
		t.Errorf("a remembered operation allocates %v times", allocs)
	}
}
