// Package workload names the workload the sidecar serves (its ECS task or
// Kubernetes pod) with resource attributes, so every event and span says
// where it came from, without any cloud or cluster API access:
//   - ECS: the task metadata endpoint (ecs.go): FireLens's ecs_* fields and
//     the OpenTelemetry aws.ecs.* and cloud.* attributes;
//   - Kubernetes: the downward API variables the manifest sets, and each
//     container's kubelet log path (kubernetes.go): the k8s.* attributes.
//
// Both receivers ask Detect at start; the stdout receiver adds each tailed
// file's container on top (KubernetesFromLogPath), and the OTLP receiver
// adds what the app did not set itself (AddMissing).
package workload

import (
	"context"
	"net/http"
	"os"
	"slices"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.uber.org/zap"
)

// Attr is a string resource attribute.
type Attr struct {
	Key, Value string
}

// ecsTimeout bounds the one metadata request.
const ecsTimeout = 5 * time.Second

// Detect returns the identity of the workload this process serves: the ECS
// task's when ECS_CONTAINER_METADATA_URI_V4 is set, the Kubernetes pod's
// from the downward API variables, or nothing. The metadata endpoint is
// asked once per process and URI, whichever receiver starts first; a failure
// is logged and leaves the ECS attributes out.
func Detect(ctx context.Context, log *zap.Logger) []Attr {
	var attrs []Attr
	if uri := os.Getenv(EnvECSMetadataURI); uri != "" {
		attrs = ecsOnce(ctx, log, uri)
	}
	return append(slices.Clip(attrs), KubernetesFromEnv(os.Getenv)...)
}

var ecsCache struct {
	sync.Mutex
	uri   string
	attrs []Attr
}

func ecsOnce(ctx context.Context, log *zap.Logger, uri string) []Attr {
	ecsCache.Lock()
	defer ecsCache.Unlock()
	if ecsCache.uri != uri {
		ctx, cancel := context.WithTimeout(ctx, ecsTimeout)
		defer cancel()
		attrs, err := ECS(ctx, &http.Client{Timeout: ecsTimeout}, uri)
		if err != nil {
			log.Warn("reading ECS task metadata failed; records go without it", zap.Error(err))
		}
		ecsCache.uri, ecsCache.attrs = uri, attrs
	}
	return ecsCache.attrs
}

// Merge returns base with every attribute of over added, over winning for a
// key both have (the log path knows the container, the environment only the
// pod). It modifies neither slice.
func Merge(base, over []Attr) []Attr {
	out := make([]Attr, 0, len(base)+len(over))
	for _, a := range base {
		if !has(over, a.Key) {
			out = append(out, a)
		}
	}
	return append(out, over...)
}

func has(attrs []Attr, key string) bool {
	for _, a := range attrs {
		if a.Key == key {
			return true
		}
	}
	return false
}

// AddMissing puts every attribute of identity into m that m does not have:
// what the app set itself (say, from OTEL_RESOURCE_ATTRIBUTES) wins.
func AddMissing(m pcommon.Map, identity []Attr) {
	for _, a := range identity {
		if _, ok := m.Get(a.Key); !ok {
			m.PutStr(a.Key, a.Value)
		}
	}
}
