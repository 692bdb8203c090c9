package workload

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
)

// EnvECSMetadataURI is the variable ECS sets to the container's metadata URI.
const EnvECSMetadataURI = "ECS_CONTAINER_METADATA_URI_V4"

// FireLens's attribute keys, named as its generated record_modifier names
// them; they stay beside the semantic conventions' for compatibility with
// queries written against FireLens's Fluent Bit.
const (
	AttrECSCluster        = "ecs_cluster"
	AttrECSTaskARN        = "ecs_task_arn"
	AttrECSTaskDefinition = "ecs_task_definition"
)

// maxBody bounds the task document; a real one is a few KiB even with many
// containers.
const maxBody = 1 << 20

// ecsTask is the part of the Task Metadata v4 document we use.
type ecsTask struct {
	Cluster          string `json:"Cluster"`
	TaskARN          string `json:"TaskARN"`
	Family           string `json:"Family"`
	Revision         string `json:"Revision"`
	AvailabilityZone string `json:"AvailabilityZone"`
	LaunchType       string `json:"LaunchType"`
}

// ECS reads metadataURI/task once and returns the task's identity:
//
// FireLens's fields, as its Fluent Bit adds them to every record:
//   - ecs_cluster: the cluster name (Fargate reports the cluster ARN; FireLens
//     writes the short name, so the ARN is cut after "cluster/"),
//   - ecs_task_arn: the task ARN,
//   - ecs_task_definition: "family:revision";
//
// and the OpenTelemetry semantic conventions' resource attributes, as the
// collector's ECS resource detector names them: cloud.provider, cloud.platform,
// cloud.region and cloud.account.id (from the task ARN),
// cloud.availability_zone, aws.ecs.cluster.arn, aws.ecs.task.arn,
// aws.ecs.task.id, aws.ecs.task.family, aws.ecs.task.revision and
// aws.ecs.launchtype (ec2 or fargate). The container's own attributes
// (container.name, aws.ecs.container.arn) are the sidecar's, not the
// app's, so they are left out.
//
// FireLens on EC2 also adds ec2_instance_id, which comes from the instance
// metadata service, not from this endpoint; it is not added here.
func ECS(ctx context.Context, client *http.Client, metadataURI string) ([]Attr, error) {
	if metadataURI == "" {
		return nil, errors.New("ecs metadata: empty URI")
	}
	if client == nil {
		client = http.DefaultClient
	}
	url := strings.TrimSuffix(metadataURI, "/") + "/task"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("ecs metadata: %w", err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("ecs metadata: GET %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("ecs metadata: GET %s: status %s", url, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return nil, fmt.Errorf("ecs metadata: reading %s: %w", url, err)
	}
	if len(body) > maxBody {
		return nil, fmt.Errorf("ecs metadata: %s: document larger than %d bytes", url, maxBody)
	}
	var t ecsTask
	if err := json.Unmarshal(body, &t); err != nil {
		return nil, fmt.Errorf("ecs metadata: %s: %w", url, err)
	}
	if t.TaskARN == "" || t.Family == "" {
		return nil, fmt.Errorf("ecs metadata: %s: TaskARN or Family missing", url)
	}
	attrs := []Attr{
		{AttrECSCluster, clusterName(t.Cluster)},
		{AttrECSTaskARN, t.TaskARN},
		{AttrECSTaskDefinition, t.Family + ":" + t.Revision},
		{string(semconv.CloudProviderKey), semconv.CloudProviderAWS.Value.AsString()},
		{string(semconv.CloudPlatformKey), semconv.CloudPlatformAWSECS.Value.AsString()},
	}
	// arn:aws:ecs:<region>:<account>:task/<cluster>/<id>
	arn := strings.SplitN(t.TaskARN, ":", 6)
	if len(arn) == 6 && arn[0] == "arn" {
		attrs = append(attrs, Attr{string(semconv.CloudRegionKey), arn[3]}, Attr{string(semconv.CloudAccountIDKey), arn[4]})
	}
	if t.AvailabilityZone != "" {
		attrs = append(attrs, Attr{string(semconv.CloudAvailabilityZoneKey), t.AvailabilityZone})
	}
	if a := clusterARN(t.Cluster, arn); a != "" {
		attrs = append(attrs, Attr{string(semconv.AWSECSClusterARNKey), a})
	}
	attrs = append(attrs,
		Attr{string(semconv.AWSECSTaskARNKey), t.TaskARN},
		Attr{string(semconv.AWSECSTaskIDKey), t.TaskARN[strings.LastIndex(t.TaskARN, "/")+1:]},
		Attr{string(semconv.AWSECSTaskFamilyKey), t.Family},
		Attr{string(semconv.AWSECSTaskRevisionKey), t.Revision},
	)
	if lt := strings.ToLower(t.LaunchType); lt == "ec2" || lt == "fargate" {
		attrs = append(attrs, Attr{string(semconv.AWSECSLaunchtypeKey), lt})
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

// clusterARN returns the cluster's ARN: as given (Fargate), or built from a
// plain name (EC2) and the task ARN's partition, region and account.
func clusterARN(cluster string, taskARN []string) string {
	switch {
	case cluster == "":
		return ""
	case strings.HasPrefix(cluster, "arn:"):
		return cluster
	case len(taskARN) == 6:
		return strings.Join(taskARN[:5], ":") + ":cluster/" + cluster
	}
	return ""
}
