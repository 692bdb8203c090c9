package e2e

import (
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// testToken is the Axiom API token the tests' sidecars send.
const testToken = "xaat-e2e-test-token-0123456789"

// yamlMap is a YAML mapping in a test config.
type yamlMap = map[string]any

// sidecarConfig is the config a test starts the sidecar on; yaml renders it.
// Each signal gets a pipeline through every receiver, processor and exporter
// named here (in name order), every extension is enabled, and the sidecar's
// own metrics are off unless metrics says where to serve them.
type sidecarConfig struct {
	signals    []string // "logs", "traces"
	extensions yamlMap
	receivers  yamlMap
	processors yamlMap
	exporters  yamlMap // usually axiomExporter(fake.URL(), nil)
	// metrics is where the sidecar serves its Prometheus metrics ("host:port"); none when empty.
	metrics string
}

// axiomExporter is the axiom exporter sending to the fake Axiom at url,
// logs to dataset app-logs and spans to app-traces, with settings added.
func axiomExporter(url string, settings yamlMap) yamlMap {
	// check_token off: tests script Axiom's answers request by request, and
	// the start-up check would take the first (token_test.go covers it).
	axiom := yamlMap{"url": url, "token": testToken, "logs_dataset": "app-logs", "traces_dataset": "app-traces", "check_token": false}
	for k, v := range settings {
		axiom[k] = v
	}
	return yamlMap{"axiom": axiom}
}

// yaml is the config as the sidecar reads it.
func (c sidecarConfig) yaml() string {
	pipeline := yamlMap{"receivers": names(c.receivers), "exporters": names(c.exporters)}
	if len(c.processors) > 0 {
		pipeline["processors"] = names(c.processors)
	}
	pipelines := yamlMap{}
	for _, signal := range c.signals {
		pipelines[signal] = pipeline
	}
	service := yamlMap{"pipelines": pipelines, "telemetry": yamlMap{"metrics": yamlMap{"level": "none"}}}
	if host, p, ok := strings.Cut(c.metrics, ":"); ok {
		port, _ := strconv.Atoi(p)
		service["telemetry"] = yamlMap{"metrics": yamlMap{"readers": []any{yamlMap{"pull": yamlMap{"exporter": yamlMap{"prometheus": yamlMap{"host": host, "port": port}}}}}}}
	}
	doc := yamlMap{"receivers": c.receivers, "exporters": c.exporters, "service": service}
	if len(c.extensions) > 0 {
		doc["extensions"] = c.extensions
		service["extensions"] = names(c.extensions)
	}
	if len(c.processors) > 0 {
		doc["processors"] = c.processors
	}
	out, err := yaml.Marshal(doc)
	if err != nil {
		panic(err) // only maps, lists and scalars go in
	}
	return string(out)
}

func names(m yamlMap) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// otlpReceiver is the OTLP receiver's settings on the given gRPC and HTTP
// addresses.
func otlpReceiver(grpcAddr, httpAddr string) yamlMap {
	return yamlMap{"protocols": yamlMap{"grpc": yamlMap{"endpoint": grpcAddr}, "http": yamlMap{"endpoint": httpAddr}}}
}
