// Package ecsmeta reads the ECS task metadata endpoint (v4) and turns it into
// the attributes FireLens's metadata filter adds to every log record, so a
// sidecar that replaces Fluent Bit as the task's log router loses none of them.
package ecsmeta

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/stream"
)

// EnvURI is the environment variable ECS sets to the container's metadata URI.
const EnvURI = "ECS_CONTAINER_METADATA_URI_V4"

// Attribute keys, named as FireLens's generated record_modifier names them.
const (
	AttrCluster        = "ecs_cluster"
	AttrTaskARN        = "ecs_task_arn"
	AttrTaskDefinition = "ecs_task_definition"
)

// maxBody bounds the task document; a real one is a few KiB even with many
// containers.
const maxBody = 1 << 20

// task is the part of the Task Metadata v4 document we use.
type task struct {
	Cluster  string `json:"Cluster"`
	TaskARN  string `json:"TaskARN"`
	Family   string `json:"Family"`
	Revision string `json:"Revision"`
}

// Fetch reads metadataURI/task once and returns FireLens's attributes:
//   - ecs_cluster: the cluster name (Fargate reports the cluster ARN; FireLens
//     writes the short name, so the ARN is cut after "cluster/"),
//   - ecs_task_arn: the task ARN,
//   - ecs_task_definition: "family:revision".
//
// FireLens on EC2 also adds ec2_instance_id, which comes from the instance
// metadata service, not from this endpoint; it is not added here.
func Fetch(ctx context.Context, client *http.Client, metadataURI string) ([]stream.Attr, error) {
	if metadataURI == "" {
		return nil, errors.New("ecsmeta: empty metadata URI")
	}
	if client == nil {
		client = http.DefaultClient
	}
	url := strings.TrimSuffix(metadataURI, "/") + "/task"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("ecsmeta: %w", err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("ecsmeta: GET %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("ecsmeta: GET %s: status %s", url, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return nil, fmt.Errorf("ecsmeta: reading %s: %w", url, err)
	}
	if len(body) > maxBody {
		return nil, fmt.Errorf("ecsmeta: %s: document larger than %d bytes", url, maxBody)
	}
	var t task
	if err := json.Unmarshal(body, &t); err != nil {
		return nil, fmt.Errorf("ecsmeta: %s: %w", url, err)
	}
	if t.TaskARN == "" || t.Family == "" {
		return nil, fmt.Errorf("ecsmeta: %s: TaskARN or Family missing", url)
	}
	attrs := []stream.Attr{
		{Key: AttrCluster, Value: clusterName(t.Cluster)},
		{Key: AttrTaskARN, Value: t.TaskARN},
		{Key: AttrTaskDefinition, Value: t.Family + ":" + t.Revision},
	}
	return attrs, nil
}

// clusterName turns "arn:aws:ecs:region:account:cluster/NAME" into NAME and
// leaves a plain name as it is.
func clusterName(cluster string) string {
	if !strings.HasPrefix(cluster, "arn:") {
		return cluster
	}
	if i := strings.LastIndex(cluster, "cluster/"); i >= 0 {
		return cluster[i+len("cluster/"):]
	}
	return cluster
}
