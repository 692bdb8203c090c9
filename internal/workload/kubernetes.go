package workload

import (
	"path/filepath"
	"strconv"
	"strings"

	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
)

// Kubernetes attribute keys (OpenTelemetry semantic conventions). Values
// are strings, k8s.container.restart_count included, as the collector's
// filelog container parser writes them.
var (
	AttrNamespace    = string(semconv.K8SNamespaceNameKey)
	AttrPodName      = string(semconv.K8SPodNameKey)
	AttrPodUID       = string(semconv.K8SPodUIDKey)
	AttrContainer    = string(semconv.K8SContainerNameKey)
	AttrRestartCount = string(semconv.K8SContainerRestartCountKey)
	AttrNodeName     = string(semconv.K8SNodeNameKey)
)

// The downward API variables the deploy files set, and the attribute each
// becomes.
var envAttrs = []struct{ env, attr string }{
	{"POD_NAMESPACE", AttrNamespace},
	{"POD_NAME", AttrPodName},
	{"POD_UID", AttrPodUID},
	{"NODE_NAME", AttrNodeName},
}

// KubernetesFromEnv returns the pod's identity from the downward API variables that
// are set, or nil outside Kubernetes (none of them set).
func KubernetesFromEnv(getenv func(string) string) []Attr {
	var attrs []Attr
	for _, e := range envAttrs {
		if v := getenv(e.env); v != "" {
			attrs = append(attrs, Attr{Key: e.attr, Value: v})
		}
	}
	return attrs
}

// KubernetesFromLogPath returns the attributes a kubelet log path names, or false when
// path is not one: <dir>/<namespace>_<pod>_<uid>/<container>/<restart>.log,
// optionally rotated (<restart>.log.<timestamp>). The pods directory itself
// may be anywhere (kubelet's podLogsDir). Namespace and pod names and UIDs
// never hold '_', so the split is unambiguous.
func KubernetesFromLogPath(path string) ([]Attr, bool) {
	file := filepath.Base(path)
	container := filepath.Base(filepath.Dir(path))
	podDir := filepath.Base(filepath.Dir(filepath.Dir(path)))
	restart, rest, ok := strings.Cut(file, ".log")
	if !ok || (rest != "" && !strings.HasPrefix(rest, ".")) {
		return nil, false
	}
	if _, err := strconv.ParseUint(restart, 10, 32); err != nil {
		return nil, false
	}
	parts := strings.Split(podDir, "_")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" || container == "" || container == "." || container == "/" {
		return nil, false
	}
	return []Attr{
		{Key: AttrNamespace, Value: parts[0]},
		{Key: AttrPodName, Value: parts[1]},
		{Key: AttrPodUID, Value: parts[2]},
		{Key: AttrContainer, Value: container},
		{Key: AttrRestartCount, Value: restart},
	}, true
}
