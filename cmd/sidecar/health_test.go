package main

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/healthcheckextension"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/extension/extensioncapabilities"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"go.opentelemetry.io/collector/pipeline"

	"github.com/sidecarhq/sidecar/configs"
	"github.com/sidecarhq/sidecar/internal/distribution"
	"github.com/sidecarhq/sidecar/internal/freeport"
)

func TestHealthURL(t *testing.T) {
	for endpoint, want := range map[string]string{
		"":                "http://127.0.0.1:13133/",
		"127.0.0.1:9000":  "http://127.0.0.1:9000/",
		"0.0.0.0:13133":   "http://127.0.0.1:13133/",
		":13133":          "http://127.0.0.1:13133/",
		"[::]:13133":      "http://127.0.0.1:13133/",
		"[::1]:13133":     "http://[::1]:13133/",
		"localhost:13133": "http://localhost:13133/",
	} {
		if got := healthURL(endpoint); got != want {
			t.Errorf("healthURL(%q) = %q, want %q", endpoint, got, want)
		}
	}
}

// healthCheck runs the contrib health_check extension with the embedded
// default's settings and returns it with the flags that ask it.
func healthCheck(t *testing.T) (extensioncapabilities.ComponentStatusWatcher, extensioncapabilities.PipelineWatcher, *healthFlags) {
	t.Helper()
	if _, err := distribution.Components(); err != nil { // the feature gate
		t.Fatal(err)
	}
	resolver, err := confmap.NewResolver(settings(configs.DefaultURI).ConfigProviderSettings.ResolverSettings)
	if err != nil {
		t.Fatal(err)
	}
	conf, err := resolver.Resolve(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	addr := freeport.Addr(t)
	sub, err := conf.Sub("extensions::health_check")
	if err != nil {
		t.Fatal(err)
	}
	if err := sub.Merge(confmap.NewFromStringMap(map[string]any{"http": map[string]any{"endpoint": addr}})); err != nil {
		t.Fatal(err)
	}
	f := healthcheckextension.NewFactory()
	cfg := f.CreateDefaultConfig()
	if err := sub.Unmarshal(cfg); err != nil {
		t.Fatal(err)
	}
	ext, err := f.Create(context.Background(), extensiontest.NewNopSettings(f.Type()), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := ext.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ext.Shutdown(context.Background()) })
	return ext.(extensioncapabilities.ComponentStatusWatcher), ext.(extensioncapabilities.PipelineWatcher),
		&healthFlags{url: healthURL(addr), timeout: 2 * time.Second}
}

// askUntil asks until the answer has the aggregate status want and lists
// exactly the problems given (sorted): the extension records the events
// sent to it one at a time on a goroutine of its own, so an answer may
// already show one event and not yet the next (a permanent error before the
// recoverable one sent with it).
func askUntil(t *testing.T, h *healthFlags, want string, problems ...string) *healthStatus {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, err := h.ask()
		if err == nil && st.status == want && slices.Equal(st.problems, problems) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("status %+v (%v), want %s with problems %q", st, err, want, problems)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A degradation a restart cannot fix (a refused token on the exporter, an
// unusable state folder on the storage extension) keeps the liveness
// check passing and is listed with its reason; starting and a fatal error
// fail it.
func TestHealthTellsLiveFromDegraded(t *testing.T) {
	watcher, pipelines, h := healthCheck(t)
	logs := pipeline.NewID(pipeline.SignalLogs)
	exporter := componentstatus.NewInstanceID(component.MustNewID("axiom"), component.KindExporter, logs)
	receiver := componentstatus.NewInstanceID(component.MustNewID("stdout"), component.KindReceiver, logs)
	storage := componentstatus.NewInstanceID(component.MustNewID("dir_storage"), component.KindExtension)
	for _, id := range []*componentstatus.InstanceID{exporter, receiver, storage} {
		watcher.Changed(id, componentstatus.NewEvent(componentstatus.StatusStarting))
	}
	if st := askUntil(t, h, "StatusStarting"); st.running {
		t.Errorf("starting counts as running: %+v", st)
	}

	for _, id := range []*componentstatus.InstanceID{exporter, receiver} {
		watcher.Changed(id, componentstatus.NewEvent(componentstatus.StatusOK))
	}
	watcher.Changed(storage, componentstatus.NewPermanentErrorEvent(errors.New("state folder unusable")))
	watcher.Changed(exporter, componentstatus.NewRecoverableErrorEvent(errors.New("Axiom refused the token")))
	if err := pipelines.Ready(); err != nil {
		t.Fatal(err)
	}
	refused := "exporter:axiom (pipeline:logs): Axiom refused the token"
	unusable := "extension:dir_storage (extensions): state folder unusable"
	if st := askUntil(t, h, "StatusPermanentError", refused, unusable); !st.running {
		t.Fatalf("degraded counts as not running: %+v", st)
	}
	var out strings.Builder
	cmd := newHealthCommand()
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"--url", h.url})
	if err := cmd.Execute(); err != nil || !strings.Contains(out.String(), "refused the token") {
		t.Errorf("sidecar health: %v %q; want exit 0 with the reasons", err, out.String())
	}
	out.Reset()
	cmd = newStatusCommand()
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"--url", h.url})
	var code exitCode
	if err := cmd.Execute(); !errors.As(err, &code) || code != exitDegraded || !strings.Contains(out.String(), "state folder unusable") {
		t.Errorf("sidecar status: %v %q; want exit %d with the reasons", err, out.String(), exitDegraded)
	}

	watcher.Changed(receiver, componentstatus.NewFatalErrorEvent(errors.New("listener gone")))
	if st := askUntil(t, h, "StatusFatalError", refused, unusable, "receiver:stdout (pipeline:logs): listener gone"); st.running {
		t.Errorf("a fatal error counts as running: %+v", st)
	}
}

// Nothing answering is not live, and status says it is not running.
func TestHealthWithNothingListening(t *testing.T) {
	addr := freeport.Addr(t)
	cmd := newHealthCommand()
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	cmd.SetArgs([]string{"--url", healthURL(addr)})
	if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), "not live") {
		t.Errorf("health: %v", err)
	}
	cmd = newStatusCommand()
	cmd.SetOut(&strings.Builder{})
	cmd.SetArgs([]string{"--url", healthURL(addr)})
	var code exitCode
	if err := cmd.Execute(); !errors.As(err, &code) || code != exitNotRunning {
		t.Errorf("status: %v, want exit %d", err, exitNotRunning)
	}
}
