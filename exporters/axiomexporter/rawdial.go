package axiomexporter

import (
	"context"
	"maps"
	"net"
	"net/http"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configmiddleware"
	"go.opentelemetry.io/collector/extension/extensionmiddleware"

	"github.com/sidecarhq/sidecar/internal/rawconn"
)

// rawDialID names the client middleware through which the exporter makes
// its HTTP connections raw (internal/rawconn): their reads and writes, ~55 a
// second at 20k lines/s, then do not wake the Go runtime's monitor thread.
// confighttp builds the *http.Transport itself and lets only a middleware
// see it: the innermost middleware is handed the transport, which the
// exporter's middleware, its only one, is. Every connection the transport
// opens goes through its DialContext: to Axiom, to a proxy (CONNECT or
// plain) and under TLS, which wraps the dialled connection.
var rawDialID = component.MustNewID("sidecar_raw_dial")

// withRawDial adds the raw-dial middleware to cc and to the host's
// extensions, which ToClient looks it up in.
func withRawDial(cc *confighttp.ClientConfig, extensions map[component.ID]component.Component) map[component.ID]component.Component {
	cc.Middlewares = append(cc.Middlewares, configmiddleware.Config{ID: rawDialID})
	extensions = maps.Clone(extensions)
	if extensions == nil {
		extensions = map[component.ID]component.Component{}
	}
	extensions[rawDialID] = rawDial{}
	return extensions
}

type rawDial struct {
	component.StartFunc
	component.ShutdownFunc
}

func (rawDial) GetHTTPRoundTripper(context.Context) (extensionmiddleware.WrapHTTPRoundTripperFunc, error) {
	return func(_ context.Context, base http.RoundTripper) (http.RoundTripper, error) {
		t, ok := base.(*http.Transport)
		if !ok {
			return base, nil // not confighttp's transport: leave it plain
		}
		dial := t.DialContext
		if dial == nil {
			dial = (&net.Dialer{}).DialContext
		}
		t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dial(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return rawconn.Wrap(c), nil
		}
		return t, nil
	}, nil
}
