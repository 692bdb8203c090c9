// Package deploy holds ready-to-use deployment files: an ECS task definition
// (the sidecar as the FireLens log router), a Kubernetes native-sidecar
// Deployment and a docker compose setup. The tests check that they agree
// with the binary: the embedded configs they name exist, the ports and
// paths they wire match those configs, and secrets stay secret.
package deploy

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/sidecarhq/sidecar/configs"
)

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// embeddedConfigArg returns the X of "--config embedded:X" in args and
// fails unless X is a config compiled into the binary.
func embeddedConfigArg(t *testing.T, args []string) string {
	t.Helper()
	i := slices.Index(args, "--config")
	if i < 0 || i+1 >= len(args) {
		t.Fatalf("no --config in %q", args)
	}
	name, ok := strings.CutPrefix(args[i+1], configs.Scheme+":")
	if !ok || !slices.Contains(configs.Names(), name) {
		t.Fatalf("%q is not an embedded config (have %v)", args[i+1], configs.Names())
	}
	return name
}

func TestECSTaskDefinition(t *testing.T) {
	type container struct {
		Name                  string
		Command               []string
		Essential             bool
		FirelensConfiguration *struct{ Type string }
		Environment           []struct{ Name, Value string }
		Secrets               []struct{ Name, ValueFrom string }
		HealthCheck           *struct{ Command []string }
		LogConfiguration      struct{ LogDriver string }
		DependsOn             []struct{ ContainerName, Condition string }
		StopTimeout           int
	}
	var task struct {
		NetworkMode          string
		ContainerDefinitions []container
	}
	if err := json.Unmarshal(readFile(t, "ecs/task-definition.json"), &task); err != nil {
		t.Fatal(err)
	}
	if task.NetworkMode != "awsvpc" {
		t.Errorf("networkMode %q: the ecs config listens on 127.0.0.1, which only awsvpc tasks share", task.NetworkMode)
	}
	var router, app *container
	for i, c := range task.ContainerDefinitions {
		if c.FirelensConfiguration != nil {
			router = &task.ContainerDefinitions[i]
		} else {
			app = &task.ContainerDefinitions[i]
		}
	}
	if router == nil || app == nil {
		t.Fatal("want one FireLens log router and one app container")
	}
	if name := embeddedConfigArg(t, router.Command); name != "ecs" {
		t.Errorf("the router runs embedded:%s, want embedded:ecs", name)
	}
	if !router.Essential {
		t.Error("the log router must be essential: without it the app's logs go nowhere")
	}
	for _, e := range router.Environment {
		if e.Name == "AXIOM_TOKEN" {
			t.Error("AXIOM_TOKEN is a plain environment value; use secrets")
		}
	}
	if !slices.ContainsFunc(router.Secrets, func(s struct{ Name, ValueFrom string }) bool { return s.Name == "AXIOM_TOKEN" }) {
		t.Error("the router gets no AXIOM_TOKEN secret")
	}
	if router.HealthCheck == nil || !slices.Equal(router.HealthCheck.Command, []string{"CMD", "/sidecar", "health"}) {
		t.Errorf("router health check %v, want the sidecar's own health command", router.HealthCheck)
	}
	if app.LogConfiguration.LogDriver != "awsfirelens" {
		t.Errorf("app log driver %q, want awsfirelens", app.LogConfiguration.LogDriver)
	}
	if len(app.DependsOn) != 1 || app.DependsOn[0].ContainerName != router.Name {
		t.Errorf("the app must start after the router: dependsOn %v", app.DependsOn)
	}
	if app.StopTimeout >= router.StopTimeout {
		t.Errorf("app stopTimeout %d >= router's %d: the router must outlive the app to flush its last lines", app.StopTimeout, router.StopTimeout)
	}
	ecs := string(readConfig(t, "ecs"))
	if !strings.Contains(ecs, "/var/run/fluent.sock") {
		t.Error("the ecs config does not listen on /var/run/fluent.sock, where FireLens points the app's log driver")
	}
}

