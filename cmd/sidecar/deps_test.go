package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestTheBinaryLinksNoCloudSDKs: the collector's stock telemetry factory
// would link cloud resource detectors and, through them, the AWS SDK, GCP's
// and Kubernetes' clients: 7.4 MB of the binary and globals every GC cycle
// marks (internal/selftelemetry says why it replaces that factory).
func TestTheBinaryLinksNoCloudSDKs(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		for _, prefix := range []string{
			"github.com/aws/", "go.opentelemetry.io/contrib/detectors/", "cloud.google.com/",
			"golang.org/x/oauth2/google", "k8s.io/", "go.opentelemetry.io/collector/service/telemetry/otelconftelemetry",
		} {
			if strings.HasPrefix(pkg, prefix) {
				t.Errorf("the sidecar links %s", pkg)
			}
		}
	}
}
