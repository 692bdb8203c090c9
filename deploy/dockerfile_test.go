package deploy

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/linter"
	"github.com/moby/buildkit/frontend/dockerfile/parser"
)

// image is what the Dockerfile's final stage gives every container.
type image struct {
	stages     []instructions.Stage
	env        map[string]string
	labels     map[string]string
	entrypoint []string
}

// parseDockerfile parses and lints a Dockerfile with BuildKit's own parser
// and the lint rules `docker build --check` applies while parsing; a parse
// warning or a rule broken is an error.
func parseDockerfile(path string) (*image, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	res, err := parser.Parse(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var errs []error
	for _, w := range res.Warnings {
		errs = append(errs, fmt.Errorf("%s: %s", path, w.Short))
	}
	lint := linter.New(&linter.Config{Warn: func(rule, _, _, msg string, loc []parser.Range) {
		errs = append(errs, fmt.Errorf("%s:%v: lint %s: %s", path, loc, rule, msg))
	}})
	stages, _, err := instructions.Parse(res.AST, lint)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	img := &image{stages: stages, env: map[string]string{}, labels: map[string]string{}}
	for _, c := range stages[len(stages)-1].Commands {
		switch c := c.(type) {
		case *instructions.EnvCommand:
			for _, kv := range c.Env {
				img.env[kv.Key] = kv.Value
			}
		case *instructions.LabelCommand:
			for _, kv := range c.Labels {
				img.labels[kv.Key] = kv.Value
			}
		case *instructions.EntrypointCommand:
			img.entrypoint = c.CmdLine
		}
	}
	return img, nil
}

// checkDockerfile runs every check on a Dockerfile.
func checkDockerfile(path string) error {
	img, err := parseDockerfile(path)
	if err != nil {
		return err
	}
	var errs []error
	build := slices.IndexFunc(img.stages, func(s instructions.Stage) bool { return s.Name == "build" })
	if build < 0 {
		return errors.New("no build stage")
	}
	// Multi-arch: Go runs on the build machine and cross-compiles for the
	// target (buildx's TARGETOS/TARGETARCH), with no emulation.
	if img.stages[build].Platform != "$BUILDPLATFORM" {
		errs = append(errs, fmt.Errorf("the build stage runs on %q, want --platform=$BUILDPLATFORM", img.stages[build].Platform))
	}
	var args []string
	crossCompiles := false
	for _, c := range img.stages[build].Commands {
		switch c := c.(type) {
		case *instructions.ArgCommand:
			for _, a := range c.Args {
				args = append(args, a.Key)
			}
		case *instructions.RunCommand:
			line := strings.Join(c.CmdLine, " ")
			crossCompiles = crossCompiles || strings.Contains(line, "GOOS=$TARGETOS GOARCH=$TARGETARCH go build")
		}
	}
	if !slices.Contains(args, "TARGETARCH") || !slices.Contains(args, "TARGETOS") || !crossCompiles {
		errs = append(errs, errors.New("the build stage does not cross-compile for buildx's TARGETOS/TARGETARCH"))
	}
	gomod, err := os.ReadFile("../go.mod")
	if err != nil {
		return err
	}
	goVersion := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindSubmatch(gomod)
	if goVersion == nil || img.stages[build].BaseName != "golang:"+string(goVersion[1]) {
		errs = append(errs, fmt.Errorf("the build stage's image %s does not match go.mod's go %s", img.stages[build].BaseName, goVersion[1]))
	}
	if !slices.ContainsFunc(img.stages, func(s instructions.Stage) bool { return s.Name == "fakeaxiom" }) {
		errs = append(errs, errors.New("no fakeaxiom target (deploy/compose/fake-axiom.yaml builds it)"))
	}
	if !slices.Equal(img.entrypoint, []string{healthBinary}) {
		errs = append(errs, fmt.Errorf("ENTRYPOINT %q, want [%s]: the deploy files' probes run it", img.entrypoint, healthBinary))
	}
	for _, l := range []string{"title", "description", "source", "version", "revision"} {
		if img.labels["org.opencontainers.image."+l] == "" {
			errs = append(errs, fmt.Errorf("no OCI label org.opencontainers.image.%s", l))
		}
	}
	return errors.Join(errs...)
}

func TestDockerfile(t *testing.T) {
	if err := checkDockerfile("../Dockerfile"); err != nil {
		t.Fatal(err)
	}
}
