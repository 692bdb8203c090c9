package axiomexporter

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"sync/atomic"
	"testing"

	"go.opentelemetry.io/collector/component/componenttest"

	"github.com/sidecarhq/sidecar/internal/axiomtest"
	"github.com/sidecarhq/sidecar/internal/rawconn"
)

// The client the exporter builds reads and writes raw on every connection
// it opens: to the server directly, over TLS, and through a proxy, plain
// or CONNECT.
func TestHTTPClientConnectionsAreRaw(t *testing.T) {
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer plain.Close()
	tlsServer := httptest.NewTLSServer(plain.Config.Handler)
	defer tlsServer.Close()
	proxy, proxied := newProxy(t)

	for _, tc := range []struct{ name, url, proxy string }{
		{"http", plain.URL, ""},
		{"https", tlsServer.URL, ""},
		{"http via proxy", plain.URL, proxy},
		{"https via CONNECT proxy", tlsServer.URL, proxy},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(tc.url)
			cfg.TLS.InsecureSkipVerify = true
			cfg.ProxyURL = tc.proxy
			b := &base{cfg: cfg}
			cc := b.httpClientConfig()
			client, err := cc.ToClient(context.Background(), withRawDial(&cc, nil), componenttest.NewNopTelemetrySettings())
			if err != nil {
				t.Fatal(err)
			}
			defer client.CloseIdleConnections()
			before := proxied.Load()
			var used net.Conn
			ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { used = i.Conn }})
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, tc.url, nil)
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || string(body) != "ok" {
				t.Fatalf("answer %q, %v", body, err)
			}
			if tc.proxy != "" && proxied.Load() == before {
				t.Fatal("the request did not go through the proxy")
			}
			if c, ok := used.(*tls.Conn); ok {
				used = c.NetConn()
			}
			if _, ok := used.(*rawconn.Conn); !ok {
				t.Fatalf("the request went over a %T, not a raw connection", used)
			}
		})
	}
}

func TestLogsDeliveredThroughAProxy(t *testing.T) {
	srv := axiomtest.NewForTest(t)
	proxy, proxied := newProxy(t)
	cfg := testConfig(srv.URL())
	cfg.ProxyURL = proxy
	exp := startLogs(t, newHarness(), cfg)
	if err := exp.ConsumeLogs(context.Background(), stringLogs(3)); err != nil {
		t.Fatal(err)
	}
	if n := len(srv.Events(logsDS)); n != 3 {
		t.Fatalf("got %d events, want 3", n)
	}
	if proxied.Load() == 0 {
		t.Fatal("the exporter did not go through the proxy")
	}
}

// newProxy starts an HTTP proxy, forwarding plain requests and tunnelling
// CONNECT, and counts the requests it served.
func newProxy(t *testing.T) (url string, served *atomic.Int64) {
	served = new(atomic.Int64)
	p := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		if r.Method != http.MethodConnect {
			r.RequestURI = ""
			resp, err := http.DefaultTransport.RoundTrip(r)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadGateway)
				return
			}
			defer resp.Body.Close()
			for k, v := range resp.Header {
				w.Header()[k] = v
			}
			w.WriteHeader(resp.StatusCode)
			io.Copy(w, resp.Body)
			return
		}
		target, err := net.Dial("tcp", r.Host)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		w.WriteHeader(http.StatusOK)
		client, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			target.Close()
			return
		}
		go func() { io.Copy(target, client); target.Close() }()
		io.Copy(client, target)
		client.Close()
	}))
	t.Cleanup(p.Close)
	return p.URL, served
}
