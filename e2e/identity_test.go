package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"

	"github.com/sidecarhq/sidecar/internal/axiomtest"
)

// TestKubernetesIdentityOnEveryEventAndSpan runs `--config
// embedded:kubernetes` with the downward API variables on a fake node log
// tree: each event names its pod and container (from the kubelet's log
// path, restart count included), and spans received over OTLP name the pod
// unless the app named it itself.
func TestKubernetesIdentityOnEveryEventAndSpan(t *testing.T) {
	fake := axiomtest.NewForTest(t)
	logsDir := t.TempDir()
	podDir := filepath.Join(logsDir, "shop_checkout-7d9f_4f1c0a3e-9b1d")
	for container, restarts := range map[string]int{"app": 2, "worker": 0} {
		if err := os.MkdirAll(filepath.Join(podDir, container), 0o755); err != nil {
			t.Fatal(err)
		}
		var lines strings.Builder
		for i := range 5 {
			fmt.Fprintf(&lines, "%s stdout F {\"level\":30,\"msg\":\"%s %d\"}\n", time.Now().UTC().Format(time.RFC3339Nano), container, i)
		}
		if err := os.WriteFile(filepath.Join(podDir, container, fmt.Sprintf("%d.log", restarts)), []byte(lines.String()), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	env := append(embeddedEnv(t, fake), "SIDECAR_POD_LOGS_DIR="+logsDir, "POD_NAMESPACE=shop",
		"POD_NAME=checkout-7d9f", "POD_UID=4f1c0a3e-9b1d", "NODE_NAME=node-a", "SIDECAR_STATE_DIR="+t.TempDir())
	s := StartSidecar(t, "", WithArgs("--config", "embedded:kubernetes"), WithEnv(env...))
	httpAddr := envValue(env, "SIDECAR_OTLP_HTTP_ENDPOINT")
	s.WaitListening(t, httpAddr)
	exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpoint(httpAddr), otlptracehttp.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	emitSpans(t, exp, "k8s", 3)
	if err := fake.WaitEvents("logs", 10, 60*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := fake.WaitSpans("traces", 6, 60*time.Second); err != nil {
		t.Fatal(err)
	}
	if code := s.Stop(t); code != 0 {
		t.Fatalf("exit code %d", code)
	}

	pod := map[string]any{"k8s.namespace.name": "shop", "k8s.pod.name": "checkout-7d9f", "k8s.pod.uid": "4f1c0a3e-9b1d", "k8s.node.name": "node-a"}
	for _, ev := range fake.Events("logs") {
		res, _ := ev["resource"].(map[string]any)
		container, _, _ := strings.Cut(fmt.Sprint(ev["msg"]), " ")
		want := map[string]any{"k8s.container.name": container, "k8s.container.restart_count": map[string]string{"app": "2", "worker": "0"}[container]}
		for k, v := range pod {
			want[k] = v
		}
		for k, v := range want {
			if res[k] != v {
				t.Errorf("event %v: resource %s = %v, want %v", ev["msg"], k, res[k], v)
			}
		}
	}
	rss := fake.Traces("traces").ResourceSpans()
	for i := range rss.Len() {
		attrs := rss.At(i).Resource().Attributes().AsRaw()
		for k, v := range pod {
			if attrs[k] != v {
				t.Errorf("span resource %s = %v, want %v", k, attrs[k], v)
			}
		}
		if attrs["service.name"] != "checkout" {
			t.Errorf("the app's own resource was changed: %v", attrs)
		}
	}
}
