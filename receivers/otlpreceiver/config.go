package otlpreceiver

import (
	"errors"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configgrpc"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configtls"
)

// Config is the otlp receiver's configuration: the stock receiver's shape
// (without its URL path overrides), plus sampling_processor.
type Config struct {
	Protocols Protocols `mapstructure:"protocols"`
	// SamplingProcessor names the sampling processor whose presample.Filter
	// decides trace requests before they become pdata.
	SamplingProcessor *component.ID `mapstructure:"sampling_processor"`
}

// Protocols turns each transport on by being present (`grpc:` with no
// value takes the defaults).
type Protocols struct {
	GRPC configoptional.Optional[configgrpc.ServerConfig] `mapstructure:"grpc"`
	HTTP configoptional.Optional[confighttp.ServerConfig] `mapstructure:"http"`
}

// Defaults are the stock receiver's, except that listeners bind 127.0.0.1:
// the app sending spans runs beside the sidecar.
// maxRequestBodySize caps an OTLP/HTTP body (after decompression) as gRPC's
// default caps a message: 4 MiB. The stock 20 MiB let a few oversized or
// decompression-bomb requests in a row take the sidecar's peak RSS to
// 195 MB (e2e/garbage_test.go), twice its 96 MB budget; an SDK's batch
// (512 spans) is well under 1 MiB.
const maxRequestBodySize = 4 << 20

func createDefaultConfig() component.Config {
	grpc := configgrpc.NewDefaultServerConfig()
	grpc.NetAddr.Endpoint = "127.0.0.1:4317"
	grpc.ReadBufferSize = 512 << 10

	http := confighttp.NewDefaultServerConfig()
	http.NetAddr.Endpoint = "127.0.0.1:4318"
	http.TLS = configoptional.None[configtls.ServerConfig]()
	http.ReadHeaderTimeout = 0
	http.WriteTimeout = 0
	http.MaxRequestBodySize = maxRequestBodySize

	return &Config{Protocols: Protocols{
		GRPC: configoptional.Default(grpc),
		HTTP: configoptional.Default(http),
	}}
}

// Validate requires a transport; each one's settings validate themselves.
func (c *Config) Validate() error {
	if !c.Protocols.GRPC.HasValue() && !c.Protocols.HTTP.HasValue() {
		return errors.New("must specify at least one protocol (grpc or http) when using the otlp receiver")
	}
	return nil
}
