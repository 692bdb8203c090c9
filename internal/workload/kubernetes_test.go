package workload

import (
	"slices"
	"testing"
)

func TestKubernetesFromLogPath(t *testing.T) {
	pod := []Attr{{AttrNamespace, "shop"}, {AttrPodName, "checkout-7d9f-x2x"}, {AttrPodUID, "4f1c0a3e-9b1d-4c55-8e3a-2b7f5d6c9e01"}}
	for path, want := range map[string][]Attr{
		"/var/log/pods/shop_checkout-7d9f-x2x_4f1c0a3e-9b1d-4c55-8e3a-2b7f5d6c9e01/app/0.log": append(slices.Clone(pod), Attr{AttrContainer, "app"}, Attr{AttrRestartCount, "0"}),
		// kubelet's rotation renames N.log to N.log.<timestamp>
		"/var/log/pods/shop_checkout-7d9f-x2x_4f1c0a3e-9b1d-4c55-8e3a-2b7f5d6c9e01/app/3.log.20261201-104512": append(slices.Clone(pod), Attr{AttrContainer, "app"}, Attr{AttrRestartCount, "3"}),
		// a custom podLogsDir
		"/data/kubelet/pods/shop_checkout-7d9f-x2x_4f1c0a3e-9b1d-4c55-8e3a-2b7f5d6c9e01/web/12.log": append(slices.Clone(pod), Attr{AttrContainer, "web"}, Attr{AttrRestartCount, "12"}),
	} {
		got, ok := KubernetesFromLogPath(path)
		if !ok || !slices.Equal(got, want) {
			t.Errorf("%s:\n got %v %v\nwant %v", path, got, ok, want)
		}
	}
	for _, path := range []string{
		"/var/log/containers/checkout_shop_app-0123.log", // the flat symlinks: another layout
		"/var/log/pods/shop_checkout_uid_extra/app/0.log",
		"/var/log/pods/shop_checkout/app/0.log",
		"/var/log/pods/shop_checkout_uid/app/x.log",
		"/var/log/pods/shop_checkout_uid/app/0.logx",
		"app.log",
	} {
		if got, ok := KubernetesFromLogPath(path); ok {
			t.Errorf("%s: %v, want no match", path, got)
		}
	}
}

func TestKubernetesFromEnv(t *testing.T) {
	env := map[string]string{"POD_NAMESPACE": "shop", "POD_NAME": "checkout-7d9f", "POD_UID": "4f1c", "NODE_NAME": "ip-10-0-1-7"}
	got := KubernetesFromEnv(func(k string) string { return env[k] })
	want := []Attr{{AttrNamespace, "shop"}, {AttrPodName, "checkout-7d9f"}, {AttrPodUID, "4f1c"}, {AttrNodeName, "ip-10-0-1-7"}}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if got := KubernetesFromEnv(func(string) string { return "" }); got != nil {
		t.Fatalf("outside Kubernetes: %v", got)
	}
}

func TestMerge(t *testing.T) {
	base := []Attr{{"a", "1"}, {"b", "2"}}
	got := Merge(base, []Attr{{"b", "3"}, {"c", "4"}})
	if want := []Attr{{"a", "1"}, {"b", "3"}, {"c", "4"}}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if base[1].Value != "2" {
		t.Fatal("Merge modified base")
	}
}
