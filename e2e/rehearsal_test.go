package e2e

import (
	"compress/gzip"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/backend"
	"github.com/docker/docker/daemon/logger"
	"github.com/docker/docker/daemon/logger/fluentd"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"

	"github.com/sidecarhq/sidecar/internal/axiomtest"
)

// The rehearsals run each platform's deployment without the platform: the
// real binary on the embedded config the deploy file names, fed the way the
// platform feeds it, checked in the fake Axiom, identity attributes
// included.

// fakeTaskMetadata serves an ECS Task Metadata v4 task document on
// 127.0.0.1 and returns the URI ECS would put in
// ECS_CONTAINER_METADATA_URI_V4.
func fakeTaskMetadata(t *testing.T, task string) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v4/7e1f3a2b-sidecar/task", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(task))
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(mux)
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL + "/v4/7e1f3a2b-sidecar"
}

// TestRehearseECSFireLensTask: the task definition's sidecar (`--config
// embedded:ecs`) as the FireLens log router, the app's output sent by
// docker's own fluentd log driver (github.com/docker/docker/daemon/logger/fluentd)
// with the options the ECS agent gives an awsfirelens container, over the
// unix socket; a line longer than docker's 16 KiB buffer arrives as the
// daemon's partial messages; the app's spans come over OTLP. Every line
// arrives once, whole, and every event and span names the task.
func TestRehearseECSFireLensTask(t *testing.T) {
	const taskID = "5c0f9d2e8b7a4c3d9e1f2a3b4c5d6e7f"
	uri := fakeTaskMetadata(t, `{
  "Cluster": "arn:aws:ecs:eu-west-1:123456789012:cluster/shop",
  "TaskARN": "arn:aws:ecs:eu-west-1:123456789012:task/shop/`+taskID+`",
  "Family": "my-app", "Revision": "7",
  "AvailabilityZone": "eu-west-1a", "LaunchType": "FARGATE",
  "Containers": [{"Name": "sidecar"}, {"Name": "app"}]
}`)
	fake := axiomtest.NewForTest(t)
	sock := socketPath(t)
	env := append(embeddedEnv(t, fake), "SIDECAR_FORWARD_SOCKET="+sock, "SIDECAR_FORWARD_ENDPOINT="+FreeAddr(t),
		"ECS_CONTAINER_METADATA_URI_V4="+uri, "SIDECAR_STATE_DIR="+t.TempDir())
	s := StartSidecar(t, "", WithArgs("--config", "embedded:ecs"), WithEnv(env...))
	s.WaitListening(t, sock)

	// What the ECS agent turns an awsfirelens log configuration into
	// (getFirelensLogConfig): docker's fluentd driver on the router's
	// socket, tagged <container>-firelens-<task id>, asynchronous, with
	// sub-second timestamps and log-driver-buffer-limit as its buffer.
	// The agent's fluentd-async-connect is the older name of fluentd-async,
	// which this docker version no longer accepts.
	opts := map[string]string{
		"fluentd-address":              "unix://" + sock,
		"tag":                          "app-firelens-" + taskID,
		"fluentd-async":                "true",
		"fluentd-sub-second-precision": "true",
		"fluentd-buffer-limit":         "2097152",
	}
	if err := fluentd.ValidateLogOpt(opts); err != nil {
		t.Fatal(err)
	}
	driver, err := fluentd.New(logger.Info{Config: opts, ContainerID: fwdContainerID, ContainerName: "/ecs-my-app-7-app-e8f6c4d2b1a0"})
	if err != nil {
		t.Fatal(err)
	}
	const n = 300
	for i := range n {
		msg := logger.NewMessage()
		msg.Line, msg.Source, msg.Timestamp = []byte(pinoLine(i)), "stdout", time.Now()
		if i%50 == 49 {
			msg.Source = "stderr"
		}
		if err := driver.Log(msg); err != nil {
			t.Fatal(err)
		}
	}
	// docker's copier cuts lines at 16 KiB and marks the pieces.
	long := fmt.Sprintf(`{"level":50,"seq":%d,"msg":"stack","stack":"%s"}`, n, strings.Repeat("x", 40<<10))
	for ord, start := 1, 0; start < len(long); ord, start = ord+1, start+16<<10 {
		end := min(start+16<<10, len(long))
		msg := logger.NewMessage()
		msg.Line, msg.Source, msg.Timestamp = []byte(long[start:end]), "stdout", time.Now()
		msg.PLogMetaData = &backend.PartialLogMetaData{ID: "p1", Ordinal: ord, Last: end == len(long)}
		if err := driver.Log(msg); err != nil {
			t.Fatal(err)
		}
	}
	httpAddr := envValue(env, "SIDECAR_OTLP_HTTP_ENDPOINT")
	exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpoint(httpAddr), otlptracehttp.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	emitSpans(t, exp, "ecs", 2)
	// The driver sends asynchronously, and its Close discards what it has
	// not sent yet (docker sets ForceStopAsyncSend with fluentd-async, so
	// that stopping a container never waits on the router): the app's
	// container is still running while its lines arrive.
	if err := fake.WaitEvents("logs", n+1, 60*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := driver.Close(); err != nil {
		t.Fatal(err)
	}
	if err := fake.WaitSpans("traces", 4, 60*time.Second); err != nil {
		t.Fatal(err)
	}
	if code := s.Stop(t); code != 0 {
		t.Fatalf("exit code %d", code)
	}

	task := map[string]any{
		"ecs_cluster": "shop", "ecs_task_definition": "my-app:7",
		"aws.ecs.task.id": taskID, "aws.ecs.task.family": "my-app", "aws.ecs.launchtype": "fargate",
		"aws.ecs.cluster.arn": "arn:aws:ecs:eu-west-1:123456789012:cluster/shop", "cloud.region": "eu-west-1",
	}
	seen := map[string]int{}
	for _, ev := range fake.Events("logs") {
		seq := fmt.Sprint(ev["seq"])
		seen[seq]++
		res, _ := ev["resource"].(map[string]any)
		for k, v := range task {
			if res[k] != v {
				t.Errorf("event %s: resource %s = %v, want %v", seq, k, res[k], v)
			}
		}
		if res["container_name"] != "/ecs-my-app-7-app-e8f6c4d2b1a0" || res["fluent.tag"] != "app-firelens-"+taskID {
			t.Errorf("event %s: resource %v", seq, res)
		}
		if seq == fmt.Sprint(n) && len(fmt.Sprint(ev["stack"])) != 40<<10 {
			t.Errorf("the long line arrived cut: stack of %d bytes", len(fmt.Sprint(ev["stack"])))
		}
	}
	for i := range n + 1 {
		if seen[fmt.Sprint(i)] != 1 {
			t.Errorf("line %d arrived %d times", i, seen[fmt.Sprint(i)])
		}
	}
	rss := fake.Traces("traces").ResourceSpans()
	for i := range rss.Len() {
		attrs := rss.At(i).Resource().Attributes().AsRaw()
		if attrs["aws.ecs.task.id"] != taskID || attrs["cloud.platform"] != "aws_ecs" {
			t.Errorf("span resource does not name the task: %v", attrs)
		}
	}
}

// podLog writes a container's log as the kubelet and the runtime do (unlike
// criWriter, which writes one file: the pod's directory layout, restarts,
// long lines and the kubelet's compression of old rotations):
// CRI lines in <pods dir>/<ns>_<pod>_<uid>/<container>/<restart>.log, long
// lines split into P pieces and an F, and rotation by rename.
type podLog struct {
	t   *testing.T
	dir string // the container's log directory
	f   *os.File
}

func newPodLog(t *testing.T, podDir, container string, restart int) *podLog {
	t.Helper()
	w := &podLog{t: t, dir: filepath.Join(podDir, container)}
	if err := os.MkdirAll(w.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	w.open(restart)
	t.Cleanup(func() { w.f.Close() })
	return w
}

func (w *podLog) open(restart int) {
	f, err := os.OpenFile(filepath.Join(w.dir, fmt.Sprintf("%d.log", restart)), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o640)
	if err != nil {
		w.t.Fatal(err)
	}
	w.f = f
}

// line writes one line of the app's stdout, split at 16 KiB like
// containerd's max_container_log_line_size.
func (w *podLog) line(s string) {
	for len(s) > 16<<10 {
		fmt.Fprintf(w.f, "%s stdout P %s\n", time.Now().UTC().Format(time.RFC3339Nano), s[:16<<10])
		s = s[16<<10:]
	}
	fmt.Fprintf(w.f, "%s stdout F %s\n", time.Now().UTC().Format(time.RFC3339Nano), s)
}

// rotate does what the kubelet's container log manager does: the previous
// rotated file is compressed (.gz), the live file renamed to
// <restart>.log.<timestamp>, and the runtime reopens a new <restart>.log.
func (w *podLog) rotate(restart int, stamp string) {
	w.t.Helper()
	old, _ := filepath.Glob(filepath.Join(w.dir, fmt.Sprintf("%d.log.2*", restart)))
	for _, o := range old {
		if strings.HasSuffix(o, ".gz") {
			continue
		}
		b, err := os.ReadFile(o)
		if err != nil {
			w.t.Fatal(err)
		}
		gz, err := os.Create(o + ".gz")
		if err != nil {
			w.t.Fatal(err)
		}
		zw := gzip.NewWriter(gz)
		_, _ = zw.Write(b)
		_ = zw.Close()
		_ = gz.Close()
		_ = os.Remove(o)
	}
	live := filepath.Join(w.dir, fmt.Sprintf("%d.log", restart))
	if err := os.Rename(live, live+"."+stamp); err != nil {
		w.t.Fatal(err)
	}
	w.f.Close()
	w.open(restart)
}

// TestRehearseKubernetesPodWithRotationAndRestarts: the manifest's sidecar
// (`--config embedded:kubernetes`, the downward API variables, the state
// volume) over a fake /var/log/pods tree while the kubelet rotates the
// app's log twice, the app container restarts (1.log), and the sidecar
// itself is restarted on the same state volume. Every line arrives once,
// whole, naming its pod, container and restart.
func TestRehearseKubernetesPodWithRotationAndRestarts(t *testing.T) {
	fake := axiomtest.NewForTest(t)
	pods := t.TempDir()
	podDir := filepath.Join(pods, "shop_checkout-7d9f-x2x_4f1c0a3e-9b1d-4c55")
	env := append(embeddedEnv(t, fake), "SIDECAR_POD_LOGS_DIR="+pods, "POD_NAMESPACE=shop",
		"POD_NAME=checkout-7d9f-x2x", "POD_UID=4f1c0a3e-9b1d-4c55", "NODE_NAME=node-a",
		"SIDECAR_CONTAINER_NAME=sidecar", "SIDECAR_STATE_DIR="+t.TempDir())
	own := newPodLog(t, podDir, "sidecar", 0)
	own.line(`{"level":30,"msg":"the sidecar's own output","seq":-1}`)
	app := newPodLog(t, podDir, "app", 0)
	seq := 0
	write := func(k int) {
		for range k {
			if seq%100 == 99 { // a stack trace longer than containerd's 16 KiB
				app.line(fmt.Sprintf(`{"level":50,"seq":%d,"stack":"%s"}`, seq, strings.Repeat("y", 20<<10)))
			} else {
				app.line(pinoLine(seq))
			}
			seq++
		}
	}
	write(200)
	s := StartSidecar(t, "", WithArgs("--config", "embedded:kubernetes"), WithEnv(env...))
	if err := fake.WaitEvents("logs", 200, 60*time.Second); err != nil {
		t.Fatal(err)
	}
	write(100)
	app.rotate(0, "20261201-104500")
	write(100)
	if err := fake.WaitEvents("logs", 400, 60*time.Second); err != nil {
		t.Fatal(err)
	}
	// The sidecar restarts (its offsets are on the state volume) while the
	// app writes on and the kubelet rotates again.
	if code := s.Stop(t); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	write(100)
	app.rotate(0, "20261201-104600")
	write(100)
	s = StartSidecar(t, "", WithArgs("--config", "embedded:kubernetes"), WithEnv(env...))
	// The app container restarts: the runtime writes 1.log.
	app.f.Close()
	app.open(1)
	restartFrom := seq
	write(100)
	if err := fake.WaitEvents("logs", seq, 60*time.Second); err != nil {
		t.Fatal(err)
	}
	if code := s.Stop(t); code != 0 {
		t.Fatalf("exit code %d", code)
	}

	pod := map[string]any{"k8s.namespace.name": "shop", "k8s.pod.name": "checkout-7d9f-x2x",
		"k8s.pod.uid": "4f1c0a3e-9b1d-4c55", "k8s.node.name": "node-a", "k8s.container.name": "app"}
	seen := map[int]int{}
	for _, ev := range fake.Events("logs") {
		var i int
		if _, err := fmt.Sscan(fmt.Sprint(ev["seq"]), &i); err != nil {
			t.Errorf("unexpected event %v", ev)
			continue
		}
		seen[i]++
		res, _ := ev["resource"].(map[string]any)
		for k, v := range pod {
			if res[k] != v {
				t.Errorf("line %d: resource %s = %v, want %v", i, k, res[k], v)
			}
		}
		if want := map[bool]string{false: "0", true: "1"}[i >= restartFrom]; res["k8s.container.restart_count"] != want {
			t.Errorf("line %d: restart_count %v, want %s", i, res["k8s.container.restart_count"], want)
		}
		if i%100 == 99 && len(fmt.Sprint(ev["stack"])) != 20<<10 {
			t.Errorf("line %d: the long line arrived cut (%d bytes)", i, len(fmt.Sprint(ev["stack"])))
		}
	}
	if seen[-1] != 0 {
		t.Error("the sidecar's own output was shipped")
	}
	for i := range seq {
		if seen[i] != 1 {
			t.Errorf("line %d arrived %d times", i, seen[i])
		}
	}
}
