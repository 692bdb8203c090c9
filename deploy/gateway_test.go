package deploy

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	psaapi "k8s.io/pod-security-admission/api"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/sidecarhq/sidecar/configs"
)

// gatewayObjects renders a gateway kustomization (deploy/gateway) with
// kustomize and decodes each object strictly.
func gatewayObjects(dir string) (*appsv1.Deployment, *corev1.Service, *corev1.ConfigMap, error) {
	docs, err := render(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, nil, nil, err
	}
	var (
		d   *appsv1.Deployment
		svc *corev1.Service
		cm  *corev1.ConfigMap
	)
	for _, doc := range docs {
		obj, err := decodeK8s(doc)
		if err != nil {
			return nil, nil, nil, err
		}
		switch o := obj.(type) {
		case *appsv1.Deployment:
			d = o
		case *corev1.Service:
			svc = o
		case *corev1.ConfigMap:
			cm = o
		default:
			return nil, nil, nil, fmt.Errorf("unexpected %T", obj)
		}
	}
	if d == nil || svc == nil || cm == nil || len(d.Spec.Template.Spec.Containers) != 1 {
		return nil, nil, nil, fmt.Errorf("want a Deployment of one container, a Service and a ConfigMap, rendered %d objects", len(docs))
	}
	return d, svc, cm, nil
}

// checkGateway runs every check on a gateway kustomization: the gateway
// passes the sidecar checks (validate, probes, state volume), the restricted
// Pod Security level in full, and its Service reaches the ports the gateway
// config listens on.
func checkGateway(dir string) error {
	d, svc, cm, err := gatewayObjects(dir)
	if err != nil {
		return err
	}
	c := d.Spec.Template.Spec.Containers[0]
	s := sidecar{file: dir, args: c.Args, env: map[string]string{}, mounts: map[string]bool{},
		appOTLP: "http://sidecar-gateway:4318"}
	for _, e := range c.Env {
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			s.env[e.Name] = "xaat-from-a-secret"
			s.secrets = append(s.secrets, e.Name)
		} else {
			s.env[e.Name] = e.Value
		}
	}
	for _, m := range c.VolumeMounts {
		s.mounts[m.MountPath] = m.ReadOnly
	}
	if c.LivenessProbe != nil && c.LivenessProbe.Exec != nil && c.StartupProbe != nil && c.StartupProbe.Exec != nil &&
		slices.Equal(c.LivenessProbe.Exec.Command, c.StartupProbe.Exec.Command) {
		s.health = c.LivenessProbe.Exec.Command
	}
	errs := []error{s.check(), s.tokenFromSecret()}
	if name, _ := embeddedConfig(c.Args); name != "gateway" {
		errs = append(errs, fmt.Errorf("the gateway runs embedded:%s", name))
	}
	if forbids, err := podSecurity(&d.Spec.Template, psaapi.LevelRestricted, false); err != nil || len(forbids) > 0 {
		errs = append(errs, fmt.Errorf("the restricted level forbids %q (%v)", forbids, err))
	}
	cfg, err := configs.Read("gateway")
	if err != nil {
		return err
	}
	ports := map[string]int32{}
	for _, p := range c.Ports {
		ports[p.Name] = p.ContainerPort
		if !strings.Contains(string(cfg), fmt.Sprintf(":-0.0.0.0:%d}", p.ContainerPort)) {
			errs = append(errs, fmt.Errorf("the gateway config does not listen on every interface on %d", p.ContainerPort))
		}
	}
	for _, p := range svc.Spec.Ports {
		if ports[p.TargetPort.StrVal] != p.Port {
			errs = append(errs, fmt.Errorf("Service port %s (%d) targets %q, which is container port %d", p.Name, p.Port, p.TargetPort.StrVal, ports[p.TargetPort.StrVal]))
		}
	}
	if want, err := os.ReadFile(filepath.Join(dir, "to-gateway.yaml")); err != nil || cm.Data["to-gateway.yaml"] != string(want) {
		errs = append(errs, fmt.Errorf("ConfigMap %s does not hold to-gateway.yaml (%v)", cm.Name, err))
	}
	return errors.Join(errs...)
}

func TestGatewayDeployment(t *testing.T) {
	if err := checkGateway("gateway"); err != nil {
		t.Fatal(err)
	}
}

// TestSidecarViaGateway renders an app with the sidecar and via-gateway
// components: the sidecar merges the gateway's ConfigMap over its config,
// passes every manifest check, and sends to the gateway's Service.
func TestSidecarViaGateway(t *testing.T) {
	_, svc, cm, err := gatewayObjects("gateway")
	if err != nil {
		t.Fatal(err)
	}
	fs := filesys.MakeFsInMemory()
	for f, to := range map[string]string{
		"k8s/sidecar/kustomization.yaml": "", "k8s/sidecar/sidecar.yaml": "", "k8s/example/app.yaml": "/app/app.yaml",
		"gateway/via-gateway/kustomization.yaml": "", "gateway/via-gateway/via-gateway.yaml": "",
	} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if to == "" {
			to = filepath.Join("/", f)
		}
		if err := fs.WriteFile(to, b); err != nil {
			t.Fatal(err)
		}
	}
	if err := fs.WriteFile("/app/kustomization.yaml", []byte(
		"resources: [app.yaml]\ncomponents: [../k8s/sidecar, ../gateway/via-gateway]\n")); err != nil {
		t.Fatal(err)
	}
	docs, err := render(fs, "/app")
	if err != nil {
		t.Fatal(err)
	}
	obj, err := decodeK8s(docs[0])
	if err != nil {
		t.Fatal(err)
	}
	d := obj.(*appsv1.Deployment)
	files := map[string]string{"/etc/sidecar/to-gateway.yaml": "gateway/to-gateway.yaml"}
	s, err := podSidecar("via-gateway", &d.Spec.Template.Spec, files)
	if err != nil {
		t.Fatal(err)
	}
	// The patch's file is the one the gateway's ConfigMap holds.
	found := false
	for _, v := range d.Spec.Template.Spec.Volumes {
		if v.ConfigMap != nil && v.ConfigMap.Name == cm.Name && s.mounts["/etc/sidecar"] {
			found = true
		}
	}
	if !found || !slices.Contains(s.args, "file:/etc/sidecar/to-gateway.yaml") {
		t.Errorf("the sidecar does not read to-gateway.yaml from ConfigMap %s: args %q", cm.Name, s.args)
	}
	u, err := url.Parse(s.env["SIDECAR_GATEWAY_ENDPOINT"])
	if err != nil || u.Hostname() != svc.Name || !slices.ContainsFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool {
		return strconv.Itoa(int(p.Port)) == u.Port() && p.Name == "otlp-http"
	}) {
		t.Errorf("SIDECAR_GATEWAY_ENDPOINT %q is not the gateway Service's OTLP/HTTP port", s.env["SIDECAR_GATEWAY_ENDPOINT"])
	}
	if err := checkPod("via-gateway", &d.Spec.Template, files); err != nil {
		t.Error(err)
	}
}
