package deploy

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// render builds a kustomization with kustomize's own library, as
// `kubectl kustomize dir` does, and decodes each object strictly.
func render(fs filesys.FileSystem, dir string) ([][]byte, error) {
	res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(fs, dir)
	if err != nil {
		return nil, err
	}
	var docs [][]byte
	for _, r := range res.Resources() {
		y, err := r.AsYAML()
		if err != nil {
			return nil, err
		}
		docs = append(docs, y)
	}
	return docs, nil
}

// TestKustomizeExampleRendersTheManifest: the example (an app Deployment
// plus the component) renders, with kustomize's own code, exactly the
// manifest in k8s/sidecar.yaml, so the component and the one-file manifest
// cannot drift apart, and the rendering passes every manifest check.
func TestKustomizeExampleRendersTheManifest(t *testing.T) {
	docs, err := render(filesys.MakeFsOnDisk(), "k8s/example")
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 1 {
		t.Fatalf("rendered %d objects, want the one Deployment", len(docs))
	}
	obj, err := decodeK8s(docs[0])
	if err != nil {
		t.Fatal(err)
	}
	want, err := loadDeployment("k8s/sidecar.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(obj, want) {
		t.Fatalf("k8s/example renders\n%s\nwhich is not k8s/sidecar.yaml", docs[0])
	}
}

// TestKustomizeComponentAddsTheSidecarToAStatefulSet renders the component
// over a StatefulSet that has containers, volumes and init containers of its
// own: they stay, and the sidecar joins them with everything it needs.
func TestKustomizeComponentAddsTheSidecarToAStatefulSet(t *testing.T) {
	fs := filesys.MakeFsInMemory()
	for _, f := range []string{"kustomization.yaml", "sidecar.yaml"} {
		b, err := os.ReadFile(filepath.Join("k8s/sidecar", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := fs.WriteFile(filepath.Join("/component", f), b); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		"/app/kustomization.yaml": "resources: [db.yaml]\ncomponents: [../component]\n",
		"/app/db.yaml": `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: data}
spec:
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      initContainers:
        - {name: migrate, image: db:1, command: [migrate]}
      containers:
        - name: db
          image: db:1
          env: [{name: OTEL_EXPORTER_OTLP_ENDPOINT, value: "http://127.0.0.1:4318"}]
          volumeMounts: [{name: data, mountPath: /data}]
      volumes:
        - {name: data, emptyDir: {}}
`,
	}
	for name, content := range files {
		if err := fs.WriteFile(name, []byte(content)); err != nil {
			t.Fatal(err)
		}
	}
	docs, err := render(fs, "/app")
	if err != nil {
		t.Fatal(err)
	}
	obj, err := decodeK8s(docs[0])
	if err != nil {
		t.Fatal(err)
	}
	sts, ok := obj.(*appsv1.StatefulSet)
	if !ok {
		t.Fatalf("rendered a %T", obj)
	}
	pod := &sts.Spec.Template.Spec
	var names []string
	for _, c := range pod.InitContainers {
		names = append(names, c.Name)
	}
	for _, v := range pod.Volumes {
		names = append(names, v.Name)
	}
	// The sidecar comes first, so it is running (and shipping) before the
	// app's own init containers start.
	if got := strings.Join(names, ","); got != "sidecar,migrate,pod-logs,sidecar-state,data" {
		t.Errorf("init containers and volumes: %s", got)
	}
	if len(pod.Containers) != 1 || pod.Containers[0].Name != "db" {
		t.Errorf("the app's containers changed: %+v", pod.Containers)
	}
	if err := checkPod("statefulset", &sts.Spec.Template, nil); err != nil {
		t.Error(err)
	}
}

// TestKustomizeBrokenComponentIsRejected: a component whose patch is not a
// valid pod template fails to render, or fails the manifest checks.
func TestKustomizeBrokenComponentIsRejected(t *testing.T) {
	fs := filesys.MakeFsInMemory()
	b, err := os.ReadFile("testdata/broken/k8s/component/sidecar.yaml")
	if err != nil {
		t.Fatal(err)
	}
	k, err := os.ReadFile("k8s/sidecar/kustomization.yaml")
	if err != nil {
		t.Fatal(err)
	}
	app, err := os.ReadFile("k8s/example/app.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string][]byte{
		"/component/kustomization.yaml": k, "/component/sidecar.yaml": b,
		"/app/kustomization.yaml": []byte("resources: [app.yaml]\ncomponents: [../component]\n"), "/app/app.yaml": app,
	} {
		if err := fs.WriteFile(name, content); err != nil {
			t.Fatal(err)
		}
	}
	err = func() error {
		docs, err := render(fs, "/app")
		if err != nil {
			return err
		}
		obj, err := decodeK8s(docs[0])
		if err != nil {
			return err
		}
		d, ok := obj.(*appsv1.Deployment)
		if !ok {
			return fmt.Errorf("a %T", obj)
		}
		return checkPod("broken component", &d.Spec.Template, nil)
	}()
	if err == nil || !strings.Contains(err.Error(), "POD_UID") {
		t.Fatalf("error %v, want one about POD_UID", err)
	}
}
