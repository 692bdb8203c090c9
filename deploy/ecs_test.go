package deploy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	"github.com/aws/aws-sdk-go-v2/service/ecs/types"
)

// loadTaskDefinition decodes a task definition file strictly into the SDK's
// RegisterTaskDefinitionInput, then hands it to the SDK's own client, whose
// validation (required members) and serializer run before it sends: the
// body it sends must be the file, key for key.
func loadTaskDefinition(path string) (*ecs.RegisterTaskDefinitionInput, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var in ecs.RegisterTaskDefinitionInput
	if err := decodeSmithyJSON(data, &in); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	sent, err := sdkSerialize(&in)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var want, got any
	if err := json.Unmarshal(data, &want); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(sent, &got); err != nil {
		return nil, err
	}
	if !reflect.DeepEqual(want, got) {
		return nil, fmt.Errorf("%s: the SDK serializes it as\n%s", path, sent)
	}
	return &in, nil
}

// sdkSerialize runs RegisterTaskDefinition against a local server that only
// records the request body.
func sdkSerialize(in *ecs.RegisterTaskDefinitionInput) ([]byte, error) {
	var body []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		io.WriteString(w, "{}")
	}))
	defer srv.Close()
	client := ecs.New(ecs.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: aws.AnonymousCredentials{}, RetryMaxAttempts: 1,
	})
	if _, err := client.RegisterTaskDefinition(context.Background(), in); err != nil {
		return nil, err
	}
	return body, nil
}

// ecsRouterAndApp returns the FireLens log router and the one app container.
func ecsRouterAndApp(task *ecs.RegisterTaskDefinitionInput) (router, app *types.ContainerDefinition, err error) {
	for i := range task.ContainerDefinitions {
		c := &task.ContainerDefinitions[i]
		if c.FirelensConfiguration != nil {
			router = c
		} else {
			app = c
		}
	}
	if router == nil || app == nil || len(task.ContainerDefinitions) != 2 {
		return nil, nil, errors.New("want one FireLens log router and one app container")
	}
	return router, app, nil
}

func ecsSidecar(path string) (sidecar, error) {
	task, err := loadTaskDefinition(path)
	if err != nil {
		return sidecar{}, err
	}
	router, app, err := ecsRouterAndApp(task)
	if err != nil {
		return sidecar{}, err
	}
	s := sidecar{file: path, args: router.Command, env: map[string]string{}, mounts: map[string]bool{}}
	for _, e := range router.Environment {
		s.env[aws.ToString(e.Name)] = aws.ToString(e.Value)
	}
	for _, sec := range router.Secrets {
		s.env[aws.ToString(sec.Name)] = "xaat-from-secrets-manager"
		s.secrets = append(s.secrets, aws.ToString(sec.Name))
	}
	for _, e := range app.Environment {
		if aws.ToString(e.Name) == "OTEL_EXPORTER_OTLP_ENDPOINT" {
			s.appOTLP = aws.ToString(e.Value)
		}
	}
	volumes := map[string]bool{}
	for _, v := range task.Volumes {
		volumes[aws.ToString(v.Name)] = true
	}
	for _, m := range router.MountPoints {
		if !volumes[aws.ToString(m.SourceVolume)] {
			return sidecar{}, fmt.Errorf("mount point %s: no volume %q in the task", aws.ToString(m.ContainerPath), aws.ToString(m.SourceVolume))
		}
		s.mounts[aws.ToString(m.ContainerPath)] = aws.ToBool(m.ReadOnly)
	}
	if hc := router.HealthCheck; hc != nil {
		s.health = dockerHealthCommand(hc.Command)
	}
	return s, nil
}

