package deploy

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/util/validation"
	psaapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
)

// podSecurityLevel is the level the README says the manifest needs.
const podSecurityLevel = psaapi.LevelPrivileged

// Why the stricter levels reject the manifest, as the admission plugin words
// it: the node's log files are a hostPath volume, and they are root's.
var (
	baselineForbids   = []string{"hostPath volumes"}
	restrictedForbids = []string{"restricted volume types", "runAsNonRoot != true", "runAsUser=0"}
)

// decodeK8s decodes a manifest with the API server's strict, case-sensitive
// decoder: an unknown or miscased field, or a duplicate one, is an error.
func decodeK8s(data []byte) (runtime.Object, error) {
	scheme := runtime.NewScheme()
	if err := appsv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := corev1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	s := kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, scheme, scheme, kjson.SerializerOptions{Yaml: true, Strict: true})
	obj, _, err := s.Decode(data, nil, nil)
	return obj, err
}

func loadDeployment(path string) (*appsv1.Deployment, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	obj, err := decodeK8s(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	d, ok := obj.(*appsv1.Deployment)
	if !ok {
		return nil, fmt.Errorf("%s: a %T, want a Deployment", path, obj)
	}
	return d, nil
}

// nativeSidecar returns the pod's sidecar: the init container with
// restartPolicy Always.
func nativeSidecar(pod *corev1.PodSpec) (*corev1.Container, error) {
	for i, c := range pod.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			return &pod.InitContainers[i], nil
		}
	}
	return nil, errors.New("no native sidecar (an init container with restartPolicy: Always)")
}

func k8sSidecar(path string) (sidecar, error) {
	d, err := loadDeployment(path)
	if err != nil {
		return sidecar{}, err
	}
	return podSidecar(path, &d.Spec.Template.Spec, nil)
}

// podSidecar reads the pod's sidecar; files maps config files it reads
// from volumes to the repository's copies.
func podSidecar(file string, pod *corev1.PodSpec, files map[string]string) (sidecar, error) {
	c, err := nativeSidecar(pod)
	if err != nil {
		return sidecar{}, err
	}
	s := sidecar{file: file, args: append(slices.Clone(c.Command), c.Args...), env: map[string]string{}, mounts: map[string]bool{}, files: files}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			s.env[e.Name] = e.Value
		case e.ValueFrom.SecretKeyRef != nil:
			s.env[e.Name] = "xaat-from-a-secret"
			s.secrets = append(s.secrets, e.Name)
		case e.ValueFrom.FieldRef != nil:
			s.env[e.Name] = "downward-" + strings.ReplaceAll(e.ValueFrom.FieldRef.FieldPath, ".", "-")
		}
	}
	for _, m := range c.VolumeMounts {
		s.mounts[m.MountPath] = m.ReadOnly
	}
	for _, app := range pod.Containers {
		for _, e := range app.Env {
			if e.Name == "OTEL_EXPORTER_OTLP_ENDPOINT" {
				s.appOTLP = e.Value
			}
		}
	}
	for _, p := range []*corev1.Probe{c.StartupProbe, c.LivenessProbe} {
		switch {
		case p == nil:
		case p.Exec == nil:
			s.health = []string{"(not an exec probe: the kubelet sends HTTP and TCP probes from the node, which cannot reach the pod's loopback)"}
		case s.health == nil || slices.Equal(s.health, p.Exec.Command):
			s.health = p.Exec.Command
		default:
			s.health = []string{"(the probes differ)"}
		}
	}
	return s, nil
}

// podSecurity evaluates the pod with the admission plugin's own checks at
// the latest policy version and returns the reasons it is forbidden.
// With sidecarOnly the app's containers (and init containers) are left
// out: the app's settings are the user's business, the sidecar's are ours.
func podSecurity(tmpl *corev1.PodTemplateSpec, level psaapi.Level, sidecarOnly bool) ([]string, error) {
	pod := tmpl.DeepCopy()
	if sidecarOnly {
		c, err := nativeSidecar(&pod.Spec)
		if err != nil {
			return nil, err
		}
		pod.Spec.InitContainers, pod.Spec.Containers = []corev1.Container{*c}, nil
	}
	ev, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		return nil, err
	}
	var reasons []string
	for _, r := range ev.EvaluatePod(psaapi.LevelVersion{Level: level, Version: psaapi.LatestVersion()}, &pod.ObjectMeta, &pod.Spec) {
		if !r.Allowed {
			reasons = append(reasons, r.ForbiddenReason)
		}
	}
	return reasons, nil
}

// checkK8s runs every check on a Deployment manifest.
func checkK8s(path string) error {
	d, err := loadDeployment(path)
	if err != nil {
		return err
	}
	return checkPod(path, &d.Spec.Template, nil)
}

