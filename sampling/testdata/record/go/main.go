// Command record writes the span fixtures of the Go instrumentations
// (redisotel, otelhttp, otelsql) into ../../go-<client>.json, as OTLP/JSON
// export requests: the spans go through the real OTLP/HTTP exporter to a
// local endpoint, and its protobuf bodies are rewritten as JSON. Run by
// ../record.sh, which starts the redis-server and PostgreSQL it talks to.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/XSAM/otelsql"
	_ "github.com/lib/pq"
	"github.com/redis/go-redis/extra/redisotel/v9"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"go.opentelemetry.io/otel/trace"
)

// collector receives what the exporter sends.
type collector struct {
	mu     sync.Mutex
	traces ptrace.Traces
}

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	req := ptraceotlp.NewExportRequest()
	if err := req.UnmarshalProto(body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	req.Traces().ResourceSpans().MoveAndAppendTo(c.traces.ResourceSpans())
	c.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-protobuf")
}

// take returns what arrived since the last call.
func (c *collector) take() ptrace.Traces {
	c.mu.Lock()
	defer c.mu.Unlock()
	td := c.traces
	c.traces = ptrace.NewTraces()
	return td
}

var (
	tp     *sdktrace.TracerProvider
	coll   = &collector{traces: ptrace.NewTraces()}
	tracer trace.Tracer
)

func main() {
	ctx := context.Background()
	endpoint := httptest.NewServer(coll)
	defer endpoint.Close()
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(endpoint.URL+"/v1/traces"))
	check(err)
	tp = sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp),
		sdktrace.WithResource(resource.NewSchemaless(semconv.ServiceName("fixture-app-go"))))
	otel.SetTracerProvider(tp)
	tracer = tp.Tracer("fixture-app-go")

	redisScenario(ctx)
	httpScenario(ctx)
	if url := os.Getenv("PG_URL"); url != "" {
		sqlScenario(ctx, url)
	} else {
		log.Print("PG_URL unset: go-sql.json is not recorded")
	}
	check(tp.Shutdown(ctx))
}

// request runs fn under a SERVER span, as an HTTP framework would.
func request(ctx context.Context, name string, fn func(ctx context.Context)) {
	ctx, span := tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer))
	defer span.End()
	fn(ctx)
}

func record(name string) {
	check(tp.ForceFlush(context.Background()))
	td := coll.take()
	b, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalJSON()
	check(err)
	check(os.WriteFile(filepath.Join("..", "..", name+".json"), b, 0o644))
	names := map[string]int{}
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		sss := rss.At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			for k := 0; k < sss.At(j).Spans().Len(); k++ {
				names[sss.At(j).Spans().At(k).Name()]++
			}
		}
	}
	fmt.Printf("%s.json: %d spans %v\n", name, td.SpanCount(), names)
}

func redisScenario(ctx context.Context) {
	opt, err := redis.ParseURL(envOr("REDIS_URL", "redis://127.0.0.1:6379"))
	check(err)
	r := redis.NewClient(opt)
	check(redisotel.InstrumentTracing(r))
	pauser := redis.NewClient(opt) // not instrumented
	check(r.FlushDB(ctx).Err())
	for i := range 20 {
		request(ctx, "GET /product/{id}", func(ctx context.Context) {
			key := fmt.Sprintf("product:%d", i)
			ignoreNil(r.Get(ctx, key).Err()) // missing
			check(r.Set(ctx, key, fmt.Sprintf(`{"id":%d}`, i), time.Minute).Err())
			check(r.Get(ctx, key).Err())
			check(r.MGet(ctx, key, fmt.Sprintf("stock:%d", i)).Err())
			check(r.HGetAll(ctx, fmt.Sprintf("cart:%d", i)).Err())
			_, err := r.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.Incr(ctx, fmt.Sprintf("views:%d", i))
				p.Expire(ctx, fmt.Sprintf("views:%d", i), time.Minute)
				return nil
			})
			check(err)
			_, err = r.Pipelined(ctx, func(p redis.Pipeliner) error {
				p.Get(ctx, key)
				p.Get(ctx, fmt.Sprintf("stock:%d", i))
				return nil
			})
			ignoreNil(err)
		})
	}
	request(ctx, "GET /broken", func(ctx context.Context) {
		check(r.HSet(ctx, "a-hash", "f", "v").Err())
		if err := r.Get(ctx, "a-hash").Err(); err == nil {
			log.Fatal("GET on a hash did not fail")
		}
	})
	request(ctx, "GET /slow", func(ctx context.Context) {
		check(pauser.Do(ctx, "CLIENT", "PAUSE", "50", "ALL").Err())
		check(r.Get(ctx, "product:1").Err())
	})
	check(r.Close())
	check(pauser.Close())
	record("go-redis")
}

func httpScenario(ctx context.Context) {
	mux := http.NewServeMux()
	mux.HandleFunc("/api/items/{id}", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") })
	mux.HandleFunc("/fail", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "fail", http.StatusInternalServerError) })
	srv := httptest.NewServer(otelhttp.NewHandler(mux, "server"))
	defer srv.Close()
	client := &http.Client{Transport: otelhttp.NewTransport(http.DefaultTransport)}
	get := func(ctx context.Context, method, path string) {
		req, err := http.NewRequestWithContext(ctx, method, srv.URL+path, nil)
		check(err)
		resp, err := client.Do(req)
		check(err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	for i := range 10 {
		request(ctx, "GET /checkout", func(ctx context.Context) {
			get(ctx, http.MethodGet, fmt.Sprintf("/api/items/%d?probe=%d", i, i))
			get(ctx, http.MethodPost, fmt.Sprintf("/api/items/%d", i))
		})
	}
	get(ctx, http.MethodGet, "/missing")
	get(ctx, http.MethodGet, "/fail")
	record("go-http")
}

func sqlScenario(ctx context.Context, url string) {
	db, err := otelsql.Open("postgres", url, otelsql.WithAttributes(semconv.DBSystemNamePostgreSQL))
	check(err)
	defer db.Close()
	_, err = db.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS products (id int PRIMARY KEY, name text)")
	check(err)
	for i := range 20 {
		request(ctx, "GET /product/{id}", func(ctx context.Context) {
			_, err := db.ExecContext(ctx, "INSERT INTO products (id, name) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING", i, fmt.Sprintf("p%d", i))
			check(err)
			var name string
			check(db.QueryRowContext(ctx, "SELECT name FROM products WHERE id = $1", i).Scan(&name))
		})
	}
	request(ctx, "GET /broken", func(ctx context.Context) {
		if _, err := db.ExecContext(ctx, "SELECT * FROM missing_table"); err == nil {
			log.Fatal("a query on a missing table did not fail")
		}
	})
	_, err = db.ExecContext(ctx, "DROP TABLE products")
	check(err)
	record("go-sql")
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func ignoreNil(err error) {
	if err != nil && !errors.Is(err, redis.Nil) {
		log.Fatal(err)
	}
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