func readConfig(t *testing.T, name string) []byte {
	t.Helper()
	b, err := configs.Read(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestKubernetesDeployment(t *testing.T) {
	type envVar struct {
		Name      string
		Value     string
		ValueFrom map[string]map[string]string `yaml:"valueFrom"`
	}
	type mount struct {
		Name      string
		MountPath string `yaml:"mountPath"`
		ReadOnly  bool   `yaml:"readOnly"`
	}
	type ctr struct {
		Name          string
		Args          []string
		RestartPolicy string `yaml:"restartPolicy"`
		Env           []envVar
		VolumeMounts  []mount        `yaml:"volumeMounts"`
		StartupProbe  map[string]any `yaml:"startupProbe"`
		LivenessProbe map[string]any `yaml:"livenessProbe"`
	}
	var d struct {
		Spec struct {
			Template struct {
				Spec struct {
					InitContainers []ctr `yaml:"initContainers"`
					Containers     []ctr
					Volumes        []struct {
						Name     string
						HostPath *struct{ Path string } `yaml:"hostPath"`
						EmptyDir *struct{}              `yaml:"emptyDir"`
					}
				}
			}
		}
	}
	if err := yaml.Unmarshal(readFile(t, "k8s/sidecar.yaml"), &d); err != nil {
		t.Fatal(err)
	}
	pod := d.Spec.Template.Spec
	if len(pod.InitContainers) != 1 {
		t.Fatalf("want the sidecar as the one init container, got %d", len(pod.InitContainers))
	}
	sc := pod.InitContainers[0]
	if sc.RestartPolicy != "Always" {
		t.Errorf("restartPolicy %q: a native sidecar needs Always", sc.RestartPolicy)
	}
	if name := embeddedConfigArg(t, sc.Args); name != "kubernetes" {
		t.Errorf("the sidecar runs embedded:%s, want embedded:kubernetes", name)
	}
	for name, p := range map[string]map[string]any{"startupProbe": sc.StartupProbe, "livenessProbe": sc.LivenessProbe} {
		// The kubelet sends HTTP probes from the node, which cannot reach
		// the pod's loopback where the health check listens.
		if fmt.Sprint(p["exec"]) != "map[command:[/sidecar health]]" {
			t.Errorf("%s %v: want an exec probe running /sidecar health", name, p)
		}
	}
	env := map[string]envVar{}
	for _, e := range sc.Env {
		env[e.Name] = e
	}
	for name, path := range map[string]string{"POD_NAME": "metadata.name", "POD_NAMESPACE": "metadata.namespace", "POD_UID": "metadata.uid"} {
		if env[name].ValueFrom["fieldRef"]["fieldPath"] != path {
			t.Errorf("%s must come from the downward API field %s", name, path)
		}
	}
	if env["AXIOM_TOKEN"].ValueFrom["secretKeyRef"] == nil {
		t.Error("AXIOM_TOKEN must come from a secret")
	}
	if env["SIDECAR_CONTAINER_NAME"].Value != sc.Name {
		t.Errorf("SIDECAR_CONTAINER_NAME %q is not the container's name %q: the sidecar would ship its own logs", env["SIDECAR_CONTAINER_NAME"].Value, sc.Name)
	}
	mounts := map[string]mount{}
	for _, m := range sc.VolumeMounts {
		mounts[m.MountPath] = m
	}
	if m, ok := mounts["/var/log/pods"]; !ok || !m.ReadOnly {
		t.Error("/var/log/pods must be mounted read-only")
	}
	if _, ok := mounts["/var/lib/sidecar"]; !ok {
		t.Error("/var/lib/sidecar (file offsets) is not mounted: a restarted sidecar would not resume")
	}
	for _, v := range pod.Volumes {
		if m, ok := mounts["/var/log/pods"]; ok && v.Name == m.Name && (v.HostPath == nil || v.HostPath.Path != "/var/log/pods") {
			t.Errorf("volume %s must be the node's /var/log/pods", v.Name)
		}
	}
	k8s := string(readConfig(t, "kubernetes"))
	for _, want := range []string{"/var/log/pods", "${env:POD_UID}"} {
		if !strings.Contains(k8s, want) {
			t.Errorf("the kubernetes config does not use %s", want)
		}
	}
	if !strings.Contains(string(readFile(t, "../Dockerfile")), "ENV SIDECAR_STATE_DIR=/var/lib/sidecar") {
		t.Error("the image does not keep its state (file_storage) in /var/lib/sidecar, where the volume is mounted")
	}
}

func TestCompose(t *testing.T) {
	var c struct {
		Services map[string]struct {
			Command []string
			Ports   []string
			Logging struct {
				Driver  string
				Options map[string]string
			}
			Environment map[string]string
		}
	}
	if err := yaml.Unmarshal(readFile(t, "compose/docker-compose.yaml"), &c); err != nil {
		t.Fatal(err)
	}
	sc, ok := c.Services["sidecar"]
	if !ok {
		t.Fatal("no sidecar service")
	}
	if name := embeddedConfigArg(t, sc.Command); name != "compose" {
		t.Errorf("the sidecar runs embedded:%s, want embedded:compose", name)
	}
	for _, p := range sc.Ports {
		if !strings.HasPrefix(p, "127.0.0.1:") {
			t.Errorf("port %s is published on every host interface", p)
		}
	}
	app := c.Services["app"]
	if app.Logging.Driver != "fluentd" {
		t.Fatalf("the app logs through %q, want docker's fluentd driver", app.Logging.Driver)
	}
	addr := app.Logging.Options["fluentd-address"]
	if !slices.Contains(sc.Ports, addr+":24224") {
		t.Errorf("fluentd-address %s is not a port the sidecar publishes (%v)", addr, sc.Ports)
	}
	if !strings.Contains(string(readConfig(t, "compose")), "0.0.0.0:24224") {
		t.Error("the compose config does not listen for forward on 24224 inside the container")
	}
}

func TestDockerfile(t *testing.T) {
	df := string(readFile(t, "../Dockerfile"))
	gomod := string(readFile(t, "../go.mod"))
	goVersion := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindStringSubmatch(gomod)
	if goVersion == nil || !strings.Contains(df, " golang:"+goVersion[1]+" AS build") {
		t.Errorf("the Dockerfile's Go image does not match go.mod's go %v", goVersion)
	}
	for _, want := range []string{"./cmd/sidecar", "./cmd/fakeaxiom", "AS fakeaxiom", `ENTRYPOINT ["/sidecar"]`} {
		if !strings.Contains(df, want) {
			t.Errorf("the Dockerfile lacks %s", want)
		}
	}
}
