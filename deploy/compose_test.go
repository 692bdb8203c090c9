package deploy

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
)

// loadCompose loads compose files the way `docker compose -f a -f b` does,
// with compose-go (schema, interpolation from env, merging, consistency:
// depends_on naming a missing service is an error).
func loadCompose(env map[string]string, files ...string) (*types.Project, error) {
	var kv []string
	for k, v := range env {
		kv = append(kv, k+"="+v)
	}
	opts, err := cli.NewProjectOptions(files, cli.WithName("deploytest"), cli.WithEnv(kv),
		cli.WithWorkingDirectory(filepath.Dir(files[0])))
	if err != nil {
		return nil, err
	}
	return opts.LoadProject(context.Background())
}

func composeSidecar(env map[string]string, files ...string) (sidecar, error) {
	p, err := loadCompose(env, files...)
	if err != nil {
		return sidecar{}, err
	}
	svc, ok := p.Services["sidecar"]
	if !ok {
		return sidecar{}, errors.New("no sidecar service")
	}
	s := sidecar{file: files[len(files)-1], args: svc.Command, env: map[string]string{}, mounts: map[string]bool{}}
	for k, v := range svc.Environment {
		if v != nil {
			s.env[k] = *v
		}
	}
	for _, v := range svc.Volumes {
		s.mounts[v.Target] = v.ReadOnly
	}
	if app, ok := p.Services["app"]; ok && app.Environment["OTEL_EXPORTER_OTLP_ENDPOINT"] != nil {
		s.appOTLP = *app.Environment["OTEL_EXPORTER_OTLP_ENDPOINT"]
	}
	if svc.HealthCheck != nil {
		s.health = dockerHealthCommand(svc.HealthCheck.Test)
	}
	return s, nil
}

// The environments a user runs the compose setup with: nothing set (local
// mode), an Axiom token with a regional edge, or with a URL.
var composeEnvs = []map[string]string{
	{},
	{"AXIOM_TOKEN": "xaat-user", "AXIOM_EDGE": "eu-central-1.aws.edge.axiom.co"},
	{"AXIOM_TOKEN": "xaat-user", "AXIOM_URL": "https://api.eu.axiom.co"},
}

// checkCompose runs every check on a compose file alone and with the fake
// Axiom override, in every user environment.
func checkCompose(path string) error {
	var errs []error
	for _, env := range composeEnvs {
		for _, files := range [][]string{{path}, {path, "compose/fake-axiom.yaml"}} {
			if err := checkComposeProject(env, files...); err != nil {
				errs = append(errs, fmt.Errorf("%v with %v: %w", files, env, err))
			}
		}
	}
	return errors.Join(errs...)
}

func checkComposeProject(env map[string]string, files ...string) error {
	s, err := composeSidecar(env, files...)
	if err != nil {
		return err
	}
	p, _ := loadCompose(env, files...)
	var errs []error
	if err := s.check(); err != nil {
		errs = append(errs, err)
	}
	if name, _ := embeddedConfig(s.args); name != "compose" {
		errs = append(errs, fmt.Errorf("the sidecar runs embedded:%s, want embedded:compose", name))
	}
	fake := slices.Contains(files, "compose/fake-axiom.yaml")
	// What the user set reaches the sidecar, unless the fake replaces it.
	for _, k := range []string{"AXIOM_TOKEN", "AXIOM_EDGE", "AXIOM_URL"} {
		if v, ok := env[k]; ok && !fake && s.env[k] != v {
			errs = append(errs, fmt.Errorf("%s=%q in the shell reaches the sidecar as %q", k, v, s.env[k]))
		}
	}
	if fake && s.env["AXIOM_URL"] != "http://fakeaxiom:8080" {
		errs = append(errs, fmt.Errorf("with fake-axiom.yaml AXIOM_URL is %q", s.env["AXIOM_URL"]))
	}
	sc := p.Services["sidecar"]
	published := map[string]bool{}
	for _, port := range sc.Ports {
		if port.HostIP != "127.0.0.1" {
			errs = append(errs, fmt.Errorf("port %d is published on every host interface", port.Target))
		}
		published[port.HostIP+":"+port.Published] = true
		if port.Published != strconv.Itoa(int(port.Target)) {
			errs = append(errs, fmt.Errorf("port %d published as %s", port.Target, port.Published))
		}
	}
	for _, want := range []string{"4317", "4318", "24224"} {
		if !published["127.0.0.1:"+want] {
			errs = append(errs, fmt.Errorf("the sidecar does not publish %s on 127.0.0.1", want))
		}
	}
	app, ok := p.Services["app"]
	if !ok || app.Logging == nil || app.Logging.Driver != "fluentd" {
		errs = append(errs, errors.New("the app must log through docker's fluentd driver"))
	} else if addr := app.Logging.Options["fluentd-address"]; !published[addr] {
		// The docker daemon dials the address from the host.
		errs = append(errs, fmt.Errorf("fluentd-address %s is not a port the sidecar publishes", addr))
	}
	if dep, ok := app.DependsOn["sidecar"]; !ok || dep.Condition != types.ServiceConditionHealthy {
		errs = append(errs, errors.New("the app must start once the sidecar is healthy"))
	}
	if err := checkExampleApp(p, app); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// exampleAppDockerfile is the example app's Dockerfile, from the repository
// root (its build context: the app installs clients/js).
const exampleAppDockerfile = "examples/node-app/Dockerfile"

// checkExampleApp checks that the app service is the example app
// (examples/node-app) built from the repository root, sending its spans
// through stdout by default, with the Redis its REDIS_URL names.
func checkExampleApp(p *types.Project, app types.ServiceConfig) error {
	var errs []error
	root, _ := filepath.Abs("..")
	if app.Build == nil || app.Build.Context != root || app.Build.Dockerfile != exampleAppDockerfile {
		errs = append(errs, fmt.Errorf("the app is not built from %s with the repository root as context: %+v", exampleAppDockerfile, app.Build))
	} else if _, err := parseDockerfile(filepath.Join(root, exampleAppDockerfile)); err != nil {
		errs = append(errs, err)
	}
	if v := app.Environment["TELEMETRY"]; v == nil || *v != "stdout" {
		errs = append(errs, errors.New("the app's TELEMETRY is not stdout (spans through stdout)"))
	}
	redis := ""
	if v := app.Environment["REDIS_URL"]; v != nil {
		if u, err := url.Parse(*v); err == nil {
			redis = u.Hostname()
		}
	}
	if _, ok := p.Services[redis]; !ok {
		errs = append(errs, fmt.Errorf("the app's REDIS_URL names %q, not a service of the file", redis))
	}
	return errors.Join(errs...)
}

func TestCompose(t *testing.T) {
	if err := checkCompose("compose/docker-compose.yaml"); err != nil {
		t.Fatal(err)
	}
	// Inside its container the sidecar listens on every interface, on the
	// ports the file publishes.
	cfg := readConfig(t, "compose")
	for _, want := range []string{":-0.0.0.0:4317}", ":-0.0.0.0:4318}", ":-0.0.0.0:24224}"} {
		if !strings.Contains(cfg, want) {
			t.Errorf("the compose config has no listener %s", want)
		}
	}
}