// checkPod runs every check on a pod template with the sidecar; files as
// for podSidecar.
func checkPod(file string, tmpl *corev1.PodTemplateSpec, files map[string]string) error {
	pod := &tmpl.Spec
	s, err := podSidecar(file, pod, files)
	if err != nil {
		return err
	}
	c, _ := nativeSidecar(pod)
	var errs []error
	if err := errors.Join(s.check(), s.tokenFromSecret()); err != nil {
		errs = append(errs, err)
	}
	if c.ReadinessProbe != nil {
		errs = append(errs, errors.New("the sidecar has a readinessProbe: a native sidecar's readiness counts toward the pod's Ready, so a sidecar that is not ready would take the app out of service"))
	}
	// Names as the API server checks them (k8s.io/kubernetes validation
	// is not used: it needs replace directives for its staging modules).
	for _, ctr := range append(slices.Clone(pod.InitContainers), pod.Containers...) {
		for _, msg := range validation.IsDNS1123Label(ctr.Name) {
			errs = append(errs, fmt.Errorf("container name %q: %s", ctr.Name, msg))
		}
		for _, e := range ctr.Env {
			for _, msg := range validation.IsEnvVarName(e.Name) {
				errs = append(errs, fmt.Errorf("env %q: %s", e.Name, msg))
			}
		}
	}
	volumes := map[string]corev1.Volume{}
	for _, v := range pod.Volumes {
		for _, msg := range validation.IsDNS1123Label(v.Name) {
			errs = append(errs, fmt.Errorf("volume name %q: %s", v.Name, msg))
		}
		volumes[v.Name] = v
	}
	for _, m := range c.VolumeMounts {
		if _, ok := volumes[m.Name]; !ok {
			errs = append(errs, fmt.Errorf("mount %s: no volume %q", m.MountPath, m.Name))
		}
	}
	if name, _ := embeddedConfig(s.args); name != "kubernetes" {
		errs = append(errs, fmt.Errorf("the sidecar runs embedded:%s, want embedded:kubernetes", name))
	}
	for _, e := range c.Env {
		want := map[string]string{"POD_NAME": "metadata.name", "POD_NAMESPACE": "metadata.namespace", "POD_UID": "metadata.uid", "NODE_NAME": "spec.nodeName"}[e.Name]
		if want != "" && (e.ValueFrom == nil || e.ValueFrom.FieldRef == nil || e.ValueFrom.FieldRef.FieldPath != want) {
			errs = append(errs, fmt.Errorf("%s must come from the downward API field %s", e.Name, want))
		}
	}
	for _, name := range []string{"POD_NAME", "POD_NAMESPACE", "POD_UID", "NODE_NAME"} {
		if _, ok := s.env[name]; !ok {
			errs = append(errs, fmt.Errorf("%s is not set: the config finds the pod's log directory with it, and events name the pod (k8s.*) with it", name))
		}
	}
	if s.env["SIDECAR_CONTAINER_NAME"] != c.Name {
		errs = append(errs, fmt.Errorf("SIDECAR_CONTAINER_NAME %q is not the container's name %q: the sidecar would ship its own logs", s.env["SIDECAR_CONTAINER_NAME"], c.Name))
	}
	if ro, ok := s.mounts["/var/log/pods"]; !ok || !ro {
		errs = append(errs, errors.New("/var/log/pods must be mounted read-only"))
	}
	for _, m := range c.VolumeMounts {
		if m.MountPath == "/var/log/pods" {
			if hp := volumes[m.Name].HostPath; hp == nil || hp.Path != "/var/log/pods" {
				errs = append(errs, fmt.Errorf("volume %s must be the node's /var/log/pods", m.Name))
			}
		}
	}
	// The documented level admits the pod; the stricter ones reject the
	// sidecar only for the reasons the README gives, so everything else
	// (capabilities, seccomp, privilege escalation, probes) is as tight as
	// restricted asks.
	for _, lv := range []struct {
		level       psaapi.Level
		sidecarOnly bool
		want        []string
	}{{podSecurityLevel, false, nil}, {psaapi.LevelBaseline, true, baselineForbids}, {psaapi.LevelRestricted, true, restrictedForbids}} {
		got, err := podSecurity(tmpl, lv.level, lv.sidecarOnly)
		if err != nil {
			return err
		}
		if !slices.Equal(got, lv.want) {
			errs = append(errs, fmt.Errorf("Pod Security %s level forbids %q, want only %q", lv.level, got, lv.want))
		}
	}
	return errors.Join(errs...)
}

func TestKubernetesDeployment(t *testing.T) {
	if err := checkK8s("k8s/sidecar.yaml"); err != nil {
		t.Fatal(err)
	}
	k8s := readConfig(t, "kubernetes")
	for _, want := range []string{"/var/log/pods", "${env:POD_UID}"} {
		if !strings.Contains(k8s, want) {
			t.Errorf("the kubernetes config does not use %s", want)
		}
	}
}
