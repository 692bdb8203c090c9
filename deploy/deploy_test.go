// Package deploy holds ready-to-use deployment files: an ECS task definition
// (the sidecar as the FireLens log router), a Kubernetes native-sidecar
// Deployment, a docker compose setup and the Dockerfile's image.
//
// The tests read each file with its platform's own code (the AWS SDK's ECS
// types and serializer, apimachinery's strict decoder into k8s.io/api types
// and the Pod Security admission checks, compose-go, BuildKit's Dockerfile
// parser and linter), run the real binary's `sidecar validate` on the
// config and environment each file gives the sidecar, and check that ports,
// socket paths, variable names and volume paths agree across the files.
// Every check also runs on a deliberately broken copy in testdata/broken/,
// which it must reject (TestBrokenCopiesAreRejected). The kustomize
// component renders k8s/sidecar.yaml (kustomize_test.go) and the ECS
// snippet pasted into a task gives ecs/task-definition.json (ecs_test.go).
// The end-to-end rehearsals of each platform are e2e/rehearsal_test.go.
//
// These libraries are test-only: nothing in cmd/sidecar imports them
// (TestPlatformLibrariesStayOutOfTheBinary).
package deploy

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sidecarhq/sidecar/configs"
)

// The deploy files' shared facts. The Dockerfile sets the state directory
// for the image; every file mounts a volume there.
const (
	stateDir      = "/var/lib/sidecar"
	stateDirEnv   = "SIDECAR_STATE_DIR"
	healthBinary  = "/sidecar"
	forwardSocket = "/var/run/fluent.sock"
	otlpHTTPPort  = "4318"
)

// sidecar is what a deploy file says about the sidecar container, read from
// the platform's own types, for the checks every file must pass.
type sidecar struct {
	file string
	// args follow the image's ENTRYPOINT (/sidecar).
	args []string
	// env holds plain values; a value from a secret or the downward API
	// is a placeholder, and its name is in secrets or fieldRefs.
	env     map[string]string
	secrets []string
	// mounts maps a container path to whether it is read-only.
	mounts map[string]bool
	// health is the command of the health check or probe, without
	// docker's "CMD" marker.
	health []string
	// appOTLP is the app container's OTEL_EXPORTER_OTLP_ENDPOINT (for the
	// gateway: the address its sidecars send to).
	appOTLP string
	// files maps a config file the container reads from a volume (a
	// ConfigMap) to the repository's copy, for `sidecar validate`.
	files map[string]string
}

// tokenFromSecret checks that the token is not a plain value in the file
// (ECS and Kubernetes have secrets; compose passes the user's shell's).
func (s sidecar) tokenFromSecret() error {
	if !slices.Contains(s.secrets, "AXIOM_TOKEN") {
		return errors.New("AXIOM_TOKEN does not come from a secret")
	}
	return nil
}