// checkECS runs every check on a task definition file.
func checkECS(path string) error {
	s, err := ecsSidecar(path)
	if err != nil {
		return err
	}
	task, _ := loadTaskDefinition(path)
	router, app, _ := ecsRouterAndApp(task)
	var errs []error
	if err := errors.Join(s.check(), s.tokenFromSecret()); err != nil {
		errs = append(errs, err)
	}
	if task.NetworkMode != types.NetworkModeAwsvpc {
		errs = append(errs, fmt.Errorf("networkMode %q: the ecs config listens on 127.0.0.1, which only awsvpc tasks share", task.NetworkMode))
	}
	if name, _ := embeddedConfig(router.Command); name != "ecs" {
		errs = append(errs, fmt.Errorf("the router runs embedded:%s, want embedded:ecs", name))
	}
	if !aws.ToBool(router.Essential) {
		errs = append(errs, errors.New("the log router must be essential: without it the app's logs go nowhere"))
	}
	// FireLens's options (enable-ecs-log-metadata, config-file-type,
	// config-file-value) shape the Fluent Bit config the agent generates
	// for the router; the sidecar neither runs Fluent Bit nor reads it.
	if fc := router.FirelensConfiguration; fc.Type != types.FirelensConfigurationTypeFluentbit || len(fc.Options) > 0 {
		errs = append(errs, fmt.Errorf("firelensConfiguration %s %v: want type fluentbit and no options (they configure Fluent Bit, which the sidecar does not run; enable-ecs-log-metadata would mislead)", fc.Type, fc.Options))
	}
	if app.LogConfiguration == nil || app.LogConfiguration.LogDriver != types.LogDriverAwsfirelens {
		errs = append(errs, errors.New("the app's log driver must be awsfirelens"))
	} else if keys := slices.Collect(maps.Keys(app.LogConfiguration.Options)); len(keys) > 1 || (len(keys) == 1 && keys[0] != "log-driver-buffer-limit") {
		errs = append(errs, fmt.Errorf("app log options %v: only log-driver-buffer-limit is for the driver; the rest would be a Fluent Bit output the sidecar ignores", keys))
	}
	if len(app.DependsOn) != 1 || aws.ToString(app.DependsOn[0].ContainerName) != aws.ToString(router.Name) || app.DependsOn[0].Condition != types.ContainerConditionHealthy {
		errs = append(errs, fmt.Errorf("the app must start once the router is HEALTHY: dependsOn %+v", app.DependsOn))
	}
	if aws.ToInt32(app.StopTimeout) >= aws.ToInt32(router.StopTimeout) {
		errs = append(errs, fmt.Errorf("app stopTimeout %d >= router's %d: the router must outlive the app to flush its last lines", aws.ToInt32(app.StopTimeout), aws.ToInt32(router.StopTimeout)))
	}
	return errors.Join(errs...)
}

func TestECSTaskDefinition(t *testing.T) {
	if err := checkECS("ecs/task-definition.json"); err != nil {
		t.Fatal(err)
	}
	if ecs := readConfig(t, "ecs"); !strings.Contains(ecs, forwardSocket) {
		t.Errorf("the ecs config does not listen on %s, where FireLens points the app's log driver", forwardSocket)
	}
}

// ecsSnippet is deploy/ecs/sidecar-snippet.json: what a user pastes into an
// existing task definition. Each part is an ECS API type.
type ecsSnippet struct {
	// Sidecar goes into containerDefinitions.
	Sidecar types.ContainerDefinition
	// AppContainer's fields are set on every app container.
	AppContainer types.ContainerDefinition
	// Volumes are added to the task's volumes.
	Volumes []types.Volume
}

// pasteSnippet adds the snippet at path to task, as the README tells a user
// to: the sidecar container, the app containers' log driver, dependsOn and
// stopTimeout, and the state volume.
func pasteSnippet(task *ecs.RegisterTaskDefinitionInput, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var snip ecsSnippet
	if err := decodeSmithyJSON(data, &snip); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	for i := range task.ContainerDefinitions {
		app := &task.ContainerDefinitions[i]
		app.LogConfiguration = snip.AppContainer.LogConfiguration
		app.DependsOn = append(app.DependsOn, snip.AppContainer.DependsOn...)
		app.StopTimeout = snip.AppContainer.StopTimeout
	}
	task.ContainerDefinitions = append([]types.ContainerDefinition{snip.Sidecar}, task.ContainerDefinitions...)
	task.Volumes = append(task.Volumes, snip.Volumes...)
	return nil
}

// TestECSSnippetMakesTheTaskDefinition: the snippet pasted into an existing
// task definition (an app logging to CloudWatch) gives exactly
// ecs/task-definition.json, which passes every check; so the snippet and
// the full example cannot drift apart.
func TestECSSnippetMakesTheTaskDefinition(t *testing.T) {
	task, err := loadTaskDefinition("testdata/ecs-existing-task.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := pasteSnippet(task, "ecs/sidecar-snippet.json"); err != nil {
		t.Fatal(err)
	}
	want, err := loadTaskDefinition("ecs/task-definition.json")
	if err != nil {
		t.Fatal(err)
	}
	// Compared as the SDK sends them (JSON objects: map order aside).
	var got, exp any
	for v, in := range map[*any]*ecs.RegisterTaskDefinitionInput{&got: task, &exp: want} {
		body, err := sdkSerialize(in)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(body, v); err != nil {
			t.Fatal(err)
		}
	}
	if !reflect.DeepEqual(got, exp) {
		t.Fatalf("the snippet pasted gives\n%v\nwant ecs/task-definition.json:\n%v", got, exp)
	}
}

// A snippet with a miscased key is rejected like a task definition.
func TestECSSnippetIsDecodedStrictly(t *testing.T) {
	var task ecs.RegisterTaskDefinitionInput
	err := pasteSnippet(&task, "testdata/broken/ecs/snippet-key-casing.json")
	if err == nil || !strings.Contains(err.Error(), "$.appContainer.DependsOn: unknown field") {
		t.Fatalf("error %v", err)
	}
}
