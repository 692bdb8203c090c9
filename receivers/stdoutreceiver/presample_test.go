package stdoutreceiver

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/sidecarhq/sidecar/sampling/presample"
)

// dropFilter drops the spans named "drop", as a sampling processor drops
// what its rules sample out; it reads JSON with pdata.
type dropFilter struct{ undecided bool }

func (f *dropFilter) FilterTraces(_ context.Context, dst, req []byte) ([]byte, int, error) {
	r := ptraceotlp.NewExportRequest()
	if err := r.UnmarshalProto(req); err != nil {
		return nil, 0, err
	}
	return f.filter(dst, r)
}

func (f *dropFilter) FilterTracesJSON(_ context.Context, dst, req []byte) ([]byte, int, error) {
	if !json.Valid(req) { // as the sampler's reader, unlike pdata's
		return nil, 0, errors.New("not JSON")
	}
	r := ptraceotlp.NewExportRequest()
	if err := r.UnmarshalJSON(req); err != nil {
		return nil, 0, err
	}
	return f.filter(dst, r)
}

func (f *dropFilter) filter(dst []byte, r ptraceotlp.ExportRequest) ([]byte, int, error) {
	if f.undecided {
		return nil, 0, presample.ErrUndecided
	}
	n := r.Traces().SpanCount()
	for _, rs := range r.Traces().ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			ss.Spans().RemoveIf(func(s ptrace.Span) bool { return s.Name() == "drop" })
		}
	}
	b, err := r.MarshalProto()
	return append(dst, b...), n, err
}

func spanLineOf(t *testing.T, names ...string) string {
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	for _, n := range names {
		spans.AppendEmpty().SetName(n)
	}
	b, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// With sampling_processor, span lines go through the filter and only what
// it keeps reaches the pipeline, marked as decided; a line whose spans are
// all dropped is still a span line, not a log.
func TestSpanLinesPresampled(t *testing.T) {
	for _, undecided := range []bool{false, true} {
		f := &dropFilter{undecided: undecided}
		id := component.MustNewIDWithName("sampling", strings.ReplaceAll(t.Name(), "/", "_"))
		unregister := presample.Register(id, f)
		cfg := stdinConfig(true)
		cfg.SamplingProcessor = &id
		input := spanLineOf(t, "a", "drop") + "\n" + spanLineOf(t, "drop") + "\n" + `{"msg":"log"}` + "\n" +
			spanLineOf(t, "a") + " not JSON\n" // a log line, not a span line
		logs, traces := new(consumertest.LogsSink), new(consumertest.TracesSink)
		s := startReceiver(t, cfg, strings.NewReader(input), logs, traces)
		<-s.eof
		unregister()

		var names []string
		for _, td := range traces.AllTraces() {
			for _, rs := range td.ResourceSpans().All() {
				for _, ss := range rs.ScopeSpans().All() {
					for _, sp := range ss.Spans().All() {
						names = append(names, sp.Name())
					}
				}
			}
		}
		want, wantDecided := []string{"a"}, presample.Filter(f)
		if undecided {
			want, wantDecided = []string{"a", "drop", "drop"}, nil
		}
		if !slices.Equal(names, want) {
			t.Errorf("undecided=%v: spans %v, want %v", undecided, names, want)
		}
		for _, ctx := range traces.Contexts() {
			if got := presample.Decided(ctx); got != wantDecided {
				t.Errorf("undecided=%v: Decided(ctx) = %v, want %v", undecided, got, wantDecided)
			}
		}
		if n := logs.LogRecordCount(); n != 2 {
			t.Errorf("undecided=%v: %d log records, want the 2 log lines", undecided, n)
		}
	}
}

func TestSpanLinesSamplingProcessorMissing(t *testing.T) {
	id := component.MustNewIDWithName("sampling", "absent")
	cfg := stdinConfig(true)
	cfg.SamplingProcessor = &id
	f := NewFactory()
	set := receivertest.NewNopSettings(f.Type())
	r, err := f.CreateTraces(context.Background(), set, cfg, new(consumertest.TracesSink))
	if err != nil {
		t.Fatal(err)
	}
	err = r.Start(context.Background(), componenttest.NewNopHost())
	if err == nil || !strings.Contains(err.Error(), `"sampling/absent"`) {
		t.Fatalf("Start: %v", err)
	}
	_ = r.Shutdown(context.Background())
}