// check runs the checks every deploy file's sidecar must pass and returns
// every failure.
func (s sidecar) check() error {
	var errs []error
	if _, err := embeddedConfig(s.args); err != nil {
		errs = append(errs, err)
	}
	if !slices.Equal(s.health, []string{healthBinary, "health"}) {
		errs = append(errs, fmt.Errorf("health check %q: want the image's own [%s health], which asks $SIDECAR_HEALTH_ENDPOINT where the config listens", s.health, healthBinary))
	}
	if got := s.env[stateDirEnv]; got != stateDir {
		errs = append(errs, fmt.Errorf("%s=%q, want %s", stateDirEnv, got, stateDir))
	}
	if ro, ok := s.mounts[stateDir]; !ok || ro {
		errs = append(errs, fmt.Errorf("no writable volume at %s (%s): the queue and offsets would not survive a restart", stateDir, stateDirEnv))
	}
	if u, err := url.Parse(s.appOTLP); err != nil || u.Port() != otlpHTTPPort {
		errs = append(errs, fmt.Errorf("the app sends OTLP to %q, not to the sidecar's OTLP/HTTP port %s", s.appOTLP, otlpHTTPPort))
	}
	if err := s.envNamesAreRead(); err != nil {
		errs = append(errs, err)
	}
	args := slices.Clone(s.args)
	for i, a := range args {
		if local, ok := s.files[strings.TrimPrefix(a, "file:")]; ok && strings.HasPrefix(a, "file:") {
			args[i] = "file:" + local
		}
	}
	if err := validateWithBinary(args, s.env); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// dockerHealthCommand drops the "CMD" marker of a docker health check
// (ECS and compose use docker's form); "CMD-SHELL" stays, and fails.
func dockerHealthCommand(test []string) []string {
	if len(test) > 0 && test[0] == "CMD" {
		return test[1:]
	}
	return test
}

// envNamesAreRead checks that every SIDECAR_* and AXIOM_* variable the
// file sets is one a config reads (${env:NAME}): a misspelt name would be
// ignored without a word.
func (s sidecar) envNamesAreRead() error {
	var read strings.Builder
	for _, name := range configs.Names() {
		b, _ := configs.Read(name)
		read.Write(b)
	}
	for _, local := range s.files {
		b, _ := os.ReadFile(local)
		read.Write(b)
	}
	var errs []error
	for name := range s.env {
		if (strings.HasPrefix(name, "SIDECAR_") || strings.HasPrefix(name, "AXIOM_")) && !strings.Contains(read.String(), "${env:"+name) {
			errs = append(errs, fmt.Errorf("%s is set, but no config reads it", name))
		}
	}
	return errors.Join(errs...)
}

// embeddedConfig returns the X of "--config embedded:X" in args, or an error
// unless X is a config compiled into the binary.
func embeddedConfig(args []string) (string, error) {
	i := slices.Index(args, "--config")
	if i < 0 || i+1 >= len(args) {
		return "", fmt.Errorf("no --config in %q", args)
	}
	name, ok := strings.CutPrefix(args[i+1], configs.Scheme+":")
	if !ok || !slices.Contains(configs.Names(), name) {
		return "", fmt.Errorf("%q is not an embedded config (have %v)", args[i+1], configs.Names())
	}
	return name, nil
}

// sidecarBinary is built once by TestMain.
var sidecarBinary string

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "deploy-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	sidecarBinary = filepath.Join(dir, "sidecar")
	build := exec.Command("go", "build", "-o", sidecarBinary, "../cmd/sidecar")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building the sidecar: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// validateWithBinary runs `sidecar validate` with the file's arguments and
// environment, as the container would start (values from secrets and the
// downward API replaced by placeholders).
func validateWithBinary(args []string, env map[string]string) error {
	cmd := exec.Command(sidecarBinary, append([]string{"validate"}, args...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.TempDir()}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("sidecar validate %q with the file's environment: %v\n%s", args, err, out)
	}
	return nil
}

func readConfig(t *testing.T, name string) string {
	t.Helper()
	b, err := configs.Read(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestEveryFileAgrees reads every deploy file and checks the facts they
// share: the state volume, the health probe, the configs they run.
func TestEveryFileAgrees(t *testing.T) {
	ecs, err := ecsSidecar("ecs/task-definition.json")
	if err != nil {
		t.Fatal(err)
	}
	k8s, err := k8sSidecar("k8s/sidecar.yaml")
	if err != nil {
		t.Fatal(err)
	}
	compose, err := composeSidecar(nil, "compose/docker-compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	image, err := parseDockerfile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []sidecar{ecs, k8s, compose} {
		if err := s.check(); err != nil {
			t.Errorf("%s: %v", s.file, err)
		}
		if image.env[stateDirEnv] != s.env[stateDirEnv] {
			t.Errorf("%s: %s=%q, the image sets %q", s.file, stateDirEnv, s.env[stateDirEnv], image.env[stateDirEnv])
		}
	}
	// The port the apps send OTLP to is where the configs listen.
	for _, name := range []string{"default", "compose"} {
		if cfg := readConfig(t, name); !strings.Contains(cfg, ":"+otlpHTTPPort+"}") {
			t.Errorf("the %s config does not listen for OTLP/HTTP on %s", name, otlpHTTPPort)
		}
	}
	// The state (queue, file offsets) is kept where the files' variable says.
	if cfg := readConfig(t, "default"); !strings.Contains(cfg, "directory: ${env:"+stateDirEnv+":-") {
		t.Errorf("the default config's file_storage does not follow $%s", stateDirEnv)
	}
}

// TestBrokenCopiesAreRejected runs each check on a deliberately broken copy
// of a deploy file: a check that passes on it tests nothing.
func TestBrokenCopiesAreRejected(t *testing.T) {
	for _, tc := range []struct {
		file  string
		check func(string) error
		want  string
	}{
		// ECS: the SDK's types, strictly.
		{"ecs/key-casing.json", checkECS, "FireLensConfiguration: unknown field"},
		{"ecs/unknown-field.json", checkECS, "stopTimout: unknown field"},
		{"ecs/bad-enum.json", checkECS, `"awsVPC" is not a NetworkMode`},
		{"ecs/no-family.json", checkECS, "missing required field, RegisterTaskDefinitionInput.Family"},
		{"ecs/ecs-log-metadata.json", checkECS, "enable-ecs-log-metadata"},
		{"ecs/curl-health.json", checkECS, "want the image's own"},
		{"ecs/no-state-volume.json", checkECS, "no writable volume at /var/lib/sidecar"},
		{"ecs/url-and-edge.json", checkECS, "sidecar validate"},
		// Kubernetes: apimachinery's strict decoder, Pod Security.
		{"k8s/key-casing.yaml", checkK8s, `unknown field "spec.template.spec.initContainers[0].volumeMounts[0].readonly"`},
		{"k8s/http-probe.yaml", checkK8s, "want the image's own"},
		{"k8s/readiness-probe.yaml", checkK8s, "has a readinessProbe"},
		{"k8s/capabilities-kept.yaml", checkK8s, "restricted level"},
		{"k8s/bad-container-name.yaml", checkK8s, `container name "My_App": a lowercase RFC 1123 label`},
		{"k8s/no-downward-uid.yaml", checkK8s, "POD_UID"},
		{"k8s/otlp-port.yaml", checkK8s, "not to the sidecar's OTLP/HTTP port 4318"},
		// The gateway tier: kustomize, Pod Security at restricted.
		{"gateway-root", checkGateway, `restricted level forbids ["runAsNonRoot != true"]`},
		{"gateway-port", checkGateway, `Service port otlp-http (4318) targets "otlp-grpc"`},
		// compose: compose-go.
		{"compose/depends-on-missing.yaml", checkCompose, "depends on undefined service"},
		{"compose/unknown-key.yaml", checkCompose, "additional properties 'retrys' not allowed"},
		{"compose/no-edge.yaml", checkCompose, "AXIOM_EDGE"},
		{"compose/misspelt-env.yaml", checkCompose, "SIDECAR_METRICS_HOTS is set, but no config reads it"},
		// Dockerfile: BuildKit's parser and linter.
		{"Dockerfile.lint", checkDockerfile, "FromAsCasing"},
		{"Dockerfile.parse", checkDockerfile, "unknown instruction"},
		{"Dockerfile.single-arch", checkDockerfile, "TARGETARCH"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			err := tc.check(filepath.Join("testdata", "broken", tc.file))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v\nwant one mentioning %q", err, tc.want)
			}
			if testing.Verbose() {
				t.Log(err)
			}
		})
	}
}

// TestPlatformLibrariesStayOutOfTheBinary: the platforms' libraries are
// for these tests only.
func TestPlatformLibrariesStayOutOfTheBinary(t *testing.T) {
	out, err := exec.Command("go", "version", "-m", sidecarBinary).CombinedOutput()
	if err != nil {
		t.Fatalf("go version -m: %v\n%s", err, out)
	}
	for _, mod := range []string{
		"github.com/aws/aws-sdk-go-v2/service/ecs", "k8s.io/api", "k8s.io/apimachinery", "k8s.io/pod-security-admission",
		"github.com/compose-spec/compose-go/v2", "github.com/moby/buildkit", "sigs.k8s.io/kustomize/api",
		"github.com/docker/docker", // the e2e rehearsal's log driver
	} {
		if strings.Contains(string(out), "\t"+mod+"\t") {
			t.Errorf("the sidecar binary links %s", mod)
		}
	}
}
