// Package ecsmeta reads the ECS task metadata endpoint (v4) and turns it into
// the attributes FireLens's metadata filter adds to every log record.
package ecsmeta

import (
	"context"
	"errors"
	"net/http"

	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/stream"
)

// EnvURI is the environment variable ECS sets to the container's metadata URI.
const EnvURI = "ECS_CONTAINER_METADATA_URI_V4"

// Fetch reads metadataURI/task once and returns ecs_cluster, ecs_task_arn and
// ecs_task_definition (family:revision).
func Fetch(ctx context.Context, client *http.Client, metadataURI string) ([]stream.Attr, error) {
	return nil, errors.New("ecsmeta: not implemented yet")
}
